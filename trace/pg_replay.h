/*
 * pg_replay: `pmigate replay FILE` — replays a recorded trace against a
 * fresh gateway without the application.  Every recorded connection becomes
 * an actor that sends its recorded requests on the same kind of connection
 * (the rank's PMI_FD, or the PMI_PORT socket) and checks each reply against
 * the recorded one (pg_replay_msg.h for PMI-1/PMI-2, pg_replay_pmix.h for
 * PMIx, whose replies are matched by request id in whatever order they
 * come).
 *
 * Order: a request goes out only when every reply that precedes it in the
 * recording, on any connection, has arrived — the recording is one valid
 * order of the job, so the replay follows it without inventing one — and,
 * unless --fast, not before its recorded time.
 *
 * --ranks N replays the recorded pattern as N ranks: copies of the recorded
 * job side by side (rank r plays recorded rank r mod n), with rank numbers
 * and per-rank key suffixes renamed per copy; replies are then checked
 * loosely (command, rc, found), as a load generator.
 */
#ifndef PG_REPLAY_H
#define PG_REPLAY_H

#include <stddef.h>

typedef struct pg_replay_opts {
    const char *file;
    int fast;            /* ignore the recorded pace */
    double timeout;      /* seconds before the replay counts as hung */
    int ranks;           /* --ranks N; 0: as recorded */
    const char *trace;   /* --trace FILE: record the replay gateway's traffic */
    int verbose;
} pg_replay_opts_t;

/* Exit statuses besides 0 (matched) and 2 (usage). */
enum { PG_REPLAY_EXIT_MISMATCH = 1, PG_REPLAY_EXIT_HANG = 124 };

/* Parses `pmigate replay` arguments (argv[0] is the first).  Returns 0, or
 * -1 with a message in err.  opts->help-like output is the caller's. */
int pg_replay_parse_args(int argc, char **argv, pg_replay_opts_t *o, char *err, size_t errlen);

/* Runs the replay; self_exe is the pmigate binary to start as the gateway.
 * Returns the exit status. */
int pg_replay_run(const pg_replay_opts_t *o, const char *self_exe);

/* `pmigate replay ...` as main() calls it. */
int pg_replay_main(int argc, char **argv);

extern const char pg_replay_usage[];

#endif

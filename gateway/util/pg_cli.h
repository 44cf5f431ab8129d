/*
 * pg_cli: the `pmigate run` command line, parsed into a plain description of
 * the job (segments, binding, environment, timeout) before anything is
 * launched.  Kept apart from the launcher so the mpiexec-style grammar
 * (MPMD segments separated by ":", per-segment -n and --env) can be unit
 * tested without forking anything.
 *
 * Ownership: a pg_run_opts_t borrows every string from the argv it was parsed
 * from (program names, arguments, K=V pairs); pg_run_opts_free() releases only
 * the arrays the parser allocated.  Keep argv alive while the options are used.
 */
#ifndef PG_CLI_H
#define PG_CLI_H

#include <stddef.h>
#include <stdint.h>

/* Exit status for bad usage (what getopt-style tools return). */
enum { PG_EXIT_USAGE = 2 };

typedef enum pg_bind {
    PG_BIND_NONE = 0, /* the default, as with hydra: the kernel schedules */
    PG_BIND_CORE,     /* rank i -> core (local rank i mod ncores) */
    PG_BIND_SOCKET,   /* rank i -> package (local rank i mod npackages) */
} pg_bind_t;

typedef enum pg_sched {
    PG_SCHED_NORMAL = 0, /* the default: ranks keep the policy they inherit */
    PG_SCHED_BATCH,      /* SCHED_BATCH: a rank that wakes does not preempt the
                            running task (e.g. the gateway mid-batch of replies) */
} pg_sched_t;

/* One MPMD segment: `-n N [--env K=V]... prog args...`. */
typedef struct pg_segment {
    int nprocs;           /* ranks in this segment (>= 1) */
    char **argv;          /* NULL-terminated copy of the pointers; strings borrowed */
    int argc;
    const char **env;     /* "K=V" strings given to this segment only (borrowed) */
    int nenv;
} pg_segment_t;

typedef struct pg_run_opts {
    pg_segment_t *segments; /* owned array */
    int nsegments;
    int nprocs;             /* sum over segments */
    int ppn;                /* --ppn K, 0 when not given */
    pg_bind_t bind;
    pg_sched_t sched;
    const char **genv;      /* --genv K=V: every segment (borrowed strings) */
    int ngenv;
    double timeout;         /* seconds, 0 = none */
    int heartbeat;          /* --heartbeat S: a rank that neither speaks PMI nor writes
                               output for S seconds stalled the job; 0 = none */
    int tag_output;
    int verbose;
    int strict;             /* --strict: a rank that never spoke PMI fails the job */
    int stop_in_init;       /* --stop-in-init: every rank waits in init for a
                               debugger's PMIX_DEBUGGER_RELEASE */
    const char *trace_path; /* --trace FILE: record every PMI message (borrowed) */
    int help;               /* --help was given: print usage, launch nothing */
    /* not options: `pmigate proxy` sets them so a trace names its node
     * (trace_nnodes <= 1: a single-node job) */
    int trace_node, trace_nnodes;
    const char *trace_host; /* borrowed */
    uint64_t timeout_from;  /* pg_clock_now() time --timeout counts from (`pmigate proxy`:
                               its start); 0: the run's start */
    int max_procs;          /* --max-procs N: processes spawned over the run */
    int max_procs_set;      /* 0: PG_SPAWN_MAX_PROCS_DEFAULT (gateway/run/pg_spawn.h) */
} pg_run_opts_t;

/* Parses the arguments that follow `run` (argv[0] is the first of them).
 * Returns 0 on success; on a usage error returns -1 and writes a one-line
 * message (without the program name) into err.  opts is always safe to pass
 * to pg_run_opts_free() afterwards. */
int pg_cli_parse_run(int argc, char **argv, pg_run_opts_t *opts, char *err, size_t errlen);

void pg_run_opts_free(pg_run_opts_t *opts);

/* "core" / "socket" / "none" (also "package", hwloc's name) -> value.
 * Returns 0, or -1 for an unknown word. */
int pg_bind_parse(const char *word, pg_bind_t *out);
const char *pg_bind_name(pg_bind_t bind);

/* "normal" / "batch" -> value.  Returns 0, or -1 for an unknown word. */
int pg_sched_parse(const char *word, pg_sched_t *out);
const char *pg_sched_name(pg_sched_t sched);

/* A number of seconds as the options take it ("2.5"; no sign, at most
 * 1e7, greater than 0, or also 0 when zero_ok).  0, or -1 when s is not
 * one. */
int pg_cli_parse_seconds(const char *s, int zero_ok, double *out);

/* The text of `pmigate run --help`. */
extern const char pg_cli_run_usage[];

#endif

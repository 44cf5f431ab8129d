/*
 * pg_status: which exit status `pmigate run` returns.  The rules users script
 * against, kept pure so they are unit tested apart from real processes:
 *   - the first failure decides: a rank's non-zero status (128+N when killed
 *     by signal N), the code of a PMI abort (mod 256, and 1 when that is 0:
 *     an aborted job never exits 0), 124 for --timeout and for a rank
 *     that stalled under watch (--heartbeat, PMIx_Process_monitor), 128+N when
 *     pmigate itself got signal N, 127 (or 126) when a program could not be
 *     started;
 *   - once the job is being torn down, ranks dying of the signals pmigate
 *     sent them change nothing;
 *   - a rank that broke off PMI before finalize fails the job with its own
 *     exit status, or 1 when that is 0 or unknown (the rank still ran and was
 *     killed by the teardown, whose signal says nothing about the rank);
 *   - with --strict, a job that otherwise succeeded but in which a rank never
 *     spoke PMI (a silent singleton, pg_job.c) exits PG_EXIT_SILENT.
 */
#ifndef PG_STATUS_H
#define PG_STATUS_H

/* Exit statuses pmigate chooses itself (documented in pmigate(1)). */
enum {
    PG_EXIT_TIMEOUT = 124,    /* as timeout(1); a stalled rank too */
    PG_EXIT_SILENT = 125,     /* --strict: a rank never spoke PMI */
    PG_EXIT_CANNOT_EXEC = 126, /* found but not executable */
    PG_EXIT_NOT_FOUND = 127,  /* as the shell */
    PG_EXIT_INTERNAL = 1,     /* pmigate failed (out of memory, ...) */
};

typedef enum pg_verdict_cause {
    PG_CAUSE_NONE = 0,  /* no failure: every rank so far exited 0 */
    PG_CAUSE_RANK,      /* a rank exited non-zero or died by a signal */
    PG_CAUSE_LOST,      /* a rank broke off PMI before finalize */
    PG_CAUSE_ABORT,     /* PMI abort */
    PG_CAUSE_TIMEOUT,   /* --timeout expired */
    PG_CAUSE_SIGNAL,    /* pmigate got SIGINT/SIGTERM/SIGHUP */
    PG_CAUSE_LAUNCH,    /* fork/exec failed */
    PG_CAUSE_SILENT,    /* --strict: a rank ran without speaking PMI */
    PG_CAUSE_STALLED,   /* a watched rank showed no life (--heartbeat, a PMIx monitor) */
} pg_verdict_cause_t;

typedef struct pg_verdict pg_verdict_t;

/* Told of the verdict's first failure, once, right after it is recorded
 * (`pmigate proxy` sends it to the other nodes, pg_jobend.h). */
typedef void (*pg_verdict_watch_fn)(void *ctx, const pg_verdict_t *v);

struct pg_verdict {
    pg_verdict_cause_t cause;
    int code;  /* the exit status so far */
    int rank;  /* the rank the cause names, -1 if none */
    pg_verdict_watch_fn watch;
    void *watch_ctx;
};

void pg_verdict_init(pg_verdict_t *v);
/* fn (NULL: none) hears of the first failure; a verdict that already
 * failed is told at once. */
void pg_verdict_watch(pg_verdict_t *v, pg_verdict_watch_fn fn, void *ctx);

/* Converts a waitpid() status: exit code, or 128+signal. */
int pg_status_of_wait(int wstatus);
/* The status a PMI abort with `code` (PMI-1, PMI-2 or PMIx alike) ends the
 * job with: code mod 256, or 1 when that is 0. */
int pg_status_of_abort(int code);

/* Each returns 1 when this event decided the verdict (it was the first
 * failure), 0 when an earlier failure stands. */
int pg_verdict_rank_exit(pg_verdict_t *v, int rank, int code);
/* code: the rank's exit status if it has exited, else 0. */
int pg_verdict_rank_lost(pg_verdict_t *v, int rank, int code);
int pg_verdict_abort(pg_verdict_t *v, int rank, int code);
int pg_verdict_timeout(pg_verdict_t *v);
int pg_verdict_stalled(pg_verdict_t *v, int rank);
int pg_verdict_signal(pg_verdict_t *v, int signo);
int pg_verdict_launch_failed(pg_verdict_t *v, int rank, int err);
/* --strict: `rank` (-1: every rank) never spoke PMI (said at the end of a job, or
 * when a fence it is a member of fails for it). */
int pg_verdict_silent(pg_verdict_t *v, int rank);

/* 1 once a failure has been recorded (the job must come down). */
int pg_verdict_failed(const pg_verdict_t *v);
/* The status pmigate exits with. */
int pg_verdict_exit_code(const pg_verdict_t *v);

#endif

/*
 * pg_status: the exit-status rules of `pmigate run`.  See pg_status.h.
 */
#include "gateway/util/pg_status.h"

#include <errno.h>
#include <sys/wait.h>

void pg_verdict_init(pg_verdict_t *v)
{
    v->cause = PG_CAUSE_NONE;
    v->code = 0;
    v->rank = -1;
    v->watch = NULL;
    v->watch_ctx = NULL;
}

void pg_verdict_watch(pg_verdict_t *v, pg_verdict_watch_fn fn, void *ctx)
{
    v->watch = fn;
    v->watch_ctx = ctx;
    if (fn != NULL && v->cause != PG_CAUSE_NONE)
        fn(ctx, v);
}

int pg_status_of_wait(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return PG_EXIT_INTERNAL;
}

static int decide(pg_verdict_t *v, pg_verdict_cause_t cause, int rank, int code)
{
    if (v->cause != PG_CAUSE_NONE)
        return 0;
    v->cause = cause;
    v->rank = rank;
    v->code = code;
    if (v->watch != NULL) /* after: what it calls sees the verdict decided */
        v->watch(v->watch_ctx, v);
    return 1;
}

int pg_verdict_rank_exit(pg_verdict_t *v, int rank, int code)
{
    if (code == 0)
        return 0;
    return decide(v, PG_CAUSE_RANK, rank, code);
}

int pg_verdict_rank_lost(pg_verdict_t *v, int rank, int code)
{
    return decide(v, PG_CAUSE_LOST, rank, code != 0 ? code : 1);
}

int pg_status_of_abort(int code)
{
    /* exit statuses are 8 bits: MPI_Abort(..., -1) exits 255, as a shell
     * would; but an abort is a failure, so a code whose low 8 bits are 0
     * (0, 256, ...) must not read as success: it becomes 1, the status of
     * every other failure that has no code of its own */
    return (code & 0xff) != 0 ? code & 0xff : 1;
}

int pg_verdict_abort(pg_verdict_t *v, int rank, int code)
{
    return decide(v, PG_CAUSE_ABORT, rank, pg_status_of_abort(code));
}

int pg_verdict_timeout(pg_verdict_t *v)
{
    return decide(v, PG_CAUSE_TIMEOUT, -1, PG_EXIT_TIMEOUT);
}

int pg_verdict_stalled(pg_verdict_t *v, int rank)
{
    return decide(v, PG_CAUSE_STALLED, rank, PG_EXIT_TIMEOUT);
}

int pg_verdict_signal(pg_verdict_t *v, int signo)
{
    return decide(v, PG_CAUSE_SIGNAL, -1, 128 + signo);
}

int pg_verdict_launch_failed(pg_verdict_t *v, int rank, int err)
{
    int code = (err == ENOENT || err == ENOTDIR) ? PG_EXIT_NOT_FOUND
               : (err == EACCES || err == ENOEXEC || err == EISDIR || err == EPERM)
                   ? PG_EXIT_CANNOT_EXEC
                   : PG_EXIT_INTERNAL;

    return decide(v, PG_CAUSE_LAUNCH, rank, code);
}

int pg_verdict_silent(pg_verdict_t *v, int rank)
{
    return decide(v, PG_CAUSE_SILENT, rank, PG_EXIT_SILENT);
}

int pg_verdict_failed(const pg_verdict_t *v)
{
    return v->cause != PG_CAUSE_NONE;
}

int pg_verdict_exit_code(const pg_verdict_t *v)
{
    return v->code;
}

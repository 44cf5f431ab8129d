/*
 * pg_job_ctx: the run's log lines and its ops as calls, for the files of
 * the job room.  See pg_job_ctx.h.  The lowest file of the room: it calls
 * none of the others, so every one of them may call it (pg_job_log too
 * lives here for that reason).
 */
#include "gateway/job/pg_job_ctx.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "gateway/job/pg_job_int.h"

void pg_job_ctx_vlog(const pg_job_ctx_t *ctx, int jobno, int to_stdout, const char *fmt,
                     va_list ap)
{
    pg_sink_t *sink = ctx == NULL ? NULL : to_stdout ? ctx->out_sink : ctx->err_sink;
    char prefix[32] = "", *text = NULL, *line = NULL;

    if (jobno > 0)
        snprintf(prefix, sizeof(prefix), "job %d: ", jobno);
    /* whatever its length: a rank's PMIx_Log text comes this way whole */
    if (vasprintf(&text, fmt, ap) < 0)
        return;
    if (asprintf(&line, "%s%s", prefix, text) >= 0)
        /* after the ranks' queued lines, never blocking; text a rank sent
         * (an abort message) is escaped there, so it cannot forge a line */
        pg_sink_log(sink, line);
    free(line);
    free(text);
}

void pg_job_ctx_log(const pg_job_ctx_t *ctx, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    pg_job_ctx_vlog(ctx, 0, 0, fmt, ap);
    va_end(ap);
}

void pg_job_log(const pg_job_t *job, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    pg_job_ctx_vlog(job != NULL ? job->ctx : NULL, job != NULL ? job->jobno : 0, 0, fmt, ap);
    va_end(ap);
}

void pg_job_ctx_teardown(const pg_job_ctx_t *ctx, int signo)
{
    ctx->ops->teardown(ctx->run, signo);
}

void pg_job_ctx_teardown_told(const pg_job_ctx_t *ctx, const pg_job_t *job, int rank)
{
    ctx->ops->teardown_told(ctx->run, job, rank);
}

void pg_job_ctx_maybe_done(const pg_job_ctx_t *ctx)
{
    ctx->ops->maybe_done(ctx->run);
}

void pg_job_ctx_spawned_add(const pg_job_ctx_t *ctx, int delta)
{
    ctx->ops->spawned_add(ctx->run, delta);
}

void pg_job_ctx_release_init(const pg_job_ctx_t *ctx, const char *nspace)
{
    ctx->ops->release_init(ctx->run, nspace);
}

void pg_job_ctx_spawn_opts_free(const pg_job_ctx_t *ctx, pg_run_opts_t *opts)
{
    ctx->ops->spawn_opts_free(opts);
}

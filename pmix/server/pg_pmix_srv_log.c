/*
 * pg_pmix_srv_log: what the PMIx handler asks of its host for a process --
 * PMIx_Log (the host's stdout, stderr or syslog, through
 * pg_peer_ops_t.log_to) and PMIx_Job_control (a signal to ranks of the
 * job, through pg_peer_ops_t.job_signal).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pmix/engine/pg_engine.h"
#include "pmix/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server_int.h"
#include "pmix/server/pg_pmix_value.h"
#include "pmix/transport/pg_pmix_msg.h"

/* ---- job control ---------------------------------------------------------- */

/* The signal a job-control request asks for: PMIX_JOB_CTRL_KILL (SIGKILL),
 * PMIX_JOB_CTRL_TERMINATE (SIGTERM), PMIX_JOB_CTRL_SIGNAL (its number);
 * 0 with *rc set when there is none we can serve. */
static int jobctl_signal(const pmix_info_t *info, size_t ninfo, pmix_status_t *rc)
{
    uint64_t n;

    *rc = PMIX_ERR_NOT_SUPPORTED;
    for (size_t i = 0; i < ninfo; i++) {
        if (pg_pmix_info_is(&info[i], PMIX_JOB_CTRL_KILL) && pg_pmix_info_true(&info[i]))
            return SIGKILL;
        if (pg_pmix_info_is(&info[i], PMIX_JOB_CTRL_TERMINATE) && pg_pmix_info_true(&info[i]))
            return SIGTERM;
        if (pg_pmix_info_is(&info[i], PMIX_JOB_CTRL_SIGNAL)) {
            if (pg_pmix_value_uint(&info[i].value, &n) && n > 0 && n < 65)
                return (int)n;
            *rc = PMIX_ERR_BAD_PARAM;
            return 0;
        }
    }
    return 0;
}

/* The ranks of this job the targets name (wildcard or none: all of them). */
static pmix_status_t jobctl_ranks(pg_peer_t *peer, const pmix_proc_t *t, size_t n, int **ranks,
                                  size_t *nranks)
{
    const char *own = peer->job->kvsname;

    *ranks = NULL;
    *nranks = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].nspace[0] != '\0' && strcmp(t[i].nspace, own) != 0)
            return PMIX_ERR_NOT_SUPPORTED; /* another job: not ours to signal */
        if (t[i].rank == PMIX_RANK_WILDCARD)
            return PMIX_SUCCESS;
        if (t[i].rank >= (pmix_rank_t)peer->job->size)
            return PMIX_ERR_BAD_PARAM;
    }
    if (n > 0 && (*ranks = calloc(n, sizeof(**ranks))) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        (*ranks)[i] = (int)t[i].rank;
    *nranks = n;
    return PMIX_SUCCESS;
}

/* targets[], directives[] -> status.  The host delivers the signal; the
 * reply goes first, so a caller that signals itself still hears back. */
int pg_pmix_serve_job_control(pg_pmix_in_t *in)
{
    pmix_proc_t *targets = NULL;
    pmix_info_t *info = NULL;
    size_t ntargets = 0, ninfo = 0, nranks = 0;
    int *ranks = NULL, signo;
    pmix_status_t rc;

    if (pg_pmix_unpack_array(in->args, (void **)&targets, &ntargets, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        pg_pmix_array_free(targets, ntargets, PMIX_PROC);
        return PG_HANDLER_FAIL;
    }
    signo = jobctl_signal(info, ninfo, &rc);
    if (signo != 0 && in->peer->ops->job_signal == NULL)
        rc = PMIX_ERR_NOT_SUPPORTED;
    else if (signo != 0)
        rc = jobctl_ranks(in->peer, targets, ntargets, &ranks, &nranks);
    (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, rc);
    if (signo != 0 && rc == PMIX_SUCCESS)
        in->peer->ops->job_signal(in->peer, ranks, nranks, signo);
    free(ranks);
    pg_pmix_array_free(targets, ntargets, PMIX_PROC);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return PG_HANDLER_OK;
}

/* ---- log ------------------------------------------------------------------ */

/* The channels the gateway serves: its own stdout and stderr (the job's
 * log line, where the rank is named and its text escaped so it cannot
 * forge a line) and the node's syslog (PMIX_LOG_SYSLOG, and
 * PMIX_LOG_LOCAL_SYSLOG: one node is the local one).  Email, the global
 * syslog, the job record and the data store are not served. */
static bool log_channel_of(const pmix_info_t *i, pg_log_channel_t *ch)
{
    if (pg_pmix_info_is(i, PMIX_LOG_STDOUT))
        *ch = PG_LOG_STDOUT;
    else if (pg_pmix_info_is(i, PMIX_LOG_STDERR))
        *ch = PG_LOG_STDERR;
    else if (pg_pmix_info_is(i, PMIX_LOG_SYSLOG) || pg_pmix_info_is(i, PMIX_LOG_LOCAL_SYSLOG))
        *ch = PG_LOG_SYSLOG;
    else
        return false;
    /* the channel's value is its text */
    return i->value.type == PMIX_STRING && i->value.data.string != NULL;
}

static bool log_is_channel(const pmix_info_t *i)
{
    static const char *const channels[] = {
        PMIX_LOG_STDERR,      PMIX_LOG_STDOUT,     PMIX_LOG_SYSLOG,    PMIX_LOG_LOCAL_SYSLOG,
        PMIX_LOG_GLOBAL_SYSLOG, PMIX_LOG_EMAIL,    PMIX_LOG_GLOBAL_DATASTORE,
        PMIX_LOG_JOB_RECORD,  PMIX_LOG_MSG,
    };

    for (size_t k = 0; k < sizeof(channels) / sizeof(channels[0]); k++)
        if (pg_pmix_info_is(i, channels[k]))
            return true;
    return false;
}

/* How PMIx_Log's directives shape the lines: PMIX_LOG_ONCE (the first
 * served channel only), PMIX_LOG_SYSLOG_PRI (syslog's priority, LOG_NOTICE
 * by default: 5), PMIX_LOG_TIMESTAMP (the caller's time) or
 * PMIX_LOG_GENERATE_TIMESTAMP (the gateway's) in front of the text. */
typedef struct log_how {
    bool once;
    int priority;
    bool stamp;
    time_t when;
} log_how_t;

static void log_directives(const pmix_info_t *dirs, size_t ndirs, log_how_t *how)
{
    uint64_t u = 0;

    *how = (log_how_t){ .priority = 5 };
    for (size_t i = 0; i < ndirs; i++) {
        const pmix_value_t *v = &dirs[i].value;

        if (pg_pmix_info_is(&dirs[i], PMIX_LOG_ONCE))
            how->once = pg_pmix_info_true(&dirs[i]);
        else if (pg_pmix_info_is(&dirs[i], PMIX_LOG_SYSLOG_PRI) && pg_pmix_value_uint(v, &u) &&
                 u <= 7)
            how->priority = (int)u;
        else if (pg_pmix_info_is(&dirs[i], PMIX_LOG_TIMESTAMP) && v->type == PMIX_TIME) {
            how->stamp = true;
            how->when = v->data.time;
        } else if (pg_pmix_info_is(&dirs[i], PMIX_LOG_GENERATE_TIMESTAMP) &&
                   pg_pmix_info_true(&dirs[i]) && !how->stamp) {
            how->stamp = true;
            how->when = time(NULL);
        }
    }
}

/* One channel's text, "[2026-11-25T20:55:00Z] " first when stamped. */
static int log_one(pg_peer_t *peer, pg_log_channel_t ch, const log_how_t *how, const char *text)
{
    char line[1024];
    struct tm tm;

    if (how->stamp && gmtime_r(&how->when, &tm) != NULL &&
        strftime(line, sizeof(line), "[%Y-%m-%dT%H:%M:%SZ] ", &tm) > 0) {
        size_t n = strlen(line);

        snprintf(line + n, sizeof(line) - n, "%s", text);
        text = line;
    }
    if (peer->ops->log_to != NULL)
        return peer->ops->log_to(peer, ch, how->priority, text);
    if (ch != PG_LOG_STDERR)
        return -1;
    pg_peer_log(peer, "rank %d logged: %s", peer->rank, text);
    return 0;
}

/* PMIx_Log: data[] names the channels and texts, directives[] how.  All
 * requested channels served: SUCCESS; some: PARTIAL_SUCCESS; none:
 * NOT_SUPPORTED.  PMIX_LOG_ONCE: success once one channel took it. */
static pmix_status_t log_run(pg_peer_t *peer, const pmix_info_t *data, size_t ndata,
                             const pmix_info_t *dirs, size_t ndirs)
{
    log_how_t how;
    size_t asked = 0, served = 0;
    pg_log_channel_t ch;

    log_directives(dirs, ndirs, &how);
    for (size_t i = 0; i < ndata; i++) {
        if (!log_is_channel(&data[i]))
            continue; /* a directive given among the data (PMIX_LOG_SOURCE...) */
        asked++;
        if ((how.once && served > 0) || !log_channel_of(&data[i], &ch))
            continue;
        if (log_one(peer, ch, &how, data[i].value.data.string) == 0)
            served++;
    }
    if (asked == 0)
        return PMIX_ERR_BAD_PARAM; /* nothing to log */
    if (served == 0)
        return PMIX_ERR_NOT_SUPPORTED;
    return served == asked || how.once ? PMIX_SUCCESS : PMIX_ERR_PARTIAL_SUCCESS;
}

int pg_pmix_serve_log(pg_pmix_in_t *in)
{
    pmix_info_t *data = NULL, *dirs = NULL;
    size_t ndata = 0, ndirs = 0;
    pmix_status_t rc;

    if (pg_pmix_unpack_array(in->args, (void **)&data, &ndata, PMIX_INFO) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&dirs, &ndirs, PMIX_INFO) != PMIX_SUCCESS) {
        pg_pmix_array_free(data, ndata, PMIX_INFO);
        return PG_HANDLER_FAIL;
    }
    rc = log_run(in->peer, data, ndata, dirs, ndirs);
    pg_pmix_array_free(data, ndata, PMIX_INFO);
    pg_pmix_array_free(dirs, ndirs, PMIX_INFO);
    return pg_pmix_reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
}

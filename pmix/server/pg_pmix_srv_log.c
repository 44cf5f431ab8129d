/*
 * pg_pmix_srv_log: PMIx_Log -- the host's stdout, stderr or syslog, through
 * pg_peer_ops_t.log_to.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/pg_engine.h"
#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server_int.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"

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

/* One channel's text, "[2026-11-25T20:55:00Z] " first when stamped.  The
 * newlines that end it are dropped (log texts usually end with one: it is
 * not part of the message, and the host would show it escaped); any other
 * stays in the one line, escaped by the host, so one message is one line.
 * No length limit here: the host takes the whole text. */
static int log_one(pg_peer_t *peer, pg_log_channel_t ch, const log_how_t *how, const char *text)
{
    char stamp[32] = "";
    size_t len = strlen(text);
    struct tm tm;
    char *line;
    int rc;

    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        len--;
    if (how->stamp && gmtime_r(&how->when, &tm) != NULL)
        (void)strftime(stamp, sizeof(stamp), "[%Y-%m-%dT%H:%M:%SZ] ", &tm);
    if ((line = malloc(strlen(stamp) + len + 1)) == NULL)
        return -1;
    memcpy(line, stamp, strlen(stamp));
    memcpy(line + strlen(stamp), text, len);
    line[strlen(stamp) + len] = '\0';
    if (peer->ops->log_to != NULL)
        rc = peer->ops->log_to(peer, ch, how->priority, line);
    else if (ch != PG_LOG_STDERR)
        rc = -1;
    else {
        pg_peer_log(peer, "rank %d logged: %s", peer->rank, line);
        rc = 0;
    }
    free(line);
    return rc;
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

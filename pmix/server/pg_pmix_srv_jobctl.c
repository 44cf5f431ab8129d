/*
 * pg_pmix_srv_jobctl: what a process asks of the resource manager about
 * running processes -- PMIx_Job_control (signals to ranks of its job, the
 * declarations that its job is preemptible and how it checkpoints, a
 * checkpoint of ranks) and PMIx_Process_monitor (heartbeats, files).
 *
 * Why it exists: the actions go to the host through the seam (job_signal,
 * monitor); what processes declare about themselves the engine keeps
 * (pg_jobctl_set), so that a later checkpoint request and a query find it;
 * a checkpoint is delivered the way the target declared: its event
 * (raised here, through the engine, to that process alone) or its signal.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "engine/pg_engine.h"
#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server_int.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"

/* ---- job control: the request ---------------------------------------------- */

/* What one job-control request asks, read from its directives. */
typedef struct jobctl_req {
    int signo;              /* KILL / TERMINATE / SIGNAL: the signal, 0: none */
    bool bad;               /* a directive with a value that cannot be */
    bool unserved;          /* an action pmigate does not serve (pause, restart...) */
    bool declares;          /* PREEMPTIBLE or CHECKPOINT_METHOD: about the caller */
    pg_jobctl_t decl;       /* the caller's declarations, updated */
    const char *checkpoint; /* PMIX_JOB_CTRL_CHECKPOINT: its id, NULL: no checkpoint */
    int ckpt_signal;        /* the request's own method (CHECKPOINT_SIGNAL) */
    pmix_status_t ckpt_event; /* ... (CHECKPOINT_EVENT) */
    const char *request_id; /* PMIX_JOB_CTRL_ID */
} jobctl_req_t;

/* A signal number in a value (1..64), or 0. */
static int signal_of(const pmix_value_t *v)
{
    uint64_t n;

    return pg_pmix_value_uint(v, &n) && n > 0 && n < 65 ? (int)n : 0;
}

/* CHECKPOINT_EVENT: the event code (a status), or true for the Standard's
 * PMIX_JCTRL_CHECKPOINT; 0 for no event. */
static pmix_status_t event_code_of(const pmix_info_t *i)
{
    if (i->value.type == PMIX_STATUS)
        return i->value.data.status;
    if (i->value.type == PMIX_INT || i->value.type == PMIX_INT32)
        return i->value.type == PMIX_INT ? i->value.data.integer : i->value.data.int32;
    return pg_pmix_info_true(i) ? PMIX_JCTRL_CHECKPOINT : 0;
}

/* The methods of a PMIX_JOB_CTRL_CHECKPOINT_METHOD array (or given
 * directly among the directives) into *sig / *ev. */
static void method_read(const pmix_info_t *i, int *sig, pmix_status_t *ev, bool *bad)
{
    if (pg_pmix_info_is(i, PMIX_JOB_CTRL_CHECKPOINT_SIGNAL))
        *bad |= (*sig = signal_of(&i->value)) == 0;
    else if (pg_pmix_info_is(i, PMIX_JOB_CTRL_CHECKPOINT_EVENT))
        *ev = event_code_of(i);
}

static void jobctl_read_one(const pmix_info_t *i, jobctl_req_t *q)
{
    static const char *const unserved[] = {
        PMIX_JOB_CTRL_PAUSE,  PMIX_JOB_CTRL_RESUME,    PMIX_JOB_CTRL_CANCEL,
        PMIX_JOB_CTRL_RESTART, PMIX_JOB_CTRL_PROVISION,
    };
    const pmix_data_array_t *da = i->value.data.darray;

    if (pg_pmix_info_is(i, PMIX_JOB_CTRL_KILL) && pg_pmix_info_true(i))
        q->signo = SIGKILL;
    else if (pg_pmix_info_is(i, PMIX_JOB_CTRL_TERMINATE) && pg_pmix_info_true(i))
        q->signo = SIGTERM;
    else if (pg_pmix_info_is(i, PMIX_JOB_CTRL_SIGNAL))
        q->bad |= (q->signo = signal_of(&i->value)) == 0;
    else if (pg_pmix_info_is(i, PMIX_JOB_CTRL_PREEMPTIBLE)) {
        q->declares = true;
        q->decl.preemptible = pg_pmix_info_true(i);
    } else if (pg_pmix_info_is(i, PMIX_JOB_CTRL_CHECKPOINT_METHOD)) {
        q->declares = true;
        /* no value (OpenPMIx's jctrl example fills the array but leaves the
         * type unset, so nothing of it travels, under OpenPMIx too): no
         * method declared */
        if (i->value.type == PMIX_UNDEF)
            return;
        if (i->value.type != PMIX_DATA_ARRAY || da == NULL || da->type != PMIX_INFO) {
            q->bad = true;
            return;
        }
        q->decl.ckpt_signal = 0;
        q->decl.ckpt_event = 0;
        for (size_t k = 0; k < da->size; k++)
            method_read(&((const pmix_info_t *)da->array)[k], &q->decl.ckpt_signal,
                        &q->decl.ckpt_event, &q->bad);
    } else if (pg_pmix_info_is(i, PMIX_JOB_CTRL_CHECKPOINT)) {
        q->checkpoint = i->value.type == PMIX_STRING && i->value.data.string != NULL
                            ? i->value.data.string
                            : "";
    } else if (pg_pmix_info_is(i, PMIX_JOB_CTRL_CHECKPOINT_SIGNAL) ||
               pg_pmix_info_is(i, PMIX_JOB_CTRL_CHECKPOINT_EVENT)) {
        method_read(i, &q->ckpt_signal, &q->ckpt_event, &q->bad);
    } else if (pg_pmix_info_is(i, PMIX_JOB_CTRL_ID) && i->value.type == PMIX_STRING) {
        q->request_id = i->value.data.string;
    } else {
        for (size_t k = 0; k < sizeof(unserved) / sizeof(unserved[0]); k++)
            q->unserved |= pg_pmix_info_is(i, unserved[k]);
    }
}

/* ---- job control: targets --------------------------------------------------- */

/* The ranks of this job the targets name (wildcard or none: all of them,
 * *all set). */
static pmix_status_t jobctl_ranks(pg_peer_t *peer, const pmix_proc_t *t, size_t n, int **ranks,
                                  size_t *nranks, bool *all)
{
    const char *own = peer->job->kvsname;

    *ranks = NULL;
    *nranks = 0;
    *all = n == 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].nspace[0] != '\0' && strcmp(t[i].nspace, own) != 0)
            return PMIX_ERR_NOT_SUPPORTED; /* another job: not ours to act on */
        if (t[i].rank == PMIX_RANK_WILDCARD)
            *all = true;
        else if (t[i].rank >= (pmix_rank_t)peer->job->size)
            return PMIX_ERR_BAD_PARAM;
    }
    if (*all)
        return PMIX_SUCCESS;
    if ((*ranks = calloc(n, sizeof(**ranks))) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        (*ranks)[i] = (int)t[i].rank;
    *nranks = n;
    return PMIX_SUCCESS;
}

/* ---- job control: checkpoints ----------------------------------------------- */

/* Raises checkpoint event `code` to `rank` alone, naming it and the
 * checkpoint's id.  The host raises it (origin: no process of the job), so
 * a process checkpointing itself hears it too. */
static pmix_status_t checkpoint_event(pg_pmix_in_t *in, int rank, pmix_status_t code,
                                      const jobctl_req_t *q)
{
    pg_engine_t *e = in->peer->job->engine;
    const char *ns = in->peer->job->kvsname;
    pg_proc_t target = { ns, (pmix_rank_t)rank };
    pg_proc_t requester = pg_pmix_session_proc(in->s);
    pmix_info_t info[3];
    pmix_proc_t affected;
    pmix_data_buffer_t packed;
    size_t n = 0, delivered = 0;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&affected, ns, (pmix_rank_t)rank);
    PMIX_INFO_LOAD(&info[n++], PMIX_EVENT_AFFECTED_PROC, &affected, PMIX_PROC);
    PMIX_INFO_LOAD(&info[n++], PMIX_JOB_CTRL_CHECKPOINT, q->checkpoint, PMIX_STRING);
    if (q->request_id != NULL)
        PMIX_INFO_LOAD(&info[n++], PMIX_JOB_CTRL_ID, q->request_id, PMIX_STRING);
    pg_buffer_construct(&packed);
    rc = pg_pmix_pack_array(&packed, info, n, PMIX_INFO);
    if (rc == PMIX_SUCCESS) {
        pg_event_t ev = { code, requester, { ns, PMIX_RANK_UNDEF }, PMIX_RANGE_CUSTOM,
                          &target, 1, packed.base_ptr, packed.bytes_used, NULL, 0 };
        rc = pg_event_notify(e, &ev, &delivered);
    }
    pg_buffer_destruct(&packed);
    for (size_t i = 0; i < n; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
    /* nobody listens there: the process cannot be told (it never
     * subscribed, or it has gone) */
    return rc == PMIX_SUCCESS && delivered == 0 ? PMIX_ERR_NOT_FOUND : rc;
}

/* How rank checkpoints: the request's own method, else its declaration
 * (the event when it declared both: it listens for it). */
static void checkpoint_method(pg_engine_t *e, const char *ns, int rank, const jobctl_req_t *q,
                              int *sig, pmix_status_t *ev)
{
    pg_jobctl_t d = { 0 };
    pg_proc_t p = { ns, (pmix_rank_t)rank };

    *sig = q->ckpt_signal;
    *ev = q->ckpt_event;
    if (*sig != 0 || *ev != 0)
        return;
    (void)pg_jobctl_get(e, &p, &d);
    *ev = d.ckpt_event;
    *sig = d.ckpt_event != 0 ? 0 : d.ckpt_signal;
}

/* The signals a checkpoint still has to send (after the reply). */
typedef struct ckpt_signals {
    int *ranks, *signals;
    size_t n;
} ckpt_signals_t;

/* Checkpoints the ranks: each is told the way it asked -- events now,
 * signals into *later.  SUCCESS when all were, PARTIAL_SUCCESS when some,
 * NOT_SUPPORTED when none could be (no method declared, nobody listening
 * for the event, or a host that cannot signal). */
static pmix_status_t checkpoint_ranks(pg_pmix_in_t *in, const int *ranks, size_t nranks,
                                      bool all, const jobctl_req_t *q, ckpt_signals_t *later)
{
    pg_engine_t *e = in->peer->job->engine;
    size_t n = all ? (size_t)in->peer->job->size : nranks, told = 0;

    later->ranks = calloc(n > 0 ? n : 1, sizeof(int));
    later->signals = calloc(n > 0 ? n : 1, sizeof(int));
    if (later->ranks == NULL || later->signals == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        int rank = all ? (int)i : ranks[i], sig;
        pmix_status_t ev;

        checkpoint_method(e, in->peer->job->kvsname, rank, q, &sig, &ev);
        if (ev != 0 && checkpoint_event(in, rank, ev, q) == PMIX_SUCCESS) {
            told++;
        } else if (sig != 0 && in->peer->ops->job_signal != NULL) {
            later->ranks[later->n] = rank;
            later->signals[later->n++] = sig;
            told++;
        }
    }
    return told == n ? PMIX_SUCCESS : told > 0 ? PMIX_ERR_PARTIAL_SUCCESS
                                              : PMIX_ERR_NOT_SUPPORTED;
}

/* targets[], directives[] -> status.  Signals go after the reply, so a
 * caller that signals itself still hears back; a checkpoint event goes
 * before it (the reply says whether it reached its targets). */
int pg_pmix_serve_job_control(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
    pmix_proc_t *targets = NULL;
    pmix_info_t *info = NULL;
    size_t ntargets = 0, ninfo = 0, nranks = 0;
    int *ranks = NULL;
    bool all = false;
    jobctl_req_t q = { 0 };
    ckpt_signals_t later = { 0 };
    pmix_status_t rc = PMIX_ERR_NOT_SUPPORTED;

    if (pg_pmix_unpack_array(in->args, (void **)&targets, &ntargets, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        pg_pmix_array_free(targets, ntargets, PMIX_PROC);
        return PG_HANDLER_FAIL;
    }
    if (e != NULL)
        (void)pg_jobctl_get(e, &self, &q.decl);
    for (size_t i = 0; i < ninfo; i++)
        jobctl_read_one(&info[i], &q);
    if (q.bad)
        rc = PMIX_ERR_BAD_PARAM;
    else if (q.unserved || e == NULL || (q.signo != 0 && in->peer->ops->job_signal == NULL))
        rc = PMIX_ERR_NOT_SUPPORTED;
    else if (q.signo != 0 || q.checkpoint != NULL)
        rc = jobctl_ranks(in->peer, targets, ntargets, &ranks, &nranks, &all);
    else if (q.declares)
        rc = PMIX_SUCCESS;
    /* a declaration is about the caller itself, whatever the targets say
     * (OpenPMIx's jctrl passes none) */
    if (rc == PMIX_SUCCESS && q.declares)
        rc = pg_jobctl_set(e, &self, &q.decl);
    if (rc == PMIX_SUCCESS && q.checkpoint != NULL)
        rc = checkpoint_ranks(in, ranks, nranks, all, &q, &later);
    (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, rc);
    if (q.signo != 0 && rc == PMIX_SUCCESS)
        in->peer->ops->job_signal(in->peer, ranks, nranks, q.signo);
    for (size_t i = 0; i < later.n; i++)
        in->peer->ops->job_signal(in->peer, &later.ranks[i], 1, later.signals[i]);
    free(later.ranks);
    free(later.signals);
    free(ranks);
    pg_pmix_array_free(targets, ntargets, PMIX_PROC);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return PG_HANDLER_OK;
}

/* ---- process monitoring ----------------------------------------------------- */

/* The alert's code when the request named none. */
static int alert_code(pg_monitor_kind_t kind, pmix_status_t error)
{
    if (error != PMIX_SUCCESS)
        return error;
    return kind == PG_MONITOR_FILE ? PMIX_MONITOR_FILE_ALERT : PMIX_MONITOR_HEARTBEAT_ALERT;
}

static pmix_status_t uint32_of(const pmix_info_t *i, uint32_t *out)
{
    uint64_t u;

    if (!pg_pmix_value_uint(&i->value, &u) || u > UINT32_MAX)
        return PMIX_ERR_BAD_PARAM;
    *out = (uint32_t)u;
    return PMIX_SUCCESS;
}

/* The directives of a monitoring request into *req. */
static pmix_status_t monitor_directives(const pmix_info_t *d, size_t n, pg_monitor_req_t *req)
{
    pmix_status_t rc = PMIX_SUCCESS;
    bool file = req->kind == PG_MONITOR_FILE;

    for (size_t i = 0; i < n && rc == PMIX_SUCCESS; i++) {
        const pmix_info_t *x = &d[i];

        if (pg_pmix_info_is(x, PMIX_MONITOR_ID))
            req->id = x->value.type == PMIX_STRING ? x->value.data.string : NULL;
        else if (pg_pmix_info_is(x, file ? PMIX_MONITOR_FILE_CHECK_TIME
                                         : PMIX_MONITOR_HEARTBEAT_TIME))
            rc = uint32_of(x, &req->period_s);
        else if (pg_pmix_info_is(x, file ? PMIX_MONITOR_FILE_DROPS
                                         : PMIX_MONITOR_HEARTBEAT_DROPS))
            rc = uint32_of(x, &req->drops);
        else if (pg_pmix_info_is(x, PMIX_MONITOR_APP_CONTROL))
            req->app_control = pg_pmix_info_true(x);
        else if (pg_pmix_info_is(x, PMIX_RANGE) && x->value.type == PMIX_DATA_RANGE)
            req->range = x->value.data.range;
        else if (file && pg_pmix_info_is(x, PMIX_MONITOR_FILE_SIZE) && pg_pmix_info_true(x))
            req->file_checks |= PG_MONITOR_SIZE;
        else if (file && pg_pmix_info_is(x, PMIX_MONITOR_FILE_ACCESS) && pg_pmix_info_true(x))
            req->file_checks |= PG_MONITOR_ACCESS;
        else if (file && pg_pmix_info_is(x, PMIX_MONITOR_FILE_MODIFY) && pg_pmix_info_true(x))
            req->file_checks |= PG_MONITOR_MODIFY;
    }
    if (rc != PMIX_SUCCESS || req->kind == PG_MONITOR_BEAT || req->kind == PG_MONITOR_CANCEL)
        return rc;
    /* a watch needs its period, and a file what to look at */
    return req->period_s == 0 || (file && req->file_checks == 0) ? PMIX_ERR_BAD_PARAM : rc;
}

/* The monitor argument: which watch (or beat, or cancel) it is. */
static pmix_status_t monitor_kind(const pmix_info_t *m, pg_monitor_req_t *req)
{
    if (pg_pmix_info_is(m, PMIX_SEND_HEARTBEAT))
        req->kind = PG_MONITOR_BEAT;
    else if (pg_pmix_info_is(m, PMIX_MONITOR_HEARTBEAT))
        req->kind = PG_MONITOR_HEARTBEAT;
    else if (pg_pmix_info_is(m, PMIX_MONITOR_CANCEL)) {
        req->kind = PG_MONITOR_CANCEL;
        req->id = m->value.type == PMIX_STRING ? m->value.data.string : NULL;
    } else if (pg_pmix_info_is(m, PMIX_MONITOR_FILE)) {
        req->kind = PG_MONITOR_FILE;
        req->path = m->value.type == PMIX_STRING ? m->value.data.string : NULL;
        if (req->path == NULL || req->path[0] == '\0')
            return PMIX_ERR_BAD_PARAM;
    } else
        return PMIX_ERR_NOT_SUPPORTED; /* resource usage, ...: nothing watched */
    return PMIX_SUCCESS;
}

/* INFO monitor, STATUS code, directives[] -> status */
int pg_pmix_serve_monitor(pg_pmix_in_t *in)
{
    pmix_info_t monitor, *dirs = NULL;
    pmix_status_t error = PMIX_SUCCESS, rc;
    pg_monitor_req_t req = { .range = PMIX_RANGE_NAMESPACE };
    size_t ndirs = 0;

    PMIX_INFO_CONSTRUCT(&monitor);
    if (pg_pmix_unpack_one(in->args, &monitor, PMIX_INFO) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(in->args, &error, PMIX_STATUS) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&dirs, &ndirs, PMIX_INFO) != PMIX_SUCCESS) {
        PMIX_INFO_DESTRUCT(&monitor);
        return PG_HANDLER_FAIL;
    }
    rc = monitor_kind(&monitor, &req);
    if (rc == PMIX_SUCCESS)
        rc = monitor_directives(dirs, ndirs, &req);
    req.code = alert_code(req.kind, error);
    if (rc == PMIX_SUCCESS)
        rc = in->peer->ops->monitor != NULL ? in->peer->ops->monitor(in->peer, &req)
                                            : PMIX_ERR_NOT_SUPPORTED;
    PMIX_INFO_DESTRUCT(&monitor);
    pg_pmix_array_free(dirs, ndirs, PMIX_INFO);
    return pg_pmix_reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
}

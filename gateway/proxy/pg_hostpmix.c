/*
 * pg_hostpmix: the OpenPMIx client calls of `pmigate proxy`.  See
 * pg_hostpmix.h.  This is the one translation unit compiled against
 * OpenPMIx's headers (pkg-config pmix); it includes none of pmigate's PMIx
 * headers.
 *
 * What the host carries (docs/proxy.md, "Fence data"): the
 * start-up allgather of the nodes' cards (one small key per proxy, put
 * once) and the whole-job fences, without data: the fences' data crosses
 * the proxies' mesh, because OpenPMIx 4.2.2's store keeps every key a
 * client ever put, sends all of them again with every commit and every
 * collecting fence, and corrupts a key re-put with a value of another
 * size -- no key that a long job puts fence after fence can stay the size
 * of one fence's data.
 */
#include "gateway/proxy/pg_hostpmix.h"

#include "gateway/util/pg_be.h"
#include "wire/pg_clock.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <pmix.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The start-up allgather's key (put once). */
#define PG_HOST_CARD_KEY "pmigate.card"

struct pg_hostpmix {
    pmix_proc_t me;
    int size;
    int pipe_r, pipe_w;        /* progress thread -> libevent thread */
    struct event *ev;          /* on pipe_r */
    /* the running fence */
    bool busy;
    atomic_int status;         /* its result, set by the progress thread */
    atomic_bool complete;      /* it is over: the pipe's byte is for it */
    uint64_t started_at;
    _Atomic uint64_t fenced_at;
    pg_hostpmix_times_t times; /* of the last fence */
    pg_hostpmix_done_fn done;
    void *done_arg;
    /* the host's loss */
    atomic_bool lost;
    bool lost_told;
    void (*lost_fn)(void *arg);
    void *lost_arg;
};

/* The proxy whose host connection is watched (one per process: OpenPMIx's
 * event handlers carry no context of ours). */
static pg_hostpmix_t *watched;

/* A host is there when the launcher left its rendezvous in our environment;
 * without one OpenPMIx would start a singleton instead of failing. */
static bool host_present(void)
{
    extern char **environ;

    for (char **e = environ; *e != NULL; e++)
        if (strncmp(*e, "PMIX_SERVER_URI", 15) == 0)
            return true;
    return false;
}

static int job_size(pg_hostpmix_t *h)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    int size = -1;

    PMIX_PROC_CONSTRUCT(&wild);
    PMIX_LOAD_PROCID(&wild, h->me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v != NULL &&
        v->type == PMIX_UINT32)
        size = (int)v->data.uint32;
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
    return size;
}

static pmix_status_t put_bytes(pmix_scope_t scope, const char *key, const void *data, size_t len)
{
    pmix_value_t v;

    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)data; /* PMIx_Put copies it */
    v.data.bo.size = len;
    return PMIx_Put(scope, key, &v);
}

/* ---- life cycle ---- */

pg_hostpmix_t *pg_hostpmix_init(char *err, size_t errlen)
{
    pg_hostpmix_t *h;
    pmix_status_t st;

    if (!host_present()) {
        snprintf(err, errlen, "no PMIx host runtime found (start it under mpirun or "
                              "srun --mpi=pmix, one per node)");
        return NULL;
    }
    h = calloc(1, sizeof(*h));
    if (h == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    h->pipe_r = h->pipe_w = -1;
    st = PMIx_Init(&h->me, NULL, 0);
    if (st != PMIX_SUCCESS) {
        snprintf(err, errlen, "cannot reach the PMIx host runtime: %s", PMIx_Error_string(st));
        free(h);
        return NULL;
    }
    h->size = job_size(h);
    if (h->size < 1 || h->me.rank >= (pmix_rank_t)h->size) {
        snprintf(err, errlen, "the PMIx host did not say how many proxies there are");
        PMIx_Finalize(NULL, 0);
        free(h);
        return NULL;
    }
    return h;
}

void pg_hostpmix_finalize(pg_hostpmix_t *h)
{
    if (h == NULL)
        return;
    if (watched == h)
        watched = NULL;
    /* first: it stops OpenPMIx's progress thread, which may still call
     * back and write into the pipe */
    PMIx_Finalize(NULL, 0);
    if (h->ev != NULL)
        event_free(h->ev);
    if (h->pipe_r >= 0)
        close(h->pipe_r);
    if (h->pipe_w >= 0)
        close(h->pipe_w);
    free(h);
}

int pg_hostpmix_rank(const pg_hostpmix_t *h)
{
    return (int)h->me.rank;
}

int pg_hostpmix_size(const pg_hostpmix_t *h)
{
    return h->size;
}

void pg_hostpmix_blobs_free(const pg_hostpmix_t *h, void **blobs, size_t *lens)
{
    for (int i = 0; blobs != NULL && i < h->size; i++)
        free(blobs[i]);
    free(blobs);
    free(lens);
}

/* ---- the start-up allgather ---- */

/* After the collecting fence: every proxy's card, this proxy's
 * own included. */
static pmix_status_t get_cards(pg_hostpmix_t *h, void ***out, size_t **lens)
{
    void **blobs = calloc((size_t)h->size, sizeof(*blobs));
    size_t *len = calloc((size_t)h->size, sizeof(*len));
    pmix_status_t st = blobs && len ? PMIX_SUCCESS : PMIX_ERR_NOMEM;

    for (int i = 0; i < h->size && st == PMIX_SUCCESS; i++) {
        pmix_proc_t peer;
        pmix_value_t *v = NULL;

        PMIX_LOAD_PROCID(&peer, h->me.nspace, (pmix_rank_t)i);
        st = PMIx_Get(&peer, PG_HOST_CARD_KEY, NULL, 0, &v);
        if (st == PMIX_SUCCESS && (v == NULL || v->type != PMIX_BYTE_OBJECT))
            st = PMIX_ERR_TYPE_MISMATCH;
        if (st == PMIX_SUCCESS && v->data.bo.size > 0) {
            blobs[i] = malloc(v->data.bo.size);
            if (blobs[i] == NULL)
                st = PMIX_ERR_NOMEM;
            else
                memcpy(blobs[i], v->data.bo.bytes, v->data.bo.size);
            len[i] = v->data.bo.size;
        }
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
    }
    if (st != PMIX_SUCCESS) {
        pg_hostpmix_blobs_free(h, blobs, len);
        return st;
    }
    *out = blobs;
    *lens = len;
    return PMIX_SUCCESS;
}

/* The allgather's fence is over, or its deadline passed: the loop stops. */
typedef struct gather_wait {
    struct event_base *base;
    bool done, timed_out;
    int status;
} gather_wait_t;

static void on_gather_fenced(void *arg, int status, const char *msg)
{
    gather_wait_t *w = arg;

    (void)msg;
    w->done = true;
    w->status = status;
    event_base_loopbreak(w->base);
}

static void on_gather_deadline(evutil_socket_t fd, short what, void *arg)
{
    gather_wait_t *w = arg;

    (void)fd;
    (void)what;
    w->timed_out = true;
    event_base_loopbreak(w->base);
}

/* timer fires at deadline (pg_clock_now's time) at the earliest by the
 * microsecond: the remainder rounded up. */
static void arm_until(struct event *timer, uint64_t deadline, uint64_t now)
{
    uint64_t left = deadline > now ? (deadline - now + 999u) / 1000u : 0; /* us */
    struct timeval tv = { (time_t)(left / 1000000u), (suseconds_t)(left % 1000000u) };

    evtimer_add(timer, &tv);
}

/* Why the loop and not PMIx_Fence: a blocking fence waits as long as the
 * slowest proxy, forever for one that is stopped or was killed before it
 * joined; the start-up has a deadline (docs/proxy.md,
 * "Start-up"). */
static int fence_by(pg_hostpmix_t *h, struct event_base *base, uint64_t deadline, char *err,
                    size_t errlen)
{
    gather_wait_t w = { .base = base };
    struct event *timer = evtimer_new(base, on_gather_deadline, &w);
    uint64_t now = pg_clock_now();
    int rc = -1;

    if (timer == NULL) {
        snprintf(err, errlen, "out of resources");
        return -1;
    }
    if (deadline > 0)
        arm_until(timer, deadline, now);
    if (pg_hostpmix_fence(h, on_gather_fenced, &w, err, errlen) != 0)
        goto out;
    while (!w.done && !atomic_load(&h->lost)) {
        /* libevent's clock is coarse (CLOCK_MONOTONIC_COARSE: a tick,
         * several ms, behind ours): its timer may fire before the deadline
         * by pg_clock_now(), and the proxy would then not call the end the
         * job's --timeout (start_timed_out).  Only our clock says the
         * deadline passed. */
        if (w.timed_out) {
            now = pg_clock_now();
            if (now >= deadline)
                break;
            w.timed_out = false;
            arm_until(timer, deadline, now);
        }
        event_base_loop(base, EVLOOP_ONCE);
    }
    if (w.done && w.status == 0)
        rc = 0;
    else if (w.done)
        snprintf(err, errlen, "exchange with the other proxies failed: the host's fence failed");
    else if (w.timed_out) {
        h->done = NULL; /* w goes with this frame; the fence's end, if it comes, is no one's */
        rc = PG_HOSTPMIX_TIMED_OUT;
    }
    else
        snprintf(err, errlen, "the host runtime is gone");
out:
    event_free(timer);
    return rc;
}

int pg_hostpmix_allgather(pg_hostpmix_t *h, const void *mine, size_t len, uint64_t deadline,
                          void ***out, size_t **lens, char *err, size_t errlen)
{
    pmix_status_t st;
    int rc;

    st = put_bytes(PMIX_GLOBAL, PG_HOST_CARD_KEY, mine, len);
    if (st == PMIX_SUCCESS)
        st = PMIx_Commit();
    if (st != PMIX_SUCCESS) {
        snprintf(err, errlen, "exchange with the other proxies failed: %s",
                 PMIx_Error_string(st));
        return -1;
    }
    rc = fence_by(h, event_get_base(h->ev), deadline, err, errlen);
    if (rc != 0)
        return rc;
    st = get_cards(h, out, lens);
    if (st != PMIX_SUCCESS) {
        snprintf(err, errlen, "exchange with the other proxies failed: %s",
                 PMIx_Error_string(st));
        return -1;
    }
    return 0;
}

/* ---- the non-blocking fence ---- */

/* Hands the fence's end (or the host's loss) over to the libevent thread. */
static void wake_loop(pg_hostpmix_t *h)
{
    char byte = 1;

    while (write(h->pipe_w, &byte, 1) < 0 && errno == EINTR)
        ;
}

/* OpenPMIx's progress thread (or the loop, when the fence was done
 * inline): the fence is over. */
static void on_fence_done(pmix_status_t status, void *cbdata)
{
    pg_hostpmix_t *h = cbdata;

    atomic_store(&h->fenced_at, pg_clock_now());
    atomic_store(&h->status, (int)status);
    atomic_store(&h->complete, true);
    wake_loop(h);
}

void pg_hostpmix_last_times(const pg_hostpmix_t *h, pg_hostpmix_times_t *t)
{
    *t = h->times;
}

/* The libevent thread: the host was lost. */
static void report_lost(pg_hostpmix_t *h)
{
    if (!atomic_load(&h->lost) || h->lost_told || h->lost_fn == NULL)
        return;
    h->lost_told = true;
    h->lost_fn(h->lost_arg);
}

/* The libevent thread: the fence is over (or the host is lost). */
static void on_pipe(evutil_socket_t fd, short what, void *arg)
{
    pg_hostpmix_t *h = arg;
    uint64_t picked_up = pg_clock_now(), fenced;
    pmix_status_t st;
    char byte, msg[160] = "";

    (void)what;
    while (read(fd, &byte, 1) < 0 && errno == EINTR)
        ;
    report_lost(h);
    if (!h->busy || !atomic_exchange(&h->complete, false))
        return;
    h->busy = false;
    fenced = atomic_load(&h->fenced_at);
    h->times.fence_ns = fenced > h->started_at ? fenced - h->started_at : 0;
    h->times.handoff_ns = picked_up > fenced ? picked_up - fenced : 0;
    st = (pmix_status_t)atomic_load(&h->status);
    if (st != PMIX_SUCCESS)
        snprintf(msg, sizeof(msg), "the host's fence failed: %s", PMIx_Error_string(st));
    if (h->done != NULL)
        h->done(h->done_arg, st == PMIX_SUCCESS ? 0 : -1, msg);
}

/* OpenPMIx's progress thread: the host's connection is lost. */
static void on_host_lost(size_t evhdlr_id, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                         size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                         void *cbdata)
{
    pg_hostpmix_t *h = watched;

    (void)evhdlr_id;
    (void)status;
    (void)source;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    if (h != NULL && !atomic_exchange(&h->lost, true) && h->pipe_w >= 0)
        wake_loop(h);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

void pg_hostpmix_on_lost(pg_hostpmix_t *h, void (*fn)(void *arg), void *arg)
{
    pmix_status_t codes[] = { PMIX_ERR_LOST_CONNECTION, PMIX_ERR_UNREACH };

    h->lost_fn = fn;
    h->lost_arg = arg;
    if (watched == NULL) {
        watched = h;
        (void)PMIx_Register_event_handler(codes, 2, NULL, 0, on_host_lost, NULL, NULL);
    }
}

int pg_hostpmix_attach(pg_hostpmix_t *h, struct event_base *base)
{
    int fds[2];

    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    h->pipe_r = fds[0];
    h->pipe_w = fds[1];
    h->ev = event_new(base, h->pipe_r, EV_READ | EV_PERSIST, on_pipe, h);
    if (h->ev == NULL || event_add(h->ev, NULL) != 0)
        return -1;
    return 0;
}

/* The fence asks for data collection although no proxy puts anything
 * for it (the host sends again the one card each proxy put at start):
 * Slurm's pmix plugin (22.05) answers a fence without PMIX_COLLECT_DATA at
 * once, before the other proxies joined, unless its PMIxFenceBarrier is
 * set -- no synchronisation at all. */
int pg_hostpmix_fence(pg_hostpmix_t *h, pg_hostpmix_done_fn done, void *arg, char *err,
                      size_t errlen)
{
    pmix_info_t info;
    bool yes = true;
    pmix_status_t st;

    if (h->busy || h->ev == NULL) {
        snprintf(err, errlen, "a fence with the host is already running");
        return -1;
    }
    atomic_store(&h->complete, false);
    h->started_at = pg_clock_now();
    h->times = (pg_hostpmix_times_t){ 0 };
    h->busy = true;
    h->done = done;
    h->done_arg = arg;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    st = PMIx_Fence_nb(NULL, 0, &info, 1, on_fence_done, h);
    PMIX_INFO_DESTRUCT(&info);
    if (st == PMIX_OPERATION_SUCCEEDED) { /* done inline: no callback comes */
        on_fence_done(PMIX_SUCCESS, h);
        return 0;
    }
    if (st != PMIX_SUCCESS) {
        h->busy = false;
        snprintf(err, errlen, "the host refused a fence: %s", PMIx_Error_string(st));
        return -1;
    }
    return 0;
}

void pg_hostpmix_abort(pg_hostpmix_t *h, int code, const char *msg)
{
    (void)PMIx_Abort(code, msg, NULL, 0);
    (void)h;
}

/*
 * pmix_events: which events reach which ranks of one job, whatever node
 * each runs on (pmigate's libpmix; tests/cluster/proxy_names.sh runs it
 * over separate hosts).  Every rank registers a default handler, then
 * fences.
 *
 *   pmix_events notify RAISER COUNTS
 *     rank RAISER raises one event per range, then a last one in range
 *     NAMESPACE; every other rank waits for that last one (its events come
 *     in order) and checks what it heard: NAMESPACE, UNDEF, SESSION and
 *     GLOBAL everywhere; CUSTOM only on the ranks listed (rank 0 and the
 *     last rank); LOCAL only on the raiser's node (COUNTS: each node's rank
 *     count, "2,2,2", ranks numbered node after node); PROC_LOCAL nowhere;
 *     each once, from the raiser, with its payload.
 *   pmix_events abort RAISER CODE
 *     rank RAISER calls PMIx_Abort(CODE); every other rank waits for
 *     PMIX_ERR_PROC_ABORTED from it and prints "pmix_events rank R: heard
 *     the abort of rank X", then waits to be ended.
 *   pmix_events lost RAISER
 *     rank RAISER exits without PMIx_Finalize; every other rank waits for
 *     PMIX_ERR_PROC_TERM_WO_SYNC from it and prints "pmix_events rank R:
 *     heard rank X end without finalize", then waits to be ended.
 *   pmix_events time RAISER N
 *     rank RAISER raises N NAMESPACE events, one at a time: the last rank
 *     answers each with one to RAISER alone (CUSTOM); RAISER prints the
 *     round trips ("pmix_events round_trip_us=T", ./dev bench).
 * Prints "pmix_events rank R: ok" (notify, time) or names the broken rule
 * and exits 1.
 */
#define CL_PROG "pmix_events"
#include "tests/cluster/cl_pmix.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    BASE = -3400, /* the test's codes: BASE - index of the range below */
    NRANGES = 8,
    WAIT_S = 30,
};

static const struct {
    pmix_data_range_t range;
    const char *name;
} ranges[NRANGES] = {
    { PMIX_RANGE_NAMESPACE, "NAMESPACE" }, { PMIX_RANGE_UNDEF, "UNDEF" },
    { PMIX_RANGE_SESSION, "SESSION" },     { PMIX_RANGE_GLOBAL, "GLOBAL" },
    { PMIX_RANGE_CUSTOM, "CUSTOM" },       { PMIX_RANGE_LOCAL, "LOCAL" },
    { PMIX_RANGE_PROC_LOCAL, "PROC_LOCAL" }, { PMIX_RANGE_NAMESPACE, "NAMESPACE (the last)" },
};

/* What the handler heard, per test code, and the last other event. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int count[NRANGES];
    int bad_source, bad_payload;
    pmix_status_t other;
    pmix_rank_t other_source;
    int rounds;
} heard = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, { 0 }, 0, 0, 0, 0, 0 };

static pmix_rank_t raiser;

static const char *payload_of(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++)
        if (strcmp(info[i].key, "pg.payload") == 0 && info[i].value.type == PMIX_STRING)
            return info[i].value.data.string;
    return NULL;
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    int k = BASE - status;
    char want[64];
    const char *got = payload_of(info, ninfo);

    (void)id;
    (void)results;
    (void)nresults;
    pthread_mutex_lock(&heard.lock);
    if (k >= 0 && k < NRANGES) {
        snprintf(want, sizeof(want), "from rank %u, %s", (unsigned)raiser, ranges[k].name);
        heard.count[k]++;
        heard.bad_source += source->rank != raiser;
        heard.bad_payload += got == NULL || strcmp(got, want) != 0;
    } else if (status == BASE - 99) {
        heard.rounds++;
    } else if (status == PMIX_ERR_PROC_ABORTED || status == PMIX_ERR_PROC_TERM_WO_SYNC) {
        heard.other = status;
        heard.other_source = source->rank;
    }
    pthread_cond_broadcast(&heard.cond);
    pthread_mutex_unlock(&heard.lock);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Waits until `done` holds (under the lock) or WAIT_S pass; its last value. */
static int wait_for(int (*done)(void *), void *arg)
{
    struct timespec until;
    int ok;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_S;
    pthread_mutex_lock(&heard.lock);
    while (!(ok = done(arg)))
        if (pthread_cond_timedwait(&heard.cond, &heard.lock, &until) != 0) {
            ok = done(arg);
            break;
        }
    pthread_mutex_unlock(&heard.lock);
    return ok;
}

static int last_heard(void *arg)
{
    (void)arg;
    return heard.count[NRANGES - 1] > 0;
}

static int other_heard(void *arg)
{
    return heard.other == *(pmix_status_t *)arg;
}

static int rounds_heard(void *arg)
{
    return heard.rounds >= *(int *)arg;
}

static void notify(const pmix_proc_t *me, pmix_status_t code, pmix_data_range_t range,
                   const char *payload, const pmix_proc_t *targets, size_t ntargets)
{
    pmix_info_t info[2];
    size_t n = 0;
    pmix_data_array_t arr = { PMIX_PROC, ntargets, (void *)targets };
    pmix_status_t st;

    PMIX_INFO_LOAD(&info[n++], "pg.payload", payload, PMIX_STRING);
    if (targets != NULL)
        PMIX_INFO_LOAD(&info[n++], PMIX_EVENT_CUSTOM_RANGE, &arr, PMIX_DATA_ARRAY);
    st = PMIx_Notify_event(code, me, range, info, n, NULL, NULL);
    CHECK(st == PMIX_SUCCESS, "notify %d: %s", code, PMIx_Error_string(st));
    PMIX_INFO_DESTRUCT(&info[0]);
}

/* The node of each rank, from "2,2,2". */
static int node_of(const char *counts, int r)
{
    int node = 0, first = 0;

    for (const char *c = counts; *c != '\0'; node++) {
        int n = atoi(c);

        if (r < first + n)
            return node;
        first += n;
        c = strchr(c, ',');
        if (c == NULL)
            break;
        c++;
    }
    return -1;
}

static void run_notify(const pmix_proc_t *me, int size, const char *counts)
{
    pmix_proc_t targets[2];
    char payload[64];

    PMIX_LOAD_PROCID(&targets[0], me->nspace, 0);
    PMIX_LOAD_PROCID(&targets[1], me->nspace, (pmix_rank_t)(size - 1));
    if (me->rank == raiser) {
        for (int k = 0; k < NRANGES; k++) {
            snprintf(payload, sizeof(payload), "from rank %u, %s", (unsigned)raiser,
                     ranges[k].name);
            notify(me, BASE - k, ranges[k].range, payload,
                   ranges[k].range == PMIX_RANGE_CUSTOM ? targets : NULL,
                   ranges[k].range == PMIX_RANGE_CUSTOM ? 2 : 0);
        }
        return;
    }
    CHECK(wait_for(last_heard, NULL), "the last event (NAMESPACE) from rank %u never came",
          (unsigned)raiser);
    pthread_mutex_lock(&heard.lock);
    for (int k = 0; k < NRANGES; k++) {
        int want = 1;

        if (ranges[k].range == PMIX_RANGE_CUSTOM)
            want = rank == 0 || rank == size - 1;
        else if (ranges[k].range == PMIX_RANGE_LOCAL)
            want = node_of(counts, rank) == node_of(counts, (int)raiser);
        else if (ranges[k].range == PMIX_RANGE_PROC_LOCAL)
            want = 0;
        CHECK(heard.count[k] == want, "heard the %s event %d times, expected %d",
              ranges[k].name, heard.count[k], want);
    }
    CHECK(heard.bad_source == 0 && heard.bad_payload == 0,
          "%d events with another source, %d with another payload", heard.bad_source,
          heard.bad_payload);
    pthread_mutex_unlock(&heard.lock);
}

/* Waits for `code` from the raiser, says so, and waits to be ended. */
static void run_hear(pmix_status_t code, const char *what)
{
    CHECK(wait_for(other_heard, &code), "no %s event came", PMIx_Error_string(code));
    CHECK(heard.other_source == raiser, "the %s event came from rank %u",
          PMIx_Error_string(code), (unsigned)heard.other_source);
    printf("pmix_events rank %d: heard %s\n", rank, what);
    fflush(stdout);
    for (;;)
        pause();
}

static int pings_heard(void *arg)
{
    return heard.count[0] >= *(int *)arg;
}

/* Round trips: rank RAISER's NAMESPACE event, the last rank's answer to
 * RAISER alone. */
static void run_time(const pmix_proc_t *me, int size, int n)
{
    pmix_proc_t back;
    char payload[64];

    PMIX_LOAD_PROCID(&back, me->nspace, raiser);
    snprintf(payload, sizeof(payload), "from rank %u, %s", (unsigned)raiser, ranges[0].name);
    for (int i = 1; i <= n; i++) {
        if (me->rank == raiser) {
            long long t0 = now_us();

            notify(me, BASE, PMIX_RANGE_NAMESPACE, payload, NULL, 0);
            CHECK(wait_for(rounds_heard, &i), "round %d: no answer", i);
            printf("pmix_events round_trip_us=%lld\n", now_us() - t0);
        } else if ((int)me->rank == size - 1) {
            CHECK(wait_for(pings_heard, &i), "round %d: no event", i);
            notify(me, BASE - 99, PMIX_RANGE_CUSTOM, "answer", &back, 1);
        }
    }
}

int main(int argc, char **argv)
{
    pmix_proc_t me;
    int size;

    CHECK(argc >= 3, "usage: pmix_events notify|abort|lost|time RAISER [COUNTS|CODE|N]");
    raiser = (pmix_rank_t)atoi(argv[2]);
    size = cl_init(&me);
    CHECK(PMIx_Register_event_handler(NULL, 0, NULL, 0, handler, NULL, NULL) > 0,
          "register the handler");
    barrier(); /* every handler registered before anyone raises */
    if (strcmp(argv[1], "abort") == 0) {
        if (me.rank == raiser) {
            usleep(200 * 1000);
            PMIx_Abort(argc > 3 ? atoi(argv[3]) : 1, "pmix_events abort", NULL, 0);
            for (;;)
                pause();
        }
        char what[64];
        snprintf(what, sizeof(what), "the abort of rank %u", (unsigned)raiser);
        run_hear(PMIX_ERR_PROC_ABORTED, what);
    }
    if (strcmp(argv[1], "lost") == 0) {
        if (me.rank == raiser) {
            usleep(200 * 1000);
            _exit(0);
        }
        char what[64];
        snprintf(what, sizeof(what), "rank %u end without finalize", (unsigned)raiser);
        run_hear(PMIX_ERR_PROC_TERM_WO_SYNC, what);
    }
    if (strcmp(argv[1], "time") == 0)
        run_time(&me, size, argc > 3 ? atoi(argv[3]) : 100);
    else
        run_notify(&me, size, argc > 3 ? argv[3] : "");
    barrier();
    CHECK(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "finalize");
    printf("pmix_events rank %d: ok\n", rank);
    return 0;
}

/*
 * test_pmi2_mux: the PMI-2 thread multiplexer against a scripted server on a
 * socketpair: the single-thread fast path (no thrid, left-aligned lengths
 * accepted), replies routed by echoed thrid when they arrive out of order or
 * interleaved, a held reply released later while other threads go on, a
 * server that ignores thrid (answers routed in order per command), the
 * switch from the fast path to threaded mode while the owner waits, a
 * server that dies with several threads waiting, and a request too long to
 * encode refused without a write.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmi2/client/pg_pmi2_mux.h"
#include "pmi2/pmi2.h"
#include "tests/clients/fake_server.h"
#include "tests/pg_cunit.h"

enum { MSG = 2048, NTHREADS = 4, PER_THREAD = 50 };

static int build_get(pg_enc_t *e, const char *thrid, const void *key)
{
    return pg_enc_pmi2_kvs_get(e, thrid, NULL, -1, key);
}

static int build_nodeattr(pg_enc_t *e, const char *thrid, const void *key)
{
    return pg_enc_pmi2_info_getnodeattr(e, thrid, key, true);
}

/* One kvs-get through the mux; 0 when the value is "v-<key>". */
static int get_checked(pg_pmi2_mux_t *m, const char *key)
{
    pg_pmi2_reply_t r;
    char want[96];
    int rc = pg_pmi2_mux_call(m, build_get, key, PG_CMD_PMI2_KVS_GET_RESPONSE, &r);

    snprintf(want, sizeof(want), "v-%s", key);
    if (rc == PMI2_SUCCESS && !pg_str_eq(pg_msg_get(&r.msg, "value"), want))
        rc = PMI2_FAIL;
    pg_pmi2_reply_release(&r);
    return rc;
}

/* Answers one kvs-get body m with value v-<key>, echoing thrid if asked. */
static void answer_get(pg_fake_server_t *s, const char *m, bool echo)
{
    char key[64], thrid[32], body[256];

    pg_fake_value(m, "key", key, sizeof(key));
    if (echo && pg_fake_value(m, "thrid", thrid, sizeof(thrid)) == 0)
        snprintf(body, sizeof(body), "cmd=kvs-get-response;thrid=%s;found=TRUE;value=v-%s;rc=0;", thrid, key);
    else
        snprintf(body, sizeof(body), "cmd=kvs-get-response;rc=0;found=TRUE;value=v-%s;", key);
    pg_fake_send_pmi2(s, body);
}

/* ---- fast path ------------------------------------------------------------- */

static void script_fast_lockstep(pg_fake_server_t *s, void *arg)
{
    char m[MSG], t[32];

    (void)arg;
    for (int i = 0; i < 3; i++) {
        if (pg_fake_expect(s, "kvs-get", m, sizeof(m)) < 0)
            return;
        if (pg_fake_value(m, "thrid", t, sizeof(t)) == 0)
            pg_fake_fail(s, "thrid sent on the single-thread path");
        if (i == 0) /* Slurm: left-aligned length, rc first */
            pg_fake_send_pmi2_left(s, "cmd=kvs-get-response;rc=0;found=TRUE;value=v-k0;");
        else if (i == 1) /* a stray reply nobody asked for is skipped */
        {
            pg_fake_send_pmi2(s, "cmd=kvs-put-response;rc=0;");
            pg_fake_send_pmi2(s, "cmd=kvs-get-response;found=TRUE;value=v-k1;");
        }
        else
            answer_get(s, m, false);
    }
}

static void test_fast_path_single_thread(void)
{
    int fd;
    pg_fake_server_t *srv = pg_fake_server_start(script_fast_lockstep, NULL, &fd);
    pg_pmi2_mux_t *m = pg_pmi2_mux_new(fd);
    pg_pmi2_mux_stats_t st;

    CU_ASSERT_EQUAL(get_checked(m, "k0"), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(get_checked(m, "k1"), PMI2_SUCCESS);
    CU_ASSERT_EQUAL(get_checked(m, "k2"), PMI2_SUCCESS);
    pg_pmi2_mux_stats(m, &st);
    CU_ASSERT_EQUAL(st.fast_calls, 3);
    CU_ASSERT_EQUAL(st.threaded_calls, 0);
    CU_ASSERT_FALSE(pg_pmi2_mux_threaded(m));
    pg_pmi2_mux_free(m);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
}

/* ---- threaded: out of order, interleaved, held ---------------------------- */

typedef struct worker {
    pg_pmi2_mux_t *m;
    int id, calls, failures;
} worker_t;

static void *worker_main(void *p)
{
    worker_t *w = p;
    char key[32];

    for (int i = 0; i < w->calls; i++) {
        snprintf(key, sizeof(key), "t%d-%d", w->id, i);
        if (get_checked(w->m, key) != PMI2_SUCCESS)
            w->failures++;
    }
    return NULL;
}

static void run_workers(pg_pmi2_mux_t *m, int n, int calls, int *failures)
{
    pthread_t th[NTHREADS];
    worker_t w[NTHREADS];

    *failures = 0;
    for (int i = 0; i < n; i++) {
        w[i] = (worker_t){ m, i, calls, 0 };
        pthread_create(&th[i], NULL, worker_main, &w[i]);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        *failures += w[i].failures;
    }
}

/* Collects a batch of requests, then answers them in reverse order. */
static void script_reverse(pg_fake_server_t *s, void *arg)
{
    char batch[NTHREADS][MSG];
    int total = *(int *)arg, done = 0;

    while (done < total) {
        int n = 0;

        /* every worker has one request in flight: wait for all of them */
        for (; n < NTHREADS && done + n < total; n++)
            if (pg_fake_expect(s, "kvs-get", batch[n], MSG) < 0)
                return;
        for (int i = n - 1; i >= 0; i--)
            answer_get(s, batch[i], true);
        done += n;
    }
}

static void test_threaded_replies_out_of_order(void)
{
    int total = NTHREADS * PER_THREAD, fd, failures;
    pg_fake_server_t *srv = pg_fake_server_start(script_reverse, &total, &fd);
    pg_pmi2_mux_t *m = pg_pmi2_mux_new(fd);
    pg_pmi2_mux_stats_t st;

    pg_pmi2_mux_set_threaded(m);
    run_workers(m, NTHREADS, PER_THREAD, &failures);
    CU_ASSERT_EQUAL(failures, 0);
    pg_pmi2_mux_stats(m, &st);
    CU_ASSERT_EQUAL(st.routed_by_thrid, (unsigned long)total);
    CU_ASSERT_EQUAL(st.dropped, 0);
    pg_pmi2_mux_free(m);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
}

/* Holds the first info-getnodeattr; answers every kvs-get at once; releases
 * the held reply only after all the others were answered. */
static void script_held(pg_fake_server_t *s, void *arg)
{
    char m[MSG], held[32] = "", body[160];
    int others = *(int *)arg, answered = 0;

    while (answered < others || held[0] == '\0') {
        if (pg_fake_recv(s, m, sizeof(m)) < 0)
            return;
        if (strstr(m, "cmd=info-getnodeattr;") == m) {
            if (pg_fake_value(m, "thrid", held, sizeof(held)) != 0 || strstr(m, "wait=TRUE") == NULL)
                pg_fake_fail(s, "getnodeattr without thrid or wait");
            continue;
        }
        answer_get(s, m, true);
        answered++;
    }
    snprintf(body, sizeof(body), "cmd=info-getnodeattr-response;thrid=%s;found=TRUE;value=late;rc=0;",
             held);
    pg_fake_send_pmi2(s, body);
}

typedef struct waiter {
    pg_pmi2_mux_t *m;
    int rc;
    bool value_ok;
} waiter_t;

static void *waiter_main(void *p)
{
    waiter_t *w = p;
    pg_pmi2_reply_t r;

    w->rc = pg_pmi2_mux_call(w->m, build_nodeattr, "late-attr", PG_CMD_PMI2_INFO_GETNODEATTR_RESPONSE,
                             &r);
    w->value_ok = pg_str_eq(pg_msg_get(&r.msg, "value"), "late");
    pg_pmi2_reply_release(&r);
    return NULL;
}

static void test_held_reply_does_not_block_others(void)
{
    int others = (NTHREADS - 1) * PER_THREAD, fd, failures;
    pg_fake_server_t *srv = pg_fake_server_start(script_held, &others, &fd);
    pg_pmi2_mux_t *m = pg_pmi2_mux_new(fd);
    waiter_t w = { m, -99, false };
    pthread_t th;

    pg_pmi2_mux_set_threaded(m);
    pthread_create(&th, NULL, waiter_main, &w);
    run_workers(m, NTHREADS - 1, PER_THREAD, &failures); /* all finish while w waits */
    CU_ASSERT_EQUAL(failures, 0);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(w.rc, PMI2_SUCCESS);
    CU_ASSERT_TRUE(w.value_ok);
    pg_pmi2_mux_free(m);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
}

/* ---- a server that ignores thrid (Slurm) -------------------------------------- */

static void script_no_echo(pg_fake_server_t *s, void *arg)
{
    int total = *(int *)arg;
    char m[MSG];

    for (int i = 0; i < total; i++) {
        if (pg_fake_expect(s, "kvs-get", m, sizeof(m)) < 0)
            return;
        answer_get(s, m, false);
    }
}

static void test_no_echo_routes_in_order(void)
{
    int total = 1 * PER_THREAD, fd, failures;
    pg_fake_server_t *srv = pg_fake_server_start(script_no_echo, &total, &fd);
    pg_pmi2_mux_t *m = pg_pmi2_mux_new(fd);
    pg_pmi2_mux_stats_t st;

    pg_pmi2_mux_set_threaded(m);
    run_workers(m, 1, PER_THREAD, &failures);
    CU_ASSERT_EQUAL(failures, 0);
    pg_pmi2_mux_stats(m, &st);
    CU_ASSERT_EQUAL(st.routed_in_order, (unsigned long)total);
    pg_pmi2_mux_free(m);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
}

/* ---- switching to threaded mode while the owner waits -------------------------- */

/* The mux of the switch test, and when the other thread may call. */
typedef struct switch_ctx {
    atomic_bool go;
    _Atomic(pg_pmi2_mux_t *) mux;
} switch_ctx_t;

static void script_switch(pg_fake_server_t *s, void *arg)
{
    switch_ctx_t *ctx = arg;
    char m[MSG], t[32];

    if (pg_fake_expect(s, "kvs-get", m, sizeof(m)) < 0)
        return;
    if (pg_fake_value(m, "thrid", t, sizeof(t)) == 0)
        pg_fake_fail(s, "owner's first call carried a thrid");
    atomic_store(&ctx->go, true); /* now let the other thread call */
    /* the other thread is in the mux, waiting for the owner's call, when
     * that call is answered */
    for (int ms = 0; !pg_pmi2_mux_threaded(atomic_load(&ctx->mux)); ms++) {
        if (ms == 5000) {
            pg_fake_fail(s, "the other thread did not enter the mux in 5 s");
            break;
        }
        usleep(1000);
    }
    answer_get(s, m, false);
    for (int i = 0; i < 2; i++) {
        if (pg_fake_expect(s, "kvs-get", m, sizeof(m)) < 0)
            return;
        if (pg_fake_value(m, "thrid", t, sizeof(t)) != 0)
            pg_fake_fail(s, "threaded call without thrid");
        answer_get(s, m, true);
    }
}

typedef struct late_worker {
    worker_t w;
    atomic_bool *go;
} late_worker_t;

/* A worker that calls only once the owner's call is in flight. */
static void *late_worker_main(void *p)
{
    late_worker_t *lw = p;

    while (!atomic_load(lw->go))
        usleep(1000);
    return worker_main(&lw->w);
}

static void test_switch_to_threaded_mode(void)
{
    static switch_ctx_t ctx;
    int fd;
    pg_fake_server_t *srv;
    pg_pmi2_mux_t *m;
    late_worker_t lw;
    pthread_t th;
    pg_pmi2_mux_stats_t st;

    atomic_store(&ctx.go, false);
    atomic_store(&ctx.mux, NULL);
    srv = pg_fake_server_start(script_switch, &ctx, &fd);
    m = pg_pmi2_mux_new(fd);
    atomic_store(&ctx.mux, m); /* before the owner's call reaches the server */
    lw = (late_worker_t){ { m, 9, 1, 0 }, &ctx.go };
    pthread_create(&th, NULL, late_worker_main, &lw);
    CU_ASSERT_EQUAL(get_checked(m, "owner"), PMI2_SUCCESS);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(lw.w.failures, 0);
    CU_ASSERT_TRUE(pg_pmi2_mux_threaded(m));
    CU_ASSERT_EQUAL(get_checked(m, "owner-again"), PMI2_SUCCESS); /* no fast path any more */
    pg_pmi2_mux_stats(m, &st);
    CU_ASSERT_EQUAL(st.threaded_calls, 2);
    pg_pmi2_mux_free(m);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
}

/* ---- abort from another thread while the owner waits ------------------------------ */

static int build_abort(pg_enc_t *e, const char *thrid, const void *args)
{
    (void)thrid;
    (void)args;
    return pg_enc_pmi2_abort(e, true, "stop");
}

/* Holds the owner's get until the abort has arrived (or 2 s have passed). */
static void script_abort_while_owner_waits(pg_fake_server_t *s, void *arg)
{
    char m[MSG], a[MSG];

    if (pg_fake_expect(s, "kvs-get", m, sizeof(m)) < 0)
        return;
    atomic_store((atomic_bool *)arg, true); /* now the other thread aborts */
    if (!pg_fake_readable(s, 2000))
        pg_fake_fail(s, "the abort waited for the owner's reply");
    answer_get(s, m, false);
    pg_fake_expect(s, "abort", a, sizeof(a));
}

typedef struct aborter {
    pg_pmi2_mux_t *m;
    atomic_bool *go;
    int rc;
} aborter_t;

static void *aborter_main(void *p)
{
    aborter_t *ab = p;

    while (!atomic_load(ab->go))
        usleep(1000);
    ab->rc = pg_pmi2_mux_send(ab->m, build_abort, NULL);
    return NULL;
}

/* An abort (a request without a reply) from another thread goes out at once,
 * as with Slurm's libpmi2: it must not wait for the owner's call, whose reply
 * may never come when the job is stuck, which is when programs abort. */
static void test_abort_does_not_wait_for_owner_call(void)
{
    static atomic_bool go;
    int fd;
    pg_fake_server_t *srv;
    pg_pmi2_mux_t *m;
    aborter_t ab;
    pthread_t th;

    atomic_store(&go, false);
    srv = pg_fake_server_start(script_abort_while_owner_waits, &go, &fd);
    m = pg_pmi2_mux_new(fd);
    ab = (aborter_t){ m, &go, -1 };
    pthread_create(&th, NULL, aborter_main, &ab);
    CU_ASSERT_EQUAL(get_checked(m, "owner"), PMI2_SUCCESS);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(ab.rc, PMI2_SUCCESS);
    pg_pmi2_mux_free(m);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
}

/* ---- the server dies ------------------------------------------------------------ */

static void script_die(pg_fake_server_t *s, void *arg)
{
    char m[MSG];

    (void)arg;
    for (int i = 0; i < NTHREADS; i++)
        if (pg_fake_recv(s, m, sizeof(m)) < 0)
            return;
    pg_fake_close(s);
}

static void test_eof_fails_every_waiter(void)
{
    int fd, failures;
    pg_fake_server_t *srv = pg_fake_server_start(script_die, NULL, &fd);
    pg_pmi2_mux_t *m = pg_pmi2_mux_new(fd);

    pg_pmi2_mux_set_threaded(m);
    run_workers(m, NTHREADS, 1, &failures);
    CU_ASSERT_EQUAL(failures, NTHREADS);
    CU_ASSERT_EQUAL(get_checked(m, "after"), PMI2_FAIL);
    pg_pmi2_mux_free(m);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
}

/* ---- freed while threads wait (PMI2_Finalize) ---------------------------------- */

/* Takes every worker's get, answers none, and waits for the client to go. */
static void script_hold_all(pg_fake_server_t *s, void *arg)
{
    char m[MSG];

    for (int i = 0; i < NTHREADS; i++)
        if (pg_fake_expect(s, "kvs-get", m, sizeof(m)) < 0)
            return;
    atomic_store((atomic_bool *)arg, true);
    while (pg_fake_recv(s, m, sizeof(m)) >= 0)
        ;
}

typedef struct waiters {
    pg_pmi2_mux_t *m;
    int failures;
} waiters_t;

static void *waiters_main(void *p)
{
    waiters_t *w = p;

    run_workers(w->m, NTHREADS, 1, &w->failures);
    return NULL;
}

static void *freer_main(void *m)
{
    pg_pmi2_mux_free(m);
    return NULL;
}

/* Freeing the mux while threads wait for replies that will never come fails
 * their calls, and frees only once they have left it (the reader among them
 * was blocked in read(); valgrind and ASan see any touch of freed memory). */
static void test_free_fails_waiting_threads_first(void)
{
    static atomic_bool all_sent;
    int fd;
    pg_fake_server_t *srv;
    waiters_t w;
    pthread_t th, freer;
    struct timespec limit;

    atomic_store(&all_sent, false);
    srv = pg_fake_server_start(script_hold_all, &all_sent, &fd);
    w = (waiters_t){ pg_pmi2_mux_new(fd), 0 };
    pg_pmi2_mux_set_threaded(w.m);
    pthread_create(&th, NULL, waiters_main, &w);
    while (!atomic_load(&all_sent))
        usleep(1000);
    /* every worker is in the mux, one of them in read() */
    for (pg_pmi2_mux_stats_t st = { 0 }; st.callers != NTHREADS || !st.reading; usleep(1000))
        pg_pmi2_mux_stats(w.m, &st);
    pthread_create(&freer, NULL, freer_main, w.m);
    clock_gettime(CLOCK_REALTIME, &limit);
    limit.tv_sec += 5;
    if (pthread_timedjoin_np(freer, NULL, &limit) != 0 || pthread_timedjoin_np(th, NULL, &limit) != 0) {
        CU_FAIL("the free or the waiting threads still blocked after 5 s");
        return; /* they would run on freed memory: leave them asleep */
    }
    CU_ASSERT_EQUAL(w.failures, NTHREADS);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
}

/* ---- a request too long to encode ----------------------------------------------- */

/* A request that fits no buffer, as an over-long argument list would be. */
static int build_too_long(pg_enc_t *e, const char *thrid, const void *args)
{
    (void)e;
    (void)thrid;
    (void)args;
    return PG_WIRE_EOVERFLOW;
}

static void script_one_get(pg_fake_server_t *s, void *arg)
{
    char m[MSG];

    (void)arg;
    if (pg_fake_expect(s, "kvs-get", m, sizeof(m)) >= 0)
        answer_get(s, m, true);
}

/* Refused with INVALID_LENGTH in threaded mode (the heap buffer tried for it
 * is freed: the sanitizer and valgrind runs check that); nothing reaches the
 * server, so the next call is answered normally. */
static void test_too_long_request_is_refused_unsent(void)
{
    int fd;
    pg_fake_server_t *srv = pg_fake_server_start(script_one_get, NULL, &fd);
    pg_pmi2_mux_t *m = pg_pmi2_mux_new(fd);
    pg_pmi2_reply_t r;

    pg_pmi2_mux_set_threaded(m);
    CU_ASSERT_EQUAL(pg_pmi2_mux_call(m, build_too_long, NULL, PG_CMD_PMI2_KVS_GET_RESPONSE, &r),
                    PMI2_ERR_INVALID_LENGTH);
    pg_pmi2_reply_release(&r);
    CU_ASSERT_EQUAL(get_checked(m, "next"), PMI2_SUCCESS);
    pg_pmi2_mux_free(m);
    CU_ASSERT_EQUAL(pg_fake_server_join(srv), 0);
}

static const pg_cunit_test_t tests[] = {
    { "fast path: single thread, no thrid", test_fast_path_single_thread },
    { "threaded: replies out of order", test_threaded_replies_out_of_order },
    { "threaded: held reply does not block others", test_held_reply_does_not_block_others },
    { "threaded: no thrid echo, routed in order", test_no_echo_routes_in_order },
    { "switch to threaded mode while owner waits", test_switch_to_threaded_mode },
    { "abort does not wait for the owner's call", test_abort_does_not_wait_for_owner_call },
    { "EOF fails every waiter", test_eof_fails_every_waiter },
    { "too long a request is refused unsent", test_too_long_request_is_refused_unsent },
    { "free fails waiting threads first", test_free_fails_waiting_threads_first },
    { NULL, NULL },
};
static const pg_cunit_suite_t suites[] = {
    { "pmi2 thread multiplexer", tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}

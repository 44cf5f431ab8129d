/*
 * test_engine_event: event subscriptions and delivery by range
 * (engine/pg_event.c), the event pg_proc_lost raises, and the
 * process table.  A process relies on these to hear of exactly the events
 * in its range: a peer's notification reaches its job and not another's,
 * a custom range reaches only its members, the sender never gets its own
 * event back from the server (its library delivers it), and a peer lost
 * before finalize is announced once to the rest of its job.
 */
#include <CUnit/CUnit.h>
#include <string.h>

#include "tests/engine/engine_fixture.h"
#include "tests/pg_cunit.h"

#define NSUBS 8

/* What one subscriber received. */
typedef struct heard {
    int calls;
    pmix_status_t status;
    pmix_rank_t source;
    char info[32];
} heard_t;

static void heard_cb(const pg_event_t *ev, void *cbdata)
{
    heard_t *h = cbdata;

    h->calls++;
    h->status = ev->status;
    h->source = ev->source.rank;
    h->info[0] = '\0';
    if (ev->info != NULL && ev->info_size < sizeof(h->info)) {
        memcpy(h->info, ev->info, ev->info_size);
        h->info[ev->info_size] = '\0';
    }
}

/* Two jobs: "a" with 4 ranks on 2 nodes (0,1 | 2,3), "b" with 2 ranks on
 * node0 too; every rank subscribed; heard[0..3] = a, heard[4..5] = b. */
typedef struct world {
    pg_engine_t *e;
    heard_t heard[NSUBS];
    uint64_t id[NSUBS];
} world_t;

static void world_new(world_t *w)
{
    memset(w, 0, sizeof(*w));
    w->e = pg_engine_new(&(pg_host_ops_t){ 0 }, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->e);
    CU_ASSERT_EQUAL(job_block(w->e, "a", 4, 2, NULL), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(job_block(w->e, "b", 2, 1, NULL), PMIX_SUCCESS);
    for (int i = 0; i < 6; i++) {
        pg_proc_t p = i < 4 ? P("a", (pmix_rank_t)i) : P("b", (pmix_rank_t)(i - 4));
        CU_ASSERT_EQUAL(pg_event_subscribe(w->e, &p, heard_cb, &w->heard[i], &w->id[i]),
                        PMIX_SUCCESS);
        CU_ASSERT_NOT_EQUAL(w->id[i], 0);
    }
}

/* Raises `status` from rank `rank` of job a over `range`; returns how many
 * subscribers got it. */
static size_t raise_from_a(world_t *w, pmix_rank_t rank, pmix_data_range_t range,
                           const pg_proc_t *targets, size_t ntargets)
{
    pg_event_t ev = { -3001, P("a", rank), P("a", rank), range, targets, ntargets, "x", 1,
                      NULL, 0 };
    size_t n = 99;

    CU_ASSERT_EQUAL(pg_event_notify(w->e, &ev, &n), PMIX_SUCCESS);
    return n;
}

static int heard_by(const world_t *w, int i)
{
    return w->heard[i].calls;
}

static void test_namespace_range_reaches_the_job_but_not_the_sender(void)
{
    world_t w;

    world_new(&w);
    CU_ASSERT_EQUAL(raise_from_a(&w, 1, PMIX_RANGE_NAMESPACE, NULL, 0), 3);
    CU_ASSERT_EQUAL(heard_by(&w, 0), 1);
    CU_ASSERT_EQUAL(heard_by(&w, 1), 0); /* the sender's library delivers its own */
    CU_ASSERT_EQUAL(heard_by(&w, 2), 1);
    CU_ASSERT_EQUAL(heard_by(&w, 3), 1);
    CU_ASSERT_EQUAL(heard_by(&w, 4), 0); /* another job */
    CU_ASSERT_EQUAL(w.heard[0].status, -3001);
    CU_ASSERT_EQUAL(w.heard[0].source, 1);
    CU_ASSERT_STRING_EQUAL(w.heard[0].info, "x");
    pg_engine_free(w.e);
}

static void test_local_range_is_the_senders_node(void)
{
    world_t w;

    world_new(&w);
    /* rank 0 of a is on node0 with a:1 and both ranks of b */
    CU_ASSERT_EQUAL(raise_from_a(&w, 0, PMIX_RANGE_LOCAL, NULL, 0), 3);
    CU_ASSERT_EQUAL(heard_by(&w, 1), 1);
    CU_ASSERT_EQUAL(heard_by(&w, 2) + heard_by(&w, 3), 0);
    CU_ASSERT_EQUAL(heard_by(&w, 4) + heard_by(&w, 5), 2);
    pg_engine_free(w.e);
}

static void test_session_and_global_reach_every_job(void)
{
    world_t w;

    world_new(&w);
    CU_ASSERT_EQUAL(raise_from_a(&w, 2, PMIX_RANGE_SESSION, NULL, 0), 5);
    CU_ASSERT_EQUAL(raise_from_a(&w, 2, PMIX_RANGE_GLOBAL, NULL, 0), 5);
    CU_ASSERT_EQUAL(heard_by(&w, 5), 2);
    CU_ASSERT_EQUAL(heard_by(&w, 2), 0);
    pg_engine_free(w.e);
}

static void test_custom_range_reaches_only_its_members(void)
{
    world_t w;
    pg_proc_t targets[] = { P("a", 3), P("b", PMIX_RANK_WILDCARD), P("", 0) };

    world_new(&w);
    /* "" is the sender's own nspace */
    CU_ASSERT_EQUAL(raise_from_a(&w, 1, PMIX_RANGE_CUSTOM, targets, 3), 4);
    CU_ASSERT_EQUAL(heard_by(&w, 0), 1);
    CU_ASSERT_EQUAL(heard_by(&w, 2), 0);
    CU_ASSERT_EQUAL(heard_by(&w, 3), 1);
    CU_ASSERT_EQUAL(heard_by(&w, 4) + heard_by(&w, 5), 2);
    pg_engine_free(w.e);
}

static void test_proc_local_and_rm_reach_no_process(void)
{
    world_t w;

    world_new(&w);
    CU_ASSERT_EQUAL(raise_from_a(&w, 0, PMIX_RANGE_PROC_LOCAL, NULL, 0), 0);
    CU_ASSERT_EQUAL(raise_from_a(&w, 0, PMIX_RANGE_RM, NULL, 0), 0);
    pg_engine_free(w.e);
}

static void test_bad_ranges_are_errors(void)
{
    world_t w;
    pg_event_t ev = { -3001, P("a", 0), P("a", 0), PMIX_RANGE_CUSTOM, NULL, 0, NULL, 0, NULL, 0 };

    world_new(&w);
    CU_ASSERT_EQUAL(pg_event_notify(w.e, &ev, NULL), PMIX_ERR_BAD_PARAM); /* no members */
    ev.range = 42;
    CU_ASSERT_EQUAL(pg_event_notify(w.e, &ev, NULL), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(heard_by(&w, 1) + heard_by(&w, 2), 0);
    pg_engine_free(w.e);
}

static void test_unsubscribed_hears_nothing_and_twice_is_not_found(void)
{
    world_t w;
    pg_proc_t nobody = P("zz", 0), wild = P("a", PMIX_RANK_WILDCARD);
    uint64_t id;

    world_new(&w);
    CU_ASSERT_EQUAL(pg_event_unsubscribe(w.e, w.id[2]), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_event_unsubscribe(w.e, w.id[2]), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(raise_from_a(&w, 0, PMIX_RANGE_NAMESPACE, NULL, 0), 2);
    CU_ASSERT_EQUAL(heard_by(&w, 2), 0);
    CU_ASSERT_EQUAL(pg_event_subscribe(w.e, &nobody, heard_cb, &w.heard[6], &id),
                    PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(pg_event_subscribe(w.e, &wild, heard_cb, &w.heard[6], &id),
                    PMIX_ERR_BAD_PARAM);
    pg_engine_free(w.e);
}

/* A subscriber whose callback ends another subscription (the gateway's
 * write failing closes that connection) during the walk. */
static world_t *reentrant_world;

static void unsubscribe_next_cb(const pg_event_t *ev, void *cbdata)
{
    heard_cb(ev, cbdata);
    (void)pg_event_unsubscribe(reentrant_world->e, reentrant_world->id[3]);
}

static void test_unsubscribe_inside_a_callback_is_safe(void)
{
    world_t w;
    pg_proc_t p0 = P("a", 0), p3 = P("a", 3);

    world_new(&w);
    reentrant_world = &w;
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(pg_event_unsubscribe(w.e, w.id[i]), PMIX_SUCCESS);
    /* a:0 first, then a:3, which a:0's callback unsubscribes mid-walk */
    CU_ASSERT_EQUAL(pg_event_subscribe(w.e, &p0, unsubscribe_next_cb, &w.heard[0], &w.id[0]),
                    PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_event_subscribe(w.e, &p3, heard_cb, &w.heard[3], &w.id[3]),
                    PMIX_SUCCESS);
    CU_ASSERT_EQUAL(raise_from_a(&w, 1, PMIX_RANGE_NAMESPACE, NULL, 0), 1);
    CU_ASSERT_EQUAL(heard_by(&w, 0), 1);
    CU_ASSERT_EQUAL(heard_by(&w, 3), 0);
    CU_ASSERT_EQUAL(pg_event_unsubscribe(w.e, w.id[3]), PMIX_ERR_NOT_FOUND);
    pg_engine_free(w.e);
}

static void test_lost_process_is_announced_once_to_its_job(void)
{
    world_t w;
    pg_proc_t p2 = P("a", 2);

    world_new(&w);
    CU_ASSERT_EQUAL(pg_proc_connect(w.e, &p2), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_proc_lost(w.e, &p2), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_proc_lost(w.e, &p2), PMIX_SUCCESS); /* said once */
    CU_ASSERT_EQUAL(heard_by(&w, 0), 1);
    CU_ASSERT_EQUAL(heard_by(&w, 2), 0);
    CU_ASSERT_EQUAL(heard_by(&w, 4), 0);
    CU_ASSERT_EQUAL(w.heard[0].status, PMIX_ERR_PROC_TERM_WO_SYNC);
    CU_ASSERT_EQUAL(w.heard[0].source, 2);
    CU_ASSERT_STRING_EQUAL(w.heard[0].info, ""); /* no info: the handler adds the proc */
    pg_engine_free(w.e);
}

static void test_finalized_process_is_not_announced(void)
{
    world_t w;
    pg_proc_t p2 = P("a", 2);

    world_new(&w);
    CU_ASSERT_EQUAL(pg_proc_finalize(w.e, &p2), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(heard_by(&w, 0) + heard_by(&w, 1) + heard_by(&w, 3), 0);
    pg_engine_free(w.e);
}

static void test_ended_job_takes_its_subscriptions(void)
{
    world_t w;

    world_new(&w);
    CU_ASSERT_EQUAL(pg_ns_deregister(w.e, "b"), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_event_unsubscribe(w.e, w.id[4]), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(raise_from_a(&w, 0, PMIX_RANGE_GLOBAL, NULL, 0), 3);
    CU_ASSERT_EQUAL(heard_by(&w, 4), 0);
    pg_engine_free(w.e);
}

static void test_process_table_rows(void)
{
    world_t w;
    pg_proc_t p1 = P("a", 1), p3 = P("a", 3), bad = P("a", 9);
    pg_proc_desc_t d;

    world_new(&w);
    CU_ASSERT_EQUAL(pg_proc_describe(w.e, &p1, &d), PMIX_SUCCESS);
    CU_ASSERT_PTR_NULL(d.executable); /* never said */
    CU_ASSERT_EQUAL(d.pid, 0);
    CU_ASSERT_EQUAL(d.state, PMIX_PROC_STATE_LAUNCH_UNDERWAY);
    CU_ASSERT_EQUAL(pg_proc_set_exec(w.e, &p1, 4242, "./prog"), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_proc_connect(w.e, &p1), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_proc_describe(w.e, &p1, &d), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(d.executable, "./prog");
    CU_ASSERT_STRING_EQUAL(d.hostname, "node0");
    CU_ASSERT_EQUAL(d.pid, 4242);
    CU_ASSERT_EQUAL(d.state, PMIX_PROC_STATE_CONNECTED);
    CU_ASSERT_EQUAL(pg_proc_describe(w.e, &p3, &d), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(d.hostname, "node1");
    CU_ASSERT_EQUAL(d.state, PMIX_PROC_STATE_LAUNCH_UNDERWAY);
    CU_ASSERT_EQUAL(pg_proc_lost(w.e, &p1), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_proc_describe(w.e, &p1, &d), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(d.state, PMIX_PROC_STATE_TERM_WO_SYNC);
    CU_ASSERT_EQUAL(pg_proc_describe(w.e, &bad, &d), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(pg_proc_set_exec(w.e, &bad, 1, "x"), PMIX_ERR_BAD_PARAM);
    pg_engine_free(w.e);
}

/* Over several nodes, a rank another server serves is in the table with
 * its host, but its state is not this engine's to say. */
static void test_process_table_other_nodes(void)
{
    pg_engine_t *e = pg_engine_new(NULL, NULL);
    const bool served[2] = { false, true };
    pg_proc_t there = P("j", 0), here = P("j", 3);
    pg_proc_desc_t d;

    CU_ASSERT_EQUAL_FATAL(job_block(e, "j", 4, 2, served), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_proc_describe(e, &there, &d), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(d.hostname, "node0");
    CU_ASSERT_EQUAL(d.pid, 0);
    CU_ASSERT_EQUAL(d.state, PMIX_PROC_STATE_UNDEF);
    CU_ASSERT_EQUAL(pg_proc_describe(e, &here, &d), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(d.state, PMIX_PROC_STATE_LAUNCH_UNDERWAY);
    pg_engine_free(e);
}

/* A reaped process shows how it exited (a tool's process table): 0 is
 * TERMINATED, any other code TERM_NON_ZERO with the code; the others run on. */
static void test_process_table_exits(void)
{
    world_t w;
    pg_proc_t p0 = P("a", 0), p1 = P("a", 1), p2 = P("a", 2), bad = P("a", 9);
    pg_proc_desc_t d;

    world_new(&w);
    CU_ASSERT_EQUAL(pg_proc_set_exec(w.e, &p2, 4243, "./prog"), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_proc_set_exit(w.e, &p0, 0), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_proc_set_exit(w.e, &p1, 3), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_proc_describe(w.e, &p0, &d), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(d.state, PMIX_PROC_STATE_TERMINATED);
    CU_ASSERT_EQUAL(d.exit_code, 0);
    CU_ASSERT_EQUAL(pg_proc_describe(w.e, &p1, &d), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(d.state, PMIX_PROC_STATE_TERM_NON_ZERO);
    CU_ASSERT_EQUAL(d.exit_code, 3);
    CU_ASSERT_EQUAL(pg_proc_describe(w.e, &p2, &d), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(d.state, PMIX_PROC_STATE_RUNNING);
    CU_ASSERT_EQUAL(d.exit_code, 0);
    CU_ASSERT_EQUAL(pg_proc_set_exit(w.e, &bad, 1), PMIX_ERR_BAD_PARAM);
    pg_engine_free(w.e);
}

/* What processes declare through PMIx_Job_control is kept per process and
 * read back; one declaration makes the job preemptible. */
static void test_job_control_declarations_are_kept(void)
{
    world_t w;
    pg_proc_t p1 = P("a", 1), p2 = P("a", 2), bad = P("a", 9), nowhere = P("zz", 0);
    pg_jobctl_t d, got;

    world_new(&w);
    CU_ASSERT_EQUAL(pg_jobctl_get(w.e, &p1, &got), PMIX_SUCCESS);
    CU_ASSERT(!got.preemptible && got.ckpt_signal == 0 && got.ckpt_event == 0);
    CU_ASSERT_FALSE(pg_jobctl_preemptible(w.e, "a"));
    d = (pg_jobctl_t){ true, 12, PMIX_JCTRL_CHECKPOINT };
    CU_ASSERT_EQUAL(pg_jobctl_set(w.e, &p1, &d), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_jobctl_get(w.e, &p1, &got), PMIX_SUCCESS);
    CU_ASSERT(got.preemptible && got.ckpt_signal == 12 && got.ckpt_event == PMIX_JCTRL_CHECKPOINT);
    CU_ASSERT_EQUAL(pg_jobctl_get(w.e, &p2, &got), PMIX_SUCCESS);
    CU_ASSERT(!got.preemptible && got.ckpt_signal == 0);
    CU_ASSERT_TRUE(pg_jobctl_preemptible(w.e, "a"));
    CU_ASSERT_FALSE(pg_jobctl_preemptible(w.e, "b"));
    CU_ASSERT_EQUAL(pg_jobctl_set(w.e, &bad, &d), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_NOT_EQUAL(pg_jobctl_get(w.e, &nowhere, &got), PMIX_SUCCESS);
    pg_engine_free(w.e);
}

static void count_ns(void *arg, const char *nspace)
{
    (void)nspace;
    (*(int *)arg)++;
}

static void test_namespaces_are_listed(void)
{
    world_t w;
    int n = 0;

    world_new(&w);
    pg_ns_foreach(w.e, count_ns, &n);
    CU_ASSERT_EQUAL(n, 2);
    pg_engine_free(w.e);
}

/* A tool's namespace is no job: not listed, yet its process hears events
 * meant for it. */
static void test_tool_namespace_is_no_job(void)
{
    const char *hosts[1] = { "node0" };
    uint32_t node[1] = { 0 };
    pg_ns_layout_t l = { .size = 1, .nnodes = 1, .hostnames = hosts, .rank_node = node,
                         .tool = true };
    pg_proc_t tool = P("a.tool.0", 0), target = P("a.tool.0", PMIX_RANK_WILDCARD);
    heard_t heard = { 0 };
    uint64_t id = 0;
    world_t w;
    int n = 0;

    world_new(&w);
    CU_ASSERT_EQUAL(pg_ns_register(w.e, "a.tool.0", &l), PMIX_SUCCESS);
    pg_ns_foreach(w.e, count_ns, &n);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(pg_event_subscribe(w.e, &tool, heard_cb, &heard, &id), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(raise_from_a(&w, 0, PMIX_RANGE_CUSTOM, &target, 1), 1);
    CU_ASSERT_EQUAL(heard.calls, 1);
    pg_engine_free(w.e);
}

/* ---- across servers (`pmigate proxy`): the event hook ---------------- */

/* One server of two: job "a" has ranks 0,1 here (node0) and 2,3 on the
 * other server; job "b" (2 ranks) lives here only.  Every local rank is
 * subscribed (heard[0..1] = a:0,1, heard[4..5] = b); `carried` counts the
 * events handed to the host, `last` the range of the last one. */
typedef struct server {
    world_t w;
    int carried;
    pmix_data_range_t last;
} server_t;

static void carry_cb(void *ctx, const pg_event_t *ev)
{
    server_t *s = ctx;

    s->carried++;
    s->last = ev->range;
}

static void server_new(server_t *s)
{
    static const bool here[2] = { true, false };

    memset(s, 0, sizeof(*s));
    s->w.e = pg_engine_new(&(pg_host_ops_t){ .event = carry_cb }, s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s->w.e);
    CU_ASSERT_EQUAL(job_block(s->w.e, "a", 4, 2, here), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(job_block(s->w.e, "b", 2, 1, NULL), PMIX_SUCCESS);
    for (int i = 0; i < 6; i++) {
        pg_proc_t p = i < 4 ? P("a", (pmix_rank_t)i) : P("b", (pmix_rank_t)(i - 4));

        if (i == 2 || i == 3)
            continue; /* served by the other server */
        CU_ASSERT_EQUAL(pg_event_subscribe(s->w.e, &p, heard_cb, &s->w.heard[i], &s->w.id[i]),
                        PMIX_SUCCESS);
    }
}

static size_t server_raise(server_t *s, const pg_proc_t *origin, pmix_data_range_t range,
                           const pg_proc_t *targets, size_t ntargets)
{
    pg_event_t ev = { -3002, *origin, *origin, range, targets, ntargets, "y", 1, NULL, 0 };
    size_t n = 99;

    CU_ASSERT_EQUAL(pg_event_notify(s->w.e, &ev, &n), PMIX_SUCCESS);
    return n;
}

static void test_events_beyond_the_server_go_to_the_host(void)
{
    server_t s;
    pg_proc_t a0 = P("a", 0), b0 = P("b", 0), host = P("a", PMIX_RANK_UNDEF);

    server_new(&s);
    CU_ASSERT_EQUAL(server_raise(&s, &a0, PMIX_RANGE_NAMESPACE, NULL, 0), 1);
    CU_ASSERT_EQUAL(s.carried, 1); /* a:2 and a:3 are elsewhere */
    CU_ASSERT_EQUAL(s.last, PMIX_RANGE_NAMESPACE);
    server_raise(&s, &a0, PMIX_RANGE_SESSION, NULL, 0);
    server_raise(&s, &a0, PMIX_RANGE_GLOBAL, NULL, 0);
    server_raise(&s, &host, PMIX_RANGE_UNDEF, NULL, 0); /* the host's own */
    CU_ASSERT_EQUAL(s.carried, 4);
    /* job b lives here only: its namespace is this server's */
    server_raise(&s, &b0, PMIX_RANGE_NAMESPACE, NULL, 0);
    CU_ASSERT_EQUAL(s.carried, 4);
    pg_engine_free(s.w.e);
}

static void test_node_ranges_and_local_targets_stay(void)
{
    server_t s;
    pg_proc_t a0 = P("a", 0), host = P("a", PMIX_RANK_UNDEF);
    pg_proc_t here[] = { P("a", 1), P("b", PMIX_RANK_WILDCARD) };
    pg_proc_t there[] = { P("a", 1), P("a", 3) }, all_a[] = { P("a", PMIX_RANK_WILDCARD) };

    server_new(&s);
    server_raise(&s, &a0, PMIX_RANGE_LOCAL, NULL, 0);
    server_raise(&s, &a0, PMIX_RANGE_PROC_LOCAL, NULL, 0);
    server_raise(&s, &a0, PMIX_RANGE_RM, NULL, 0);
    CU_ASSERT_EQUAL(server_raise(&s, &a0, PMIX_RANGE_CUSTOM, here, 2), 3);
    CU_ASSERT_EQUAL(s.carried, 0);
    /* the host's LOCAL event: every process of this server's node */
    CU_ASSERT_EQUAL(server_raise(&s, &host, PMIX_RANGE_LOCAL, NULL, 0), 4);
    CU_ASSERT_EQUAL(s.carried, 0);
    server_raise(&s, &a0, PMIX_RANGE_CUSTOM, there, 2);
    server_raise(&s, &a0, PMIX_RANGE_CUSTOM, all_a, 1);
    CU_ASSERT_EQUAL(s.carried, 2);
    CU_ASSERT_EQUAL(s.last, PMIX_RANGE_CUSTOM);
    pg_engine_free(s.w.e);
}

/* Another server's event: delivered here in its range, never carried
 * again; raised here on behalf of a process served elsewhere, it is that
 * server's to carry. */
static void test_events_from_elsewhere_are_delivered_not_carried(void)
{
    server_t s;
    pg_proc_t a2 = P("a", 2);
    pg_event_t ev = { -3003, a2, a2, PMIX_RANGE_NAMESPACE, NULL, 0, "z", 1, NULL, 0 };
    size_t n = 0;

    server_new(&s);
    CU_ASSERT_EQUAL(pg_event_deliver(s.w.e, &ev, &n), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(heard_by(&s.w, 0) + heard_by(&s.w, 1), 2);
    CU_ASSERT_EQUAL(s.w.heard[1].status, -3003);
    CU_ASSERT_EQUAL(s.w.heard[1].source, 2);
    CU_ASSERT_EQUAL(heard_by(&s.w, 4), 0);
    ev.range = PMIX_RANGE_LOCAL; /* a:2's node is not this one */
    CU_ASSERT_EQUAL(pg_event_deliver(s.w.e, &ev, &n), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(n, 0);
    ev.range = PMIX_RANGE_GLOBAL;
    CU_ASSERT_EQUAL(pg_event_notify(s.w.e, &ev, &n), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT_EQUAL(s.carried, 0);
    pg_engine_free(s.w.e);
}

static const pg_cunit_test_t tests[] = {
    { "namespace_range_reaches_the_job_but_not_the_sender",
      test_namespace_range_reaches_the_job_but_not_the_sender },
    { "local_range_is_the_senders_node", test_local_range_is_the_senders_node },
    { "session_and_global_reach_every_job", test_session_and_global_reach_every_job },
    { "custom_range_reaches_only_its_members", test_custom_range_reaches_only_its_members },
    { "proc_local_and_rm_reach_no_process", test_proc_local_and_rm_reach_no_process },
    { "bad_ranges_are_errors", test_bad_ranges_are_errors },
    { "unsubscribed_hears_nothing_and_twice_is_not_found",
      test_unsubscribed_hears_nothing_and_twice_is_not_found },
    { "unsubscribe_inside_a_callback_is_safe", test_unsubscribe_inside_a_callback_is_safe },
    { "lost_process_is_announced_once_to_its_job",
      test_lost_process_is_announced_once_to_its_job },
    { "finalized_process_is_not_announced", test_finalized_process_is_not_announced },
    { "ended_job_takes_its_subscriptions", test_ended_job_takes_its_subscriptions },
    { "process_table_rows", test_process_table_rows },
    { "namespaces_are_listed", test_namespaces_are_listed },
    { "process_table_exits", test_process_table_exits },
    { "process_table_other_nodes", test_process_table_other_nodes },
    { "tool_namespace_is_no_job", test_tool_namespace_is_no_job },
    { "job_control_declarations_are_kept", test_job_control_declarations_are_kept },
    { "events_beyond_the_server_go_to_the_host", test_events_beyond_the_server_go_to_the_host },
    { "node_ranges_and_local_targets_stay", test_node_ranges_and_local_targets_stay },
    { "events_from_elsewhere_are_delivered_not_carried",
      test_events_from_elsewhere_are_delivered_not_carried },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "engine_event", tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}

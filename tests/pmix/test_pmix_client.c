/*
 * test_pmix_client: CUnit tests of libpmix against a scripted fake server
 * on a socketpair -- the mux routes replies to the right caller whatever
 * order they come in, callbacks run on the progress thread, a lost or lying
 * server fails what is pending instead of hanging --, of the client cache
 * (own puts, scope conflicts, commit order, what a fence forgets), and of
 * the PMIx_* API itself against a fake gateway on PMI_FD (what the client
 * decides on its own: calls from callbacks, re-init, the retrieval order,
 * replies that lie).
 */
#include <fcntl.h>
#include <pmix.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pmix/client/pg_cache.h"
#include "pmix/client/pg_mux.h"
#include "pmix/client/pg_pmix_compat.h"
#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"
#include "tests/pg_cunit.h"
#include "wire/pg_pmix_frame.h"

/* ---- the fake server ------------------------------------------------------ */

typedef struct fake {
    int fd;         /* the server's end */
    pg_mux_t *mux;  /* the client's end */
} fake_t;

static int read_exact(int fd, void *buf, size_t len)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = read(fd, p, len);

        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void fake_open(fake_t *f, uint32_t rank)
{
    int sv[2];
    unsigned char pre[PG_PMIX_PREAMBLE_LEN];
    pg_pmix_preamble_t p;

    CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    f->fd = sv[1];
    f->mux = pg_mux_new(sv[0], rank);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f->mux);
    CU_ASSERT_EQUAL_FATAL(read_exact(f->fd, pre, sizeof(pre)), 0);
    CU_ASSERT_EQUAL(pg_pmix_preamble_parse((char *)pre, sizeof(pre), &p), PG_PMIX_FRAME_OK);
    CU_ASSERT_EQUAL(p.rank, rank);
}

static void fake_close(fake_t *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    pg_mux_free(f->mux);
}

/* Reads one request: its id, and its string argument (if any). */
static uint32_t fake_read_request(fake_t *f, char *arg, size_t cap)
{
    unsigned char hdr[PG_PMIX_HEADER_LEN];
    pmix_data_buffer_t view;
    uint32_t len, id = 0;
    uint8_t cmd;
    char *payload, *s = NULL;

    CU_ASSERT_EQUAL_FATAL(read_exact(f->fd, hdr, sizeof(hdr)), 0);
    len = pg_pmix_get_u32(hdr);
    payload = malloc(len);
    CU_ASSERT_EQUAL_FATAL(read_exact(f->fd, payload, len), 0);
    pg_pmix_msg_view(&view, payload, len);
    CU_ASSERT_EQUAL(pg_pmix_msg_read_header(&view, &cmd, &id), PMIX_SUCCESS);
    arg[0] = '\0';
    if (pg_pmix_unpack_one(&view, &s, PMIX_STRING) == PMIX_SUCCESS && s != NULL)
        snprintf(arg, cap, "%s", s);
    free(s);
    free(payload);
    return id;
}

/* Answers request `id` with status and a string result. */
static void fake_reply(fake_t *f, uint32_t id, pmix_status_t status, const char *result)
{
    pmix_data_buffer_t buf;
    char *r = (char *)result;

    pg_buffer_construct(&buf);
    pg_pmix_msg_begin_reply(&buf, PG_PMIX_CMD_GET, id, status);
    if (result != NULL)
        pg_pmix_pack_one(&buf, &r, PMIX_STRING);
    pg_pmix_msg_seal(&buf);
    CU_ASSERT_EQUAL(write(f->fd, buf.base_ptr, buf.bytes_used), (ssize_t)buf.bytes_used);
    pg_buffer_destruct(&buf);
}

/* ---- client side helpers --------------------------------------------------- */

static pmix_status_t start_request(pg_mux_t *m, const char *arg, pmix_data_buffer_t *buf,
                                   uint32_t *id)
{
    char *a = (char *)arg;

    pg_buffer_construct(buf);
    CU_ASSERT_EQUAL(pg_mux_begin(m, buf, PG_PMIX_CMD_GET, id), PMIX_SUCCESS);
    return pg_pmix_pack_one(buf, &a, PMIX_STRING);
}

typedef struct caller {
    pg_mux_t *mux;
    char arg[32];
    pmix_status_t status;
    char result[64];
} caller_t;

static void *blocking_caller(void *p)
{
    caller_t *c = p;
    pmix_data_buffer_t req, reply;
    char *s = NULL;
    uint32_t id;

    start_request(c->mux, c->arg, &req, &id);
    c->status = pg_mux_call(c->mux, &req, id, &reply);
    if (c->status == PMIX_SUCCESS && pg_pmix_unpack_one(&reply, &s, PMIX_STRING) == PMIX_SUCCESS)
        snprintf(c->result, sizeof(c->result), "%s", s);
    free(s);
    pg_buffer_destruct(&reply);
    return NULL;
}

/* Starts a thread making one blocking call that asks for `arg`; its
 * outcome is in *c once the thread is joined. */
static void caller_start(caller_t *c, pthread_t *t, pg_mux_t *mux, const char *arg)
{
    memset(c, 0, sizeof(*c));
    c->mux = mux;
    snprintf(c->arg, sizeof(c->arg), "%s", arg);
    pthread_create(t, NULL, blocking_caller, c);
}

typedef struct nb_seen {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int calls;
    pmix_status_t status;
    char result[64];
    bool on_progress_thread;
    pmix_status_t nested_blocking;
    pg_mux_t *mux;
} nb_seen_t;

static void nb_seen_init(nb_seen_t *s, pg_mux_t *m)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    s->mux = m;
    s->nested_blocking = PMIX_SUCCESS;
}

static void nb_seen_wait(nb_seen_t *s, int calls)
{
    pthread_mutex_lock(&s->lock);
    while (s->calls < calls)
        pthread_cond_wait(&s->cond, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

static void nb_reply(pmix_status_t status, pmix_data_buffer_t *reply, void *arg)
{
    nb_seen_t *s = arg;
    pmix_data_buffer_t req, r2;
    char *str = NULL;
    uint32_t id;

    s->on_progress_thread = pg_mux_on_progress_thread(s->mux);
    /* a blocking call from a callback would wait for itself */
    start_request(s->mux, "nested", &req, &id);
    s->nested_blocking = pg_mux_call(s->mux, &req, id, &r2);
    pg_buffer_destruct(&r2);
    pthread_mutex_lock(&s->lock);
    s->status = status;
    if (reply != NULL && pg_pmix_unpack_one(reply, &str, PMIX_STRING) == PMIX_SUCCESS && str)
        snprintf(s->result, sizeof(s->result), "%s", str);
    free(str);
    s->calls++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

/* Records a reply; nothing else (safe while the mux is being lost). */
static void lost_reply(pmix_status_t status, pmix_data_buffer_t *reply, void *arg)
{
    nb_seen_t *s = arg;

    (void)reply;
    pthread_mutex_lock(&s->lock);
    s->status = status;
    s->calls++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

/* ---- mux tests ------------------------------------------------------------------ */

/* Three threads block on three requests; the server answers in reverse
 * order; each thread gets the answer to its own request. */
static void mux_out_of_order_replies_reach_their_callers(void)
{
    fake_t f;
    caller_t c[3];
    pthread_t t[3];
    uint32_t ids[3];
    char args[3][32];

    fake_open(&f, 3);
    for (int i = 0; i < 3; i++) {
        char arg[32];

        snprintf(arg, sizeof(arg), "req-%d", i);
        caller_start(&c[i], &t[i], f.mux, arg);
    }
    for (int i = 0; i < 3; i++)
        ids[i] = fake_read_request(&f, args[i], sizeof(args[i]));
    for (int i = 2; i >= 0; i--) {
        char answer[64];

        snprintf(answer, sizeof(answer), "answer-to-%s", args[i]);
        fake_reply(&f, ids[i], PMIX_SUCCESS, answer);
    }
    for (int i = 0; i < 3; i++) {
        char want[64];

        pthread_join(t[i], NULL);
        snprintf(want, sizeof(want), "answer-to-req-%d", i);
        CU_ASSERT_EQUAL(c[i].status, PMIX_SUCCESS);
        CU_ASSERT_STRING_EQUAL(c[i].result, want);
    }
    fake_close(&f);
}

/* A non-blocking request's callback runs on the progress thread, after a
 * blocking request answered later but sent earlier is still waiting. */
static void mux_callback_runs_on_progress_thread(void)
{
    fake_t f;
    nb_seen_t seen;
    caller_t slow;
    pthread_t t;
    pmix_data_buffer_t req;
    uint32_t slow_id, nb_id, id;
    char arg[32];

    fake_open(&f, 0);
    nb_seen_init(&seen, f.mux);
    caller_start(&slow, &t, f.mux, "slow");
    slow_id = fake_read_request(&f, arg, sizeof(arg));
    start_request(f.mux, "fast", &req, &id);
    CU_ASSERT_EQUAL(pg_mux_send_nb(f.mux, &req, id, nb_reply, &seen), PMIX_SUCCESS);
    nb_id = fake_read_request(&f, arg, sizeof(arg));
    CU_ASSERT_STRING_EQUAL(arg, "fast");
    fake_reply(&f, nb_id, PMIX_ERR_NOT_FOUND, "nb-answer");
    nb_seen_wait(&seen, 1);
    CU_ASSERT_EQUAL(seen.status, PMIX_ERR_NOT_FOUND);
    CU_ASSERT_STRING_EQUAL(seen.result, "nb-answer");
    CU_ASSERT_TRUE(seen.on_progress_thread);
    CU_ASSERT_EQUAL(seen.nested_blocking, PMIX_ERR_WOULD_BLOCK);
    fake_reply(&f, slow_id, PMIX_SUCCESS, "slow-answer");
    pthread_join(t, NULL);
    CU_ASSERT_STRING_EQUAL(slow.result, "slow-answer");
    fake_close(&f);
}

/* A reply for an id nobody waits for is ignored; the next one still routes. */
static void mux_unknown_reply_id_ignored(void)
{
    fake_t f;
    caller_t c;
    pthread_t t;
    char arg[32];
    uint32_t id;

    fake_open(&f, 0);
    caller_start(&c, &t, f.mux, "x");
    id = fake_read_request(&f, arg, sizeof(arg));
    fake_reply(&f, id + 1000, PMIX_SUCCESS, "stray");
    fake_reply(&f, id, PMIX_SUCCESS, "mine");
    pthread_join(t, NULL);
    CU_ASSERT_STRING_EQUAL(c.result, "mine");
    fake_close(&f);
}

/* The server goes away: waiting callers and callbacks fail with
 * PMIX_ERR_LOST_CONNECTION, new requests fail at once. */
static void mux_lost_server_fails_pending(void)
{
    fake_t f;
    caller_t c;
    nb_seen_t seen;
    pthread_t t;
    pmix_data_buffer_t req;
    char arg[32];
    uint32_t id;

    fake_open(&f, 0);
    nb_seen_init(&seen, f.mux);
    caller_start(&c, &t, f.mux, "");
    (void)fake_read_request(&f, arg, sizeof(arg));
    start_request(f.mux, "nb", &req, &id);
    CU_ASSERT_EQUAL(pg_mux_send_nb(f.mux, &req, id, nb_reply, &seen), PMIX_SUCCESS);
    close(f.fd);
    f.fd = -1;
    pthread_join(t, NULL);
    nb_seen_wait(&seen, 1);
    CU_ASSERT_EQUAL(c.status, PMIX_ERR_LOST_CONNECTION);
    CU_ASSERT_EQUAL(seen.status, PMIX_ERR_LOST_CONNECTION);
    CU_ASSERT_FALSE(pg_mux_connected(f.mux));
    start_request(f.mux, "late", &req, &id);
    CU_ASSERT_EQUAL(pg_mux_send_nb(f.mux, &req, id, nb_reply, &seen),
                    PMIX_ERR_LOST_CONNECTION);
    fake_close(&f);
}

/* A frame whose payload is not a reply is treated as a broken stream. */
static void mux_garbage_reply_fails_pending(void)
{
    static const unsigned char garbage[] = { 0, 0, 0, 3, 0xde, 0xad, 0xbe };
    fake_t f;
    caller_t c;
    pthread_t t;
    char arg[32];

    fake_open(&f, 0);
    caller_start(&c, &t, f.mux, "");
    (void)fake_read_request(&f, arg, sizeof(arg));
    CU_ASSERT_EQUAL(write(f.fd, garbage, sizeof(garbage)), (ssize_t)sizeof(garbage));
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(c.status, PMIX_ERR_LOST_CONNECTION);
    fake_close(&f);
}

/* A frame announcing more than the limit is refused from its header. */
static void mux_oversized_reply_fails_pending(void)
{
    unsigned char hdr[PG_PMIX_HEADER_LEN];
    fake_t f;
    caller_t c;
    pthread_t t;
    char arg[32];

    fake_open(&f, 0);
    caller_start(&c, &t, f.mux, "");
    (void)fake_read_request(&f, arg, sizeof(arg));
    pg_pmix_put_u32(hdr, 0xfffffff0u);
    CU_ASSERT_EQUAL(write(f.fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(c.status, PMIX_ERR_LOST_CONNECTION);
    fake_close(&f);
}

typedef struct big_sender {
    pg_mux_t *mux;
    nb_seen_t *seen;
    pmix_status_t rc;
} big_sender_t;

/* Sends a request far larger than the socket buffers, so the send blocks
 * until the fake server reads it or goes away. */
static void *big_sender_main(void *p)
{
    big_sender_t *b = p;
    size_t len = 1024 * 1024;
    char *big = malloc(len);
    pmix_data_buffer_t req;
    uint32_t id;

    memset(big, 'x', len - 1);
    big[len - 1] = '\0';
    start_request(b->mux, big, &req, &id);
    free(big);
    b->rc = pg_mux_send_nb(b->mux, &req, id, lost_reply, b->seen);
    return NULL;
}

/* A request whose send is still blocked when the connection is declared
 * lost (here: a garbage reply) is completed by the progress thread, which
 * frees it; the sender, whose send then fails, must not touch it again
 * (valgrind and ASan saw the sender read the freed request's id). */
static void mux_send_failing_after_loss_leaves_completed_request(void)
{
    static const unsigned char garbage[] = { 0, 0, 0, 3, 0xde, 0xad, 0xbe };
    fake_t f;
    nb_seen_t seen;
    big_sender_t b;
    pthread_t t;

    fake_open(&f, 0);
    nb_seen_init(&seen, f.mux);
    b = (big_sender_t){ f.mux, &seen, PMIX_ERROR };
    pthread_create(&t, NULL, big_sender_main, &b);
    /* bytes arriving mean the request is registered; the rest of its send
     * blocks, since nobody reads */
    CU_ASSERT_EQUAL(poll(&(struct pollfd){ f.fd, POLLIN, 0 }, 1, 10000), 1);
    CU_ASSERT_EQUAL(write(f.fd, garbage, sizeof(garbage)), (ssize_t)sizeof(garbage));
    nb_seen_wait(&seen, 1);
    CU_ASSERT_EQUAL(seen.status, PMIX_ERR_LOST_CONNECTION);
    close(f.fd); /* now the blocked send fails */
    f.fd = -1;
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(b.rc, PMIX_SUCCESS); /* started, and already completed */
    CU_ASSERT_EQUAL(seen.calls, 1);
    fake_close(&f);
}

static void deferred_work(void *arg)
{
    nb_seen_t *s = arg;

    pthread_mutex_lock(&s->lock);
    s->on_progress_thread = pg_mux_on_progress_thread(s->mux);
    s->calls++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

static void mux_deferred_work_runs_on_progress_thread(void)
{
    fake_t f;
    nb_seen_t seen;

    fake_open(&f, 0);
    nb_seen_init(&seen, f.mux);
    CU_ASSERT_EQUAL(pg_mux_defer(f.mux, deferred_work, &seen), PMIX_SUCCESS);
    nb_seen_wait(&seen, 1);
    CU_ASSERT_TRUE(seen.on_progress_thread);
    CU_ASSERT_FALSE(pg_mux_on_progress_thread(f.mux));
    fake_close(&f);
}

/* The progress thread's poll, held on request: while it is held, work is
 * queued and a reply arrives, so that one wakeup finds both -- what a
 * loaded machine does now and then (OpenPMIx's test_error example hung
 * 2 times in 705 when a notify's reply overtook the registration
 * callbacks queued before it). */
int __real_poll(struct pollfd *fds, nfds_t nfds, int timeout);
int __wrap_poll(struct pollfd *fds, nfds_t nfds, int timeout);

static pg_mux_t *hold_mux;  /* the mux whose progress thread is held */
static int hold_armed;      /* atomic: its next poll waits */
static int hold_waiting;    /* atomic: it is waiting now */
static int hold_release;    /* atomic: go on */

int __wrap_poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
    pg_mux_t *m = __atomic_load_n(&hold_mux, __ATOMIC_ACQUIRE);

    if (m != NULL && pg_mux_on_progress_thread(m) &&
        __atomic_exchange_n(&hold_armed, 0, __ATOMIC_ACQ_REL)) {
        __atomic_store_n(&hold_waiting, 1, __ATOMIC_RELEASE);
        for (int ms = 0; ms < 10000 && !__atomic_load_n(&hold_release, __ATOMIC_ACQUIRE); ms++)
            usleep(1000);
    }
    return __real_poll(fds, nfds, timeout);
}

static void noop_work(void *arg)
{
    (void)arg;
}

static char order_of_callbacks[8];

static void note_order(char c)
{
    size_t n = strlen(order_of_callbacks);

    if (n + 1 < sizeof(order_of_callbacks))
        order_of_callbacks[n] = c;
}

static void work_a(void *arg)
{
    (void)arg;
    note_order('A');
}

static void reply_b(pmix_status_t status, pmix_data_buffer_t *reply, void *arg)
{
    nb_seen_t *s = arg;

    (void)status, (void)reply;
    note_order('B');
    pthread_mutex_lock(&s->lock);
    s->calls++;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

/* Work queued before a reply arrives runs before that reply's callback,
 * even when the progress thread wakes once for both. */
static void mux_work_queued_before_a_reply_runs_first(void)
{
    fake_t f;
    nb_seen_t seen;
    pmix_data_buffer_t req;
    uint32_t id;
    char arg[32];

    fake_open(&f, 0);
    nb_seen_init(&seen, f.mux);
    memset(order_of_callbacks, 0, sizeof(order_of_callbacks));
    __atomic_store_n(&hold_release, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&hold_waiting, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&hold_mux, f.mux, __ATOMIC_RELEASE);
    __atomic_store_n(&hold_armed, 1, __ATOMIC_RELEASE);
    /* wake the thread so that its next poll is the held one */
    CU_ASSERT_EQUAL(pg_mux_defer(f.mux, noop_work, NULL), PMIX_SUCCESS);
    for (int ms = 0; ms < 5000 && !__atomic_load_n(&hold_waiting, __ATOMIC_ACQUIRE); ms++)
        usleep(1000);
    CU_ASSERT_TRUE_FATAL(__atomic_load_n(&hold_waiting, __ATOMIC_ACQUIRE));
    CU_ASSERT_EQUAL(pg_mux_defer(f.mux, work_a, NULL), PMIX_SUCCESS);
    start_request(f.mux, "b", &req, &id);
    CU_ASSERT_EQUAL(pg_mux_send_nb(f.mux, &req, id, reply_b, &seen), PMIX_SUCCESS);
    /* a socketpair's write is in the peer's queue when it returns: the
     * reply is there before the thread looks */
    fake_reply(&f, fake_read_request(&f, arg, sizeof(arg)), PMIX_SUCCESS, "b");
    __atomic_store_n(&hold_release, 1, __ATOMIC_RELEASE);
    nb_seen_wait(&seen, 1);
    CU_ASSERT_STRING_EQUAL(order_of_callbacks, "AB");
    __atomic_store_n(&hold_mux, NULL, __ATOMIC_RELEASE);
    fake_close(&f);
}

/* ---- cache tests ---------------------------------------------------------------- */

static pmix_status_t collect_key(pmix_scope_t scope, const char *key, const pmix_value_t *val,
                                 void *arg)
{
    char *order = arg;

    (void)scope;
    (void)val;
    strcat(order, key);
    strcat(order, ",");
    return PMIX_SUCCESS;
}

static void cache_own_put_readable_and_staged_in_order(void)
{
    pg_cache_t *c = pg_cache_new();
    pmix_value_t v;
    char order[64] = "";

    PMIX_VALUE_LOAD(&v, "x", PMIX_STRING);
    CU_ASSERT_EQUAL(pg_cache_put_own(c, PMIX_GLOBAL, "b", &v), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_cache_put_own(c, PMIX_LOCAL, "a", &v), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_cache_put_own(c, PMIX_GLOBAL, "c", &v), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(pg_cache_own(c, "a")->data.string, "x");
    CU_ASSERT_EQUAL(pg_cache_nstaged(c), 3);
    CU_ASSERT_EQUAL(pg_cache_each_staged(c, collect_key, order), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(order, "b,a,c,");
    pg_cache_commit_done(c);
    CU_ASSERT_EQUAL(pg_cache_nstaged(c), 0);
    CU_ASSERT_PTR_NOT_NULL(pg_cache_own(c, "a")); /* still readable after commit */
    PMIX_VALUE_DESTRUCT(&v);
    pg_cache_free(c);
}

/* The Standard: a key belongs to one scope; a re-put in the same one
 * overwrites. */
static void cache_same_key_other_scope_refused(void)
{
    pg_cache_t *c = pg_cache_new();
    pmix_value_t v1, v2;

    PMIX_VALUE_LOAD(&v1, "one", PMIX_STRING);
    PMIX_VALUE_LOAD(&v2, "two", PMIX_STRING);
    CU_ASSERT_EQUAL(pg_cache_put_own(c, PMIX_LOCAL, "k", &v1), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_cache_put_own(c, PMIX_REMOTE, "k", &v2), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(pg_cache_put_own(c, PMIX_LOCAL, "k", &v2), PMIX_SUCCESS);
    CU_ASSERT_STRING_EQUAL(pg_cache_own(c, "k")->data.string, "two");
    CU_ASSERT_EQUAL(pg_cache_nstaged(c), 1);
    PMIX_VALUE_DESTRUCT(&v1);
    PMIX_VALUE_DESTRUCT(&v2);
    pg_cache_free(c);
}

/* A fence drops fetched values (they may be stale), never reserved data. */
static void cache_fence_forgets_fetched_keeps_permanent(void)
{
    pg_cache_t *c = pg_cache_new();
    pmix_value_t v;

    PMIX_VALUE_LOAD(&v, &(uint32_t){ 4 }, PMIX_UINT32);
    CU_ASSERT_EQUAL(pg_cache_store(c, "ns", PMIX_RANK_WILDCARD, "pmix.job.size", &v, true),
                    PMIX_SUCCESS);
    CU_ASSERT_EQUAL(pg_cache_store(c, "ns", 2, "card", &v, false), PMIX_SUCCESS);
    CU_ASSERT_PTR_NOT_NULL(pg_cache_find(c, "ns", 2, "card"));
    CU_ASSERT_PTR_NULL(pg_cache_find(c, "ns", 3, "card"));
    CU_ASSERT_PTR_NULL(pg_cache_find(c, "ns2", 2, "card"));
    pg_cache_forget_fetched(c);
    CU_ASSERT_PTR_NULL(pg_cache_find(c, "ns", 2, "card"));
    CU_ASSERT_PTR_NOT_NULL(pg_cache_find(c, "ns", PMIX_RANK_WILDCARD, "pmix.job.size"));
    /* with no plain key left, plain lookups skip the table: a value stored
     * again (fetched, then a PMIx_Store_internal one) is still found */
    CU_ASSERT_EQUAL(pg_cache_store(c, "ns", 2, "card", &v, false), PMIX_SUCCESS);
    CU_ASSERT_PTR_NOT_NULL(pg_cache_find(c, "ns", 2, "card"));
    CU_ASSERT_EQUAL(pg_cache_store(c, "ns", 1, "stored", &v, true), PMIX_SUCCESS);
    pg_cache_forget_fetched(c);
    CU_ASSERT_PTR_NULL(pg_cache_find(c, "ns", 2, "card"));
    CU_ASSERT_PTR_NOT_NULL(pg_cache_find(c, "ns", 1, "stored"));
    pg_cache_free(c);
}

/* ---- the API against a fake gateway ---------------------------------------- */

/* A gateway on the other end of PMI_FD: answers init (namespace "gw-ns",
 * rank 3, job size 4), commit (remembering how many puts came), fence and
 * finalize with success, and every other command with `answer`. */
typedef struct gw gw_t;
typedef void (*gw_answer_fn)(gw_t *gw, uint8_t cmd, uint32_t id);

struct gw {
    int fd;
    int client_fd;
    pthread_t thread;
    gw_answer_fn answer;
    uint32_t commit_puts;      /* the last commit's count */
    int held;                  /* gw_answer_nothing held a request */
    int ncommits;              /* commits received (atomic) */
    char commit_first[4][32];  /* the first put's string value, per commit */
};

static const char *const gw_nspace = "gw-ns";
enum { GW_RANK = 3 };

static void gw_send(gw_t *gw, pmix_data_buffer_t *buf)
{
    if (pg_pmix_msg_seal(buf) == PMIX_SUCCESS)
        (void)!write(gw->fd, buf->base_ptr, buf->bytes_used);
    pg_buffer_destruct(buf);
}

static void gw_reply_status(gw_t *gw, uint8_t cmd, uint32_t id, pmix_status_t status)
{
    pmix_data_buffer_t buf;

    pg_buffer_construct(&buf);
    pg_pmix_msg_begin_reply(&buf, cmd, id, status);
    gw_send(gw, &buf);
}

static void gw_reply_init(gw_t *gw, uint32_t id)
{
    pmix_data_buffer_t buf;
    pmix_info_t job = { .flags = 0 }; /* LOAD keeps flags: start from zero */
    pmix_rank_t rank = GW_RANK;
    char *ns = (char *)gw_nspace;
    uint32_t size = 4;

    PMIX_INFO_LOAD(&job, PMIX_JOB_SIZE, &size, PMIX_UINT32);
    pg_buffer_construct(&buf);
    pg_pmix_msg_begin_reply(&buf, PG_PMIX_CMD_INIT, id, PMIX_SUCCESS);
    pg_pmix_pack_one(&buf, &ns, PMIX_STRING);
    pg_pmix_pack_one(&buf, &rank, PMIX_PROC_RANK);
    pg_pmix_pack_array(&buf, &job, 1, PMIX_INFO);
    pg_pmix_pack_array(&buf, NULL, 0, PMIX_INFO);
    gw_send(gw, &buf);
    PMIX_INFO_DESTRUCT(&job);
}

/* Records a commit and the string value of its first put, in the order
 * commits arrive. */
static void gw_note_commit(gw_t *gw, pmix_data_buffer_t *args)
{
    int n = __atomic_load_n(&gw->ncommits, __ATOMIC_ACQUIRE);
    pmix_scope_t scope;
    char *key = NULL;
    pmix_value_t v;

    PMIX_VALUE_CONSTRUCT(&v);
    if (n < 4 && gw->commit_puts > 0 &&
        pg_pmix_unpack_one(args, &scope, PMIX_SCOPE) == PMIX_SUCCESS &&
        pg_pmix_unpack_one(args, &key, PMIX_STRING) == PMIX_SUCCESS &&
        pg_pmix_unpack_one(args, &v, PMIX_VALUE) == PMIX_SUCCESS && v.type == PMIX_STRING)
        snprintf(gw->commit_first[n], sizeof(gw->commit_first[n]), "%s", v.data.string);
    free(key);
    PMIX_VALUE_DESTRUCT(&v);
    __atomic_store_n(&gw->ncommits, n + 1, __ATOMIC_RELEASE);
}

static void *gw_main(void *arg)
{
    gw_t *gw = arg;
    unsigned char hdr[PG_PMIX_HEADER_LEN + PG_PMIX_PREAMBLE_LEN];

    if (read_exact(gw->fd, hdr, PG_PMIX_PREAMBLE_LEN) != 0)
        return NULL;
    while (read_exact(gw->fd, hdr, PG_PMIX_HEADER_LEN) == 0) {
        uint32_t len = pg_pmix_get_u32(hdr), id = 0;
        char *payload = malloc(len);
        pmix_data_buffer_t view;
        uint8_t cmd = 0;

        if (payload == NULL || read_exact(gw->fd, payload, len) != 0) {
            free(payload);
            break;
        }
        pg_pmix_msg_view(&view, payload, len);
        (void)pg_pmix_msg_read_header(&view, &cmd, &id);
        if (cmd == PG_PMIX_CMD_INIT)
            gw_reply_init(gw, id);
        else if (cmd == PG_PMIX_CMD_COMMIT) {
            (void)pg_pmix_unpack_one(&view, &gw->commit_puts, PMIX_UINT32);
            gw_note_commit(gw, &view);
            gw_reply_status(gw, cmd, id, PMIX_SUCCESS);
        } else if (cmd == PG_PMIX_CMD_FENCE || cmd == PG_PMIX_CMD_FINALIZE || gw->answer == NULL)
            gw_reply_status(gw, cmd, id, cmd == PG_PMIX_CMD_GET ? PMIX_ERR_NOT_FOUND : 0);
        else
            gw->answer(gw, cmd, id);
        free(payload);
    }
    return NULL;
}

/* Points PMI_FD at a new fake gateway and initializes the client. */
static void gw_start(gw_t *gw, gw_answer_fn answer, pmix_proc_t *me)
{
    int sv[2];
    char fdtext[16];

    memset(gw, 0, sizeof(*gw));
    gw->answer = answer;
    CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    gw->fd = sv[1];
    gw->client_fd = sv[0];
    snprintf(fdtext, sizeof(fdtext), "%d", sv[0]);
    setenv("PMI_FD", fdtext, 1);
    unsetenv("PMIGATE_PMI_PORT");
    CU_ASSERT_EQUAL_FATAL(pthread_create(&gw->thread, NULL, gw_main, gw), 0);
    CU_ASSERT_EQUAL_FATAL(PMIx_Init(me, NULL, 0), PMIX_SUCCESS);
}

/* Finalizes the client (it closes its end) and ends the gateway. */
static void gw_stop(gw_t *gw)
{
    if (PMIx_Initialized())
        CU_ASSERT_EQUAL(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    pthread_join(gw->thread, NULL);
    close(gw->fd);
}

typedef struct cb_seen {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    pmix_status_t inner;       /* what the call made inside the callback returned */
} cb_seen_t;

static void cb_seen_init(cb_seen_t *c)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    c->inner = PMIX_ERROR;
}

static void cb_seen_done(cb_seen_t *c, pmix_status_t inner)
{
    pthread_mutex_lock(&c->lock);
    c->inner = inner;
    c->done = true;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static void cb_seen_wait(cb_seen_t *c)
{
    pthread_mutex_lock(&c->lock);
    while (!c->done)
        pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

static pmix_status_t put_string(const char *key, const char *text)
{
    pmix_value_t v;
    pmix_status_t rc;

    PMIX_VALUE_LOAD(&v, text, PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIX_VALUE_DESTRUCT(&v);
    return rc;
}

static void commit_from_callback(pmix_status_t status, void *cbdata)
{
    pmix_status_t rc = put_string("cb-key", "cb-value");

    (void)status;
    cb_seen_done(cbdata, rc == PMIX_SUCCESS ? PMIx_Commit() : rc); /* CUnit: main thread only */
}

/* Runs `fn` as the callback of a Fence_nb (so on the progress thread) and
 * returns what the call it makes there returned. */
static pmix_status_t inside_callback(pmix_op_cbfunc_t fn)
{
    cb_seen_t seen;

    cb_seen_init(&seen);
    CU_ASSERT_EQUAL(PMIx_Fence_nb(NULL, 0, NULL, 0, fn, &seen), PMIX_SUCCESS);
    cb_seen_wait(&seen);
    return seen.inner;
}

/* A commit made inside a callback cannot wait for its answer and is
 * refused; the puts it would have sent stay staged for the next commit
 * (they used to be marked committed and never sent). */
static void api_refused_commit_in_callback_keeps_puts_staged(void)
{
    gw_t gw;
    pmix_proc_t me;

    gw_start(&gw, NULL, &me);
    CU_ASSERT_EQUAL(inside_callback(commit_from_callback), PMIX_ERR_WOULD_BLOCK);
    CU_ASSERT_EQUAL(PMIx_Commit(), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(gw.commit_puts, 1);
    gw_stop(&gw);
}

static void finalize_from_callback(pmix_status_t status, void *cbdata)
{
    (void)status;
    cb_seen_done(cbdata, PMIx_Finalize(NULL, 0));
}

/* Finalize inside a callback would stop the progress thread from that
 * thread (it joined itself and freed the mux under its own feet): it is
 * refused like every blocking call there, and the client stays usable. */
static void api_finalize_in_callback_refused(void)
{
    gw_t gw;
    pmix_proc_t me;

    gw_start(&gw, NULL, &me);
    CU_ASSERT_EQUAL(inside_callback(finalize_from_callback), PMIX_ERR_WOULD_BLOCK);
    CU_ASSERT_TRUE(PMIx_Initialized());
    CU_ASSERT_EQUAL(PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    gw_stop(&gw);
}

/* The inherited PMI_FD socket is closed by Finalize; its number may since
 * belong to another file while the environment still names it.  A second
 * Init must not take that file for the gateway (it wrote the preamble into
 * it and closed it). */
static void api_reinit_does_not_reuse_closed_pmi_fd(void)
{
    gw_t gw;
    pmix_proc_t me;
    char path[] = "/tmp/pg_pmix_reinitXXXXXX";
    int file;

    gw_start(&gw, NULL, &me);
    gw_stop(&gw);
    file = mkstemp(path);
    CU_ASSERT_FATAL(file >= 0);
    unlink(path);
    if (file != gw.client_fd) { /* give the file the old PMI_FD number */
        CU_ASSERT_EQUAL_FATAL(dup2(file, gw.client_fd), gw.client_fd);
        close(file);
        file = gw.client_fd;
    }
    CU_ASSERT_EQUAL(PMIx_Init(&me, NULL, 0), PMIX_ERR_UNREACH);
    CU_ASSERT_FALSE(PMIx_Initialized());
    CU_ASSERT_EQUAL(lseek(file, 0, SEEK_END), 0); /* nothing written */
    CU_ASSERT_TRUE(fcntl(file, F_GETFD) >= 0);     /* and still open */
    close(file);
}

/* The Standard's order for PMIX_GET_REFRESH_CACHE: ask the server, then
 * look in the client's cache, which holds the caller's own puts.  A get of
 * one's own uncommitted put with REFRESH finds it (it came back NOT_FOUND
 * because the server has nothing committed yet). */
static void api_refresh_of_own_put_finds_it(void)
{
    gw_t gw;
    pmix_proc_t me;
    pmix_info_t info = { .flags = 0 }; /* LOAD keeps flags: start from zero */
    pmix_value_t *v = NULL;

    gw_start(&gw, NULL, &me); /* gets: NOT_FOUND */
    CU_ASSERT_EQUAL(put_string("own", "staged"), PMIX_SUCCESS);
    PMIX_INFO_LOAD(&info, PMIX_GET_REFRESH_CACHE, NULL, PMIX_BOOL);
    CU_ASSERT_EQUAL(PMIx_Get(&me, "own", &info, 1, &v), PMIX_SUCCESS);
    CU_ASSERT_TRUE(v != NULL && v->type == PMIX_STRING && strcmp(v->data.string, "staged") == 0);
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
    v = NULL;
    CU_ASSERT_EQUAL(PMIx_Get(&me, "never-put", &info, 1, &v), PMIX_ERR_NOT_FOUND);
    CU_ASSERT_PTR_NULL(v);
    PMIX_INFO_DESTRUCT(&info);
    gw_stop(&gw);
}

/* A lookup reply must carry one pdata per key asked. */
static void gw_answer_one_pdata(gw_t *gw, uint8_t cmd, uint32_t id)
{
    pmix_data_buffer_t buf;
    pmix_pdata_t pd;

    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_PROCID(&pd.proc, gw_nspace, 0);
    PMIX_LOAD_KEY(pd.key, "a");
    PMIX_VALUE_LOAD(&pd.value, "value-a", PMIX_STRING);
    pg_buffer_construct(&buf);
    pg_pmix_msg_begin_reply(&buf, cmd, id, PMIX_SUCCESS);
    pg_pmix_pack_array(&buf, &pd, 1, PMIX_PDATA);
    gw_send(gw, &buf);
    PMIX_PDATA_DESTRUCT(&pd);
}

static void api_lookup_reply_short_of_keys_is_an_error(void)
{
    gw_t gw;
    pmix_proc_t me;
    pmix_pdata_t pd[2];

    gw_start(&gw, gw_answer_one_pdata, &me);
    PMIX_PDATA_CONSTRUCT(&pd[0]);
    PMIX_PDATA_CONSTRUCT(&pd[1]);
    PMIX_LOAD_KEY(pd[0].key, "a");
    PMIX_LOAD_KEY(pd[1].key, "b");
    CU_ASSERT_EQUAL(PMIx_Lookup(pd, 2, NULL, 0), PMIX_ERR_UNPACK_FAILURE);
    PMIX_PDATA_DESTRUCT(&pd[0]);
    PMIX_PDATA_DESTRUCT(&pd[1]);
    gw_stop(&gw);
}

/* A get reply that says success but carries no value. */
static void gw_answer_empty_success(gw_t *gw, uint8_t cmd, uint32_t id)
{
    gw_reply_status(gw, cmd, id, PMIX_SUCCESS);
}

static void api_get_reply_without_value_is_an_error(void)
{
    gw_t gw;
    pmix_proc_t me, peer;
    pmix_value_t *v = NULL;

    gw_start(&gw, gw_answer_empty_success, &me);
    PMIX_LOAD_PROCID(&peer, me.nspace, 0);
    CU_ASSERT_NOT_EQUAL(PMIx_Get(&peer, "k", NULL, 0, &v), PMIX_SUCCESS);
    CU_ASSERT_PTR_NULL(v);
    gw_stop(&gw);
}

/* A value of a type the library does not know is the caller's mistake,
 * not a lack of memory (Store_internal said PMIX_ERR_NOMEM). */
static void api_store_internal_unknown_type_is_bad_param(void)
{
    gw_t gw;
    pmix_proc_t me;
    pmix_value_t v;

    gw_start(&gw, NULL, &me);
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = 9999;
    CU_ASSERT_EQUAL(PMIx_Store_internal(&me, "odd", &v), PMIX_ERR_BAD_PARAM);
    gw_stop(&gw);
}

/* What Open MPI 4.1 writes into reserved keys during MPI_Init: its hostname
 * and cpuset (the host's values stand), each local peer's PMIX_LOCALITY
 * (kept, and read back); any other reserved key is still refused. */
static void api_reserved_keys_open_mpi_writes(void)
{
    gw_t gw;
    pmix_proc_t me, peer;
    pmix_value_t v, *got = NULL;
    uint16_t loc = 5;
    char *host = "node7";

    gw_start(&gw, NULL, &me);
    PMIX_VALUE_CONSTRUCT(&v);
    PMIX_VALUE_LOAD(&v, host, PMIX_STRING);
    CU_ASSERT_EQUAL(PMIx_Put(PMIX_GLOBAL, PMIX_HOSTNAME, &v), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIx_Put(PMIX_GLOBAL, PMIX_CPUSET, &v), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIx_Put(PMIX_GLOBAL, "pmix.mykey", &v), PMIX_ERR_BAD_PARAM);
    CU_ASSERT_EQUAL(PMIx_Store_internal(&me, PMIX_LOCALITY_STRING, &v), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(PMIx_Store_internal(&me, "pmix.mine", &v), PMIX_ERR_BAD_PARAM);
    PMIX_VALUE_DESTRUCT(&v);
    /* dropped, not staged: the commit carries nothing */
    CU_ASSERT_EQUAL(PMIx_Commit(), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(gw.commit_puts, 0);

    PMIX_LOAD_PROCID(&peer, me.nspace, 1);
    PMIX_VALUE_CONSTRUCT(&v);
    PMIX_VALUE_LOAD(&v, &loc, PMIX_UINT16);
    CU_ASSERT_EQUAL(PMIx_Store_internal(&peer, PMIX_LOCALITY, &v), PMIX_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(PMIx_Get(&peer, PMIX_LOCALITY, NULL, 0, &got), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(got->type, PMIX_UINT16);
    CU_ASSERT_EQUAL(got->data.uint16, 5);
    PMIX_VALUE_RELEASE(got);
    gw_stop(&gw);
}

static int make_tree(const char *top)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/sub", top);
    if (mkdir(path, 0700) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/sub/file", top);
    f = fopen(path, "w");
    return f != NULL && fclose(f) == 0 ? 0 : -1;
}

static volatile int in_forked_child;

/* LeakSanitizer's hook: no leak check at the exit() of a forked child.
 * The child inherits the fake gateway thread's buffers but not the thread,
 * so whatever that thread had in flight at the fork would be reported as
 * the child's leak (the exit must run, for the cleanup it tests); the test
 * process itself is still checked. */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    return in_forked_child;
}

/* Registers dir for recursive cleanup in a child process, which then exits
 * (when forked_child_too, after forking one that exits first); returns the
 * child's exit status. */
static int register_in_child(const pmix_proc_t *me, const char *dir, bool forked_child_too)
{
    pmix_info_t dirs[2] = { { .flags = 0 }, { .flags = 0 } };
    int status = -1;
    pid_t pid = fork();

    if (pid == 0) {
        in_forked_child = 1;
        PMIX_INFO_LOAD(&dirs[0], PMIX_REGISTER_CLEANUP_DIR, dir, PMIX_STRING);
        PMIX_INFO_LOAD(&dirs[1], PMIX_CLEANUP_RECURSIVE, NULL, PMIX_BOOL);
        if (pg_pmix_cleanup_request(me, 1, dirs, 2) != PMIX_SUCCESS)
            _exit(2);
        if (forked_child_too) {
            pid_t grandchild = fork();

            if (grandchild == 0)
                exit(0); /* runs the destructors: must remove nothing */
            if (grandchild < 0 || waitpid(grandchild, NULL, 0) != grandchild)
                _exit(3);
            if (access(dir, F_OK) != 0)
                _exit(4); /* the forked child removed its parent's registration */
        }
        exit(0);
    }
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
        return WEXITSTATUS(status);
    return -1;
}

/* Open MPI's MPI_Init registers its session directory for removal at the
 * rank's exit (and fails if refused): the registering process removes it
 * when it exits, a process it forked does not. */
static void api_cleanup_registration_removes_tree_at_exit(void)
{
    gw_t gw;
    pmix_proc_t me, other;
    pmix_info_t dirs[1] = { { .flags = 0 } };
    char top[] = "/tmp/pg_cleanup.XXXXXX";

    gw_start(&gw, NULL, &me);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(top));
    CU_ASSERT_EQUAL_FATAL(make_tree(top), 0);
    CU_ASSERT_EQUAL(register_in_child(&me, top, true), 0);
    CU_ASSERT_NOT_EQUAL(access(top, F_OK), 0); /* the whole tree is gone */

    /* not a cleanup request; another process's; a relative path */
    PMIX_INFO_LOAD(&dirs[0], PMIX_REGISTER_CLEANUP_DIR, "relative/dir", PMIX_STRING);
    CU_ASSERT_EQUAL(pg_pmix_cleanup_request(&me, 1, NULL, 0), PMIX_ERR_NOT_FOUND);
    PMIX_LOAD_PROCID(&other, me.nspace, me.rank + 1);
    CU_ASSERT_EQUAL(pg_pmix_cleanup_request(&other, 1, dirs, 1), PMIX_ERR_NOT_SUPPORTED);
    CU_ASSERT_EQUAL(pg_pmix_cleanup_request(NULL, 0, dirs, 1), PMIX_ERR_NOT_SUPPORTED);
    CU_ASSERT_EQUAL(pg_pmix_cleanup_request(&me, 1, dirs, 1), PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&dirs[0]);
    gw_stop(&gw);
}

/* A gateway that holds every get (never answers). */
static void gw_answer_nothing(gw_t *gw, uint8_t cmd, uint32_t id)
{
    (void)cmd;
    (void)id;
    __atomic_store_n(&gw->held, 1, __ATOMIC_RELEASE);
}

typedef struct held_get {
    pmix_proc_t peer;
    pmix_status_t rc;
    pmix_value_t *v;
} held_get_t;

static void *held_get_main(void *arg)
{
    held_get_t *h = arg;

    h->rc = PMIx_Get(&h->peer, "never", NULL, 0, &h->v);
    return NULL;
}

/* Finalize while another thread waits in a held get: the waiter comes back
 * with PMIX_ERR_LOST_CONNECTION, and Finalize frees nothing the waiter
 * still uses (the mux, whose lock the woken waiter had yet to retake, was
 * freed at once: a race valgrind and ASan see only on an unlucky run). */
static void api_finalize_releases_waiting_caller(void)
{
    gw_t gw;
    pmix_proc_t me;
    held_get_t h;
    pthread_t t;

    gw_start(&gw, gw_answer_nothing, &me);
    memset(&h, 0, sizeof(h));
    PMIX_LOAD_PROCID(&h.peer, me.nspace, 0);
    pthread_create(&t, NULL, held_get_main, &h);
    for (int ms = 0; ms < 10000 && !__atomic_load_n(&gw.held, __ATOMIC_ACQUIRE); ms++)
        usleep(1000); /* until the get is sent and held */
    CU_ASSERT_EQUAL(PMIx_Finalize(NULL, 0), PMIX_SUCCESS);
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(h.rc, PMIX_ERR_LOST_CONNECTION);
    CU_ASSERT_PTR_NULL(h.v);
    gw_stop(&gw);
}

/* ---- two threads committing at once ---------------------------------------- */

/* pg_mux_call is wrapped (-Wl,--wrap=pg_mux_call): a commit marked to
 * pause waits in it, after its puts were taken and before it is sent,
 * until another commit reaches the gateway or a second has passed --
 * the window in which a concurrent commit used to overtake it. */
pmix_status_t __real_pg_mux_call(pg_mux_t *m, pmix_data_buffer_t *buf, uint32_t id,
                                 pmix_data_buffer_t *reply);
pmix_status_t __wrap_pg_mux_call(pg_mux_t *m, pmix_data_buffer_t *buf, uint32_t id,
                                 pmix_data_buffer_t *reply);

static int pause_next_commit; /* atomic: the next commit pauses */
static int commit_paused;     /* atomic: it is pausing now */
static gw_t *pause_gw;

static uint8_t request_cmd(const pmix_data_buffer_t *buf)
{
    pmix_data_buffer_t view;
    uint8_t cmd = 0;
    uint32_t id;

    if (buf->bytes_used <= PG_PMIX_HEADER_LEN)
        return 0;
    pg_pmix_msg_view(&view, buf->base_ptr + PG_PMIX_HEADER_LEN,
                     buf->bytes_used - PG_PMIX_HEADER_LEN);
    return pg_pmix_msg_read_header(&view, &cmd, &id) == PMIX_SUCCESS ? cmd : 0;
}

pmix_status_t __wrap_pg_mux_call(pg_mux_t *m, pmix_data_buffer_t *buf, uint32_t id,
                                 pmix_data_buffer_t *reply)
{
    if (request_cmd(buf) == PG_PMIX_CMD_COMMIT &&
        __atomic_exchange_n(&pause_next_commit, 0, __ATOMIC_ACQ_REL)) {
        __atomic_store_n(&commit_paused, 1, __ATOMIC_RELEASE);
        for (int ms = 0; ms < 1000 && __atomic_load_n(&pause_gw->ncommits, __ATOMIC_ACQUIRE) == 0;
             ms++)
            usleep(1000);
    }
    return __real_pg_mux_call(m, buf, id, reply);
}

static void *commit_main(void *arg)
{
    *(pmix_status_t *)arg = PMIx_Commit();
    return NULL;
}

/* One thread commits key=old, and while that commit is between taking its
 * put and sending it, another thread puts key=new and commits: the gateway
 * must receive old then new, or it keeps the older value (it received new
 * first before commits were serialised). */
static void api_concurrent_commits_reach_gateway_in_put_order(void)
{
    gw_t gw;
    pmix_proc_t me;
    pmix_status_t first = PMIX_ERROR, second;
    pthread_t t;

    gw_start(&gw, NULL, &me);
    pause_gw = &gw;
    CU_ASSERT_EQUAL(put_string("k", "old"), PMIX_SUCCESS);
    __atomic_store_n(&commit_paused, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&pause_next_commit, 1, __ATOMIC_RELEASE);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, commit_main, &first), 0);
    for (int ms = 0; ms < 10000 && !__atomic_load_n(&commit_paused, __ATOMIC_ACQUIRE); ms++)
        usleep(1000);
    CU_ASSERT_TRUE(__atomic_load_n(&commit_paused, __ATOMIC_ACQUIRE));
    CU_ASSERT_EQUAL(put_string("k", "new"), PMIX_SUCCESS);
    second = PMIx_Commit();
    pthread_join(t, NULL);
    CU_ASSERT_EQUAL(first, PMIX_SUCCESS);
    CU_ASSERT_EQUAL(second, PMIX_SUCCESS);
    CU_ASSERT_EQUAL(__atomic_load_n(&gw.ncommits, __ATOMIC_ACQUIRE), 2);
    CU_ASSERT_STRING_EQUAL(gw.commit_first[0], "old");
    CU_ASSERT_STRING_EQUAL(gw.commit_first[1], "new");
    gw_stop(&gw);
}

/* ---- events against the fake gateway ------------------------------------ */

/* What an event handler saw, with a bounded wait (a missing event fails the
 * test instead of hanging it). */
typedef struct ev_seen {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int calls;
    pmix_status_t status;
    pmix_rank_t source;
    int have_affected;
    void *object; /* PMIX_EVENT_RETURN_OBJECT as the handler got it */
} ev_seen_t;

static ev_seen_t ev_a, ev_b;

static void ev_seen_init(ev_seen_t *s)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
}

static bool ev_seen_wait(ev_seen_t *s, int calls)
{
    struct timespec until;
    bool ok;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&s->lock);
    while (s->calls < calls && pthread_cond_timedwait(&s->cond, &s->lock, &until) == 0)
        ;
    ok = s->calls >= calls;
    pthread_mutex_unlock(&s->lock);
    return ok;
}

static void ev_record(ev_seen_t *s, pmix_status_t status, const pmix_proc_t *source,
                      pmix_info_t info[], size_t ninfo)
{
    pthread_mutex_lock(&s->lock);
    s->calls++;
    s->status = status;
    s->source = source != NULL ? source->rank : PMIX_RANK_UNDEF;
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC))
            s->have_affected = 1;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT) &&
                 info[i].value.type == PMIX_POINTER)
            s->object = info[i].value.data.ptr;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

#define EV_HANDLER(name, rec)                                                                 \
    static void name(size_t id, pmix_status_t status, const pmix_proc_t *source,             \
                     pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults, \
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)               \
    {                                                                                         \
        (void)id, (void)results, (void)nresults;                                              \
        ev_record(&(rec), status, source, info, ninfo);                                      \
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);                                    \
    }

EV_HANDLER(ev_handler_a, ev_a)
EV_HANDLER(ev_handler_b, ev_b)

/* The gateway answers a notify, then sends an event of its own: code
 * -3200 from rank 1 of its namespace, naming rank 1 as affected. */
static void gw_answer_notify_with_event(gw_t *gw, uint8_t cmd, uint32_t id)
{
    pmix_data_buffer_t buf;
    pmix_proc_t src;
    pmix_info_t affected = { .flags = 0 };
    pmix_data_range_t range = PMIX_RANGE_NAMESPACE;

    gw_reply_status(gw, cmd, id, cmd == PG_PMIX_CMD_NOTIFY ? PMIX_SUCCESS : PMIX_ERROR);
    if (cmd != PG_PMIX_CMD_NOTIFY)
        return;
    PMIX_LOAD_PROCID(&src, gw_nspace, 1);
    PMIX_INFO_LOAD(&affected, PMIX_EVENT_AFFECTED_PROC, &src, PMIX_PROC);
    pg_buffer_construct(&buf);
    pg_pmix_msg_begin_reply(&buf, PG_PMIX_CMD_EVENT, 0, -3200);
    pg_pmix_pack_one(&buf, &src, PMIX_PROC);
    pg_pmix_pack_one(&buf, &range, PMIX_DATA_RANGE);
    pg_pmix_pack_array(&buf, &affected, 1, PMIX_INFO);
    gw_send(gw, &buf);
    PMIX_INFO_DESTRUCT(&affected);
}

/* An event frame from the gateway reaches the handler registered for its
 * code, with its source and info, and no other handler. */
static void api_gateway_event_reaches_its_handler_only(void)
{
    pmix_status_t code_a = -3200, code_b = -3201;
    pmix_info_t object;
    gw_t gw;
    pmix_proc_t me;

    ev_seen_init(&ev_a);
    ev_seen_init(&ev_b);
    gw_start(&gw, gw_answer_notify_with_event, &me);
    PMIX_INFO_LOAD(&object, PMIX_EVENT_RETURN_OBJECT, &ev_a, PMIX_POINTER);
    CU_ASSERT(PMIx_Register_event_handler(&code_a, 1, &object, 1, ev_handler_a, NULL, NULL) > 0);
    CU_ASSERT(PMIx_Register_event_handler(&code_b, 1, NULL, 0, ev_handler_b, NULL, NULL) > 0);
    /* RM range: not this process's own handlers, only the gateway's answer */
    CU_ASSERT_EQUAL(PMIx_Notify_event(-3300, NULL, PMIX_RANGE_RM, NULL, 0, NULL, NULL),
                    PMIX_SUCCESS);
    CU_ASSERT_TRUE(ev_seen_wait(&ev_a, 1));
    CU_ASSERT_EQUAL(ev_a.status, -3200);
    CU_ASSERT_EQUAL(ev_a.source, 1);
    CU_ASSERT_EQUAL(ev_a.have_affected, 1);
    CU_ASSERT_PTR_EQUAL(ev_a.object, &ev_a); /* the registration's object comes back */
    CU_ASSERT_EQUAL(ev_b.calls, 0);
    gw_stop(&gw);
}

/* The gateway's socket closing is PMIX_ERR_LOST_CONNECTION for the
 * handlers registered for it -- but finalize's own close is not. */
static void api_lost_gateway_is_an_event(void)
{
    pmix_status_t lost = PMIX_ERR_LOST_CONNECTION;
    gw_t gw;
    pmix_proc_t me;

    ev_seen_init(&ev_a);
    gw_start(&gw, NULL, &me);
    CU_ASSERT(PMIx_Register_event_handler(&lost, 1, NULL, 0, ev_handler_a, NULL, NULL) > 0);
    CU_ASSERT_EQUAL(shutdown(gw.fd, SHUT_RDWR), 0); /* the gateway goes away */
    CU_ASSERT_TRUE(ev_seen_wait(&ev_a, 1));
    CU_ASSERT_EQUAL(ev_a.status, PMIX_ERR_LOST_CONNECTION);
    CU_ASSERT_EQUAL(ev_a.source, GW_RANK);
    (void)PMIx_Finalize(NULL, 0); /* nobody answers */
    pthread_join(gw.thread, NULL);
    close(gw.fd);

    ev_seen_init(&ev_a);
    gw_start(&gw, NULL, &me);
    CU_ASSERT(PMIx_Register_event_handler(&lost, 1, NULL, 0, ev_handler_a, NULL, NULL) > 0);
    gw_stop(&gw);
    CU_ASSERT_EQUAL(ev_a.calls, 0);
}

/* Registration answers through its callback, on the progress thread; a
 * deregistered id is gone (a second deregistration is BAD_PARAM). */
static void reg_cb_record(pmix_status_t status, size_t refid, void *cbdata)
{
    ev_seen_t *s = cbdata;

    pthread_mutex_lock(&s->lock);
    s->calls++;
    s->status = status;
    s->source = (pmix_rank_t)refid;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

static void op_cb_record(pmix_status_t status, void *cbdata)
{
    reg_cb_record(status, 0, cbdata);
}

static void api_registration_callback_and_deregistration(void)
{
    gw_t gw;
    pmix_proc_t me;
    ev_seen_t reg;

    ev_seen_init(&reg);
    gw_start(&gw, NULL, &me);
    CU_ASSERT_EQUAL(PMIx_Register_event_handler(NULL, 0, NULL, 0, ev_handler_a, reg_cb_record,
                                                &reg),
                    PMIX_SUCCESS);
    CU_ASSERT_TRUE(ev_seen_wait(&reg, 1));
    CU_ASSERT_EQUAL(reg.status, PMIX_SUCCESS);
    CU_ASSERT_NOT_EQUAL(reg.source, 0);
    CU_ASSERT_EQUAL(PMIx_Deregister_event_handler(reg.source, NULL, NULL), PMIX_SUCCESS);
    /* the Standard's answer for a reference it does not know */
    CU_ASSERT_EQUAL(PMIx_Deregister_event_handler(reg.source, NULL, NULL), PMIX_ERR_BAD_PARAM);
    /* ...and with a callback, that callback brings it: OpenPMIx's examples
     * deregister handler 1 at the end whether they registered it or not,
     * and wait for the callback */
    ev_seen_init(&reg);
    CU_ASSERT_EQUAL(PMIx_Deregister_event_handler(4242, op_cb_record, &reg), PMIX_SUCCESS);
    CU_ASSERT_TRUE(ev_seen_wait(&reg, 1));
    CU_ASSERT_EQUAL(reg.status, PMIX_ERR_BAD_PARAM);
    gw_stop(&gw);
    CU_ASSERT_EQUAL(PMIx_Register_event_handler(NULL, 0, NULL, 0, ev_handler_a, NULL, NULL),
                    PMIX_ERR_INIT);
}

/* ---- handler order ----------------------------------------------------------- */

static char order_seen[8];
static ev_seen_t order_done;

static void order_note(char c)
{
    size_t n = strlen(order_seen);

    if (n + 1 < sizeof(order_seen))
        order_seen[n] = c;
}

#define ORDER_HANDLER(name, letter, last)                                                     \
    static void name(size_t id, pmix_status_t status, const pmix_proc_t *source,             \
                     pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults, \
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)               \
    {                                                                                         \
        (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results,         \
            (void)nresults;                                                                   \
        order_note(letter);                                                                   \
        if (last) /* before the completion: the event's data is not ours after it */          \
            ev_record(&order_done, status, source, NULL, 0);                                  \
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);                                    \
    }

ORDER_HANDLER(order_x, 'x', false)
ORDER_HANDLER(order_y, 'y', false)
ORDER_HANDLER(order_z, 'z', false)
ORDER_HANDLER(order_f, 'f', false)
ORDER_HANDLER(order_d, 'd', true)

static void register_named(pmix_status_t *code, const char *name, const char *place,
                           const char *ref, pmix_notification_fn_t fn)
{
    pmix_info_t info[2];
    size_t n = 0;

    PMIX_INFO_LOAD(&info[n++], PMIX_EVENT_HDLR_NAME, name, PMIX_STRING);
    if (place != NULL)
        PMIX_INFO_LOAD(&info[n++], place, ref, ref != NULL ? PMIX_STRING : PMIX_BOOL);
    CU_ASSERT(PMIx_Register_event_handler(code, code != NULL, info, n, fn, NULL, NULL) > 0);
    for (size_t i = 0; i < n; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
}

/* The FIRST handler, then single-code handlers in their placed order
 * (BEFORE / AFTER a named one), then default handlers; a second FIRST
 * and a placement next to an unknown name are refused. */
static void api_handler_order(void)
{
    pmix_status_t code = -3400;
    pmix_info_t info;
    gw_t gw;
    pmix_proc_t me;

    memset(order_seen, 0, sizeof(order_seen));
    ev_seen_init(&order_done);
    gw_start(&gw, NULL, &me);
    register_named(NULL, "d", NULL, NULL, order_d);
    register_named(&code, "x", NULL, NULL, order_x);
    register_named(&code, "z", PMIX_EVENT_HDLR_AFTER, "x", order_z);
    register_named(&code, "y", PMIX_EVENT_HDLR_BEFORE, "x", order_y);
    register_named(&code, "f", PMIX_EVENT_HDLR_FIRST, NULL, order_f);
    PMIX_INFO_LOAD(&info, PMIX_EVENT_HDLR_FIRST, NULL, PMIX_BOOL);
    CU_ASSERT_EQUAL(PMIx_Register_event_handler(&code, 1, &info, 1, order_x, NULL, NULL),
                    PMIX_ERR_EVENT_REGISTRATION);
    PMIX_INFO_DESTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_EVENT_HDLR_BEFORE, "nobody", PMIX_STRING);
    CU_ASSERT_EQUAL(PMIx_Register_event_handler(&code, 1, &info, 1, order_x, NULL, NULL),
                    PMIX_ERR_NOT_FOUND);
    PMIX_INFO_DESTRUCT(&info);
    CU_ASSERT_EQUAL(PMIx_Notify_event(code, NULL, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL),
                    PMIX_SUCCESS);
    CU_ASSERT_TRUE(ev_seen_wait(&order_done, 1));
    CU_ASSERT_STRING_EQUAL(order_seen, "fyxzd");
    gw_stop(&gw);
}

static const pg_cunit_test_t mux_tests[] = {
    { "mux_out_of_order_replies_reach_their_callers",
      mux_out_of_order_replies_reach_their_callers },
    { "mux_callback_runs_on_progress_thread", mux_callback_runs_on_progress_thread },
    { "mux_unknown_reply_id_ignored", mux_unknown_reply_id_ignored },
    { "mux_lost_server_fails_pending", mux_lost_server_fails_pending },
    { "mux_garbage_reply_fails_pending", mux_garbage_reply_fails_pending },
    { "mux_oversized_reply_fails_pending", mux_oversized_reply_fails_pending },
    { "mux_deferred_work_runs_on_progress_thread", mux_deferred_work_runs_on_progress_thread },
    { "mux_send_failing_after_loss_leaves_completed_request",
      mux_send_failing_after_loss_leaves_completed_request },
    { "mux_work_queued_before_a_reply_runs_first", mux_work_queued_before_a_reply_runs_first },
    { NULL, NULL },
};

static const pg_cunit_test_t cache_tests[] = {
    { "cache_own_put_readable_and_staged_in_order", cache_own_put_readable_and_staged_in_order },
    { "cache_same_key_other_scope_refused", cache_same_key_other_scope_refused },
    { "cache_fence_forgets_fetched_keeps_permanent",
      cache_fence_forgets_fetched_keeps_permanent },
    { NULL, NULL },
};

/* ---- queries the library answers itself --------------------------------------- */

static int gw_queries; /* queries that reached the fake gateway */

static void gw_answer_query_not_found(gw_t *gw, uint8_t cmd, uint32_t id)
{
    if (cmd == PG_PMIX_CMD_QUERY)
        __atomic_add_fetch(&gw_queries, 1, __ATOMIC_ACQ_REL);
    gw_reply_status(gw, cmd, id, PMIX_ERR_NOT_FOUND);
}

static pmix_query_t *abi_queries(const char *other)
{
    pmix_query_t *q;
    pmix_status_t rc;

    PMIX_QUERY_CREATE(q, 2);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_STABLE_ABI_VERSION);
    PMIX_ARGV_APPEND(rc, q[1].keys, PMIX_QUERY_PROVISIONAL_ABI_VERSION);
    if (other != NULL)
        PMIX_ARGV_APPEND(rc, q[1].keys, other);
    (void)rc;
    return q;
}

/* The ABI-version keys are answered before PMIx_Init (the Standard allows
 * it for them alone, with the blocking call) and after it without asking
 * the gateway; mixed with other keys they are added to the gateway's
 * answers. */
static void api_abi_version_query_before_and_after_init(void)
{
    pmix_query_t *q = abi_queries(NULL), *mixed = abi_queries(PMIX_QUERY_NAMESPACES);
    pmix_info_t *res = NULL;
    size_t n = 0;
    gw_t gw;
    pmix_proc_t me;

    CU_ASSERT_FALSE(PMIx_Initialized());
    CU_ASSERT_EQUAL(PMIx_Query_info(q, 2, &res, &n), PMIX_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(res[0].key, PMIX_QUERY_STABLE_ABI_VERSION);
    CU_ASSERT_EQUAL(res[0].value.type, PMIX_STRING);
    CU_ASSERT_STRING_EQUAL(res[0].value.data.string, "0.0");
    CU_ASSERT_STRING_EQUAL(res[1].key, PMIX_QUERY_PROVISIONAL_ABI_VERSION);
    PMIX_INFO_FREE(res, n);
    /* anything else needs the gateway; so does the non-blocking form */
    CU_ASSERT_EQUAL(PMIx_Query_info(mixed, 2, &res, &n), PMIX_ERR_INIT);
    CU_ASSERT_EQUAL(n, 0);

    __atomic_store_n(&gw_queries, 0, __ATOMIC_RELEASE);
    gw_start(&gw, gw_answer_query_not_found, &me);
    CU_ASSERT_EQUAL(PMIx_Query_info(q, 2, &res, &n), PMIX_SUCCESS);
    CU_ASSERT_EQUAL(n, 2);
    PMIX_INFO_FREE(res, n);
    CU_ASSERT_EQUAL(__atomic_load_n(&gw_queries, __ATOMIC_ACQUIRE), 0);
    CU_ASSERT_EQUAL(PMIx_Query_info(mixed, 2, &res, &n), PMIX_ERR_PARTIAL_SUCCESS);
    CU_ASSERT_EQUAL(n, 2);
    PMIX_INFO_FREE(res, n);
    CU_ASSERT_EQUAL(__atomic_load_n(&gw_queries, __ATOMIC_ACQUIRE), 1);
    gw_stop(&gw);
    PMIX_QUERY_FREE(q, 2);
    PMIX_QUERY_FREE(mixed, 2);
}

static const pg_cunit_test_t api_tests[] = {
    { "api_gateway_event_reaches_its_handler_only", api_gateway_event_reaches_its_handler_only },
    { "api_lost_gateway_is_an_event", api_lost_gateway_is_an_event },
    { "api_handler_order", api_handler_order },
    { "api_registration_callback_and_deregistration",
      api_registration_callback_and_deregistration },
    { "api_refused_commit_in_callback_keeps_puts_staged",
      api_refused_commit_in_callback_keeps_puts_staged },
    { "api_finalize_in_callback_refused", api_finalize_in_callback_refused },
    { "api_reinit_does_not_reuse_closed_pmi_fd", api_reinit_does_not_reuse_closed_pmi_fd },
    { "api_refresh_of_own_put_finds_it", api_refresh_of_own_put_finds_it },
    { "api_lookup_reply_short_of_keys_is_an_error", api_lookup_reply_short_of_keys_is_an_error },
    { "api_get_reply_without_value_is_an_error", api_get_reply_without_value_is_an_error },
    { "api_store_internal_unknown_type_is_bad_param",
      api_store_internal_unknown_type_is_bad_param },
    { "api_finalize_releases_waiting_caller", api_finalize_releases_waiting_caller },
    { "api_reserved_keys_open_mpi_writes", api_reserved_keys_open_mpi_writes },
    { "api_cleanup_registration_removes_tree_at_exit",
      api_cleanup_registration_removes_tree_at_exit },
    { "api_concurrent_commits_reach_gateway_in_put_order",
      api_concurrent_commits_reach_gateway_in_put_order },
    { "api_abi_version_query_before_and_after_init",
      api_abi_version_query_before_and_after_init },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "pmix_mux", mux_tests, NULL, NULL },
    { "pmix_cache", cache_tests, NULL, NULL },
    { "pmix_api", api_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}

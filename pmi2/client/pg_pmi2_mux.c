/*
 * pg_pmi2_mux: the shared-socket thread multiplexer of libpmi2 (design and
 * rules in pg_pmi2_mux.h).
 *
 * Locking: `lock` guards the waiting list, the reader flag, `broken` and
 * the stats; `write_lock` every write to the socket (taken inside `lock`,
 * never the other way round), so a request without a reply (abort) can go
 * out from any thread at once.  The receive buffer (conn, raw, scratch)
 * belongs to whoever reads: the owner on the fast path, else the thread
 * holding the reader role; neither holds a lock while it reads.  The fast
 * path and threaded mode never overlap: a thread switching the mux to
 * threaded mode waits until the owner's fast call has left.
 */
#include "pmi2/client/pg_pmi2_mux.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/pg_cl_io.h"
#include "parser/pg_parse.h"
#include "pmi2/pmi2.h"

enum { MUX_REQ_STACK = 1024, MUX_REQ_MAX = PG_PMI2_LENGTH_FIELD + PG_PMI2_BODY_MAX };

/* One waiting request; lives on its caller's stack. */
typedef struct pg_pmi2_op {
    struct pg_pmi2_op *next;
    char thrid[24];
    pg_cmd_t expect;
    bool done;
    int err;                    /* PMI2 code when done without a reply */
    pg_proto_t proto;           /* how the delivered body is framed */
    pg_pmi2_reply_t *reply;
} pg_pmi2_op_t;

struct pg_pmi2_mux {
    pg_cl_conn_t conn;
    pthread_t owner;
    atomic_bool threaded;
    atomic_bool fast_busy;
    atomic_ulong next_id;
    atomic_ulong fast_calls;
    pthread_mutex_t lock;
    pthread_mutex_t write_lock;
    pthread_cond_t cond;
    bool reader_active;
    unsigned callers;           /* threads inside threaded_call: free waits for them */
    int broken;                 /* PMI2_SUCCESS, or PMI2_FAIL once the socket failed */
    pg_pmi2_op_t *head, *tail;  /* waiting requests, in send order */
    pg_pmi2_mux_stats_t stats;
    /* the reader's view of the frame just read */
    char *raw;
    size_t raw_len, raw_cap;
    pg_proto_t raw_proto;
    pg_msg_t scratch;
};

/* ---- replies -------------------------------------------------------------- */

void pg_pmi2_reply_init(pg_pmi2_reply_t *r)
{
    pg_msg_init(&r->msg);
    r->body = r->inline_body;
    r->len = 0;
}

void pg_pmi2_reply_release(pg_pmi2_reply_t *r)
{
    pg_msg_release(&r->msg);
    if (r->body != r->inline_body)
        free(r->body);
    r->body = r->inline_body;
    r->len = 0;
}

static int reply_set_body(pg_pmi2_reply_t *r, const char *src, size_t len)
{
    if (r->body != r->inline_body)
        free(r->body);
    r->body = r->inline_body;
    if (len > sizeof(r->inline_body) && (r->body = malloc(len)) == NULL) {
        r->body = r->inline_body;
        return PMI2_ERR_NOMEM;
    }
    memcpy(r->body, src, len);
    r->len = len;
    return PMI2_SUCCESS;
}

static int reply_parse(pg_pmi2_reply_t *r, pg_proto_t proto)
{
    int rc = proto == PG_PROTO_PMI1 ? pg_parse_pmi1(r->body, r->len, &r->msg)
                                    : pg_parse_pmi2(r->body, r->len, &r->msg);

    return rc == PG_WIRE_ESYNTAX || rc == PG_WIRE_ENOMEM ? PMI2_FAIL : PMI2_SUCCESS;
}

/* ---- life cycle ----------------------------------------------------------- */

pg_pmi2_mux_t *pg_pmi2_mux_new(int fd)
{
    pg_pmi2_mux_t *m = calloc(1, sizeof(*m));

    if (m == NULL)
        return NULL;
    pg_cl_conn_init(&m->conn, fd);
    pg_msg_init(&m->scratch);
    m->owner = pthread_self();
    atomic_init(&m->threaded, false);
    atomic_init(&m->fast_busy, false);
    atomic_init(&m->next_id, 1);
    atomic_init(&m->fast_calls, 0);
    pthread_mutex_init(&m->lock, NULL);
    pthread_mutex_init(&m->write_lock, NULL);
    pthread_cond_init(&m->cond, NULL);
    return m;
}

void pg_pmi2_mux_shutdown(pg_pmi2_mux_t *m)
{
    atomic_store(&m->threaded, true); /* so an owner's fast call signals its end */
    if (m->conn.fd >= 0)
        shutdown(m->conn.fd, SHUT_RDWR);
}

/* Threads still waiting for replies (PMI2_Finalize from one thread while
 * others wait): shutting the socket down ends the reader's read() with EOF,
 * which fails every waiter; they leave, then the mux goes. */
static void mux_wait_callers_gone(pg_pmi2_mux_t *m)
{
    pg_pmi2_mux_shutdown(m);
    pthread_mutex_lock(&m->lock);
    while (m->callers > 0 || atomic_load(&m->fast_busy))
        pthread_cond_wait(&m->cond, &m->lock);
    pthread_mutex_unlock(&m->lock);
}

void pg_pmi2_mux_free(pg_pmi2_mux_t *m)
{
    if (m == NULL)
        return;
    mux_wait_callers_gone(m);
    if (m->conn.fd >= 0)
        close(m->conn.fd);
    pg_cl_conn_release(&m->conn);
    pg_msg_release(&m->scratch);
    free(m->raw);
    pthread_mutex_destroy(&m->lock);
    pthread_mutex_destroy(&m->write_lock);
    pthread_cond_destroy(&m->cond);
    free(m);
}

/* Switches to threaded mode and waits for the owner's fast call, if any,
 * to leave the socket. */
static void mux_become_threaded(pg_pmi2_mux_t *m)
{
    atomic_store(&m->threaded, true);
    pthread_mutex_lock(&m->lock);
    while (atomic_load(&m->fast_busy))
        pthread_cond_wait(&m->cond, &m->lock);
    pthread_mutex_unlock(&m->lock);
}

void pg_pmi2_mux_set_threaded(pg_pmi2_mux_t *m)
{
    mux_become_threaded(m);
}

bool pg_pmi2_mux_threaded(const pg_pmi2_mux_t *m)
{
    return atomic_load(&((pg_pmi2_mux_t *)m)->threaded);
}

void pg_pmi2_mux_stats(pg_pmi2_mux_t *m, pg_pmi2_mux_stats_t *out)
{
    pthread_mutex_lock(&m->lock);
    *out = m->stats;
    out->callers = m->callers;
    out->reading = m->reader_active;
    pthread_mutex_unlock(&m->lock);
    out->fast_calls = atomic_load(&m->fast_calls);
}

/* ---- requests ------------------------------------------------------------- */

/* Encodes into stack (cap MUX_REQ_STACK) or, when that is too small, into
 * a heap buffer returned in *heap (caller frees). */
static int mux_encode(pg_enc_t *e, char *stack, char **heap, pg_pmi2_build_fn build,
                      const void *args, const char *thrid)
{
    int rc;

    *heap = NULL;
    pg_enc_init(e, stack, MUX_REQ_STACK);
    rc = build(e, thrid, args);
    if (rc == PG_WIRE_EOVERFLOW) {
        if ((*heap = malloc(MUX_REQ_MAX)) == NULL)
            return PMI2_ERR_NOMEM;
        pg_enc_init(e, *heap, MUX_REQ_MAX);
        rc = build(e, thrid, args);
    }
    if (rc == PG_WIRE_EOVERFLOW)
        return PMI2_ERR_INVALID_LENGTH;
    return rc == 0 ? PMI2_SUCCESS : PMI2_ERR_INVALID_ARG;
}

/* Writes one encoded request whole, whichever thread and mode. */
static int mux_write(pg_pmi2_mux_t *m, const pg_enc_t *e)
{
    int rc;

    pthread_mutex_lock(&m->write_lock);
    rc = pg_cl_send(m->conn.fd, e->buf, e->len) == 0 ? PMI2_SUCCESS : PMI2_FAIL;
    pthread_mutex_unlock(&m->write_lock);
    return rc;
}

/* ---- the fast path (owner thread, never threaded) ------------------------- */

static bool fast_enter(pg_pmi2_mux_t *m)
{
    if (atomic_load_explicit(&m->threaded, memory_order_relaxed))
        return false;
    if (!pthread_equal(pthread_self(), m->owner)) {
        mux_become_threaded(m);
        return false;
    }
    atomic_store(&m->fast_busy, true);
    if (!atomic_load(&m->threaded))
        return true;
    atomic_store(&m->fast_busy, false); /* lost the race to another thread */
    pthread_mutex_lock(&m->lock);
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
    return false;
}

static void fast_leave(pg_pmi2_mux_t *m)
{
    atomic_store(&m->fast_busy, false);
    if (atomic_load(&m->threaded)) {
        pthread_mutex_lock(&m->lock);
        pthread_cond_broadcast(&m->cond);
        pthread_mutex_unlock(&m->lock);
    }
}

/* Reads until the expected reply; anything else (which a lone caller can
 * only get from a confused server) is skipped. */
static int fast_await(pg_pmi2_mux_t *m, pg_cmd_t expect, pg_pmi2_reply_t *reply)
{
    for (;;) {
        pg_frame_t f;
        int rc;

        if (pg_cl_conn_next(&m->conn, &f) != 0)
            return PMI2_FAIL;
        rc = reply_set_body(reply, m->conn.buf + f.body_off, f.body_len);
        if (rc != PMI2_SUCCESS)
            return rc;
        if (reply_parse(reply, f.proto) != PMI2_SUCCESS)
            return PMI2_FAIL;
        if (reply->msg.cmd == expect)
            return PMI2_SUCCESS;
    }
}

static int fast_call(pg_pmi2_mux_t *m, pg_pmi2_build_fn build, const void *args, pg_cmd_t expect,
                     pg_pmi2_reply_t *reply)
{
    char stack[MUX_REQ_STACK], *heap;
    pg_enc_t e;
    int rc = mux_encode(&e, stack, &heap, build, args, NULL);

    atomic_fetch_add_explicit(&m->fast_calls, 1, memory_order_relaxed);
    if (rc == PMI2_SUCCESS)
        rc = mux_write(m, &e);
    free(heap);
    if (rc == PMI2_SUCCESS && expect != PG_CMD_UNKNOWN)
        rc = fast_await(m, expect, reply);
    return rc;
}

/* ---- threaded mode -------------------------------------------------------- */

static void ops_append(pg_pmi2_mux_t *m, pg_pmi2_op_t *op)
{
    op->next = NULL;
    if (m->tail != NULL)
        m->tail->next = op;
    else
        m->head = op;
    m->tail = op;
}

static void ops_remove(pg_pmi2_mux_t *m, pg_pmi2_op_t *op)
{
    pg_pmi2_op_t **pp = &m->head, *prev = NULL;

    for (; *pp != NULL; prev = *pp, pp = &(*pp)->next) {
        if (*pp != op)
            continue;
        *pp = op->next;
        if (m->tail == op)
            m->tail = prev;
        return;
    }
}

/* The socket failed: nobody will get a reply any more. */
static void ops_fail_all(pg_pmi2_mux_t *m)
{
    m->broken = PMI2_FAIL;
    for (pg_pmi2_op_t *op = m->head; op != NULL; op = op->next) {
        op->done = true;
        op->err = PMI2_FAIL;
    }
    m->head = m->tail = NULL;
}

/* Reader, without the lock: reads one frame, keeps its raw bytes in m->raw
 * (the owner parses its own copy) and parses the buffer in place into
 * m->scratch to learn the command and thrid. */
static int reader_read_one(pg_pmi2_mux_t *m)
{
    pg_frame_t f;

    if (pg_cl_conn_next(&m->conn, &f) != 0)
        return PMI2_FAIL;
    if (f.body_len > m->raw_cap) {
        char *grown = realloc(m->raw, f.body_len);

        if (grown == NULL)
            return PMI2_ERR_NOMEM;
        m->raw = grown;
        m->raw_cap = f.body_len;
    }
    memcpy(m->raw, m->conn.buf + f.body_off, f.body_len);
    m->raw_len = f.body_len;
    m->raw_proto = f.proto;
    (void)pg_parse_frame(m->conn.buf, &f, &m->scratch);
    return PMI2_SUCCESS;
}

static pg_pmi2_op_t *ops_find_owner(pg_pmi2_mux_t *m)
{
    pg_str_t thrid = pg_msg_get(&m->scratch, "thrid");
    pg_pmi2_op_t *op;

    if (thrid.ptr != NULL) {
        for (op = m->head; op != NULL; op = op->next)
            if (strlen(op->thrid) == thrid.len && memcmp(op->thrid, thrid.ptr, thrid.len) == 0) {
                m->stats.routed_by_thrid++;
                return op;
            }
        return NULL;
    }
    /* no echo (Slurm ignores thrid): servers answer in order per command */
    for (op = m->head; op != NULL; op = op->next)
        if (op->expect == m->scratch.cmd) {
            m->stats.routed_in_order++;
            return op;
        }
    return NULL;
}

/* Lock held: hands the frame in m->raw to its waiter. */
static void reader_dispatch(pg_pmi2_mux_t *m)
{
    pg_pmi2_op_t *op = ops_find_owner(m);

    if (op == NULL) {
        m->stats.dropped++;
        return;
    }
    op->err = reply_set_body(op->reply, m->raw, m->raw_len);
    op->proto = m->raw_proto;
    op->done = true;
    ops_remove(m, op);
}

/* Lock held on entry and exit: waits for op, reading for everyone while
 * nobody else does. */
static void threaded_wait(pg_pmi2_mux_t *m, pg_pmi2_op_t *op)
{
    while (!op->done) {
        int rc;

        if (m->reader_active || atomic_load(&m->fast_busy)) {
            pthread_cond_wait(&m->cond, &m->lock);
            continue;
        }
        m->reader_active = true;
        pthread_mutex_unlock(&m->lock);
        rc = reader_read_one(m);
        pthread_mutex_lock(&m->lock);
        if (rc == PMI2_SUCCESS)
            reader_dispatch(m);
        else
            ops_fail_all(m);
        m->reader_active = false;
        pthread_cond_broadcast(&m->cond);
    }
}

static int threaded_call(pg_pmi2_mux_t *m, pg_pmi2_build_fn build, const void *args,
                         pg_cmd_t expect, pg_pmi2_reply_t *reply)
{
    pg_pmi2_op_t op = { .expect = expect, .reply = reply, .err = PMI2_SUCCESS };
    char stack[MUX_REQ_STACK], *heap;
    pg_enc_t e;
    int rc;

    snprintf(op.thrid, sizeof(op.thrid), "%lx", atomic_fetch_add(&m->next_id, 1));
    rc = mux_encode(&e, stack, &heap, build, args, op.thrid);
    if (rc != PMI2_SUCCESS) {
        free(heap); /* a request too long even for the heap buffer */
        return rc;
    }
    pthread_mutex_lock(&m->lock);
    m->callers++;
    m->stats.threaded_calls++;
    rc = m->broken;
    if (rc == PMI2_SUCCESS && expect != PG_CMD_UNKNOWN)
        ops_append(m, &op); /* before the write: the reply may come at once */
    if (rc == PMI2_SUCCESS && mux_write(m, &e) != PMI2_SUCCESS) {
        ops_remove(m, &op);
        rc = PMI2_FAIL;
    }
    if (rc == PMI2_SUCCESS && expect != PG_CMD_UNKNOWN) {
        threaded_wait(m, &op);
        rc = op.err;
    }
    if (--m->callers == 0)
        pthread_cond_broadcast(&m->cond); /* a free may be waiting for that */
    pthread_mutex_unlock(&m->lock);
    free(heap);
    if (rc == PMI2_SUCCESS && expect != PG_CMD_UNKNOWN) {
        rc = reply_parse(reply, op.proto);
        if (rc == PMI2_SUCCESS && reply->msg.cmd != expect)
            rc = PMI2_FAIL; /* a thrid echoed on the wrong reply */
    }
    return rc;
}

int pg_pmi2_mux_call(pg_pmi2_mux_t *m, pg_pmi2_build_fn build, const void *args, pg_cmd_t expect,
                     pg_pmi2_reply_t *reply)
{
    int rc;

    pg_pmi2_reply_init(reply);
    if (fast_enter(m)) {
        rc = fast_call(m, build, args, expect, reply);
        fast_leave(m);
        return rc;
    }
    return threaded_call(m, build, args, expect, reply);
}

/* No reply to route, so no thrid and no switch to threaded mode: that
 * switch would wait for the owner's call in flight, whose reply may never
 * come (an abort is made when the job is stuck). */
int pg_pmi2_mux_send(pg_pmi2_mux_t *m, pg_pmi2_build_fn build, const void *args)
{
    char stack[MUX_REQ_STACK], *heap;
    pg_enc_t e;
    int rc = mux_encode(&e, stack, &heap, build, args, NULL);

    if (rc == PMI2_SUCCESS)
        rc = mux_write(m, &e);
    free(heap);
    return rc;
}

/*
 * pg_mux: one socket, one progress thread, replies routed by request id
 * (see pg_mux.h).
 *
 * Locks: `lock` guards the pending table, the work queue and the state
 * flags; `send_lock` serialises whole frames on the socket (held only while
 * writing, never together with `lock`).  User callbacks run with no lock
 * held, so they may start new requests.
 *
 * fork(): a child of the process shares the socket but has no progress
 * thread (threads do not survive fork) and may have inherited `lock` held.
 * Its requests could never be answered, and its frames would land in the
 * parent's stream, so a request from any process but the one that made the
 * mux fails at once with PMIX_ERR_UNREACH, before any lock is touched (the
 * Standard leaves fork after init undefined).
 */
#include "pmix/client/pg_mux.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uthash.h>

#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"
#include "wire/pg_io.h"
#include "wire/pg_pmix_frame.h"

enum { MUX_INBUF_INITIAL = 64 * 1024 };

typedef struct mux_req {
    uint32_t id;
    pg_mux_reply_fn fn;          /* NULL: a blocking caller waits */
    void *arg;
    bool done;                   /* blocking: the reply is in `reply` */
    pmix_status_t status;
    pmix_data_buffer_t reply;    /* blocking: the rest of the reply */
    UT_hash_handle hh;
} mux_req_t;

typedef struct mux_work {
    struct mux_work *next;
    pg_mux_work_fn fn;
    void *arg;
} mux_work_t;

struct pg_mux {
    int fd;
    int wake_fd;                 /* eventfd: work queued or stop requested */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_mutex_t send_lock;
    pthread_cond_t cond;         /* a blocking request completed */
    mux_req_t *pending;          /* by id */
    mux_work_t *work_head, *work_tail;
    uint32_t next_id;
    unsigned waiters;            /* callers inside pg_mux_call: pg_mux_free waits for them */
    bool lost;                   /* the connection is gone */
    bool stop;                   /* pg_mux_free asked the thread to end */
    char *in;                    /* received bytes [0, in_len) */
    size_t in_len, in_cap;
    pg_mux_event_fn on_event;    /* unasked frames; under lock */
    pg_mux_lost_fn on_lost;
    void *hook_arg;
    pid_t owner;                 /* the process whose thread serves the socket */
};

/* Is this a forked child of the process that made the mux? */
static bool mux_forked(const pg_mux_t *m)
{
    return getpid() != m->owner;
}

/* ---- sending ---------------------------------------------------------- */

static pmix_status_t mux_write(pg_mux_t *m, const void *bytes, size_t len)
{
    int rc;

    pthread_mutex_lock(&m->send_lock);
    rc = pg_io_send_all(m->fd, bytes, len);
    pthread_mutex_unlock(&m->send_lock);
    return rc == 0 ? PMIX_SUCCESS : PMIX_ERR_LOST_CONNECTION;
}

static void mux_wake(pg_mux_t *m)
{
    uint64_t one = 1;

    (void)!write(m->wake_fd, &one, sizeof(one));
}

/* ---- completing requests ------------------------------------------------ */

/* Removes and returns request `id`, or NULL.  Called with the lock held. */
static mux_req_t *pending_take(pg_mux_t *m, uint32_t id)
{
    mux_req_t *r = NULL;

    HASH_FIND(hh, m->pending, &id, sizeof(id), r);
    if (r != NULL)
        HASH_DELETE(hh, m->pending, r);
    return r;
}

/* Completes a taken request: a waiter is woken (it frees the record), a
 * callback runs here (without the lock) and the record is freed. */
static void req_complete(pg_mux_t *m, mux_req_t *r, pmix_status_t status,
                         pmix_data_buffer_t *rest)
{
    if (r->fn != NULL) {
        r->fn(status, rest, r->arg);
        free(r);
        return;
    }
    pthread_mutex_lock(&m->lock);
    if (rest != NULL && pg_buffer_unread(rest) > 0 &&
        pg_buffer_copy_payload(&r->reply, rest) != PMIX_SUCCESS && status == PMIX_SUCCESS)
        status = PMIX_ERR_NOMEM;
    r->status = status;
    r->done = true;
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
}

/* The connection is gone: every pending request fails. */
static void mux_lose(pg_mux_t *m)
{
    mux_req_t *all, *r, *tmp;

    pthread_mutex_lock(&m->lock);
    m->lost = true;
    all = m->pending;
    m->pending = NULL;
    pthread_mutex_unlock(&m->lock);
    HASH_ITER(hh, all, r, tmp) {
        HASH_DELETE(hh, all, r);
        req_complete(m, r, PMIX_ERR_LOST_CONNECTION, NULL);
    }
}

/* An unasked frame: handed to the event hook, if any (the hook copies what
 * it keeps; a malformed body is its to drop). */
static void mux_event(pg_mux_t *m, pmix_status_t code, pmix_data_buffer_t *body)
{
    pg_mux_event_fn fn;
    void *arg;

    pthread_mutex_lock(&m->lock);
    fn = m->on_event;
    arg = m->hook_arg;
    pthread_mutex_unlock(&m->lock);
    if (fn != NULL)
        fn(code, body, arg);
}

static void mux_lost_hook(pg_mux_t *m)
{
    pg_mux_lost_fn fn;
    void *arg;

    pthread_mutex_lock(&m->lock);
    fn = m->stop ? NULL : m->on_lost; /* pg_mux_free's own stop is no loss */
    arg = m->hook_arg;
    pthread_mutex_unlock(&m->lock);
    if (fn != NULL)
        fn(arg);
}

/* One reply frame.  Returns -1 when it is malformed (the stream is then
 * not trustworthy: the connection is treated as lost). */
static int mux_dispatch(pg_mux_t *m, const char *payload, size_t len)
{
    pmix_data_buffer_t view;
    uint8_t cmd;
    uint32_t id;
    pmix_status_t status;
    mux_req_t *r;

    pg_pmix_msg_view(&view, payload, len);
    if (pg_pmix_msg_read_header(&view, &cmd, &id) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(&view, &status, PMIX_STATUS) != PMIX_SUCCESS)
        return -1;
    if (cmd == PG_PMIX_CMD_EVENT && id == 0) {
        mux_event(m, status, &view);
        return 0;
    }
    pthread_mutex_lock(&m->lock);
    r = pending_take(m, id);
    pthread_mutex_unlock(&m->lock);
    if (r != NULL) /* an unknown id is a reply nobody waits for any more */
        req_complete(m, r, status, &view);
    return 0;
}

/* ---- the progress thread ------------------------------------------------ */

static void run_work(pg_mux_t *m)
{
    for (;;) {
        mux_work_t *w;

        pthread_mutex_lock(&m->lock);
        w = m->work_head;
        if (w != NULL) {
            m->work_head = w->next;
            if (m->work_head == NULL)
                m->work_tail = NULL;
        }
        pthread_mutex_unlock(&m->lock);
        if (w == NULL)
            return;
        w->fn(w->arg);
        free(w);
    }
}

/* Reads what is there and dispatches complete frames.  -1: connection gone. */
static int read_frames(pg_mux_t *m)
{
    size_t off = 0, plen;
    ssize_t n;
    int rc;

    if (m->in_len == m->in_cap) {
        size_t cap = m->in_cap * 2;
        char *grown;

        if (cap > PG_PMIX_HEADER_LEN + PG_PMIX_FRAME_MAX)
            cap = PG_PMIX_HEADER_LEN + PG_PMIX_FRAME_MAX;
        if (cap <= m->in_cap || (grown = realloc(m->in, cap)) == NULL)
            return -1;
        m->in = grown;
        m->in_cap = cap;
    }
    n = read(m->fd, m->in + m->in_len, m->in_cap - m->in_len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0)
        return -1;
    m->in_len += (size_t)n;
    /* work queued before these bytes arrived runs before their replies:
     * callbacks keep the order of the calls that caused them (a
     * registration's callback before the reply to a notify sent after
     * it, whose callback may deregister what it registered) */
    run_work(m);
    while ((rc = pg_pmix_frame_next(m->in + off, m->in_len - off, PG_PMIX_FRAME_MAX, &plen)) ==
           PG_PMIX_FRAME_OK) {
        if (mux_dispatch(m, m->in + off + PG_PMIX_HEADER_LEN, plen) != 0)
            return -1;
        off += PG_PMIX_HEADER_LEN + plen;
    }
    if (rc != PG_PMIX_FRAME_NEED_MORE)
        return -1;
    memmove(m->in, m->in + off, m->in_len - off);
    m->in_len -= off;
    return 0;
}

static bool should_stop(pg_mux_t *m)
{
    bool stop;

    pthread_mutex_lock(&m->lock);
    stop = m->stop;
    pthread_mutex_unlock(&m->lock);
    return stop;
}

static void *progress_main(void *arg)
{
    pg_mux_t *m = arg;
    bool connected = true;

    while (!should_stop(m)) {
        struct pollfd p[2] = { { m->wake_fd, POLLIN, 0 }, { m->fd, POLLIN, 0 } };
        int nfds = connected ? 2 : 1;

        if (poll(p, (nfds_t)nfds, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents & POLLIN) {
            uint64_t count;

            (void)!read(m->wake_fd, &count, sizeof(count));
        }
        if (connected && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) && read_frames(m) != 0) {
            connected = false;
            mux_lose(m);
            mux_lost_hook(m);
        }
        run_work(m);
    }
    mux_lose(m);
    run_work(m);
    return NULL;
}

/* ---- public ------------------------------------------------------------ */

static pg_mux_t *mux_start(int fd, uint32_t rank, uint16_t flags)
{
    unsigned char preamble[PG_PMIX_PREAMBLE_LEN];
    pg_mux_t *m = calloc(1, sizeof(*m));

    if (m == NULL)
        goto fail;
    m->fd = fd;
    m->owner = getpid();
    m->next_id = 1;
    m->in_cap = MUX_INBUF_INITIAL;
    m->in = malloc(m->in_cap);
    m->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (m->in == NULL || m->wake_fd < 0)
        goto fail;
    pthread_mutex_init(&m->lock, NULL);
    pthread_mutex_init(&m->send_lock, NULL);
    pthread_cond_init(&m->cond, NULL);
    pg_pmix_preamble_encode_flags(preamble, rank, flags);
    if (pg_io_send_all(fd, preamble, sizeof(preamble)) != 0 ||
        pthread_create(&m->thread, NULL, progress_main, m) != 0) {
        pthread_cond_destroy(&m->cond);
        pthread_mutex_destroy(&m->send_lock);
        pthread_mutex_destroy(&m->lock);
        goto fail;
    }
    return m;
fail:
    close(fd);
    if (m != NULL) {
        if (m->wake_fd >= 0)
            close(m->wake_fd);
        free(m->in);
        free(m);
    }
    return NULL;
}

pg_mux_t *pg_mux_new(int fd, uint32_t rank)
{
    return mux_start(fd, rank, 0);
}

pg_mux_t *pg_mux_new_tool(int fd)
{
    return mux_start(fd, PG_PMIX_RANK_FROM_FD, PG_PMIX_FLAG_TOOL);
}

void pg_mux_free(pg_mux_t *m)
{
    if (m == NULL)
        return;
    if (mux_forked(m)) { /* no thread to stop, locks maybe held: the copies go */
        close(m->fd);
        close(m->wake_fd);
        free(m->in);
        free(m);
        return;
    }
    pthread_mutex_lock(&m->lock);
    m->stop = true;
    pthread_mutex_unlock(&m->lock);
    mux_wake(m);
    pthread_join(m->thread, NULL);
    /* callers the thread woke (LOST_CONNECTION) may not have retaken the
     * lock yet: the mutex and condition must outlive them */
    pthread_mutex_lock(&m->lock);
    while (m->waiters > 0)
        pthread_cond_wait(&m->cond, &m->lock);
    pthread_mutex_unlock(&m->lock);
    close(m->fd);
    close(m->wake_fd);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->send_lock);
    pthread_mutex_destroy(&m->lock);
    free(m->in);
    free(m);
}

pmix_status_t pg_mux_begin(pg_mux_t *m, pmix_data_buffer_t *buf, uint8_t cmd, uint32_t *id)
{
    *id = 0;
    if (mux_forked(m))
        return PMIX_ERR_UNREACH;
    pthread_mutex_lock(&m->lock);
    *id = m->next_id++;
    if (m->next_id == 0)
        m->next_id = 1;
    pthread_mutex_unlock(&m->lock);
    return pg_pmix_msg_begin(buf, cmd, *id);
}

/* Registers `r` and sends the frame; on failure unregisters it again.
 * Once registered, `r` belongs to the progress thread until taken back:
 * it may complete (and a callback request be freed) while the send is
 * still blocked, so only its id is used afterwards. */
static pmix_status_t mux_submit(pg_mux_t *m, pmix_data_buffer_t *buf, mux_req_t *r)
{
    pmix_status_t rc = pg_pmix_msg_seal(buf);
    uint32_t id = r->id;
    mux_req_t *again;

    pthread_mutex_lock(&m->lock);
    if (rc == PMIX_SUCCESS && m->lost)
        rc = PMIX_ERR_LOST_CONNECTION;
    if (rc == PMIX_SUCCESS)
        HASH_ADD(hh, m->pending, id, sizeof(r->id), r); /* before the reply can come */
    pthread_mutex_unlock(&m->lock);
    if (rc != PMIX_SUCCESS) { /* never registered */
        pg_buffer_destruct(buf);
        return rc;
    }
    rc = mux_write(m, buf->base_ptr, buf->bytes_used);
    pg_buffer_destruct(buf);
    if (rc == PMIX_SUCCESS)
        return rc;
    pthread_mutex_lock(&m->lock);
    again = pending_take(m, id); /* NULL if the thread already completed it */
    pthread_mutex_unlock(&m->lock);
    return again != NULL ? rc : PMIX_OPERATION_IN_PROGRESS;
}

pmix_status_t pg_mux_send_nb(pg_mux_t *m, pmix_data_buffer_t *buf, uint32_t id,
                             pg_mux_reply_fn fn, void *arg)
{
    mux_req_t *r = mux_forked(m) ? NULL : calloc(1, sizeof(*r));
    pmix_status_t rc;

    if (r == NULL) {
        pg_buffer_destruct(buf);
        return mux_forked(m) ? PMIX_ERR_UNREACH : PMIX_ERR_NOMEM;
    }
    r->id = id;
    r->fn = fn;
    r->arg = arg;
    rc = mux_submit(m, buf, r);
    if (rc == PMIX_OPERATION_IN_PROGRESS)
        return PMIX_SUCCESS; /* the lost connection already completed it */
    if (rc != PMIX_SUCCESS)
        free(r);
    return rc;
}

pmix_status_t pg_mux_call(pg_mux_t *m, pmix_data_buffer_t *buf, uint32_t id,
                          pmix_data_buffer_t *reply)
{
    mux_req_t *r;
    pmix_status_t rc;

    pg_buffer_construct(reply);
    if (mux_forked(m)) {
        pg_buffer_destruct(buf);
        return PMIX_ERR_UNREACH;
    }
    if (pg_mux_on_progress_thread(m)) {
        pg_buffer_destruct(buf);
        return PMIX_ERR_WOULD_BLOCK;
    }
    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        pg_buffer_destruct(buf);
        return PMIX_ERR_NOMEM;
    }
    r->id = id;
    pg_buffer_construct(&r->reply);
    pthread_mutex_lock(&m->lock);
    m->waiters++;
    pthread_mutex_unlock(&m->lock);
    rc = mux_submit(m, buf, r);
    pthread_mutex_lock(&m->lock);
    if (rc == PMIX_SUCCESS || rc == PMIX_OPERATION_IN_PROGRESS) {
        while (!r->done)
            pthread_cond_wait(&m->cond, &m->lock);
        rc = r->status;
        *reply = r->reply; /* hand the payload over */
    }
    if (--m->waiters == 0)
        pthread_cond_broadcast(&m->cond); /* pg_mux_free may be waiting */
    pthread_mutex_unlock(&m->lock);
    free(r);
    return rc;
}

pmix_status_t pg_mux_defer(pg_mux_t *m, pg_mux_work_fn fn, void *arg)
{
    mux_work_t *w;

    if (mux_forked(m)) /* no thread would run it */
        return PMIX_ERR_UNREACH;
    if ((w = calloc(1, sizeof(*w))) == NULL)
        return PMIX_ERR_NOMEM;
    w->fn = fn;
    w->arg = arg;
    pthread_mutex_lock(&m->lock);
    if (m->work_tail != NULL)
        m->work_tail->next = w;
    else
        m->work_head = w;
    m->work_tail = w;
    pthread_mutex_unlock(&m->lock);
    mux_wake(m);
    return PMIX_SUCCESS;
}

void pg_mux_set_hooks(pg_mux_t *m, pg_mux_event_fn on_event, pg_mux_lost_fn on_lost, void *arg)
{
    pthread_mutex_lock(&m->lock);
    m->on_event = on_event;
    m->on_lost = on_lost;
    m->hook_arg = arg;
    pthread_mutex_unlock(&m->lock);
}

bool pg_mux_on_progress_thread(const pg_mux_t *m)
{
    return pthread_equal(pthread_self(), m->thread);
}

bool pg_mux_connected(pg_mux_t *m)
{
    bool up;

    if (mux_forked(m))
        return false;
    pthread_mutex_lock(&m->lock);
    up = !m->lost;
    pthread_mutex_unlock(&m->lock);
    return up;
}

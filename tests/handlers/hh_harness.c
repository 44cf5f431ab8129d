/*
 * hh_harness: the handlers' test harness (see hh_harness.h).  The pg_job_*
 * functions below stand in for gateway/pg_job.c: the handlers only see the
 * job through gateway/pg_job.h, so a test job is a small struct here.
 */
#include "tests/handlers/hh_harness.h"

#include <errno.h>
#include <event2/event.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gateway/pg_conn.h"
#include "gateway/pg_job.h"
#include "parser/pg_parse.h"
#include "pmi1/pg_pmi1_server.h"
#include "pmi2/pg_pmi2_server.h"
#include "pmix/engine/pg_engine.h"
#include "wire/pg_clock.h"
#include "wire/pg_frame.h"

enum { HH_MAX_CONNS = HH_MAX_RANKS + 4, HH_LOG_MAX = 8192, HH_INBUF = 65536 };

typedef struct hh_client {
    int fd;                 /* the client's end */
    pg_conn_t *conn;        /* the gateway's end */
    char in[HH_INBUF];
    size_t inlen;
    bool eof;
    bool closed;
    char reason[256];
} hh_client_t;

struct pg_job {
    char kvsname[64];
    int size;
    int nnodes;
    pg_engine_t *engine;
    int abort_code, abort_rank;
    char log[HH_LOG_MAX];
};

struct hh {
    struct event_base *base;
    struct pg_job job;
    pg_handler_table_t handlers;
    pg_conn_owner_ops_t ops;
    hh_client_t clients[HH_MAX_CONNS];
    int nclients;
};

/* ---- the job as the handlers see it ---------------------------------- */

void pg_job_abort(pg_job_t *job, int rank, int code, const char *msg)
{
    if (job->abort_code < 0) {
        job->abort_code = code;
        job->abort_rank = rank;
    }
    pg_job_log(job, "rank %d aborted the job (code %d)%s%s", rank, code, msg ? ": " : "",
               msg ? msg : "");
}

const char *pg_job_kvsname(const pg_job_t *job)
{
    return job->kvsname;
}

int pg_job_size(const pg_job_t *job)
{
    return job->size;
}

int pg_job_universe_size(const pg_job_t *job)
{
    return job->size;
}

int pg_job_appnum(const pg_job_t *job, int rank)
{
    return rank >= 0 && rank < job->size ? 0 : -1;
}

const char *pg_job_process_mapping(const pg_job_t *job)
{
    (void)job;
    return "";
}

pg_engine_t *pg_job_engine(const pg_job_t *job)
{
    return job->engine;
}

int pg_job_verbose(const pg_job_t *job)
{
    (void)job;
    return 0;
}

void pg_job_touch_engine(pg_job_t *job)
{
    (void)pg_engine_expire(job->engine, pg_clock_now());
}

void pg_job_log(const pg_job_t *job, const char *fmt, ...)
{
    pg_job_t *j = (pg_job_t *)job; /* the test job records its log */
    size_t used = strlen(j->log);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(j->log + used, sizeof(j->log) - used, fmt, ap);
    va_end(ap);
    used = strlen(j->log);
    if (used + 1 < sizeof(j->log)) {
        j->log[used] = '\n';
        j->log[used + 1] = '\0';
    }
}

/* ---- connection owner ------------------------------------------------ */

static hh_client_t *client_of(hh_t *h, const pg_conn_t *conn)
{
    for (int i = 0; i < h->nclients; i++)
        if (h->clients[i].conn == conn)
            return &h->clients[i];
    return NULL;
}

static int owner_identify(void *owner, pg_conn_t *conn, int rank, const char **why)
{
    hh_t *h = owner;

    (void)conn;
    if (rank >= h->job.size) {
        *why = "no such rank";
        return -1;
    }
    return 0;
}

static void owner_opened(void *owner, pg_conn_t *conn)
{
    hh_t *h = owner;
    pg_proc_t proc = { h->job.kvsname, (pmix_rank_t)pg_conn_rank(conn) };

    (void)pg_proc_connect(h->job.engine, &proc);
}

static void owner_closed(void *owner, pg_conn_t *conn, const char *reason)
{
    hh_t *h = owner;
    hh_client_t *c = client_of(h, conn);
    pg_proc_t proc = { h->job.kvsname, (pmix_rank_t)pg_conn_rank(conn) };

    if (c == NULL)
        return;
    c->closed = true;
    snprintf(c->reason, sizeof(c->reason), "%s", reason ? reason : "");
    if (reason != NULL && pg_conn_rank(conn) >= 0)
        (void)pg_proc_lost(h->job.engine, &proc);
}

/* ---- set-up ------------------------------------------------------------ */

static int register_job(hh_t *h, int size, int nnodes)
{
    uint32_t rank_node[HH_MAX_RANKS];
    const char *hosts[HH_MAX_RANKS];
    char names[HH_MAX_RANKS][16];
    pg_job_layout_t layout = { 0 };

    for (int n = 0; n < nnodes; n++) {
        snprintf(names[n], sizeof(names[n]), "node%d", n);
        hosts[n] = names[n];
    }
    for (int r = 0; r < size; r++)
        rank_node[r] = (uint32_t)(r * nnodes / size);
    layout.size = (uint32_t)size;
    layout.nnodes = (uint32_t)nnodes;
    layout.hostnames = hosts;
    layout.rank_node = rank_node;
    return pg_job_register(h->job.engine, h->job.kvsname, &layout) == PMIX_SUCCESS ? 0 : -1;
}

static int add_client(hh_t *h, int rank)
{
    int sv[2];
    hh_client_t *c;

    if (h->nclients >= HH_MAX_CONNS || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return -1;
    c = &h->clients[h->nclients];
    memset(c, 0, sizeof(*c));
    c->fd = sv[0];
    c->conn = pg_conn_new(h->base, sv[1], rank, &h->job, &h->handlers, &h->ops, h);
    if (c->conn == NULL) {
        close(sv[0]);
        return -1;
    }
    return h->nclients++;
}

hh_t *hh_new(int size, int nnodes)
{
    hh_t *h = calloc(1, sizeof(*h));

    if (h == NULL || size < 1 || size > HH_MAX_RANKS || nnodes < 1 || nnodes > size)
        goto fail;
    snprintf(h->job.kvsname, sizeof(h->job.kvsname), "kvs_%d_0", (int)getpid());
    h->job.size = size;
    h->job.nnodes = nnodes;
    h->job.abort_code = h->job.abort_rank = -1;
    h->handlers.by_proto[PG_PROTO_PMI1] = &pg_pmi1_handler;
    h->handlers.by_proto[PG_PROTO_PMI2] = &pg_pmi2_handler;
    h->ops.identify = owner_identify;
    h->ops.opened = owner_opened;
    h->ops.closed = owner_closed;
    h->base = event_base_new();
    h->job.engine = pg_engine_new(&(pg_host_ops_t){ 0 }, h);
    if (h->base == NULL || h->job.engine == NULL || register_job(h, size, nnodes) != 0)
        goto fail;
    for (int r = 0; r < size; r++)
        if (add_client(h, r) != r)
            goto fail;
    return h;
fail:
    hh_free(h);
    return NULL;
}

void hh_free(hh_t *h)
{
    if (h == NULL)
        return;
    for (int i = 0; i < h->nclients; i++) {
        pg_conn_free(h->clients[i].conn);
        close(h->clients[i].fd);
    }
    if (h->job.engine != NULL) {
        pg_job_deregister(h->job.engine, h->job.kvsname);
        pg_engine_free(h->job.engine);
    }
    if (h->base != NULL)
        event_base_free(h->base);
    free(h);
}

hh_reply_t *hh_reply_new(void)
{
    hh_reply_t *r = calloc(1, sizeof(*r));

    if (r != NULL)
        pg_msg_init(&r->msg);
    return r;
}

void hh_reply_free(hh_reply_t *r)
{
    if (r == NULL)
        return;
    pg_msg_release(&r->msg);
    free(r);
}

int hh_add_unidentified(hh_t *h)
{
    return add_client(h, -1);
}

/* ---- client side ----------------------------------------------------------- */

/* Runs whatever the loop has to do now. */
static void pump(hh_t *h)
{
    event_base_loop(h->base, EVLOOP_NONBLOCK);
}

void hh_send(hh_t *h, int c, const char *bytes, size_t len)
{
    while (len > 0) {
        ssize_t n = write(h->clients[c].fd, bytes, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        bytes += n;
        len -= (size_t)n;
        pump(h);
    }
}

void hh_send1(hh_t *h, int c, const char *line)
{
    hh_send(h, c, line, strlen(line));
}

static void send2(hh_t *h, int c, const char *body, const char *fmt)
{
    size_t len = strlen(body);
    char *buf = malloc(len + 8);

    if (buf == NULL)
        return;
    snprintf(buf, 8, fmt, (int)len);
    memcpy(buf + 6, body, len);
    hh_send(h, c, buf, len + 6);
    free(buf);
}

void hh_send2(hh_t *h, int c, const char *body)
{
    send2(h, c, body, "%6d");
}

void hh_send2_left(hh_t *h, int c, const char *body)
{
    send2(h, c, body, "%-6d");
}

static uint64_t now_ms(void)
{
    return pg_clock_now() / 1000000u;
}

/* Reads what client c's socket holds, pumping the loop for up to ms. */
static void fill(hh_t *h, int c, int ms)
{
    hh_client_t *cl = &h->clients[c];
    struct pollfd pfd = { cl->fd, POLLIN, 0 };
    ssize_t n;

    pump(h);
    if (cl->eof || poll(&pfd, 1, ms) <= 0)
        return;
    n = read(cl->fd, cl->in + cl->inlen, sizeof(cl->in) - cl->inlen);
    if (n == 0)
        cl->eof = true;
    else if (n > 0)
        cl->inlen += (size_t)n;
}

/* Takes one framed message off client c's buffer. */
static int take(hh_t *h, int c, hh_reply_t *r)
{
    hh_client_t *cl = &h->clients[c];
    pg_frame_t frame;

    if (cl->inlen == 0 || pg_frame_next(cl->in, cl->inlen, &frame) != PG_WIRE_OK ||
        frame.consumed > HH_MSG_MAX)
        return 0;
    memcpy(r->raw, cl->in, frame.consumed);
    r->raw[frame.consumed] = '\0';
    r->len = frame.consumed;
    memcpy(r->parsed, cl->in, frame.consumed);
    memmove(cl->in, cl->in + frame.consumed, cl->inlen - frame.consumed);
    cl->inlen -= frame.consumed;
    pg_msg_release(&r->msg);
    pg_msg_init(&r->msg);
    (void)pg_parse_frame(r->parsed, &frame, &r->msg);
    return 1;
}

int hh_recv(hh_t *h, int c, hh_reply_t *r, int timeout_ms)
{
    uint64_t deadline = now_ms() + (uint64_t)timeout_ms;

    r->len = 0;
    r->raw[0] = '\0';
    for (;;) {
        if (take(h, c, r))
            return 1;
        if (h->clients[c].eof || now_ms() >= deadline)
            return 0;
        fill(h, c, 5);
    }
}

int hh_quiet(hh_t *h, int c, int ms)
{
    uint64_t deadline = now_ms() + (uint64_t)ms;

    while (now_ms() < deadline && h->clients[c].inlen == 0 && !h->clients[c].eof)
        fill(h, c, 5);
    return h->clients[c].inlen == 0;
}

int hh_eof(hh_t *h, int c, int ms)
{
    uint64_t deadline = now_ms() + (uint64_t)ms;

    while (!h->clients[c].eof && now_ms() < deadline) {
        fill(h, c, 5);
        h->clients[c].inlen = 0; /* whatever came before the EOF is not looked at */
    }
    return h->clients[c].eof;
}

const char *hh_get(hh_reply_t *r, const char *key)
{
    pg_str_t v = pg_msg_get(&r->msg, key);
    char *out;

    if (v.ptr == NULL || v.len > HH_MSG_MAX)
        return NULL;
    out = r->vals[r->nextval++ % 8];
    memcpy(out, v.ptr, v.len);
    out[v.len] = '\0';
    return out;
}

const char *hh_cmd(hh_reply_t *r)
{
    char *out = r->vals[r->nextval++ % 8];
    size_t len = r->msg.name.ptr ? r->msg.name.len : 0;

    memcpy(out, r->msg.name.ptr ? r->msg.name.ptr : "", len);
    out[len] = '\0';
    return out;
}

const char *hh_last_key(hh_reply_t *r)
{
    char *out = r->vals[r->nextval++ % 8];
    const pg_token_t *t;

    if (r->msg.ntokens == 0)
        return "";
    t = &r->msg.tokens[r->msg.ntokens - 1];
    memcpy(out, t->key.ptr, t->key.len);
    out[t->key.len] = '\0';
    return out;
}

int hh_expect(hh_t *h, int c, hh_reply_t *r, const char *cmd)
{
    if (!hh_recv(h, c, r, HH_WAIT_MS)) {
        fprintf(stderr, "\n  client %d: no reply (expected %s)\n", c, cmd);
        return 0;
    }
    if (getenv("HH_TRACE") != NULL) /* HH_TRACE=1: show every reply checked */
        fprintf(stderr, "  [%d] %s%s", c, r->raw, r->raw[r->len - 1] == '\n' ? "" : "\n");
    if (strcmp(hh_cmd(r), cmd) != 0) {
        fprintf(stderr, "\n  client %d: expected %s, got %s\n", c, cmd, r->raw);
        return 0;
    }
    return 1;
}

int hh_abort_code(const hh_t *h)
{
    return h->job.abort_code;
}

int hh_abort_rank(const hh_t *h)
{
    return h->job.abort_rank;
}

const char *hh_log(const hh_t *h)
{
    return h->job.log;
}

const char *hh_close_reason(const hh_t *h, int c)
{
    return h->clients[c].closed && h->clients[c].reason[0] ? h->clients[c].reason : NULL;
}

int hh_closed(const hh_t *h, int c)
{
    return h->clients[c].closed;
}

const char *hh_kvsname(const hh_t *h)
{
    return h->job.kvsname;
}

/*
 * hh_harness: the handlers' test harness (see hh_harness.h).  It is a host
 * of its own: each client is a pg_peer_t whose ops (the fake table at the
 * bottom of "the host") record what the handlers ask for, and whose bytes
 * the harness frames and parses with the real wire codec before calling
 * the handler, as the gateway's connection layer does.
 */
#include "tests/handlers/hh_harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parser/pg_parse.h"
#include "pmi1/pg_pmi1_server.h"
#include "pmi2/pg_pmi2_server.h"
#include "engine/pg_engine.h"
#include "server/pg_handler.h"
#include "wire/pg_clock.h"
#include "wire/pg_frame.h"

enum { HH_MAX_CONNS = HH_MAX_RANKS + 4, HH_LOG_MAX = 8192, HH_INBUF = 65536 };

typedef struct hh_client {
    pg_peer_t peer;         /* what the handler sees; first, so a peer is its client */
    hh_t *h;
    const pg_proto_handler_t *handler; /* chosen by the first message */
    char sent[HH_INBUF];    /* bytes the test sent that are not a whole message yet */
    size_t sentlen;
    char in[HH_INBUF];      /* replies the handler sent, not read by the test yet */
    size_t inlen;
    pg_msg_t msg;           /* reused for every message */
    bool connected;         /* the engine was told the process connected */
    bool finalized;
    bool reads_segment;     /* the handler said the peer reads the segment */
    bool closed;
    char reason[256];
} hh_client_t;

struct hh {
    pg_peer_job_t job;
    char kvsname[64];
    hh_client_t clients[HH_MAX_CONNS];
    int nclients;
    int abort_code, abort_rank;
    char log[HH_LOG_MAX];
    char spawned[HH_LOG_MAX]; /* the last spawn request, as hh_spawned() says */
    char events[HH_LOG_MAX];  /* what hh_watch_events' subscriber heard */
};

hh_reply_t *hh_reply;

int hh_suite_init(void)
{
    hh_reply = hh_reply_new();
    return hh_reply == NULL;
}

int hh_suite_cleanup(void)
{
    hh_reply_free(hh_reply);
    hh_reply = NULL;
    return 0;
}

/* ---- the host: the fake ops table ------------------------------------ */

static hh_client_t *client_of(pg_peer_t *peer)
{
    return (hh_client_t *)peer;
}

static void log_append(hh_t *h, const char *line)
{
    size_t used = strlen(h->log);

    snprintf(h->log + used, sizeof(h->log) - used, "%s\n", line);
}

/* Replies land in the client's inbox, where hh_recv finds them. */
static int fake_reply_send(pg_peer_t *peer, const void *bytes, size_t len)
{
    hh_client_t *c = client_of(peer);

    if (c->closed || len > sizeof(c->in) - c->inlen)
        return -1;
    memcpy(c->in + c->inlen, bytes, len);
    c->inlen += len;
    return 0;
}

static void fake_job_abort(pg_peer_t *peer, int code, const char *msg)
{
    hh_t *h = client_of(peer)->h;
    char line[1200];

    if (h->abort_code < 0) {
        h->abort_code = code;
        h->abort_rank = peer->rank;
    }
    snprintf(line, sizeof(line), "rank %d aborted the job (code %d)%s%s", peer->rank, code,
             msg ? ": " : "", msg ? msg : "");
    log_append(h, line);
}

static void fake_peer_finalize(pg_peer_t *peer)
{
    client_of(peer)->finalized = true;
}

static void fake_segment_reader(pg_peer_t *peer)
{
    client_of(peer)->reads_segment = true;
}

bool hh_reads_segment(const hh_t *h, int c)
{
    return c >= 0 && c < h->nclients && h->clients[c].reads_segment;
}

static uint64_t fake_clock_now(pg_peer_t *peer)
{
    (void)peer;
    return pg_clock_now();
}

static void fake_log_write(pg_peer_t *peer, const char *line)
{
    log_append(client_of(peer)->h, line);
}

/* Appends `text` to the spawn summary. */
static void spawn_note(hh_t *h, const char *fmt, const char *a, const char *b)
{
    size_t used = strlen(h->spawned);

    snprintf(h->spawned + used, sizeof(h->spawned) - used, fmt, a, b);
}

/* A host that can spawn: it writes the request down (hh_spawned) and
 * answers at once with job "kvs_spawned_1" and one errcode 0 per process,
 * or, for a command named "missing", errcode 2 for its processes. */
static void fake_spawn(pg_peer_t *peer, const pg_spawn_req_t *req, pg_spawn_done_fn done,
                       void *cbdata)
{
    hh_t *h = client_of(peer)->h;
    int codes[64] = { 0 }, n = 0, failed = 0;
    char num[16];

    h->spawned[0] = '\0';
    for (int k = 0; k < req->npreput; k++)
        spawn_note(h, "preput %s=%s\n", req->preput[k].key, req->preput[k].val);
    for (int i = 0; i < req->ncmds; i++) {
        const pg_spawn_cmd_t *c = &req->cmds[i];

        snprintf(num, sizeof(num), "%d", c->maxprocs);
        spawn_note(h, "cmd %s x%s", c->command, num);
        for (int a = 0; a < c->argc; a++)
            spawn_note(h, " [%s]%s", c->argv[a], "");
        for (int k = 0; k < c->ninfo; k++)
            spawn_note(h, " %s=%s", c->info[k].key, c->info[k].val);
        spawn_note(h, "\n%s%s", "", "");
        for (int p = 0; p < c->maxprocs && n < 64; p++, n++)
            if (strcmp(c->command, "missing") == 0)
                codes[n] = 2, failed = 1;
    }
    done(&(pg_spawn_result_t){ .rc = failed ? PMIX_ERR_NOT_FOUND : 0,
                               .errmsg = failed ? "cannot run 'missing'" : NULL,
                               .jobid = failed ? NULL : "kvs_spawned_1", .nprocs = n,
                               .errcodes = codes },
         cbdata);
}

const char *hh_spawned(const hh_t *h)
{
    return h->spawned;
}

static const pg_peer_ops_t fake_ops_spawn;

void hh_enable_spawn(hh_t *h)
{
    for (int i = 0; i < h->nclients; i++)
        h->clients[i].peer.ops = &fake_ops_spawn;
}

static const pg_peer_ops_t fake_ops = {
    .reply_send = fake_reply_send,
    .job_abort = fake_job_abort,
    .peer_finalize = fake_peer_finalize,
    .clock_now = fake_clock_now,
    .log_write = fake_log_write,
    .segment_reader = fake_segment_reader,
};

static const pg_peer_ops_t fake_ops_spawn = {
    .reply_send = fake_reply_send,
    .job_abort = fake_job_abort,
    .peer_finalize = fake_peer_finalize,
    .clock_now = fake_clock_now,
    .log_write = fake_log_write,
    .spawn = fake_spawn,
    .segment_reader = fake_segment_reader,
};

/* ---- the host: one client's messages to its handler ------------------- */

/* Ends client c as a host does: the handler lets go of it, and a process
 * that did not finalize is lost to the engine (its requests fail, so do
 * the fences it was part of). */
static void client_close(hh_client_t *c, const char *reason)
{
    pg_proc_t proc = { c->h->kvsname, (pmix_rank_t)c->peer.rank };

    if (c->closed)
        return;
    c->closed = true;
    snprintf(c->reason, sizeof(c->reason), "%s", reason ? reason : "");
    if (c->handler != NULL && c->handler->on_close != NULL)
        c->handler->on_close(&c->peer);
    if (reason != NULL && c->connected)
        (void)pg_proc_lost(c->h->job.engine, &proc);
}

static void client_connected(hh_client_t *c)
{
    pg_proc_t proc = { c->h->kvsname, (pmix_rank_t)c->peer.rank };

    if (c->connected || c->handler == NULL || c->peer.rank < 0)
        return;
    c->connected = true;
    (void)pg_proc_connect(c->h->job.engine, &proc);
}

/* The handler of the protocol the first message asks for ("cmd=init
 * pmi_version=2" is PMI-2, any other PMI-1 line is PMI-1). */
static int client_open(hh_client_t *c, const pg_msg_t *msg)
{
    bool pmi2 = msg->proto == PG_PROTO_PMI2 ||
                (msg->cmd == PG_CMD_PMI1_INIT && pg_str_eq(pg_msg_get(msg, "pmi_version"), "2"));

    c->handler = pmi2 ? &pg_pmi2_handler : &pg_pmi1_handler;
    if (c->handler->on_open(&c->peer) != 0) {
        client_close(c, "refused by its handler");
        return -1;
    }
    client_connected(c);
    return 0;
}

/* A client whose rank is not known yet names it in its handshake
 * (initack pmiid=, fullinit pmirank= or srcid=). */
static int client_identify(hh_client_t *c, const pg_msg_t *msg)
{
    pg_str_t val = { NULL, 0 };
    long rank = -1;

    if (msg->cmd == PG_CMD_PMI1_INIT)
        return 0;
    if (msg->cmd == PG_CMD_PMI1_INITACK)
        val = pg_msg_get(msg, "pmiid");
    else if (msg->cmd == PG_CMD_PMI2_FULLINIT)
        val =
            pg_msg_get(msg, "pmirank").ptr ? pg_msg_get(msg, "pmirank") : pg_msg_get(msg, "srcid");
    if (pg_str_to_long(val, &rank) != 0 || rank < 0 || rank >= c->h->job.size) {
        client_close(c, "did not name a rank of the job");
        return -1;
    }
    c->peer.rank = (int)rank;
    client_connected(c);
    return 0;
}

/* One framed message to the handler.  Returns 0 to go on, -1 once closed. */
static int client_dispatch(hh_client_t *c, const pg_frame_t *frame)
{
    int parse_rc = pg_parse_frame(c->sent, frame, &c->msg);
    int rc;

    if ((c->handler == NULL && client_open(c, &c->msg) != 0) ||
        (c->peer.rank < 0 && client_identify(c, &c->msg) != 0))
        return -1;
    rc = c->handler->on_message(&c->peer, &c->msg, parse_rc);
    if (rc == PG_HANDLER_FAIL)
        client_close(c, "broke the protocol");
    else if (rc == PG_HANDLER_CLOSE)
        client_close(c, c->finalized ? NULL : "closed by its handler before finalize");
    return c->closed ? -1 : 0;
}

/* Hands every complete message the client sent to its handler, in order. */
static void client_process(hh_client_t *c)
{
    while (!c->closed && c->sentlen > 0) {
        pg_frame_t frame;
        int rc = pg_frame_next(c->sent, c->sentlen, &frame);

        if (rc == PG_WIRE_ENEED_MORE)
            return;
        if (rc != PG_WIRE_OK) {
            client_close(c, "sent a message that cannot be framed");
            return;
        }
        if (client_dispatch(c, &frame) != 0)
            return;
        /* the tokens pointed into sent[]: consumed only after the handler */
        memmove(c->sent, c->sent + frame.consumed, c->sentlen - frame.consumed);
        c->sentlen -= frame.consumed;
    }
}

/* ---- set-up ------------------------------------------------------------ */

static int register_job(hh_t *h, int size, int nnodes)
{
    uint32_t rank_node[HH_MAX_RANKS];
    const char *hosts[HH_MAX_RANKS];
    char names[HH_MAX_RANKS][16];
    pg_ns_layout_t layout = { 0 };

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
    return pg_ns_register(h->job.engine, h->kvsname, &layout) == PMIX_SUCCESS ? 0 : -1;
}

static int add_client(hh_t *h, int rank)
{
    hh_client_t *c;

    if (h->nclients >= HH_MAX_CONNS)
        return -1;
    c = &h->clients[h->nclients];
    memset(c, 0, sizeof(*c));
    c->peer = (pg_peer_t){ .ops = &fake_ops, .job = &h->job, .rank = rank };
    c->h = h;
    pg_msg_init(&c->msg);
    return h->nclients++;
}

hh_t *hh_new(int size, int nnodes)
{
    hh_t *h = calloc(1, sizeof(*h));

    if (h == NULL || size < 1 || size > HH_MAX_RANKS || nnodes < 1 || nnodes > size)
        goto fail;
    snprintf(h->kvsname, sizeof(h->kvsname), "kvs_%d_0", (int)getpid());
    h->abort_code = h->abort_rank = -1;
    h->job = (pg_peer_job_t){ .kvsname = h->kvsname, .size = size, .universe_size = size };
    h->job.engine = pg_engine_new(&(pg_host_ops_t){ 0 }, h);
    if (h->job.engine == NULL || register_job(h, size, nnodes) != 0)
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
        hh_client_t *c = &h->clients[i];

        if (!c->closed && c->handler != NULL && c->handler->on_close != NULL)
            c->handler->on_close(&c->peer);
        pg_msg_release(&c->msg);
    }
    if (h->job.engine != NULL) {
        pg_ns_deregister(h->job.engine, h->kvsname);
        pg_engine_free(h->job.engine);
    }
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

void hh_send(hh_t *h, int c, const char *bytes, size_t len)
{
    hh_client_t *cl = &h->clients[c];

    if (cl->closed)
        return;
    if (len > sizeof(cl->sent) - cl->sentlen) {
        client_close(cl, "sent more than the harness buffers");
        return;
    }
    memcpy(cl->sent + cl->sentlen, bytes, len);
    cl->sentlen += len;
    client_process(cl);
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

/* Takes one framed message off client c's inbox. */
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

int hh_recv(hh_t *h, int c, hh_reply_t *r)
{
    r->len = 0;
    r->raw[0] = '\0';
    return take(h, c, r);
}

int hh_quiet(hh_t *h, int c)
{
    return h->clients[c].inlen == 0;
}

int hh_eof(hh_t *h, int c)
{
    h->clients[c].inlen = 0; /* whatever came before the close is not looked at */
    return h->clients[c].closed;
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
    if (!hh_recv(h, c, r)) {
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
    return h->abort_code;
}

int hh_abort_rank(const hh_t *h)
{
    return h->abort_rank;
}

const char *hh_log(const hh_t *h)
{
    return h->log;
}

/* ---- a PMIx process's view of the job's events ---------------------------- */

/* One event as a line: "STATUS source R" then " key=value" per detail
 * (integers and strings; other types as "?"). */
static void events_record(const pg_event_t *ev, void *cbdata)
{
    hh_t *h = cbdata;
    size_t used = strlen(h->events);

    used += (size_t)snprintf(h->events + used, sizeof(h->events) - used, "%d source %d",
                             ev->status, (int)ev->source.rank);
    for (size_t i = 0; i < ev->ndetails && used < sizeof(h->events); i++) {
        const pg_value_t *v = &ev->details[i].value;

        if (v->type == PMIX_INT && v->size == sizeof(int))
            used += (size_t)snprintf(h->events + used, sizeof(h->events) - used, " %s=%d",
                                     ev->details[i].key, *(const int *)v->data);
        else if (v->type == PMIX_STRING)
            used += (size_t)snprintf(h->events + used, sizeof(h->events) - used, " %s=%.*s",
                                     ev->details[i].key, (int)v->size, (const char *)v->data);
        else
            used += (size_t)snprintf(h->events + used, sizeof(h->events) - used, " %s=?",
                                     ev->details[i].key);
    }
    if (used < sizeof(h->events))
        snprintf(h->events + used, sizeof(h->events) - used, "\n");
}

int hh_watch_events(hh_t *h, int rank)
{
    pg_proc_t proc = { h->kvsname, (pmix_rank_t)rank };
    uint64_t id;

    return pg_event_subscribe(h->job.engine, &proc, events_record, h, &id) == PMIX_SUCCESS ? 0
                                                                                          : -1;
}

const char *hh_events(const hh_t *h)
{
    return h->events;
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
    return h->kvsname;
}

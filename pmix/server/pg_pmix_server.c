/*
 * pg_pmix_server: PMIx transport messages -> engine calls (see
 * pg_pmix_server.h and docs/pmix-transport.md).
 *
 * This file is the handler's frame: the session of a connection and its
 * pending requests, the replies, the directives every family reads, the
 * life-cycle commands (init, abort, finalize) and the table that
 * dispatches a frame to its command.  The commands themselves live one
 * file per operation family, pg_pmix_srv_*.c (pg_pmix_server_int.h).
 */
#include "pmix/server/pg_pmix_server.h"

#include <stdlib.h>
#include <string.h>

#include "engine/pg_engine.h"
#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server_int.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"
#include "server/pg_peer_abort.h"

enum { NS_PER_SEC = 1000000000 };

/* ---- sessions and pending requests --------------------------------- */

pg_pmix_req_t *pg_pmix_req_new(pg_pmix_in_t *in)
{
    pg_pmix_req_t *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return NULL;
    r->s = in->s;
    r->cmd = in->cmd;
    r->id = in->id;
    r->next = in->s->pending;
    if (r->next != NULL)
        r->next->prev = r;
    in->s->pending = r;
    return r;
}

void pg_pmix_req_free(pg_pmix_req_t *r)
{
    if (r == NULL)
        return;
    if (r->s != NULL) {
        if (r->prev != NULL)
            r->prev->next = r->next;
        else
            r->s->pending = r->next;
        if (r->next != NULL)
            r->next->prev = r->prev;
    }
    if (r->pdata != NULL)
        PMIX_PDATA_FREE(r->pdata, r->nkeys);
    free(r->ok);
    free(r);
}

static void session_free(pg_pmix_session_t *s)
{
    if (s == NULL)
        return;
    pg_pmix_events_unsubscribe(s);
    /* the engine still owes these a completion: orphan them */
    for (pg_pmix_req_t *r = s->pending, *next; r != NULL; r = next) {
        next = r->next;
        r->s = NULL;
        r->prev = r->next = NULL;
    }
    for (size_t i = 0; i < s->npublished; i++)
        free(s->published[i]);
    free(s->published);
    free(s);
}

pg_proc_t pg_pmix_session_proc(const pg_pmix_session_t *s)
{
    pg_proc_t p = { s->peer->job->kvsname, (pmix_rank_t)s->peer->rank };

    return p;
}

/* ---- replies -------------------------------------------------------- */

/* A reply with nothing after the status. */
int pg_pmix_reply_send(pg_peer_t *peer, pmix_data_buffer_t *buf)
{
    int rc = -1;

    if (pg_pmix_msg_seal(buf) == PMIX_SUCCESS)
        rc = peer->ops->reply_send(peer, buf->base_ptr, buf->bytes_used);
    pg_buffer_destruct(buf);
    return rc;
}

int pg_pmix_reply_status(pg_peer_t *peer, uint8_t cmd, uint32_t id, pmix_status_t status)
{
    pmix_data_buffer_t buf;

    pg_buffer_construct(&buf);
    if (pg_pmix_msg_begin_reply(&buf, cmd, id, status) != PMIX_SUCCESS) {
        pg_buffer_destruct(&buf);
        return -1;
    }
    return pg_pmix_reply_send(peer, &buf);
}

/* ---- directives ------------------------------------------------------ */

bool pg_pmix_info_is(const pmix_info_t *i, const char *key)
{
    return strncmp(i->key, key, PMIX_MAX_KEYLEN) == 0;
}

bool pg_pmix_info_true(const pmix_info_t *i)
{
    return pg_value_truth(&i->value) == PMIX_BOOL_TRUE;
}

pg_time_t pg_pmix_info_timeout(const pmix_info_t *i)
{
    uint64_t sec = 0;

    if (!pg_pmix_value_uint(&i->value, &sec) || sec == 0)
        return 0;
    return sec > UINT64_MAX / NS_PER_SEC ? UINT64_MAX : sec * NS_PER_SEC;
}

/* Participants as engine procs: an empty nspace means the caller's own. */
pg_proc_t *pg_pmix_procs_to_engine(const pmix_proc_t *procs, size_t n, const char *own_ns)
{
    pg_proc_t *parts = calloc(n > 0 ? n : 1, sizeof(*parts));

    for (size_t i = 0; parts != NULL && i < n; i++) {
        parts[i].nspace = procs[i].nspace[0] != '\0' ? procs[i].nspace : own_ns;
        parts[i].rank = procs[i].rank;
    }
    return parts;
}

/* ---- init -------------------------------------------------------------- */

/* Every reserved key the engine derives from a job layout: the init reply
 * carries their values as seen from {nspace, WILDCARD} and from the
 * process itself, so PMIX_OPTIONAL gets of them are answered by the client
 * library's cache (the Standard requires reserved data at start). */
static const char *const init_keys[] = {
    PMIX_JOB_SIZE, PMIX_UNIV_SIZE, PMIX_MAX_PROCS, PMIX_JOB_NUM_APPS, PMIX_NUM_NODES,
    PMIX_NPROC_OFFSET, PMIX_NSPACE, PMIX_JOBID, PMIX_NODE_LIST, PMIX_NODE_MAP, PMIX_PROC_MAP,
    PMIX_ANL_MAP, PMIX_SPAWNED, PMIX_APP_SIZE, PMIX_APPLDR, PMIX_HOSTNAME, PMIX_NODEID,
    PMIX_LOCAL_SIZE, PMIX_NODE_SIZE, PMIX_LOCAL_PEERS, PMIX_LOCALLDR, PMIX_RANK,
    PMIX_GLOBAL_RANK, PMIX_APP_RANK, PMIX_APPNUM, PMIX_LOCAL_RANK, PMIX_NODE_RANK, PMIX_CPUSET,
    PMIX_LOCALITY_STRING, PMIX_PARENT_ID,
};
enum { NINIT_KEYS = sizeof(init_keys) / sizeof(init_keys[0]) };

typedef struct info_fill {
    pmix_info_t *info;
    size_t n;
} info_fill_t;

static void init_key_done(pmix_status_t status, const pg_value_t *value, pmix_rank_t poster,
                          void *cbdata)
{
    info_fill_t *f = cbdata;
    pmix_info_t *slot = &f->info[f->n];

    (void)poster;
    if (status != PMIX_SUCCESS || pg_pmix_value_from_engine(value, &slot->value) != PMIX_SUCCESS)
        return;
    f->n++;
}

/* Reserved values of `target` as the engine answers them (reserved gets
 * complete inline and never block). */
static void init_view(pg_engine_t *e, const pg_proc_t *self, pmix_rank_t target_rank,
                      info_fill_t *f)
{
    pg_proc_t target = { self->nspace, target_rank };

    for (size_t k = 0; k < NINIT_KEYS && e != NULL; k++) {
        pg_get_req_t q;

        if (pg_pmix_init_on_demand(init_keys[k]))
            continue; /* the client asks when it wants them */
        pg_get_req_init(&q, self, &target, init_keys[k]);
        q.flags |= PG_GET_IMMEDIATE;
        PMIX_LOAD_KEY(f->info[f->n].key, init_keys[k]);
        (void)pg_get(e, &q, 0, init_key_done, f); /* IMMEDIATE: no clock read */
    }
}

/* A tool's job view also names the server it attached to
 * (PMIX_SERVER_NSPACE: the job it came for; PMIX_SERVER_URI: the socket):
 * how PMIx_tool_init checks it reached the job that was asked for. */
static void init_tool_view(const pg_peer_job_t *pj, info_fill_t *f)
{
    if (pj->server_nspace != NULL)
        PMIX_INFO_LOAD(&f->info[f->n++], PMIX_SERVER_NSPACE, pj->server_nspace, PMIX_STRING);
    if (pj->server_uri != NULL)
        PMIX_INFO_LOAD(&f->info[f->n++], PMIX_SERVER_URI, pj->server_uri, PMIX_STRING);
}

static int serve_init(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
    pmix_info_t job[NINIT_KEYS + 2], own[NINIT_KEYS];
    info_fill_t fj = { job, 0 }, fo = { own, 0 };
    pmix_data_buffer_t buf;
    char *nspace = (char *)(self.nspace != NULL ? self.nspace : "");
    pmix_status_t rc;

    memset(job, 0, sizeof(job));
    memset(own, 0, sizeof(own));
    init_view(e, &self, PMIX_RANK_WILDCARD, &fj);
    init_tool_view(in->peer->job, &fj);
    init_view(e, &self, self.rank, &fo);
    in->s->inited = true;
    pg_pmix_events_subscribe(in->s, e, &self);
    pg_buffer_construct(&buf);
    rc = pg_pmix_msg_begin_reply(&buf, in->cmd, in->id, PMIX_SUCCESS);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(&buf, &nspace, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(&buf, &self.rank, PMIX_PROC_RANK);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(&buf, job, fj.n, PMIX_INFO);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(&buf, own, fo.n, PMIX_INFO);
    for (size_t i = 0; i < fj.n; i++)
        PMIX_INFO_DESTRUCT(&job[i]);
    for (size_t i = 0; i < fo.n; i++)
        PMIX_INFO_DESTRUCT(&own[i]);
    if (rc != PMIX_SUCCESS) {
        pg_buffer_destruct(&buf);
        return pg_pmix_reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
    }
    return pg_pmix_reply_send(in->peer, &buf) == 0 ? PG_HANDLER_OK : PG_HANDLER_FAIL;
}

/* ---- life cycle -------------------------------------------------------- */

static int serve_abort(pg_pmix_in_t *in)
{
    pmix_status_t code = 1;
    char *msg = NULL;

    /* whatever else is malformed, an abort is honoured */
    (void)pg_pmix_unpack_one(in->args, &code, PMIX_STATUS);
    (void)pg_pmix_unpack_one(in->args, &msg, PMIX_STRING);
    (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_SUCCESS);
    if (in->s->inited) /* the others hear of it before the job is brought down */
        pg_peer_abort(in->peer, code, msg);
    else
        in->peer->ops->job_abort(in->peer, code, msg);
    free(msg);
    return PG_HANDLER_OK;
}

static int serve_finalize(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);

    (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_SUCCESS);
    pg_pmix_events_unsubscribe(in->s); /* it wants no more */
    in->peer->ops->peer_finalize(in->peer);
    if (e != NULL)
        (void)pg_proc_finalize(e, &self);
    return PG_HANDLER_CLOSE;
}

/* ---- dispatch ------------------------------------------------------------ */

typedef int (*pmix_cmd_fn)(pg_pmix_in_t *in);

static const pmix_cmd_fn cmd_fns[PG_PMIX_CMD_MAX] = {
    [PG_PMIX_CMD_INIT] = serve_init,         [PG_PMIX_CMD_COMMIT] = pg_pmix_serve_commit,
    [PG_PMIX_CMD_FENCE] = pg_pmix_serve_fence,       [PG_PMIX_CMD_GET] = pg_pmix_serve_get,
    [PG_PMIX_CMD_PUBLISH] = pg_pmix_serve_publish,   [PG_PMIX_CMD_LOOKUP] = pg_pmix_serve_lookup,
    [PG_PMIX_CMD_UNPUBLISH] = pg_pmix_serve_unpublish, [PG_PMIX_CMD_ABORT] = serve_abort,
    [PG_PMIX_CMD_FINALIZE] = serve_finalize, [PG_PMIX_CMD_NOTIFY] = pg_pmix_serve_notify,
    [PG_PMIX_CMD_QUERY] = pg_pmix_serve_query,       [PG_PMIX_CMD_LOG] = pg_pmix_serve_log,
    [PG_PMIX_CMD_GROUP_CONSTRUCT] = pg_pmix_serve_group_construct,
    [PG_PMIX_CMD_GROUP_DESTRUCT] = pg_pmix_serve_group_destruct,
    [PG_PMIX_CMD_GROUP_INVITE] = pg_pmix_serve_group_invite,
    [PG_PMIX_CMD_GROUP_JOIN] = pg_pmix_serve_group_join,
    [PG_PMIX_CMD_GROUP_LEAVE] = pg_pmix_serve_group_leave,
    [PG_PMIX_CMD_JOB_CONTROL] = pg_pmix_serve_job_control,
    [PG_PMIX_CMD_MONITOR] = pg_pmix_serve_monitor,
    [PG_PMIX_CMD_SPAWN] = pg_pmix_serve_spawn, [PG_PMIX_CMD_CONNECT] = pg_pmix_serve_connect,
    [PG_PMIX_CMD_DISCONNECT] = pg_pmix_serve_connect,
};

static int pmix_on_open(pg_peer_t *peer)
{
    pg_pmix_session_t *s = calloc(1, sizeof(*s));

    if (s == NULL)
        return -1;
    s->peer = peer;
    peer->handler_data = s;
    /* a PMIx client here is pmigate's libpmix, which reads the segment */
    pg_peer_reads_segment(peer);
    return 0;
}

static int pmix_on_frame(pg_peer_t *peer, const char *payload, size_t len)
{
    pg_pmix_session_t *s = peer->handler_data;
    pmix_data_buffer_t view;
    pg_pmix_in_t in = { s, peer, 0, 0, &view };

    if (s == NULL)
        return PG_HANDLER_FAIL;
    pg_pmix_msg_view(&view, payload, len);
    if (pg_pmix_msg_read_header(&view, &in.cmd, &in.id) != PMIX_SUCCESS)
        return PG_HANDLER_FAIL; /* not even a header: not our client library */
    /* A command we do not serve is refused under its own code -- except
     * "event", which only the gateway sends: a reply echoing it would be
     * an event frame (with id 0, one libpmix hands to the handlers), so it
     * is refused under code 0, the unknown command. */
    if (in.cmd == 0 || in.cmd >= PG_PMIX_CMD_MAX || cmd_fns[in.cmd] == NULL)
        return pg_pmix_reply_status(peer, in.cmd == PG_PMIX_CMD_EVENT ? 0 : in.cmd, in.id,
                                    PMIX_ERR_NOT_SUPPORTED),
               PG_HANDLER_OK;
    if (!s->inited && in.cmd != PG_PMIX_CMD_INIT && in.cmd != PG_PMIX_CMD_ABORT)
        return pg_pmix_reply_status(peer, in.cmd, in.id, PMIX_ERR_INIT), PG_HANDLER_OK;
    return cmd_fns[in.cmd](&in);
}

static void pmix_on_close(pg_peer_t *peer)
{
    session_free(peer->handler_data);
    peer->handler_data = NULL;
}

const pg_proto_handler_t pg_pmix_handler = {
    .name = "PMIx",
    .on_open = pmix_on_open,
    .on_close = pmix_on_close,
    .on_frame = pmix_on_frame,
};

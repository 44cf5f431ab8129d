/*
 * pg_pmi2_server: PMI-2 requests -> engine calls -> PMI-2 replies.  See
 * pg_pmi2_server.h for the semantics; the dispatch table at the bottom maps
 * each command enum to its handler and to the response command used when a
 * request has to be refused.
 */
#include "pmi2/pg_pmi2_server.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "server/pg_peer_abort.h"
#include "server/pg_pmi_common.h"
#include "server/pg_pmi_handler.h"
#include "server/pg_pmi_spawn.h"
#include "pmi2/pmi2.h" /* the PMI-2 rc numbers sent on the wire */
#include "wire/pg_shm_format.h"

/* The shared helpers (server/pg_pmi_common.h) send the same rc numbers as
 * the public header says. */
_Static_assert(PG_PMI2_RC_FAIL == PMI2_FAIL && PG_PMI2_RC_ERR_NOMEM == PMI2_ERR_NOMEM &&
                   PG_PMI2_RC_ERR_INVALID_ARG == PMI2_ERR_INVALID_ARG &&
                   PG_PMI2_RC_ERR_INVALID_KEY_LENGTH == PMI2_ERR_INVALID_KEY_LENGTH &&
                   PG_PMI2_RC_ERR_INVALID_VAL_LENGTH == PMI2_ERR_INVALID_VAL_LENGTH &&
                   PG_PMI2_RC_ERR_INVALID_LENGTH == PMI2_ERR_INVALID_LENGTH &&
                   PG_PMI2_RC_ERR_INVALID_NUM_ARGS == PMI2_ERR_INVALID_NUM_ARGS &&
                   PG_PMI2_RC_ERR_INVALID_KEYVALP == PMI2_ERR_INVALID_KEYVALP &&
                   PG_PMI2_RC_ERR_OTHER == PMI2_ERR_OTHER,
               "server/pg_pmi_common.h and pmi2/pmi2.h disagree on a PMI-2 rc");

static const pg_pmi_dialect_t pmi2_dialect; /* the dispatch table, at the bottom */

/* ---- reply helpers ---------------------------------------------------- */

static pg_reply_t pmi2_ok(pg_str_t thrid)
{
    pg_reply_t r = { 0, NULL, thrid };

    return r;
}

static pg_reply_t pmi2_err(pg_str_t thrid, int rc, const char *errmsg)
{
    pg_reply_t r = { rc, errmsg, thrid };

    return r;
}

/* The operation id to echo: "thrid=<v>" or "opid=<v>" as received. */
static pg_str_t pmi2_thrid(const pg_msg_t *msg)
{
    return pg_msg_op_id(msg);
}

/* Sends what the encoder produced; if it refused the reply, sends a bare
 * "<reply>;rc=14;errmsg=...;" instead so the client is never left waiting. */
static int pmi2_send(pg_peer_t *peer, pg_pmi_reply_t *r, int enc_rc, pg_cmd_t reply, pg_str_t thrid)
{
    if (enc_rc != 0) {
        pg_reply_t e = pmi2_err(thrid, PMI2_ERR_OTHER, "reply_cannot_be_encoded");

        pg_enc_reset(&r->enc);
        if (pg_enc_pmi2_response(&r->enc, reply, &e) != 0) {
            e.thrid = (pg_str_t){ NULL, 0 }; /* an unencodable thrid */
            (void)pg_enc_pmi2_response(&r->enc, reply, &e);
        }
    }
    return pg_pmi_send(peer, &r->enc);
}

/* Replies with no keys of their own (kvs-put, kvs-fence, finalize, ...). */
static int pmi2_reply(pg_peer_t *peer, pg_cmd_t reply, const pg_reply_t *rep)
{
    pg_pmi_reply_t r;

    return pmi2_send(peer, &r, pg_enc_pmi2_response(pg_pmi_reply_init(&r), reply, rep), reply,
                     rep->thrid);
}

/* A refusal in the shape the client parses for this command: "found"
 * responses keep found=FALSE, job-connect keeps kvscopy=. */
static int pmi2_refuse(pg_peer_t *peer, pg_cmd_t reply, pg_str_t thrid, int rc, const char *text)
{
    pg_reply_t rep = pmi2_err(thrid, rc, text);
    pg_pmi_reply_t r;
    pg_enc_t *e = pg_pmi_reply_init(&r);
    int enc;

    switch (reply) {
    case PG_CMD_PMI2_KVS_GET_RESPONSE:
    case PG_CMD_PMI2_INFO_GETNODEATTR_RESPONSE:
    case PG_CMD_PMI2_INFO_GETJOBATTR_RESPONSE:
        enc = pg_enc_pmi2_found_response(e, reply, &rep, false, (pg_str_t){ NULL, 0 });
        break;
    case PG_CMD_PMI2_NAME_LOOKUP_RESPONSE:
        enc = pg_enc_pmi2_name_lookup_response(e, &rep, false, NULL);
        break;
    case PG_CMD_PMI2_JOB_CONNECT_RESPONSE:
        enc = pg_enc_pmi2_job_connect_response(e, &rep);
        break;
    case PG_CMD_PMI2_SPAWN_RESPONSE:
        enc = pg_enc_pmi2_spawn_response(e, &rep, NULL, NULL, 0);
        break;
    default:
        enc = pg_enc_pmi2_response(e, reply, &rep);
        break;
    }
    return pmi2_send(peer, &r, enc, reply, thrid);
}

/* The dialect's refusal (pg_pmi_handler.h).  The PMI-1 framed init of a
 * PMI-2 client is refused as it is answered: response_to_init, rc=-1. */
static int pmi2_refuse_err(pg_peer_t *peer, pg_cmd_t reply, pg_str_t thrid,
                           const pg_pmi_err_t *err, const char *text)
{
    if (reply == PG_CMD_PMI1_RESPONSE_TO_INIT) {
        pg_pmi_reply_t r;

        (void)pg_enc_pmi1_response_to_init(pg_pmi_reply_init(&r), -1, 2, 0);
        return pg_pmi_send(peer, &r.enc);
    }
    return pmi2_refuse(peer, reply, thrid, err->pmi2_rc, text);
}

static int pmi2_refuse_status(pg_peer_t *peer, pg_cmd_t reply, pg_str_t thrid, pmix_status_t st)
{
    return pg_pmi_refuse_status(&pmi2_dialect, peer, reply, thrid, st);
}

static int pmi2_require(pg_peer_t *peer, const pg_msg_t *msg, const char *key, char *buf,
                        size_t cap, pg_cmd_t reply)
{
    return pg_pmi_require(&pmi2_dialect, peer, msg, key, buf, cap, reply);
}

/* Sends found=TRUE value=v, or an error when v cannot be sent to PMI-2
 * clients (they reject values over 1024 bytes). */
static void pmi2_send_found(pg_peer_t *peer, pg_cmd_t reply, pg_str_t thrid, const pg_value_t *v)
{
    char scratch[64];
    pg_reply_t rep = pmi2_ok(thrid);
    pg_pmi_reply_t r;
    pg_str_t text;

    if (pg_pmi_value_text(v, scratch, sizeof(scratch), &text) != 0) {
        pmi2_refuse(peer, reply, thrid, PMI2_ERR_OTHER, "value_type_cannot_be_sent_over_pmi2");
        return;
    }
    if (text.len > PG_PMI2_VALLEN_MAX) {
        pmi2_refuse(peer, reply, thrid, PMI2_ERR_INVALID_VAL_LENGTH,
                    "value_longer_than_1024_bytes");
        return;
    }
    pmi2_send(peer, &r, pg_enc_pmi2_found_response(pg_pmi_reply_init(&r), reply, &rep, true, text),
              reply, thrid);
}

/* found=FALSE with rc=0 for a plain miss; rc!=0 for a real failure. */
static void pmi2_send_get_failure(pg_peer_t *peer, pg_cmd_t reply, pg_str_t thrid, pmix_status_t st)
{
    pg_reply_t rep = pmi2_ok(thrid);
    pg_pmi_reply_t r;

    if (st != PMIX_ERR_NOT_FOUND) {
        pmi2_refuse_status(peer, reply, thrid, st);
        return;
    }
    pmi2_send(peer, &r,
              pg_enc_pmi2_found_response(pg_pmi_reply_init(&r), reply, &rep, false,
                                         (pg_str_t){ NULL, 0 }),
              reply, thrid);
}

/* ---- handshake and job facts ---------------------------------------------- */

/* The PMI-1 framed first line of every PMI-2 client. */
static int pmi2_init(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    long version;
    pg_pmi_reply_t r;
    bool ok = pg_str_to_long(pg_msg_get(msg, "pmi_version"), &version) == 0 && version == 2;

    (void)s;
    (void)pg_enc_pmi1_response_to_init(pg_pmi_reply_init(&r), ok ? 0 : -1, 2, 0);
    pg_pmi_send(peer, &r.enc);
    return PG_HANDLER_OK;
}

/* The rank is the connection's (PMI_FD: known from the launch; PMI_PORT:
 * identified by the gateway from pmirank=/srcid=), so any subset of
 * pmijobid/pmirank/threaded is accepted.  pmigate's libpmi2 adds
 * PG_SHM_READER_ATTR=yes when it reads the node's key segment. */
static int pmi2_fullinit(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    int rank = peer->rank;
    pg_reply_t rep = pmi2_ok(pmi2_thrid(msg));
    pg_pmi_reply_t r;

    (void)s;
    if (pg_str_eq(pg_msg_get(msg, PG_SHM_READER_ATTR), "yes"))
        pg_peer_reads_segment(peer);
    return pmi2_send(peer, &r,
                     pg_enc_pmi2_fullinit_response(pg_pmi_reply_init(&r), &rep, rank,
                                                   peer->job->size, pg_peer_appnum(peer),
                                                   peer->job->parent_kvsname, false, false),
                     PG_CMD_PMI2_FULLINIT_RESPONSE, rep.thrid),
           PG_HANDLER_OK;
}

static int pmi2_job_getid(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    pg_reply_t rep = pmi2_ok(pmi2_thrid(msg));
    pg_pmi_reply_t r;

    (void)s;
    return pmi2_send(peer, &r,
                     pg_enc_pmi2_job_getid_response(pg_pmi_reply_init(&r), &rep,
                                                    peer->job->kvsname),
                     PG_CMD_PMI2_JOB_GETID_RESPONSE, rep.thrid),
           PG_HANDLER_OK;
}

static int pmi2_finalize(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    pg_reply_t rep = pmi2_ok(pmi2_thrid(msg));

    (void)s;
    pmi2_reply(peer, PG_CMD_PMI2_FINALIZE_RESPONSE, &rep);
    return pg_pmi_finalize(peer);
}

/* Both forms: isworld/msg (M4.0, Slurm) and exitcode/message (MPICH >= 4.1).
 * The job is killed unless isworld=FALSE; no reply either way. */
static int pmi2_abort(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    char text[PG_PMI_ABORT_MSG_MAX + 1];
    pg_str_t message = pg_msg_get(msg, "msg");
    bool isworld = true;
    int code;

    (void)s;
    if (message.ptr == NULL)
        message = pg_msg_get(msg, "message");
    code = pg_pmi_abort_args(msg, message, text);
    if (pg_str_to_bool(pg_msg_get(msg, "isworld"), &isworld) != 0)
        isworld = true;
    if (isworld)
        pg_peer_abort(peer, code, text[0] ? text : NULL);
    else
        pg_peer_log(peer, "rank %d called abort for itself only (isworld=FALSE)%s%s",
                   peer->rank, text[0] ? ": " : "", text);
    return PG_HANDLER_OK;
}

/* ---- key-value space ---------------------------------------------------------- */

/* kvs-put and info-putnodeattr: one string value under a key; only where it
 * goes differs.  A kvs-put stays hidden until the owner's fence commits it
 * (not even the owner reads it); a node attribute is visible at once. */
static int pmi2_put_string(pg_peer_t *peer, const pg_msg_t *msg, pg_cmd_t reply, bool node_attr)
{
    char key[PG_PMI2_KEYLEN_MAX + 1], value[PG_PMI2_VALLEN_MAX + 1];
    pg_str_t val = pg_msg_get(msg, "value");
    pg_proc_t proc = pg_pmi_proc(peer);
    pg_reply_t rep = pmi2_ok(pmi2_thrid(msg));
    pmix_status_t st;
    pg_value_t v;

    if (pmi2_require(peer, msg, "key", key, sizeof(key), reply) ||
        pmi2_require(peer, msg, "value", value, sizeof(value), reply))
        return PG_HANDLER_OK;
    v = pg_value_bytes(PMIX_STRING, value, val.len);
    if (node_attr)
        st = pg_node_put(peer->job->engine, &proc, key, &v);
    else
        st = pg_put(peer->job->engine, &proc, PMIX_GLOBAL, key, &v, PG_PUT_HIDDEN);
    if (st != PMIX_SUCCESS)
        return pmi2_refuse_status(peer, reply, rep.thrid, st), PG_HANDLER_OK;
    return pmi2_reply(peer, reply, &rep), PG_HANDLER_OK;
}

static int pmi2_kvs_put(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    (void)s;
    return pmi2_put_string(peer, msg, PG_CMD_PMI2_KVS_PUT_RESPONSE, false);
}

/* The reply to a kvs-get or info-getnodeattr the engine has answered. */
static void pmi2_get_answer(pg_peer_t *peer, pg_cmd_t reply, pg_str_t thrid, pmix_status_t status,
                            const pg_value_t *value)
{
    if (status == PMIX_SUCCESS && value != NULL)
        pmi2_send_found(peer, reply, thrid, value);
    else
        pmi2_send_get_failure(peer, reply, thrid,
                              status == PMIX_SUCCESS ? PMIX_ERR_NOT_FOUND : status);
}

/* Completion of a held get (the engine answers later). */
static void pmi2_get_done(pmix_status_t status, const pg_value_t *value, pmix_rank_t poster,
                          void *cbdata)
{
    pg_pmi_req_t *req = cbdata;
    pg_peer_t *peer = pg_pmi_req_peer(req);

    (void)poster;
    if (peer != NULL)
        pmi2_get_answer(peer, pmi2_dialect.cmds[req->cmd].reply,
                        req->has_thrid ? req->thrid : (pg_str_t){ NULL, 0 }, status, value);
    pg_pmi_req_free(req);
}

/* A get tried at once (PG_GET_IMMEDIATE): the engine answers before pg_get
 * returns, so this lives on the handler's stack and the connection and
 * thrid (a token of the message) are still valid.  A miss that may still
 * be held is not answered here (`held_later`): the caller retries as a
 * held get. */
typedef struct pmi2_get_now {
    pg_peer_t *peer;
    pg_cmd_t reply;
    pg_str_t thrid;
    bool may_hold;   /* the request did not ask for IMMEDIATE itself */
    bool held_later; /* missing for now: retry as a held get */
} pmi2_get_now_t;

static void pmi2_get_now_done(pmix_status_t status, const pg_value_t *value, pmix_rank_t poster,
                              void *cbdata)
{
    pmi2_get_now_t *now = cbdata;

    (void)poster;
    if (status == PMIX_ERR_NOT_FOUND && now->may_hold) {
        now->held_later = true;
        return;
    }
    pmi2_get_answer(now->peer, now->reply, now->thrid, status, value);
}

/* Starts an engine get.  Most gets (every one after a fence) are answered
 * from what the store holds: they are tried first with PG_GET_IMMEDIATE,
 * which never holds, so they need no request record (no allocation per
 * get).  Only a miss that may wait becomes a held get with a record. */
static int pmi2_start_get(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg,
                          const char *key, const pg_proc_t *target, unsigned flags)
{
    pg_proc_t proc = pg_pmi_proc(peer);
    pg_cmd_t reply = pmi2_dialect.cmds[msg->cmd].reply;
    pg_str_t thrid = pmi2_thrid(msg); /* looked up once: this is every get's path */
    pmi2_get_now_t now = { peer, reply, thrid, !(flags & PG_GET_IMMEDIATE), false };
    pg_pmi_req_t *req;
    pg_get_req_t q;

    pg_get_req_init(&q, &proc, target, key);
    q.flags = flags | PG_GET_IMMEDIATE;
    /* IMMEDIATE never holds, so the engine reads no clock (`now` 0): the
     * usual get costs no clock read */
    (void)pg_get(peer->job->engine, &q, 0, pmi2_get_now_done, &now);
    if (!now.held_later)
        return PG_HANDLER_OK;
    req = pg_pmi_req_new(s, msg->cmd, thrid);
    if (req == NULL)
        return pmi2_refuse_status(peer, reply, thrid, PMIX_ERR_NOMEM), PG_HANDLER_OK;
    q.flags = flags;
    /* A request carrying thrid comes from a multi-threaded client (the
     * PMI-2 libraries send it only then): its other threads keep running
     * while this one waits, so the wait must not make hang detection treat
     * the whole process as blocked. */
    if (thrid.len > 0)
        q.flags |= PG_GET_NONBLOCKING;
    (void)pg_get(peer->job->engine, &q, pg_peer_now(peer), pmi2_get_done, req); /* cb always runs */
    return PG_HANDLER_OK;
}

/* The connected job `jobid` names (its stored name, kept by the session),
 * or NULL: not one this session job-connect'ed. */
static const char *pmi2_connected_job(const pg_pmi_session_t *s, pg_str_t jobid)
{
    for (int i = 0; jobid.ptr != NULL && i < s->nconnected; i++)
        if (pg_str_eq(jobid, s->connected[i]))
            return s->connected[i];
    return NULL;
}

/* srcid is a hint (RANK_HINT); jobid is ignored as every server does,
 * unless it names a job this session job-connect'ed: then the key is that
 * job's.  Job attributes (PMI_process_mapping, ...) are answered from the
 * layout. */
static int pmi2_kvs_get(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    char key[PG_PMI2_KEYLEN_MAX + 1];
    pg_proc_t proc = pg_pmi_proc(peer);
    pg_proc_t target = { proc.nspace, PMIX_RANK_UNDEF };
    unsigned flags = PG_GET_NOWAIT_AFTER_FENCE;
    long srcid;
    pg_value_t v;

    if (pmi2_require(peer, msg, "key", key, sizeof(key), PG_CMD_PMI2_KVS_GET_RESPONSE))
        return PG_HANDLER_OK;
    target.nspace = pmi2_connected_job(s, pg_msg_get(msg, "jobid"));
    if (target.nspace != NULL) /* a job-connect'ed job's keys: any rank's */
        return pmi2_start_get(s, peer, msg, key, &target, 0); /* held until it commits */
    target.nspace = proc.nspace;
    if (pg_ns_attr(peer->job->engine, proc.nspace, key, &v) == PMIX_SUCCESS) {
        pmi2_send_found(peer, PG_CMD_PMI2_KVS_GET_RESPONSE, pmi2_thrid(msg), &v);
        return PG_HANDLER_OK;
    }
    if (pg_str_to_long(pg_msg_get(msg, "srcid"), &srcid) == 0 && srcid >= 0 &&
        srcid < peer->job->size) {
        target.rank = (pmix_rank_t)srcid;
        flags |= PG_GET_RANK_HINT;
    }
    return pmi2_start_get(s, peer, msg, key, &target, flags);
}

static void pmi2_fence_done(pmix_status_t status, const pg_fence_keys_t *keys, void *cbdata)
{
    pg_pmi_req_t *req = cbdata;
    pg_peer_t *peer = pg_pmi_req_peer(req);
    pg_str_t thrid = req->has_thrid ? req->thrid : (pg_str_t){ NULL, 0 };
    pg_reply_t rep = pmi2_ok(thrid);

    (void)keys;
    if (peer != NULL && status == PMIX_SUCCESS)
        pmi2_reply(peer, PG_CMD_PMI2_KVS_FENCE_RESPONSE, &rep);
    else if (peer != NULL)
        pmi2_refuse_status(peer, PG_CMD_PMI2_KVS_FENCE_RESPONSE, thrid, status);
    pg_pmi_req_free(req);
}

/* Commit, then a collecting fence over the whole job: a real barrier (the
 * reply comes once every rank fenced), as Slurm does. */
static int pmi2_kvs_fence(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    pg_engine_t *engine = peer->job->engine;
    pg_proc_t proc = pg_pmi_proc(peer);
    pg_str_t thrid = pmi2_thrid(msg);
    pg_pmi_req_t *req;
    pmix_status_t st;

    st = pg_commit(engine, &proc);
    if (st != PMIX_SUCCESS)
        return pmi2_refuse_status(peer, PG_CMD_PMI2_KVS_FENCE_RESPONSE, thrid, st), PG_HANDLER_OK;
    req = pg_pmi_req_new(s, msg->cmd, thrid);
    if (req == NULL)
        return pmi2_refuse_status(peer, PG_CMD_PMI2_KVS_FENCE_RESPONSE, thrid, PMIX_ERR_NOMEM),
               PG_HANDLER_OK;
    st = pg_fence_join(engine, &proc, NULL, 0, PG_FENCE_COLLECT, 0, pg_peer_now(peer),
                       pmi2_fence_done, req);
    if (st != PMIX_SUCCESS && st != PMIX_OPERATION_IN_PROGRESS) {
        pg_pmi_req_free(req); /* refused at once: the callback will not run */
        pmi2_refuse_status(peer, PG_CMD_PMI2_KVS_FENCE_RESPONSE, thrid, st);
    }
    return PG_HANDLER_OK;
}

/* ---- node and job attributes ------------------------------------------------- */

static int pmi2_info_putnodeattr(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    (void)s;
    return pmi2_put_string(peer, msg, PG_CMD_PMI2_INFO_PUTNODEATTR_RESPONSE, true);
}

/* wait=TRUE holds until a process of the node puts the key; the engine's
 * hang detection ends a wait nobody can satisfy with found=FALSE. */
static int pmi2_info_getnodeattr(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    char key[PG_PMI2_KEYLEN_MAX + 1];
    pg_proc_t proc = pg_pmi_proc(peer);
    bool wait = false;

    if (pmi2_require(peer, msg, "key", key, sizeof(key), PG_CMD_PMI2_INFO_GETNODEATTR_RESPONSE))
        return PG_HANDLER_OK;
    if (pg_str_to_bool(pg_msg_get(msg, "wait"), &wait) != 0)
        wait = false;
    return pmi2_start_get(s, peer, msg, key, &proc,
                          PG_GET_NODE_ATTR | (wait ? 0u : PG_GET_IMMEDIATE));
}

/* PMI_process_mapping, universeSize, PMI_dead_processes; unknown keys are
 * found=FALSE with rc=0. */
static int pmi2_info_getjobattr(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    char key[PG_PMI2_KEYLEN_MAX + 1];
    pg_str_t thrid = pmi2_thrid(msg);
    pmix_status_t st;
    pg_value_t v;

    (void)s;
    if (pmi2_require(peer, msg, "key", key, sizeof(key), PG_CMD_PMI2_INFO_GETJOBATTR_RESPONSE))
        return PG_HANDLER_OK;
    st = pg_ns_attr(peer->job->engine, peer->job->kvsname, key, &v);
    if (st == PMIX_SUCCESS)
        pmi2_send_found(peer, PG_CMD_PMI2_INFO_GETJOBATTR_RESPONSE, thrid, &v);
    else
        pmi2_send_get_failure(peer, PG_CMD_PMI2_INFO_GETJOBATTR_RESPONSE, thrid,
                              PMIX_ERR_NOT_FOUND);
    return PG_HANDLER_OK;
}

/* ---- name service ------------------------------------------------------------- */

/* The answer to a name-publish or a name-unpublish. */
static void pmi2_name_done(pmix_status_t status, void *cbdata)
{
    pg_pmi_req_t *req = cbdata;
    pg_peer_t *peer = pg_pmi_req_peer(req);
    pg_str_t thrid = req->has_thrid ? req->thrid : (pg_str_t){ NULL, 0 };
    pg_cmd_t reply = req->cmd == PG_CMD_PMI2_NAME_PUBLISH ? PG_CMD_PMI2_NAME_PUBLISH_RESPONSE
                                                         : PG_CMD_PMI2_NAME_UNPUBLISH_RESPONSE;
    pg_reply_t rep = pmi2_ok(thrid);

    if (peer == NULL)
        ;
    else if (status == PMIX_ERR_DUPLICATE_KEY && reply == PG_CMD_PMI2_NAME_PUBLISH_RESPONSE)
        pmi2_refuse(peer, reply, thrid, 1, "duplicate_service");
    else if (status == PMIX_ERR_NOT_FOUND && reply == PG_CMD_PMI2_NAME_UNPUBLISH_RESPONSE)
        pmi2_refuse(peer, reply, thrid, 1, "service_not_found");
    else if (status != PMIX_SUCCESS)
        pmi2_refuse_status(peer, reply, thrid, status);
    else
        pmi2_reply(peer, reply, &rep);
    pg_pmi_req_free(req);
}

/* name-publish (port given) or name-unpublish: answered by pmi2_name_done. */
static int pmi2_name_change(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg,
                            pg_cmd_t reply, bool publish)
{
    char name[PG_PMI2_KEYLEN_MAX + 1], port[PG_PMI2_VALLEN_MAX + 1];
    pg_proc_t proc = pg_pmi_proc(peer);
    pg_str_t thrid = pmi2_thrid(msg);
    pg_pmi_req_t *req;
    pg_value_t v;

    if (pmi2_require(peer, msg, "name", name, sizeof(name), reply) ||
        (publish && pmi2_require(peer, msg, "port", port, sizeof(port), reply)))
        return PG_HANDLER_OK;
    req = pg_pmi_req_new(s, msg->cmd, thrid);
    if (req == NULL)
        return pmi2_refuse_status(peer, reply, thrid, PMIX_ERR_NOMEM), PG_HANDLER_OK;
    if (publish) {
        v = pg_value_string(port);
        (void)pg_publish(peer->job->engine, &proc, name, &v, pmi2_name_done, req);
    } else
        (void)pg_unpublish(peer->job->engine, &proc, name, pmi2_name_done, req);
    return PG_HANDLER_OK;
}

static int pmi2_name_publish(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    return pmi2_name_change(s, peer, msg, PG_CMD_PMI2_NAME_PUBLISH_RESPONSE, true);
}

static int pmi2_name_unpublish(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    return pmi2_name_change(s, peer, msg, PG_CMD_PMI2_NAME_UNPUBLISH_RESPONSE, false);
}

/* The port goes out as both port= (MPICH >= 4.0.2) and value= (Slurm's
 * libpmi2, older MPICH). */
static void pmi2_lookup_done(pmix_status_t status, const pg_value_t *value,
                             const pg_proc_t *publisher, void *cbdata)
{
    char port[PG_PMI2_VALLEN_MAX + 1];
    pg_pmi_req_t *req = cbdata;
    pg_peer_t *peer = pg_pmi_req_peer(req);
    pg_str_t thrid = req->has_thrid ? req->thrid : (pg_str_t){ NULL, 0 };
    pg_reply_t rep = pmi2_ok(thrid);
    pg_pmi_reply_t r;
    int found;

    (void)publisher;
    if (peer == NULL)
        goto out;
    found = pg_pmi_lookup_port(status, value, port, sizeof(port));
    if (found == 0)
        pmi2_send(peer, &r,
                  pg_enc_pmi2_name_lookup_response(pg_pmi_reply_init(&r), &rep, true, port),
                  PG_CMD_PMI2_NAME_LOOKUP_RESPONSE, thrid);
    else if (found == 1)
        pmi2_refuse(peer, PG_CMD_PMI2_NAME_LOOKUP_RESPONSE, thrid, 1, "service_not_found");
    else
        pmi2_refuse_status(peer, PG_CMD_PMI2_NAME_LOOKUP_RESPONSE, thrid, status);
out:
    pg_pmi_req_free(req);
}

static int pmi2_name_lookup(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    return pg_pmi_lookup(&pmi2_dialect, s, peer, msg, "name", PG_CMD_PMI2_NAME_LOOKUP_RESPONSE,
                         pmi2_lookup_done);
}

/* ---- dynamic jobs ------------------------------------------------------------- */

/* Is `jobid` a job of this gateway (a namespace of the engine)? */
static bool pmi2_job_exists(pg_peer_t *peer, const char *jobid)
{
    pg_value_t v;

    return pg_ns_attr(peer->job->engine, jobid, "universeSize", &v) == PMIX_SUCCESS;
}

/* Connects the session to another job of the gateway: from now on a
 * kvs-get naming its jobid reads its keys.  kvscopy=FALSE: nothing is
 * copied, the keys stay in the one engine. */
static int pmi2_job_connect(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    char jobid[PG_PMI2_VALLEN_MAX + 1];
    pg_reply_t rep = pmi2_ok(pmi2_thrid(msg));
    pg_pmi_reply_t r;
    char **grown, *copy;

    if (pmi2_require(peer, msg, "jobid", jobid, sizeof(jobid), PG_CMD_PMI2_JOB_CONNECT_RESPONSE))
        return PG_HANDLER_OK;
    if (!pmi2_job_exists(peer, jobid))
        return pmi2_refuse(peer, PG_CMD_PMI2_JOB_CONNECT_RESPONSE, rep.thrid,
                           PMI2_ERR_INVALID_ARG, "no_such_job_in_this_gateway"),
               PG_HANDLER_OK;
    if (pmi2_connected_job(s, pg_msg_get(msg, "jobid")) == NULL &&
        strcmp(jobid, peer->job->kvsname) != 0) {
        grown = realloc(s->connected, (size_t)(s->nconnected + 1) * sizeof(*grown));
        if (grown != NULL)
            s->connected = grown;
        if (grown == NULL || (copy = strdup(jobid)) == NULL)
            return pmi2_refuse_status(peer, PG_CMD_PMI2_JOB_CONNECT_RESPONSE, rep.thrid,
                                      PMIX_ERR_NOMEM),
                   PG_HANDLER_OK;
        s->connected[s->nconnected++] = copy;
    }
    return pmi2_send(peer, &r, pg_enc_pmi2_job_connect_response(pg_pmi_reply_init(&r), &rep),
                     PG_CMD_PMI2_JOB_CONNECT_RESPONSE, rep.thrid),
           PG_HANDLER_OK;
}

static int pmi2_job_disconnect(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    pg_reply_t rep = pmi2_ok(pmi2_thrid(msg));
    const char *job = pmi2_connected_job(s, pg_msg_get(msg, "jobid"));

    if (job == NULL)
        return pmi2_refuse(peer, PG_CMD_PMI2_JOB_DISCONNECT_RESPONSE, rep.thrid,
                           PMI2_ERR_INVALID_ARG, "not_connected_to_that_job"),
               PG_HANDLER_OK;
    for (int i = 0; i < s->nconnected; i++) {
        if (s->connected[i] == job) {
            free(s->connected[i]);
            s->connected[i] = s->connected[--s->nconnected];
            break;
        }
    }
    return pmi2_reply(peer, PG_CMD_PMI2_JOB_DISCONNECT_RESPONSE, &rep), PG_HANDLER_OK;
}

/* spawn-response: rc, jobid and one errcode per process (Slurm's form,
 * which both libpmi2s read). */
static void pmi2_spawn_done(const pg_spawn_result_t *res, void *cbdata)
{
    pg_pmi_req_t *req = cbdata;
    pg_peer_t *peer = pg_pmi_req_peer(req);
    pg_str_t thrid = req->has_thrid ? req->thrid : (pg_str_t){ NULL, 0 };
    char text[160];
    pg_reply_t rep = pmi2_ok(thrid);
    pg_pmi_reply_t r;

    if (peer == NULL)
        goto out;
    if (res->rc != 0) {
        snprintf(text, sizeof(text), "%s", res->errmsg ? res->errmsg : "spawn_failed");
        pg_pmi_sanitize(text);
        rep = pmi2_err(thrid, pg_pmi_status_err(res->rc)->pmi2_rc, text);
        if (rep.rc == 0)
            rep.rc = PMI2_ERR_OTHER;
    }
    pmi2_send(peer, &r,
              pg_enc_pmi2_spawn_response(pg_pmi_reply_init(&r), &rep, res->jobid, res->errcodes,
                                         res->errcodes != NULL ? res->nprocs : 0),
              PG_CMD_PMI2_SPAWN_RESPONSE, thrid);
out:
    pg_pmi_req_free(req);
}

static int pmi2_spawn(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    char err[160];
    pg_str_t thrid = pmi2_thrid(msg);
    pg_pmi_spawn_t *sp;
    pg_pmi_req_t *req;

    if (peer->ops->spawn == NULL)
        return pmi2_refuse(peer, PG_CMD_PMI2_SPAWN_RESPONSE, thrid, PMI2_ERR_OTHER,
                           "spawn_is_not_supported_by_this_host"),
               PG_HANDLER_OK;
    sp = pg_pmi_spawn_new();
    req = pg_pmi_req_new(s, msg->cmd, thrid);
    if (sp == NULL || req == NULL) {
        pg_pmi_spawn_free(sp);
        pg_pmi_req_free(req);
        return pmi2_refuse_status(peer, PG_CMD_PMI2_SPAWN_RESPONSE, thrid, PMIX_ERR_NOMEM),
               PG_HANDLER_OK;
    }
    if (pg_pmi_spawn_parse_pmi2(sp, msg, err, sizeof(err)) != 0) {
        pg_pmi_sanitize(err);
        pmi2_refuse(peer, PG_CMD_PMI2_SPAWN_RESPONSE, thrid, PMI2_ERR_INVALID_ARG, err);
        pg_pmi_req_free(req);
    } else {
        peer->ops->spawn(peer, pg_pmi_spawn_req(sp), pmi2_spawn_done, req); /* done always runs */
    }
    pg_pmi_spawn_free(sp); /* the request is borrowed for the call only */
    return PG_HANDLER_OK;
}

/* ---- not (yet) supported ---------------------------------------------------- */

/* Slurm's ring. */
static int pmi2_not_supported(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    (void)s;
    return pg_pmi_not_supported(&pmi2_dialect, peer, msg);
}

/* ---- dispatch ------------------------------------------------------------------ */

static const pg_pmi_cmd_t pmi2_cmds[PG_CMD_COUNT] = {
    [PG_CMD_PMI1_INIT] = { pmi2_init, PG_CMD_PMI1_RESPONSE_TO_INIT, false },
    [PG_CMD_PMI2_FULLINIT] = { pmi2_fullinit, PG_CMD_PMI2_FULLINIT_RESPONSE, false },
    [PG_CMD_PMI2_FINALIZE] = { pmi2_finalize, PG_CMD_PMI2_FINALIZE_RESPONSE, false },
    [PG_CMD_PMI2_ABORT] = { pmi2_abort, PG_CMD_UNKNOWN, false },
    [PG_CMD_PMI2_JOB_GETID] = { pmi2_job_getid, PG_CMD_PMI2_JOB_GETID_RESPONSE, false },
    [PG_CMD_PMI2_JOB_CONNECT] = { pmi2_job_connect, PG_CMD_PMI2_JOB_CONNECT_RESPONSE, true },
    [PG_CMD_PMI2_JOB_DISCONNECT] = { pmi2_job_disconnect, PG_CMD_PMI2_JOB_DISCONNECT_RESPONSE,
                                     false },
    [PG_CMD_PMI2_KVS_PUT] = { pmi2_kvs_put, PG_CMD_PMI2_KVS_PUT_RESPONSE, true },
    [PG_CMD_PMI2_KVS_GET] = { pmi2_kvs_get, PG_CMD_PMI2_KVS_GET_RESPONSE, true },
    [PG_CMD_PMI2_KVS_FENCE] = { pmi2_kvs_fence, PG_CMD_PMI2_KVS_FENCE_RESPONSE, true },
    [PG_CMD_PMI2_INFO_PUTNODEATTR] = { pmi2_info_putnodeattr, PG_CMD_PMI2_INFO_PUTNODEATTR_RESPONSE,
                                       true },
    [PG_CMD_PMI2_INFO_GETNODEATTR] = { pmi2_info_getnodeattr, PG_CMD_PMI2_INFO_GETNODEATTR_RESPONSE,
                                       true },
    [PG_CMD_PMI2_INFO_GETJOBATTR] = { pmi2_info_getjobattr, PG_CMD_PMI2_INFO_GETJOBATTR_RESPONSE,
                                      true },
    [PG_CMD_PMI2_NAME_PUBLISH] = { pmi2_name_publish, PG_CMD_PMI2_NAME_PUBLISH_RESPONSE, true },
    [PG_CMD_PMI2_NAME_UNPUBLISH] = { pmi2_name_unpublish, PG_CMD_PMI2_NAME_UNPUBLISH_RESPONSE, true },
    [PG_CMD_PMI2_NAME_LOOKUP] = { pmi2_name_lookup, PG_CMD_PMI2_NAME_LOOKUP_RESPONSE, true },
    [PG_CMD_PMI2_SPAWN] = { pmi2_spawn, PG_CMD_PMI2_SPAWN_RESPONSE, false },
    [PG_CMD_PMI2_RING] = { pmi2_not_supported, PG_CMD_PMI2_RING_RESPONSE, false },
};

static const pg_pmi_dialect_t pmi2_dialect = {
    .cmds = pmi2_cmds,
    .abort = PG_CMD_PMI2_ABORT,
    .refuse = pmi2_refuse_err,
};

static int pmi2_on_message(pg_peer_t *peer, pg_msg_t *msg, int parse_rc)
{
    return pg_pmi_dispatch(&pmi2_dialect, peer, msg, parse_rc);
}

const pg_proto_handler_t pg_pmi2_handler = {
    .name = "PMI-2",
    .on_open = pg_pmi_on_open,
    .on_message = pmi2_on_message,
    .on_close = pg_pmi_on_close,
};

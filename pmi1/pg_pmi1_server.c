/*
 * pg_pmi1_server: PMI-1 requests -> engine calls -> PMI-1 replies.  See
 * pg_pmi1_server.h for the semantics; the dispatch table at the bottom maps
 * each command enum to its handler and to the reply command used when the
 * request has to be refused.
 */
#include "pmi1/pg_pmi1_server.h"

#include <stdio.h>
#include <string.h>

#include "server/pg_peer_abort.h"
#include "server/pg_pmi_common.h"
#include "server/pg_pmi_handler.h"
#include "server/pg_pmi_spawn.h"
#include "wire/pg_shm_format.h"

static const pg_pmi_dialect_t pmi1_dialect; /* the dispatch table, at the bottom */

/* ---- reply helpers ---------------------------------------------------- */

/* Sends what the encoder produced; if the encoder refused the reply (a
 * value PMI-1 cannot carry), sends "cmd=<reply> rc=-1 msg=..." instead. */
static int pmi1_send(pg_peer_t *peer, pg_pmi_reply_t *r, int enc_rc, pg_cmd_t reply)
{
    if (enc_rc != 0) {
        pg_enc_reset(&r->enc);
        (void)pg_enc_pmi1_result(&r->enc, reply, -1, "reply_cannot_be_encoded_in_pmi1");
    }
    return pg_pmi_send(peer, &r->enc);
}

static int pmi1_refuse(pg_peer_t *peer, pg_cmd_t reply, int rc, const char *text)
{
    pg_pmi_reply_t r;

    return pmi1_send(peer, &r, pg_enc_pmi1_result(pg_pmi_reply_init(&r), reply, rc, text), reply);
}

/* The dialect's refusal (pg_pmi_handler.h): PMI-1 echoes no thrid. */
static int pmi1_refuse_err(pg_peer_t *peer, pg_cmd_t reply, pg_str_t thrid,
                           const pg_pmi_err_t *err, const char *text)
{
    (void)thrid;
    return pmi1_refuse(peer, reply, err->pmi1_rc, text);
}

static int pmi1_refuse_status(pg_peer_t *peer, pg_cmd_t reply, pmix_status_t st)
{
    return pg_pmi_refuse_status(&pmi1_dialect, peer, reply, (pg_str_t){ NULL, 0 }, st);
}

static int pmi1_require(pg_peer_t *peer, const pg_msg_t *msg, const char *key, char *buf,
                        size_t cap, pg_cmd_t reply)
{
    return pg_pmi_require(&pmi1_dialect, peer, msg, key, buf, cap, reply);
}

/* ---- version handshake and job facts --------------------------------- */

/* 1.0 and 1.1 (and 1.x clients that negotiate down from the answer) are
 * served as 1.1.  Anything else gets rc=-1: an rc=0 would make a client of
 * another version go on and hang (docs/wire-protocol.md, "Which framing,
 * and the init handshake"; quirk Q1). */
static int pmi1_init(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    long version, subversion;
    pg_pmi_reply_t r;
    bool ok = pg_str_to_long(pg_msg_get(msg, "pmi_version"), &version) == 0 &&
              pg_str_to_long(pg_msg_get(msg, "pmi_subversion"), &subversion) == 0 &&
              version == 1 && subversion >= 0;

    s->keyval_cache = ok && pg_str_eq(pg_msg_get(msg, PG_PMI1_KEYVAL_CACHE_ATTR), "yes");
    if (ok && pg_str_eq(pg_msg_get(msg, PG_SHM_READER_ATTR), "yes"))
        pg_peer_reads_segment(peer);
    return pmi1_send(peer, &r,
                     pg_enc_pmi1_response_to_init(pg_pmi_reply_init(&r), ok ? 0 : -1, 1, 1),
                     PG_CMD_PMI1_RESPONSE_TO_INIT);
}

/* PMI_PORT mode: the gateway identified the rank from pmiid already. */
static int pmi1_initack(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    pg_pmi_reply_t r;

    (void)s;
    (void)msg;
    return pmi1_send(peer, &r,
                     pg_enc_pmi1_initack(pg_pmi_reply_init(&r), peer->job->size,
                                         peer->rank, 0),
                     PG_CMD_PMI1_SET);
}

static int pmi1_get_maxes(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    pg_pmi_reply_t r;

    (void)s;
    (void)msg;
    return pmi1_send(peer, &r, pg_enc_pmi1_maxes(pg_pmi_reply_init(&r)), PG_CMD_PMI1_MAXES);
}

static int pmi1_get_appnum(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    pg_pmi_reply_t r;
    int appnum = pg_peer_appnum(peer);

    (void)s;
    (void)msg;
    return pmi1_send(peer, &r, pg_enc_pmi1_appnum(pg_pmi_reply_init(&r), appnum),
                     PG_CMD_PMI1_APPNUM);
}

static int pmi1_get_my_kvsname(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    pg_pmi_reply_t r;

    (void)s;
    (void)msg;
    return pmi1_send(peer, &r,
                     pg_enc_pmi1_my_kvsname(pg_pmi_reply_init(&r), peer->job->kvsname),
                     PG_CMD_PMI1_MY_KVSNAME);
}

/* The job size unless the launcher was told otherwise (hydra says -1,
 * which leaves MPI_UNIVERSE_SIZE unset). */
static int pmi1_get_universe_size(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    pg_pmi_reply_t r;

    (void)s;
    (void)msg;
    return pmi1_send(peer, &r,
                     pg_enc_pmi1_universe_size(pg_pmi_reply_init(&r),
                                               peer->job->universe_size),
                     PG_CMD_PMI1_UNIVERSE_SIZE);
}

/* ---- put / get ----------------------------------------------------------- */

/* put(GLOBAL) and commit at once; kvsname is ignored as hydra and Slurm do.
 * A missing value= stores the empty string (as H4.0 does). */
static int pmi1_put(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    char key[PG_PMI1_KEYLEN_MAX + 1], value[PG_PMI1_VALLEN_MAX + 1];
    pg_str_t val = pg_msg_get(msg, "value");
    pg_engine_t *engine = peer->job->engine;
    pg_proc_t proc = pg_pmi_proc(peer);
    pg_value_t v;
    pmix_status_t st;
    pg_pmi_reply_t r;

    (void)s;
    if (pmi1_require(peer, msg, "key", key, sizeof(key), PG_CMD_PMI1_PUT_RESULT) != 0)
        return PG_HANDLER_OK;
    if (val.ptr == NULL)
        val = (pg_str_t){ "", 0 };
    if (pg_pmi_cstr(val, value, sizeof(value)) != 0)
        return pmi1_refuse(peer, PG_CMD_PMI1_PUT_RESULT, -1, "invalid_value"), PG_HANDLER_OK;
    if (!pg_enc_pmi1_value_sendable(value)) /* accept only what a get can return */
        return pmi1_refuse(peer, PG_CMD_PMI1_PUT_RESULT, -1,
                           "value_too_long_to_be_read_back_over_pmi1"), PG_HANDLER_OK;
    v = pg_value_bytes(PMIX_STRING, value, val.len);
    st = pg_put(engine, &proc, PMIX_GLOBAL, key, &v, 0);
    if (st == PMIX_SUCCESS)
        st = pg_commit(engine, &proc);
    if (st != PMIX_SUCCESS)
        return pmi1_refuse_status(peer, PG_CMD_PMI1_PUT_RESULT, st), PG_HANDLER_OK;
    pmi1_send(peer, &r, pg_enc_pmi1_put_result(pg_pmi_reply_init(&r), 0, "success"),
              PG_CMD_PMI1_PUT_RESULT);
    return PG_HANDLER_OK;
}

/* get_result for a found value: value= last, and the line must fit MPICH's
 * 1024-byte read buffer or the client would misparse it (a PMI-2 put or a
 * PMIx commit can store what a PMI-1 get cannot carry). */
static void pmi1_send_value(pg_peer_t *peer, const pg_value_t *value)
{
    char scratch[64], text[PG_PMI1_VALLEN_MAX + 1];
    pg_pmi_reply_t r;
    pg_str_t s;
    int rc = -1;

    pg_enc_t *e = pg_pmi_reply_init(&r);
    if (pg_pmi_value_text(value, scratch, sizeof(scratch), &s) == 0 &&
        pg_pmi_cstr(s, text, sizeof(text)) == 0 && pg_enc_pmi1_value_sendable(text))
        rc = pg_enc_pmi1_get_result(e, text);
    if (rc != 0) {
        pg_enc_begin(e, PG_CMD_PMI1_GET_RESULT);
        pg_enc_add_long(e, "rc", -1);
        pg_enc_add(e, "msg", "value_cannot_be_sent_over_pmi1");
        pg_enc_add(e, "value", "unknown");
        rc = pg_enc_end(e);
    }
    pmi1_send(peer, &r, rc, PG_CMD_PMI1_GET_RESULT);
}

static void pmi1_send_get_failure(pg_peer_t *peer, pmix_status_t st, const char *key)
{
    const pg_pmi_err_t *err = pg_pmi_status_err(st);
    pg_pmi_reply_t r;
    pg_enc_t *e = pg_pmi_reply_init(&r);
    int rc;

    if (st == PMIX_ERR_NOT_FOUND) {
        rc = pg_enc_pmi1_get_result_missing(e, (pg_str_t){ key, (uint32_t)strlen(key) });
    } else {
        pg_enc_begin(e, PG_CMD_PMI1_GET_RESULT);
        pg_enc_add_long(e, "rc", err->pmi1_rc);
        pg_enc_add(e, "msg", err->msg);
        pg_enc_add(e, "value", "unknown");
        rc = pg_enc_end(e);
    }
    pmi1_send(peer, &r, rc, PG_CMD_PMI1_GET_RESULT);
}

/* What a get's callback needs.  PMI-1 gets are IMMEDIATE, so the engine
 * answers before pg_get returns: this lives on the handler's stack and the
 * connection and key are still valid (no request record per get). */
typedef struct pmi1_get_now {
    pg_peer_t *peer;
    const char *key;
} pmi1_get_now_t;

static void pmi1_get_done(pmix_status_t status, const pg_value_t *value, pmix_rank_t poster,
                          void *cbdata)
{
    const pmi1_get_now_t *now = cbdata;

    (void)poster;
    if (status == PMIX_SUCCESS && value != NULL)
        pmi1_send_value(now->peer, value);
    else
        pmi1_send_get_failure(now->peer, status == PMIX_SUCCESS ? PMIX_ERR_NOT_FOUND : status,
                              now->key);
}

/* A PMI-1 get never waits (every PMI-1 server fails a missing key at once):
 * an IMMEDIATE RANK_UNDEF lookup.  Job attributes come first. */
static int pmi1_get(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    char key[PG_PMI1_KEYLEN_MAX + 1];
    pg_engine_t *engine = peer->job->engine;
    pg_proc_t proc = pg_pmi_proc(peer);
    pg_proc_t target = { proc.nspace, PMIX_RANK_UNDEF };
    pmi1_get_now_t now = { peer, key };
    pg_get_req_t q;
    pg_value_t v;

    (void)s;
    if (pmi1_require(peer, msg, "key", key, sizeof(key), PG_CMD_PMI1_GET_RESULT) != 0)
        return PG_HANDLER_OK;
    if (pg_ns_attr(engine, proc.nspace, key, &v) == PMIX_SUCCESS) {
        pmi1_send_value(peer, &v);
        return PG_HANDLER_OK;
    }
    pg_get_req_init(&q, &proc, &target, key);
    q.flags = PG_GET_IMMEDIATE;
    /* IMMEDIATE never holds, so the engine reads no clock: `now` is 0 */
    (void)pg_get(engine, &q, 0, pmi1_get_done, &now); /* answered before it returns */
    return PG_HANDLER_OK;
}

/* Legacy (gforker only): pmigate keeps no enumerable KVS for PMI-1, so the
 * walk is always at its end. */
static int pmi1_getbyidx(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    pg_pmi_reply_t r;
    pg_enc_t *e = pg_pmi_reply_init(&r);

    (void)s;
    (void)msg;
    pg_enc_begin(e, PG_CMD_PMI1_GETBYIDX_RESULTS);
    pg_enc_add_long(e, "rc", -1);
    pg_enc_add(e, "reason", "no_more_keyvals");
    return pmi1_send(peer, &r, pg_enc_end(e), PG_CMD_PMI1_GETBYIDX_RESULTS), PG_HANDLER_OK;
}

/* ---- barrier -------------------------------------------------------------- */

/* Whether a pair can travel in a PMI-1 line (no separators inside). */
static bool pmi1_pair_ok(const char *key, pg_str_t val)
{
    return strpbrk(key, " =\n") == NULL && memchr(val.ptr, ' ', val.len) == NULL &&
           memchr(val.ptr, '\n', val.len) == NULL && memchr(val.ptr, '\0', val.len) == NULL;
}

/* hydra's keyval_cache: the epoch's new pairs, as many lines as needed to
 * keep each under the client's line and token limits.  A pair that cannot
 * fit any line is left out: the client then asks for it with get. */
static void pmi1_send_keyval_cache(pg_peer_t *peer, const pg_fence_keys_t *keys)
{
    char line[PG_PMI1_REPLY_LINE_MAX + 1], scratch[64], text[PG_PMI1_VALLEN_MAX + 1];
    size_t cursor = 0, ntok = 0;
    pmix_rank_t rank;
    const char *key;
    pg_value_t v;
    pg_enc_t e;

    pg_enc_init(&e, line, sizeof(line));
    while (pg_fence_keys_next(keys, &cursor, &rank, &key, &v)) {
        pg_str_t val;
        size_t need;

        if (pg_pmi_value_text(&v, scratch, sizeof(scratch), &val) != 0 || !pmi1_pair_ok(key, val) ||
            pg_pmi_cstr(val, text, sizeof(text)) != 0)
            continue;
        need = strlen(key) + 1 + val.len + 1; /* " key=value" */
        if (e.open && (e.pos - e.len + need + 1 > PG_PMI1_REPLY_LINE_MAX ||
                       ntok + 1 >= PG_PMI1_REPLY_TOKENS_MAX)) {
            if (pg_enc_end(&e) == 0)
                pg_pmi_send(peer, &e);
            pg_enc_reset(&e);
            ntok = 0;
        }
        if (!e.open)
            pg_enc_begin(&e, PG_CMD_PMI1_KEYVAL_CACHE);
        if (e.pos - e.len + need + 1 > PG_PMI1_REPLY_LINE_MAX)
            continue; /* too long even for a line of its own */
        pg_enc_add(&e, key, text);
        ntok++;
    }
    if (e.open && ntok > 0 && pg_enc_end(&e) == 0)
        pg_pmi_send(peer, &e);
}

static void pmi1_barrier_done(pmix_status_t status, const pg_fence_keys_t *keys, void *cbdata)
{
    pg_pmi_req_t *req = cbdata;
    pg_peer_t *peer = pg_pmi_req_peer(req);
    pg_pmi_reply_t r;

    if (peer != NULL && status == PMIX_SUCCESS) {
        if (req->session->keyval_cache && keys != NULL)
            pmi1_send_keyval_cache(peer, keys);
        pmi1_send(peer, &r, pg_enc_pmi1_barrier_out(pg_pmi_reply_init(&r)),
                  PG_CMD_PMI1_BARRIER_OUT);
    } else if (peer != NULL) {
        pmi1_refuse_status(peer, PG_CMD_PMI1_BARRIER_OUT, status);
    }
    pg_pmi_req_free(req);
}

/* Commit, then a collecting fence over the whole job: barrier_out goes to
 * every rank only once the last one entered. */
static int pmi1_barrier_in(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    pg_engine_t *engine = peer->job->engine;
    pg_proc_t proc = pg_pmi_proc(peer);
    pg_pmi_req_t *req;
    pmix_status_t st;

    (void)msg;
    st = pg_commit(engine, &proc);
    if (st != PMIX_SUCCESS)
        return pmi1_refuse_status(peer, PG_CMD_PMI1_BARRIER_OUT, st), PG_HANDLER_OK;
    req = pg_pmi_req_new(s, PG_CMD_PMI1_BARRIER_IN, (pg_str_t){ NULL, 0 });
    if (req == NULL)
        return pmi1_refuse_status(peer, PG_CMD_PMI1_BARRIER_OUT, PMIX_ERR_NOMEM), PG_HANDLER_OK;
    st = pg_fence_join(engine, &proc, NULL, 0, PG_FENCE_COLLECT, 0, pg_peer_now(peer),
                       pmi1_barrier_done, req);
    if (st != PMIX_SUCCESS && st != PMIX_OPERATION_IN_PROGRESS) {
        pg_pmi_req_free(req); /* refused at once: the callback will not run */
        pmi1_refuse_status(peer, PG_CMD_PMI1_BARRIER_OUT, st);
    }
    return PG_HANDLER_OK;
}

/* ---- life cycle ------------------------------------------------------------ */

static int pmi1_finalize(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    pg_pmi_reply_t r;

    (void)s;
    (void)msg;
    pmi1_send(peer, &r, pg_enc_pmi1_finalize_ack(pg_pmi_reply_init(&r)), PG_CMD_PMI1_FINALIZE_ACK);
    return pg_pmi_finalize(peer);
}

/* No reply (the client does not wait for one); the job ends with exitcode,
 * after the PMIx ranks of the job heard of it (pg_peer_abort). */
static int pmi1_abort(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    char text[PG_PMI_ABORT_MSG_MAX + 1];
    int code = pg_pmi_abort_args(msg, pg_msg_get(msg, "message"), text);

    (void)s;
    pg_peer_abort(peer, code, text[0] ? text : NULL);
    return PG_HANDLER_OK;
}

/* ---- name service ------------------------------------------------------------ */

static void pmi1_publish_done(pmix_status_t status, void *cbdata)
{
    pg_pmi_req_t *req = cbdata;
    pg_peer_t *peer = pg_pmi_req_peer(req);
    const pg_pmi_err_t *err = pg_pmi_status_err(status);
    pg_pmi_reply_t r;

    if (peer != NULL)
        pmi1_send(peer, &r,
                  pg_enc_pmi1_publish_result(pg_pmi_reply_init(&r), err->pmi1_rc, err->msg),
                  PG_CMD_PMI1_PUBLISH_RESULT);
    pg_pmi_req_free(req);
}

static int pmi1_publish_name(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    char service[PG_PMI1_KEYLEN_MAX + 1], port[PG_PMI1_VALLEN_MAX + 1];
    pg_proc_t proc = pg_pmi_proc(peer);
    pg_pmi_req_t *req;
    pg_value_t v;

    if (pmi1_require(peer, msg, "service", service, sizeof(service), PG_CMD_PMI1_PUBLISH_RESULT) ||
        pmi1_require(peer, msg, "port", port, sizeof(port), PG_CMD_PMI1_PUBLISH_RESULT))
        return PG_HANDLER_OK;
    req = pg_pmi_req_new(s, msg->cmd, pg_msg_op_id(msg));
    if (req == NULL)
        return pg_pmi_refuse_status(&pmi1_dialect, peer, PG_CMD_PMI1_PUBLISH_RESULT,
                                    pg_msg_op_id(msg), PMIX_ERR_NOMEM),
               PG_HANDLER_OK;
    v = pg_value_string(port);
    (void)pg_publish(peer->job->engine, &proc, service, &v, pmi1_publish_done, req);
    return PG_HANDLER_OK;
}

static void pmi1_unpublish_done(pmix_status_t status, void *cbdata)
{
    pg_pmi_req_t *req = cbdata;
    pg_peer_t *peer = pg_pmi_req_peer(req);
    pg_pmi_reply_t r;
    int rc;

    if (peer == NULL)
        goto out;
    if (status == PMIX_ERR_NOT_FOUND) /* hydra's answer for an unknown service */
        rc = pg_enc_pmi1_unpublish_result(pg_pmi_reply_init(&r), 1, "service_not_found");
    else
        rc = pg_enc_pmi1_unpublish_result(pg_pmi_reply_init(&r),
                                          pg_pmi_status_err(status)->pmi1_rc,
                                          pg_pmi_status_err(status)->msg);
    pmi1_send(peer, &r, rc, PG_CMD_PMI1_UNPUBLISH_RESULT);
out:
    pg_pmi_req_free(req);
}

static int pmi1_unpublish_name(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    char service[PG_PMI1_KEYLEN_MAX + 1];
    pg_proc_t proc = pg_pmi_proc(peer);
    pg_pmi_req_t *req;

    if (pmi1_require(peer, msg, "service", service, sizeof(service), PG_CMD_PMI1_UNPUBLISH_RESULT))
        return PG_HANDLER_OK;
    req = pg_pmi_req_new(s, msg->cmd, pg_msg_op_id(msg));
    if (req == NULL)
        return pg_pmi_refuse_status(&pmi1_dialect, peer, PG_CMD_PMI1_UNPUBLISH_RESULT,
                                    pg_msg_op_id(msg), PMIX_ERR_NOMEM),
               PG_HANDLER_OK;
    (void)pg_unpublish(peer->job->engine, &proc, service, pmi1_unpublish_done, req);
    return PG_HANDLER_OK;
}

static void pmi1_lookup_done(pmix_status_t status, const pg_value_t *value,
                             const pg_proc_t *publisher, void *cbdata)
{
    char port[PG_PMI1_VALLEN_MAX + 1];
    pg_pmi_req_t *req = cbdata;
    pg_peer_t *peer = pg_pmi_req_peer(req);
    pg_pmi_reply_t r;
    int rc, found;

    (void)publisher;
    if (peer == NULL)
        goto out;
    pg_pmi_reply_init(&r);
    found = pg_pmi_lookup_port(status, value, port, sizeof(port));
    if (found == 0)
        rc = pg_enc_pmi1_lookup_result(&r.enc, 0, "success", port);
    else if (found == 1)
        rc = pg_enc_pmi1_lookup_result(&r.enc, 1, "service_not_found", NULL);
    else
        rc = pg_enc_pmi1_lookup_result(&r.enc, pg_pmi_status_err(status)->pmi1_rc,
                                       pg_pmi_status_err(status)->msg, NULL);
    pmi1_send(peer, &r, rc, PG_CMD_PMI1_LOOKUP_RESULT);
out:
    pg_pmi_req_free(req);
}

static int pmi1_lookup_name(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    return pg_pmi_lookup(&pmi1_dialect, s, peer, msg, "service", PG_CMD_PMI1_LOOKUP_RESULT,
                         pmi1_lookup_done);
}

/* ---- spawn ------------------------------------------------------------------- */

/* spawn_result rc=... [jobid=...] errcodes=... (Slurm's form; hydra's
 * clients read errcodes when present and assume zeros otherwise). */
static void pmi1_spawn_done(const pg_spawn_result_t *res, void *cbdata)
{
    pg_pmi_req_t *req = cbdata;
    pg_peer_t *peer = pg_pmi_req_peer(req);
    pg_pmi_reply_t r;
    int rc = res->rc == 0 ? 0 : pg_pmi_status_err(res->rc)->pmi1_rc;

    if (peer != NULL)
        pmi1_send(peer, &r,
                  pg_enc_pmi1_spawn_result(pg_pmi_reply_init(&r), rc != 0 || res->rc == 0 ? rc : -1,
                                           res->jobid, res->errcodes,
                                           res->errcodes != NULL ? res->nprocs : 0),
                  PG_CMD_PMI1_SPAWN_RESULT);
    pg_pmi_req_free(req);
}

/* One mcmd=spawn block; the reply comes once, after the last
 * (spawnssofar = totspawns).  A bad block ends the spawn with a refusal
 * and drops the blocks so far. */
static int pmi1_spawn(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    char err[160];
    pg_pmi_req_t *req;
    int last;

    if (peer->ops->spawn == NULL)
        return pmi1_refuse(peer, PG_CMD_PMI1_SPAWN_RESULT, -1, "spawn_is_not_supported_by_this_host"),
               PG_HANDLER_OK;
    if (s->spawn == NULL && (s->spawn = pg_pmi_spawn_new()) == NULL)
        return pmi1_refuse_status(peer, PG_CMD_PMI1_SPAWN_RESULT, PMIX_ERR_NOMEM), PG_HANDLER_OK;
    last = pg_pmi_spawn_add_pmi1_block(s->spawn, msg, err, sizeof(err));
    if (last == 0)
        return PG_HANDLER_OK;
    if (last < 0) {
        pg_pmi_sanitize(err);
        pmi1_refuse(peer, PG_CMD_PMI1_SPAWN_RESULT, -1, err);
    } else if ((req = pg_pmi_req_new(s, PG_CMD_PMI1_SPAWN, (pg_str_t){ NULL, 0 })) == NULL) {
        pmi1_refuse_status(peer, PG_CMD_PMI1_SPAWN_RESULT, PMIX_ERR_NOMEM);
    } else {
        peer->ops->spawn(peer, pg_pmi_spawn_req(s->spawn), pmi1_spawn_done, req); /* done always runs */
    }
    pg_pmi_spawn_free(s->spawn);
    s->spawn = NULL;
    return PG_HANDLER_OK;
}

/* ---- not (yet) supported ---------------------------------------------------- */

/* create_kvs, destroy_kvs, singinit: parsed, answered with a clear
 * refusal. */
static int pmi1_not_supported(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg)
{
    (void)s;
    return pg_pmi_not_supported(&pmi1_dialect, peer, msg);
}

/* ---- dispatch ------------------------------------------------------------------ */

static const pg_pmi_cmd_t pmi1_cmds[PG_CMD_COUNT] = {
    [PG_CMD_PMI1_INIT] = { pmi1_init, PG_CMD_PMI1_RESPONSE_TO_INIT, false },
    [PG_CMD_PMI1_INITACK] = { pmi1_initack, PG_CMD_PMI1_SET, false },
    [PG_CMD_PMI1_GET_MAXES] = { pmi1_get_maxes, PG_CMD_PMI1_MAXES, false },
    [PG_CMD_PMI1_GET_APPNUM] = { pmi1_get_appnum, PG_CMD_PMI1_APPNUM, false },
    [PG_CMD_PMI1_GET_MY_KVSNAME] = { pmi1_get_my_kvsname, PG_CMD_PMI1_MY_KVSNAME, false },
    [PG_CMD_PMI1_GET_UNIVERSE_SIZE] = { pmi1_get_universe_size, PG_CMD_PMI1_UNIVERSE_SIZE, false },
    [PG_CMD_PMI1_PUT] = { pmi1_put, PG_CMD_PMI1_PUT_RESULT, true },
    [PG_CMD_PMI1_GET] = { pmi1_get, PG_CMD_PMI1_GET_RESULT, true },
    [PG_CMD_PMI1_GETBYIDX] = { pmi1_getbyidx, PG_CMD_PMI1_GETBYIDX_RESULTS, false },
    [PG_CMD_PMI1_BARRIER_IN] = { pmi1_barrier_in, PG_CMD_PMI1_BARRIER_OUT, true },
    [PG_CMD_PMI1_FINALIZE] = { pmi1_finalize, PG_CMD_PMI1_FINALIZE_ACK, false },
    [PG_CMD_PMI1_ABORT] = { pmi1_abort, PG_CMD_UNKNOWN, false },
    [PG_CMD_PMI1_PUBLISH_NAME] = { pmi1_publish_name, PG_CMD_PMI1_PUBLISH_RESULT, true },
    [PG_CMD_PMI1_UNPUBLISH_NAME] = { pmi1_unpublish_name, PG_CMD_PMI1_UNPUBLISH_RESULT, true },
    [PG_CMD_PMI1_LOOKUP_NAME] = { pmi1_lookup_name, PG_CMD_PMI1_LOOKUP_RESULT, true },
    [PG_CMD_PMI1_SPAWN] = { pmi1_spawn, PG_CMD_PMI1_SPAWN_RESULT, false },
    [PG_CMD_PMI1_CREATE_KVS] = { pmi1_not_supported, PG_CMD_PMI1_NEWKVS, false },
    [PG_CMD_PMI1_DESTROY_KVS] = { pmi1_not_supported, PG_CMD_PMI1_KVS_DESTROYED, false },
    [PG_CMD_PMI1_SINGINIT] = { pmi1_not_supported, PG_CMD_PMI1_SINGINIT_INFO, false },
};

static const pg_pmi_dialect_t pmi1_dialect = {
    .cmds = pmi1_cmds,
    .abort = PG_CMD_PMI1_ABORT,
    .refuse = pmi1_refuse_err,
};

static int pmi1_on_message(pg_peer_t *peer, pg_msg_t *msg, int parse_rc)
{
    return pg_pmi_dispatch(&pmi1_dialect, peer, msg, parse_rc);
}

const pg_proto_handler_t pg_pmi1_handler = {
    .name = "PMI-1",
    .on_open = pg_pmi_on_open,
    .on_message = pmi1_on_message,
    .on_close = pg_pmi_on_close,
};

/*
 * pg_pmix_srv_fence: the key exchange of the PMIx handler -- commit (the
 * puts staged since the last one), fence (with or without data collection)
 * and get (held until the key is posted, or answered at once with
 * PMIX_IMMEDIATE), with the directives and qualifiers a get honours.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/pg_engine.h"
#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server_int.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"

/* ---- get directives ---------------------------------------------------- */

/* The node id of a PMIX_HOSTNAME qualifier: its index in the job's node list. */
static uint32_t node_of_host(pg_engine_t *e, const pg_proc_t *self, const char *host);

typedef struct get_directives {
    bool hostname_qualifier;
    char *hostname; /* borrowed from the info array; NULL if the string was */
} get_directives_t;

static void get_apply_info(pg_get_req_t *q, const pmix_info_t *info, size_t n,
                           get_directives_t *d)
{
    for (size_t i = 0; i < n; i++) {
        const pmix_info_t *x = &info[i];
        uint64_t u;

        if (pg_pmix_info_is(x, PMIX_IMMEDIATE) && pg_pmix_info_true(x))
            q->flags |= PG_GET_IMMEDIATE;
        else if (pg_pmix_info_is(x, PMIX_GET_REFRESH_CACHE) && pg_pmix_info_true(x))
            q->flags |= PG_GET_REFRESH;
        else if (pg_pmix_info_is(x, PMIX_TIMEOUT))
            q->timeout = pg_pmix_info_timeout(x);
        else if (pg_pmix_info_is(x, PMIX_DATA_SCOPE) && x->value.type == PMIX_SCOPE)
            q->scope = x->value.data.scope;
        else if (pg_pmix_info_is(x, PMIX_SESSION_INFO) && pg_pmix_info_true(x))
            q->realm = PG_REALM_SESSION;
        else if (pg_pmix_info_is(x, PMIX_JOB_INFO) && pg_pmix_info_true(x))
            q->realm = PG_REALM_JOB;
        else if (pg_pmix_info_is(x, PMIX_APP_INFO) && pg_pmix_info_true(x))
            q->realm = PG_REALM_APP;
        else if (pg_pmix_info_is(x, PMIX_NODE_INFO) && pg_pmix_info_true(x))
            q->realm = PG_REALM_NODE;
        else if (pg_pmix_info_is(x, PMIX_APPNUM) && pg_pmix_value_uint(&x->value, &u) &&
                 u < UINT32_MAX)
            q->appnum = (uint32_t)u;
        else if (pg_pmix_info_is(x, PMIX_NODEID) && pg_pmix_value_uint(&x->value, &u) &&
                 u < UINT32_MAX)
            q->nodeid = (uint32_t)u;
        else if (pg_pmix_info_is(x, PMIX_HOSTNAME) && x->value.type == PMIX_STRING) {
            d->hostname_qualifier = true;
            d->hostname = x->value.data.string;
        }
    }
}

/* ---- commit ------------------------------------------------------------- */

/* One staged put: scope, key, value. */
static pmix_status_t commit_one(pg_pmix_in_t *in, pg_engine_t *e, const pg_proc_t *self)
{
    pmix_scope_t scope = PMIX_SCOPE_UNDEF;
    char *key = NULL;
    pmix_value_t val;
    pmix_data_buffer_t scratch;
    pg_value_t ev;
    pmix_status_t rc;

    PMIX_VALUE_CONSTRUCT(&val);
    pg_buffer_construct(&scratch);
    rc = pg_pmix_unpack_one(in->args, &scope, PMIX_SCOPE);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_unpack_one(in->args, &key, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_unpack_one(in->args, &val, PMIX_VALUE);
    if (rc == PMIX_SUCCESS && key == NULL)
        rc = PMIX_ERR_BAD_PARAM;
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_value_to_engine(&val, &scratch, &ev);
    if (rc == PMIX_SUCCESS)
        rc = pg_put(e, self, scope, key, &ev, 0);
    free(key);
    PMIX_VALUE_DESTRUCT(&val);
    pg_buffer_destruct(&scratch);
    return rc;
}

/* Every put staged since the last commit, then the commit: the first
 * failing put's status is the answer, the others still count. */
int pg_pmix_serve_commit(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
    pmix_status_t first_err = PMIX_SUCCESS, rc;
    uint32_t n = 0;

    if (e == NULL)
        return pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_ERR_NOT_SUPPORTED),
               PG_HANDLER_OK;
    rc = pg_pmix_unpack_one(in->args, &n, PMIX_UINT32);
    if (rc != PMIX_SUCCESS || n > pg_buffer_unread(in->args))
        return PG_HANDLER_FAIL;
    for (uint32_t i = 0; i < n; i++) {
        rc = commit_one(in, e, &self);
        if (rc == PMIX_ERR_UNPACK_FAILURE || rc == PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER ||
            rc == PMIX_ERR_TYPE_MISMATCH)
            return PG_HANDLER_FAIL; /* the stream is not what the client library sends */
        if (rc != PMIX_SUCCESS && first_err == PMIX_SUCCESS)
            first_err = rc;
    }
    rc = pg_commit(e, &self);
    if (first_err == PMIX_SUCCESS)
        first_err = rc;
    return pg_pmix_reply_status(in->peer, in->cmd, in->id, first_err), PG_HANDLER_OK;
}

/* ---- fence ------------------------------------------------------------ */

static void fence_done(pmix_status_t status, const pg_fence_keys_t *keys, void *cbdata)
{
    pg_pmix_req_t *r = cbdata;

    (void)keys;
    if (r->s != NULL)
        (void)pg_pmix_reply_status(r->s->peer, r->cmd, r->id, status);
    pg_pmix_req_free(r);
}

/* Participants as engine procs: an empty nspace means the caller's own. */

int pg_pmix_serve_fence(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
    pmix_proc_t *procs = NULL;
    pmix_info_t *info = NULL;
    size_t nprocs = 0, ninfo = 0;
    pg_proc_t *parts = NULL;
    pg_time_t timeout = 0;
    unsigned flags = 0;
    pg_pmix_req_t *r = NULL;
    pmix_status_t rc;
    int ret = PG_HANDLER_OK;

    if (pg_pmix_unpack_array(in->args, (void **)&procs, &nprocs, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    for (size_t i = 0; i < ninfo; i++) {
        if (pg_pmix_info_is(&info[i], PMIX_COLLECT_DATA) && pg_pmix_info_true(&info[i]))
            flags |= PG_FENCE_COLLECT;
        else if (pg_pmix_info_is(&info[i], PMIX_TIMEOUT))
            timeout = pg_pmix_info_timeout(&info[i]);
    }
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NOMEM;
    if (e != NULL && (parts = pg_pmix_procs_to_engine(procs, nprocs, self.nspace)) != NULL &&
        (r = pg_pmix_req_new(in)) != NULL) {
        rc = pg_fence_join(e, &self, nprocs > 0 ? parts : NULL, nprocs, flags, timeout,
                           pg_peer_now(in->peer), fence_done, r);
        if (rc == PMIX_SUCCESS)
            r = NULL; /* fence_done owns it now */
    }
    if (rc != PMIX_SUCCESS)
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, rc);
out:
    pg_pmix_req_free(r);
    free(parts);
    pg_pmix_array_free(procs, nprocs, PMIX_PROC);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return ret;
}

/* ---- get ------------------------------------------------------------- */

static void get_reply(pg_peer_t *peer, uint8_t cmd, uint32_t id, pmix_status_t status,
                      const pg_value_t *value, pmix_rank_t poster)
{
    pmix_data_buffer_t buf;
    pmix_value_t v;
    pmix_status_t rc;

    PMIX_VALUE_CONSTRUCT(&v);
    if (status == PMIX_SUCCESS)
        status = pg_pmix_value_from_engine(value, &v);
    pg_buffer_construct(&buf);
    rc = pg_pmix_msg_begin_reply(&buf, cmd, id, status);
    if (rc == PMIX_SUCCESS && status == PMIX_SUCCESS) {
        rc = pg_pmix_pack_one(&buf, &v, PMIX_VALUE);
        if (rc == PMIX_SUCCESS)
            rc = pg_pmix_pack_one(&buf, &poster, PMIX_PROC_RANK);
    }
    PMIX_VALUE_DESTRUCT(&v);
    if (rc == PMIX_SUCCESS)
        (void)pg_pmix_reply_send(peer, &buf);
    else {
        pg_buffer_destruct(&buf);
        (void)pg_pmix_reply_status(peer, cmd, id, rc);
    }
}

static void get_done(pmix_status_t status, const pg_value_t *value, pmix_rank_t poster,
                     void *cbdata)
{
    pg_pmix_req_t *r = cbdata;

    if (r->s != NULL)
        get_reply(r->s->peer, r->cmd, r->id, status, value, poster);
    pg_pmix_req_free(r);
}

static void value_of_node_list(pmix_status_t status, const pg_value_t *value,
                               pmix_rank_t poster, void *cbdata)
{
    (void)poster;
    if (status == PMIX_SUCCESS && value->type == PMIX_STRING)
        *(char **)cbdata = strndup(value->data, value->size);
}

static uint32_t node_of_host(pg_engine_t *e, const pg_proc_t *self, const char *host)
{
    pg_proc_t job = { self->nspace, PMIX_RANK_WILDCARD };
    char *list = NULL, *save = NULL;
    uint32_t id = UINT32_MAX - 1; /* a node no job has: the get answers NOT_FOUND */
    pg_get_req_t q;

    pg_get_req_init(&q, self, &job, PMIX_NODE_LIST);
    q.flags |= PG_GET_IMMEDIATE;
    (void)pg_get(e, &q, 0, value_of_node_list, &list); /* IMMEDIATE: no clock read */
    if (list == NULL)
        return id;
    uint32_t n = 0;
    for (char *tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save), n++)
        if (strcmp(tok, host) == 0) {
            id = n;
            break;
        }
    free(list);
    return id;
}

int pg_pmix_serve_get(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
    pmix_proc_t target;
    char *key = NULL;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    bool nonblocking = false;
    get_directives_t d = { false, NULL };
    pg_get_req_t q;
    pg_pmix_req_t *r;
    int ret = PG_HANDLER_OK;

    memset(&target, 0, sizeof(target));
    if (pg_pmix_unpack_one(in->args, &target, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(in->args, &key, PMIX_STRING) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(in->args, &nonblocking, PMIX_BOOL) != PMIX_SUCCESS) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    if (e == NULL || key == NULL) { /* key NULL = "every key of the proc": not offered */
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_ERR_NOT_SUPPORTED);
        goto out;
    }
    pg_proc_t tgt = { target.nspace[0] != '\0' ? target.nspace : self.nspace, target.rank };
    pg_get_req_init(&q, &self, &tgt, key);
    get_apply_info(&q, info, ninfo, &d);
    if (d.hostname_qualifier && d.hostname == NULL) { /* a NULL string on the wire */
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_ERR_BAD_PARAM);
        goto out;
    }
    if (d.hostname_qualifier && PMIX_CHECK_RESERVED_KEY(key))
        q.nodeid = node_of_host(e, &self, d.hostname);
    if (nonblocking)
        q.flags |= PG_GET_NONBLOCKING;
    r = pg_pmix_req_new(in);
    if (r == NULL)
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_ERR_NOMEM);
    else
        (void)pg_get(e, &q, pg_peer_now(in->peer), get_done,
                     r); /* get_done always runs */
out:
    free(key);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return ret;
}

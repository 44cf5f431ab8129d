/*
 * pg_pmix_server: PMIx transport messages -> engine calls (see
 * pg_pmix_server.h and docs/pmix-transport.md).
 *
 * Each command is one function taking the unpacked-so-far request; it either
 * replies at once or parks a pmix_req_t that the engine's completion
 * answers.  Statuses are the engine's, unchanged: the engine speaks PMIx.
 */
#include "pmix/server/pg_pmix_server.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pmix/engine/pg_engine.h"
#include "pmix/pack/pg_pack.h"
#include "pmix/server/pg_pmix_value.h"
#include "pmix/transport/pg_pmix_msg.h"
#include "server/pg_peer_abort.h"

enum { NS_PER_SEC = 1000000000 };

typedef struct pmix_req pmix_req_t;

/* Handler data of one connection. */
typedef struct pmix_session {
    pg_peer_t *peer;       /* borrowed; valid until on_close */
    pmix_req_t *pending;   /* requests the engine still owes an answer */
    char **published;      /* keys this process published (for Unpublish(NULL)) */
    size_t npublished;
    uint64_t event_sub;    /* engine event subscription, 0 = none */
    bool inited;
} pmix_session_t;

/* A request answered later.  `s` is NULL once the connection has gone. */
struct pmix_req {
    pmix_req_t *prev, *next;
    pmix_session_t *s;
    uint8_t cmd;
    uint32_t id;
    /* lookups: one pg_lookup per key, answered together */
    pmix_pdata_t *pdata;
    size_t nkeys, outstanding, found;
    bool timed_out;
};

/* The decoded part of a request a command function works on. */
typedef struct pmix_in {
    pmix_session_t *s;
    pg_peer_t *peer;
    uint8_t cmd;
    uint32_t id;
    pmix_data_buffer_t *args; /* positioned after the header */
} pmix_in_t;

static void events_subscribe(pmix_session_t *s, pg_engine_t *e, const pg_proc_t *self);
static void events_unsubscribe(pmix_session_t *s);

/* ---- sessions and pending requests --------------------------------- */

static pmix_req_t *req_new(pmix_in_t *in)
{
    pmix_req_t *r = calloc(1, sizeof(*r));

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

static void req_free(pmix_req_t *r)
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
    free(r);
}

static void session_free(pmix_session_t *s)
{
    if (s == NULL)
        return;
    events_unsubscribe(s);
    /* the engine still owes these a completion: orphan them */
    for (pmix_req_t *r = s->pending, *next; r != NULL; r = next) {
        next = r->next;
        r->s = NULL;
        r->prev = r->next = NULL;
    }
    for (size_t i = 0; i < s->npublished; i++)
        free(s->published[i]);
    free(s->published);
    free(s);
}

static pg_proc_t session_proc(const pmix_session_t *s)
{
    pg_proc_t p = { s->peer->job->kvsname, (pmix_rank_t)s->peer->rank };

    return p;
}

/* ---- replies -------------------------------------------------------- */

/* A reply with nothing after the status. */
static int reply_send(pg_peer_t *peer, pmix_data_buffer_t *buf)
{
    int rc = -1;

    if (pg_pmix_msg_seal(buf) == PMIX_SUCCESS)
        rc = peer->ops->reply_send(peer, buf->base_ptr, buf->bytes_used);
    pg_buffer_destruct(buf);
    return rc;
}

static int reply_status(pg_peer_t *peer, uint8_t cmd, uint32_t id, pmix_status_t status)
{
    pmix_data_buffer_t buf;

    pg_buffer_construct(&buf);
    if (pg_pmix_msg_begin_reply(&buf, cmd, id, status) != PMIX_SUCCESS) {
        pg_buffer_destruct(&buf);
        return -1;
    }
    return reply_send(peer, &buf);
}

/* ---- directives ------------------------------------------------------ */

static bool info_is(const pmix_info_t *i, const char *key)
{
    return strncmp(i->key, key, PMIX_MAX_KEYLEN) == 0;
}

static bool info_true(const pmix_info_t *i)
{
    return pg_value_truth(&i->value) == PMIX_BOOL_TRUE;
}

static pg_time_t info_timeout(const pmix_info_t *i)
{
    uint64_t sec = 0;

    if (!pg_pmix_value_uint(&i->value, &sec) || sec == 0)
        return 0;
    return sec > UINT64_MAX / NS_PER_SEC ? UINT64_MAX : sec * NS_PER_SEC;
}

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

        if (info_is(x, PMIX_IMMEDIATE) && info_true(x))
            q->flags |= PG_GET_IMMEDIATE;
        else if (info_is(x, PMIX_GET_REFRESH_CACHE) && info_true(x))
            q->flags |= PG_GET_REFRESH;
        else if (info_is(x, PMIX_TIMEOUT))
            q->timeout = info_timeout(x);
        else if (info_is(x, PMIX_DATA_SCOPE) && x->value.type == PMIX_SCOPE)
            q->scope = x->value.data.scope;
        else if (info_is(x, PMIX_SESSION_INFO) && info_true(x))
            q->realm = PG_REALM_SESSION;
        else if (info_is(x, PMIX_JOB_INFO) && info_true(x))
            q->realm = PG_REALM_JOB;
        else if (info_is(x, PMIX_APP_INFO) && info_true(x))
            q->realm = PG_REALM_APP;
        else if (info_is(x, PMIX_NODE_INFO) && info_true(x))
            q->realm = PG_REALM_NODE;
        else if (info_is(x, PMIX_APPNUM) && pg_pmix_value_uint(&x->value, &u) && u < UINT32_MAX)
            q->appnum = (uint32_t)u;
        else if (info_is(x, PMIX_NODEID) && pg_pmix_value_uint(&x->value, &u) && u < UINT32_MAX)
            q->nodeid = (uint32_t)u;
        else if (info_is(x, PMIX_HOSTNAME) && x->value.type == PMIX_STRING) {
            d->hostname_qualifier = true;
            d->hostname = x->value.data.string;
        }
    }
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

        pg_get_req_init(&q, self, &target, init_keys[k]);
        q.flags |= PG_GET_IMMEDIATE;
        PMIX_LOAD_KEY(f->info[f->n].key, init_keys[k]);
        (void)pg_get(e, &q, 0, init_key_done, f); /* IMMEDIATE: no clock read */
    }
}

static int cmd_init(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);
    pmix_info_t job[NINIT_KEYS], own[NINIT_KEYS];
    info_fill_t fj = { job, 0 }, fo = { own, 0 };
    pmix_data_buffer_t buf;
    char *nspace = (char *)(self.nspace != NULL ? self.nspace : "");
    pmix_status_t rc;

    memset(job, 0, sizeof(job));
    memset(own, 0, sizeof(own));
    init_view(e, &self, PMIX_RANK_WILDCARD, &fj);
    init_view(e, &self, self.rank, &fo);
    in->s->inited = true;
    events_subscribe(in->s, e, &self);
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
        return reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
    }
    return reply_send(in->peer, &buf) == 0 ? PG_HANDLER_OK : PG_HANDLER_FAIL;
}

/* ---- commit ------------------------------------------------------------- */

/* One staged put: scope, key, value. */
static pmix_status_t commit_one(pmix_in_t *in, pg_engine_t *e, const pg_proc_t *self)
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
static int cmd_commit(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);
    pmix_status_t first_err = PMIX_SUCCESS, rc;
    uint32_t n = 0;

    if (e == NULL)
        return reply_status(in->peer, in->cmd, in->id, PMIX_ERR_NOT_SUPPORTED), PG_HANDLER_OK;
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
    return reply_status(in->peer, in->cmd, in->id, first_err), PG_HANDLER_OK;
}

/* ---- fence ------------------------------------------------------------ */

static void fence_done(pmix_status_t status, const pg_fence_keys_t *keys, void *cbdata)
{
    pmix_req_t *r = cbdata;

    (void)keys;
    if (r->s != NULL)
        (void)reply_status(r->s->peer, r->cmd, r->id, status);
    req_free(r);
}

/* Participants as engine procs: an empty nspace means the caller's own. */
static pg_proc_t *fence_participants(const pmix_proc_t *procs, size_t n, const char *own_ns)
{
    pg_proc_t *parts = calloc(n > 0 ? n : 1, sizeof(*parts));

    for (size_t i = 0; parts != NULL && i < n; i++) {
        parts[i].nspace = procs[i].nspace[0] != '\0' ? procs[i].nspace : own_ns;
        parts[i].rank = procs[i].rank;
    }
    return parts;
}

static int cmd_fence(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);
    pmix_proc_t *procs = NULL;
    pmix_info_t *info = NULL;
    size_t nprocs = 0, ninfo = 0;
    pg_proc_t *parts = NULL;
    pg_time_t timeout = 0;
    unsigned flags = 0;
    pmix_req_t *r = NULL;
    pmix_status_t rc;
    int ret = PG_HANDLER_OK;

    if (pg_pmix_unpack_array(in->args, (void **)&procs, &nprocs, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    for (size_t i = 0; i < ninfo; i++) {
        if (info_is(&info[i], PMIX_COLLECT_DATA) && info_true(&info[i]))
            flags |= PG_FENCE_COLLECT;
        else if (info_is(&info[i], PMIX_TIMEOUT))
            timeout = info_timeout(&info[i]);
    }
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NOMEM;
    if (e != NULL && (parts = fence_participants(procs, nprocs, self.nspace)) != NULL &&
        (r = req_new(in)) != NULL) {
        rc = pg_fence_join(e, &self, nprocs > 0 ? parts : NULL, nprocs, flags, timeout,
                           pg_peer_now(in->peer), fence_done, r);
        if (rc == PMIX_SUCCESS)
            r = NULL; /* fence_done owns it now */
    }
    if (rc != PMIX_SUCCESS)
        (void)reply_status(in->peer, in->cmd, in->id, rc);
out:
    req_free(r);
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
        (void)reply_send(peer, &buf);
    else {
        pg_buffer_destruct(&buf);
        (void)reply_status(peer, cmd, id, rc);
    }
}

static void get_done(pmix_status_t status, const pg_value_t *value, pmix_rank_t poster,
                     void *cbdata)
{
    pmix_req_t *r = cbdata;

    if (r->s != NULL)
        get_reply(r->s->peer, r->cmd, r->id, status, value, poster);
    req_free(r);
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

static int cmd_get(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);
    pmix_proc_t target;
    char *key = NULL;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    bool nonblocking = false;
    get_directives_t d = { false, NULL };
    pg_get_req_t q;
    pmix_req_t *r;
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
        (void)reply_status(in->peer, in->cmd, in->id, PMIX_ERR_NOT_SUPPORTED);
        goto out;
    }
    pg_proc_t tgt = { target.nspace[0] != '\0' ? target.nspace : self.nspace, target.rank };
    pg_get_req_init(&q, &self, &tgt, key);
    get_apply_info(&q, info, ninfo, &d);
    if (d.hostname_qualifier && d.hostname == NULL) { /* a NULL string on the wire */
        (void)reply_status(in->peer, in->cmd, in->id, PMIX_ERR_BAD_PARAM);
        goto out;
    }
    if (d.hostname_qualifier && PMIX_CHECK_RESERVED_KEY(key))
        q.nodeid = node_of_host(e, &self, d.hostname);
    if (nonblocking)
        q.flags |= PG_GET_NONBLOCKING;
    r = req_new(in);
    if (r == NULL)
        (void)reply_status(in->peer, in->cmd, in->id, PMIX_ERR_NOMEM);
    else
        (void)pg_get(e, &q, pg_peer_now(in->peer), get_done,
                     r); /* get_done always runs */
out:
    free(key);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return ret;
}

/* ---- name service ------------------------------------------------------ */

static void session_remember(pmix_session_t *s, const char *key)
{
    char **grown = realloc(s->published, (s->npublished + 1) * sizeof(*grown));
    char *copy = strdup(key);

    if (grown != NULL)
        s->published = grown;
    if (grown == NULL || copy == NULL) {
        free(copy);
        return; /* only Unpublish(NULL) loses track of it */
    }
    s->published[s->npublished++] = copy;
}

static void session_forget(pmix_session_t *s, const char *key)
{
    for (size_t i = 0; i < s->npublished; i++)
        if (strcmp(s->published[i], key) == 0) {
            free(s->published[i]);
            s->published[i] = s->published[--s->npublished];
            return;
        }
}

/* Publishes every non-directive entry; all or nothing. */
static pmix_status_t publish_all(pmix_session_t *s, pg_engine_t *e, const pmix_info_t *info,
                                 size_t n)
{
    pg_proc_t self = session_proc(s);
    pmix_status_t rc = PMIX_SUCCESS;
    size_t done = 0, count = 0;

    for (; done < n && rc == PMIX_SUCCESS; done++) {
        pmix_data_buffer_t scratch;
        pg_value_t v;

        if (PMIX_CHECK_RESERVED_KEY(info[done].key))
            continue; /* PMIX_RANGE, PMIX_PERSISTENCE, PMIX_TIMEOUT...: directives */
        pg_buffer_construct(&scratch);
        rc = pg_pmix_value_to_engine(&info[done].value, &scratch, &v);
        if (rc == PMIX_SUCCESS)
            rc = pg_publish(e, &self, info[done].key, &v);
        pg_buffer_destruct(&scratch);
        if (rc == PMIX_SUCCESS) {
            session_remember(s, info[done].key);
            count++;
        }
    }
    if (rc == PMIX_SUCCESS)
        return count > 0 ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM; /* nothing to publish */
    for (size_t i = 0; i + 1 < done; i++) /* undo this call's entries */
        if (!PMIX_CHECK_RESERVED_KEY(info[i].key)) {
            (void)pg_unpublish(e, &self, info[i].key);
            session_forget(s, info[i].key);
        }
    return rc;
}

static int cmd_publish(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    pmix_status_t rc;

    if (pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS)
        return PG_HANDLER_FAIL;
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : publish_all(in->s, e, info, ninfo);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
}

static void lookup_reply(pmix_req_t *r)
{
    pmix_status_t status = r->found == r->nkeys ? PMIX_SUCCESS
                           : r->found > 0       ? PMIX_ERR_PARTIAL_SUCCESS
                           : r->timed_out       ? PMIX_ERR_TIMEOUT
                                                : PMIX_ERR_NOT_FOUND;
    pmix_data_buffer_t buf;
    pmix_status_t rc;

    pg_buffer_construct(&buf);
    rc = pg_pmix_msg_begin_reply(&buf, r->cmd, r->id, status);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(&buf, r->pdata, r->nkeys, PMIX_PDATA);
    if (rc == PMIX_SUCCESS)
        (void)reply_send(r->s->peer, &buf);
    else {
        pg_buffer_destruct(&buf);
        (void)reply_status(r->s->peer, r->cmd, r->id, rc);
    }
}

/* Fills the pdata slot this key owns (SIZE_MAX: none, the starter's own
 * count); the last one answers. */
static void lookup_one_done(pmix_req_t *r, size_t slot, pmix_status_t status,
                            const pg_value_t *value, const pg_proc_t *publisher)
{
    pmix_pdata_t *pd = slot < r->nkeys ? &r->pdata[slot] : NULL;

    if (pd != NULL && status == PMIX_SUCCESS &&
        pg_pmix_value_from_engine(value, &pd->value) == PMIX_SUCCESS) {
        PMIX_LOAD_PROCID(&pd->proc, publisher->nspace, publisher->rank);
        r->found++;
    } else if (status == PMIX_ERR_TIMEOUT)
        r->timed_out = true;
    if (--r->outstanding > 0)
        return;
    if (r->s != NULL)
        lookup_reply(r);
    req_free(r);
}

typedef struct lookup_slot {
    pmix_req_t *r;
    size_t slot;
} lookup_slot_t;

static void lookup_cb(pmix_status_t status, const pg_value_t *value, const pg_proc_t *publisher,
                      void *cbdata)
{
    lookup_slot_t ls = *(lookup_slot_t *)cbdata;

    free(cbdata);
    lookup_one_done(ls.r, ls.slot, status, value, publisher);
}

static void lookup_start(pmix_req_t *r, pg_engine_t *e, const pg_proc_t *self, bool wait,
                         pg_time_t timeout)
{
    pg_peer_t *peer = r->s->peer;
    pg_time_t now = pg_peer_now(peer);

    r->outstanding = r->nkeys + 1; /* +1: callbacks may run inline */
    for (size_t i = 0; i < r->nkeys; i++) {
        lookup_slot_t *ls = malloc(sizeof(*ls));

        if (ls == NULL) {
            lookup_one_done(r, i, PMIX_ERR_NOMEM, NULL, NULL);
            continue;
        }
        *ls = (lookup_slot_t){ r, i };
        (void)pg_lookup(e, self, r->pdata[i].key, wait, timeout, now, lookup_cb, ls);
    }
    lookup_one_done(r, SIZE_MAX, PMIX_SUCCESS, NULL, NULL);
}

static int cmd_lookup(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);
    char **keys = NULL;
    pmix_info_t *info = NULL;
    size_t nkeys = 0, ninfo = 0;
    bool wait = false;
    pg_time_t timeout = 0;
    pmix_req_t *r = NULL;
    int ret = PG_HANDLER_OK;

    if (pg_pmix_unpack_array(in->args, (void **)&keys, &nkeys, PMIX_STRING) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    for (size_t i = 0; i < ninfo; i++) {
        if (info_is(&info[i], PMIX_WAIT))
            wait = true;
        else if (info_is(&info[i], PMIX_TIMEOUT))
            timeout = info_timeout(&info[i]);
    }
    for (size_t i = 0; i < nkeys; i++)
        if (keys[i] == NULL || keys[i][0] == '\0') {
            (void)reply_status(in->peer, in->cmd, in->id, PMIX_ERR_BAD_PARAM);
            goto out;
        }
    if (e == NULL || nkeys == 0) {
        (void)reply_status(in->peer, in->cmd, in->id,
                           e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_BAD_PARAM);
        goto out;
    }
    r = req_new(in);
    if (r != NULL && (r->pdata = PMIx_Pdata_create(nkeys)) != NULL) {
        r->nkeys = nkeys;
        for (size_t i = 0; i < nkeys; i++)
            PMIX_LOAD_KEY(r->pdata[i].key, keys[i]);
        lookup_start(r, e, &self, wait, timeout);
        r = NULL;
    } else
        (void)reply_status(in->peer, in->cmd, in->id, PMIX_ERR_NOMEM);
out:
    req_free(r);
    pg_pmix_array_free(keys, nkeys, PMIX_STRING);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return ret;
}

static int cmd_unpublish(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);
    char **keys = NULL;
    pmix_info_t *info = NULL;
    size_t nkeys = 0, ninfo = 0;
    pmix_status_t rc = PMIX_SUCCESS;

    if (pg_pmix_unpack_array(in->args, (void **)&keys, &nkeys, PMIX_STRING) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        pg_pmix_array_free(keys, nkeys, PMIX_STRING);
        return PG_HANDLER_FAIL;
    }
    if (e == NULL)
        rc = PMIX_ERR_NOT_SUPPORTED;
    else if (nkeys == 0) { /* everything this process published */
        while (in->s->npublished > 0) {
            char *k = in->s->published[in->s->npublished - 1];
            (void)pg_unpublish(e, &self, k);
            session_forget(in->s, k);
        }
    } else
        for (size_t i = 0; i < nkeys; i++) {
            pmix_status_t one = keys[i] != NULL ? pg_unpublish(e, &self, keys[i])
                                                : PMIX_ERR_BAD_PARAM;
            if (one == PMIX_SUCCESS)
                session_forget(in->s, keys[i]);
            else if (rc == PMIX_SUCCESS)
                rc = one;
        }
    pg_pmix_array_free(keys, nkeys, PMIX_STRING);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
}

/* ---- groups ------------------------------------------------------------ */

static void group_reply(pmix_status_t status, uint64_t cid, void *cbdata)
{
    pmix_req_t *r = cbdata;
    pmix_data_buffer_t buf;
    size_t context_id = (size_t)cid;

    if (r->s != NULL) {
        pg_buffer_construct(&buf);
        if (pg_pmix_msg_begin_reply(&buf, r->cmd, r->id, status) == PMIX_SUCCESS &&
            (status != PMIX_SUCCESS || r->cmd != PG_PMIX_CMD_GROUP_CONSTRUCT ||
             pg_pmix_pack_one(&buf, &context_id, PMIX_SIZE) == PMIX_SUCCESS))
            (void)reply_send(r->s->peer, &buf);
        else
            pg_buffer_destruct(&buf);
    }
    req_free(r);
}

/* The directives a group collective honours: PMIX_TIMEOUT. */
static pg_time_t group_timeout(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++)
        if (info_is(&info[i], PMIX_TIMEOUT))
            return info_timeout(&info[i]);
    return 0;
}

/* The arguments of the group commands: grp, procs[] (construct and invite
 * only), info[]. */
typedef struct group_args {
    char *grp;
    pmix_proc_t *procs;
    size_t nprocs;
    pmix_info_t *info;
    size_t ninfo;
} group_args_t;

/* 0, or -1 for a malformed request (what was unpacked is freed by
 * group_args_free all the same). */
static int group_args_unpack(pmix_in_t *in, bool with_procs, group_args_t *a)
{
    *a = (group_args_t){ 0 };
    if (pg_pmix_unpack_one(in->args, &a->grp, PMIX_STRING) != PMIX_SUCCESS ||
        (with_procs && pg_pmix_unpack_array(in->args, (void **)&a->procs, &a->nprocs,
                                            PMIX_PROC) != PMIX_SUCCESS) ||
        pg_pmix_unpack_array(in->args, (void **)&a->info, &a->ninfo, PMIX_INFO) != PMIX_SUCCESS)
        return -1;
    return 0;
}

static void group_args_free(group_args_t *a)
{
    free(a->grp);
    pg_pmix_array_free(a->procs, a->nprocs, PMIX_PROC);
    pg_pmix_array_free(a->info, a->ninfo, PMIX_INFO);
}

/* grp, procs[], info[] -> status, context id */
static int cmd_group_construct(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);
    group_args_t a;
    pg_proc_t *members = NULL;
    pmix_req_t *r = NULL;
    pmix_status_t rc;
    int ret = PG_HANDLER_OK;

    if (group_args_unpack(in, true, &a) != 0) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NOMEM;
    if (e != NULL && (members = fence_participants(a.procs, a.nprocs, self.nspace)) != NULL &&
        (r = req_new(in)) != NULL) {
        rc = pg_group_construct(e, &self, a.grp, members, a.nprocs, group_timeout(a.info, a.ninfo),
                                pg_peer_now(in->peer), group_reply, r);
        if (rc == PMIX_SUCCESS)
            r = NULL; /* group_reply owns it now */
    }
    if (rc != PMIX_SUCCESS)
        (void)reply_status(in->peer, in->cmd, in->id, rc);
out:
    req_free(r);
    free(members);
    group_args_free(&a);
    return ret;
}

/* grp, info[] -> status */
static int cmd_group_destruct(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);
    group_args_t a;
    pmix_req_t *r = NULL;
    pmix_status_t rc;
    int ret = PG_HANDLER_OK;

    if (group_args_unpack(in, false, &a) != 0) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NOMEM;
    if (e != NULL && (r = req_new(in)) != NULL) {
        rc = pg_group_destruct(e, &self, a.grp, group_timeout(a.info, a.ninfo),
                               pg_peer_now(in->peer), group_reply, r);
        if (rc == PMIX_SUCCESS)
            r = NULL;
    }
    if (rc != PMIX_SUCCESS)
        (void)reply_status(in->peer, in->cmd, in->id, rc);
out:
    req_free(r);
    group_args_free(&a);
    return ret;
}

/* ---- groups by invitation ----------------------------------------------- */

/* An invite, or a join, waiting for the invite to complete: answered with
 * the group's context id and members when it was made. */
typedef struct invite_req {
    pmix_req_t *r;
    pg_engine_t *e;
    char *grp;
} invite_req_t;

static invite_req_t *invite_req_new(pmix_in_t *in, pg_engine_t *e, const char *grp)
{
    invite_req_t *ir = calloc(1, sizeof(*ir));

    if (ir == NULL || (ir->grp = strdup(grp)) == NULL || (ir->r = req_new(in)) == NULL) {
        if (ir != NULL)
            free(ir->grp);
        free(ir);
        return NULL;
    }
    ir->e = e;
    return ir;
}

static void invite_req_free(invite_req_t *ir)
{
    if (ir == NULL)
        return;
    req_free(ir->r);
    free(ir->grp);
    free(ir);
}

/* The members of group `grp` as pmix_proc_t[] (PMIX_GROUP_MEMBERSHIP). */
static pmix_status_t pack_members(pmix_data_buffer_t *buf, pg_engine_t *e, const char *grp)
{
    size_t n = 0;
    const pg_proc_t *m = pg_group_members(e, grp, &n);
    pmix_proc_t *procs = calloc(m != NULL && n > 0 ? n : 1, sizeof(*procs));
    pmix_status_t rc;

    if (procs == NULL)
        return PMIX_ERR_NOMEM;
    if (m == NULL)
        n = 0;
    for (size_t i = 0; i < n; i++)
        PMIX_LOAD_PROCID(&procs[i], m[i].nspace, m[i].rank);
    rc = pg_pmix_pack_array(buf, procs, n, PMIX_PROC);
    free(procs);
    return rc;
}

static void invite_reply(pmix_status_t status, uint64_t cid, void *cbdata)
{
    invite_req_t *ir = cbdata;
    pmix_req_t *r = ir->r;
    pmix_data_buffer_t buf;
    size_t context_id = (size_t)cid;
    /* a decline: context id 0 and no members (it is not one) */
    bool made = status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS;
    pmix_status_t rc;

    if (r->s != NULL) {
        pg_buffer_construct(&buf);
        rc = pg_pmix_msg_begin_reply(&buf, r->cmd, r->id, status);
        if (rc == PMIX_SUCCESS && made)
            rc = pg_pmix_pack_one(&buf, &context_id, PMIX_SIZE);
        if (rc == PMIX_SUCCESS && made)
            rc = cid != 0 ? pack_members(&buf, ir->e, ir->grp)
                          : pg_pmix_pack_array(&buf, NULL, 0, PMIX_PROC);
        if (rc == PMIX_SUCCESS)
            (void)reply_send(r->s->peer, &buf);
        else
            pg_buffer_destruct(&buf);
    }
    invite_req_free(ir);
}

/* grp, invitees[], info[] -> status, context id, members[] */
static int cmd_group_invite(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);
    group_args_t a;
    pg_proc_t *invitees = NULL;
    invite_req_t *ir = NULL;
    pmix_status_t rc;
    int ret = PG_HANDLER_OK;

    if (group_args_unpack(in, true, &a) != 0) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NOMEM;
    if (e != NULL && (invitees = fence_participants(a.procs, a.nprocs, self.nspace)) != NULL &&
        (ir = invite_req_new(in, e, a.grp)) != NULL) {
        rc = pg_group_invite(e, &self, a.grp, invitees, a.nprocs, group_timeout(a.info, a.ninfo),
                             pg_peer_now(in->peer), invite_reply, ir);
        if (rc == PMIX_SUCCESS)
            ir = NULL; /* invite_reply owns it now */
    }
    if (rc != PMIX_SUCCESS)
        (void)reply_status(in->peer, in->cmd, in->id, rc);
out:
    invite_req_free(ir);
    free(invitees);
    group_args_free(&a);
    return ret;
}

/* grp, leader, accept, info[] -> status (, context id, members[]) */
static int cmd_group_join(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);
    char *grp = NULL;
    pmix_proc_t leader;
    bool accept = false;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    invite_req_t *ir = NULL;
    pmix_status_t rc;

    if (pg_pmix_unpack_one(in->args, &grp, PMIX_STRING) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(in->args, &leader, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(in->args, &accept, PMIX_BOOL) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        free(grp);
        return PG_HANDLER_FAIL;
    }
    /* no nspace and no rank: whoever invited; no nspace: this job's */
    bool any = leader.nspace[0] == '\0' && leader.rank == PMIX_RANK_UNDEF;
    pg_proc_t lead = { leader.nspace[0] != '\0' ? leader.nspace : self.nspace, leader.rank };
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NOMEM;
    if (e != NULL && (ir = invite_req_new(in, e, grp)) != NULL) {
        rc = pg_group_join(e, &self, grp, any ? NULL : &lead, accept,
                           group_timeout(info, ninfo), pg_peer_now(in->peer), invite_reply, ir);
        if (rc == PMIX_SUCCESS)
            ir = NULL;
    }
    if (rc != PMIX_SUCCESS)
        (void)reply_status(in->peer, in->cmd, in->id, rc);
    invite_req_free(ir);
    free(grp);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return PG_HANDLER_OK;
}

/* grp, info[] -> status: answered at once (the others hear PMIX_GROUP_LEFT) */
static int cmd_group_leave(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);
    group_args_t a;
    int ret = PG_HANDLER_FAIL;

    if (group_args_unpack(in, false, &a) == 0) {
        (void)reply_status(in->peer, in->cmd, in->id,
                           e == NULL ? PMIX_ERR_NOT_SUPPORTED : pg_group_leave(e, &self, a.grp));
        ret = PG_HANDLER_OK;
    }
    group_args_free(&a);
    return ret;
}

/* ---- job control ---------------------------------------------------------- */

/* The signal a job-control request asks for: PMIX_JOB_CTRL_KILL (SIGKILL),
 * PMIX_JOB_CTRL_TERMINATE (SIGTERM), PMIX_JOB_CTRL_SIGNAL (its number);
 * 0 with *rc set when there is none we can serve. */
static int jobctl_signal(const pmix_info_t *info, size_t ninfo, pmix_status_t *rc)
{
    uint64_t n;

    *rc = PMIX_ERR_NOT_SUPPORTED;
    for (size_t i = 0; i < ninfo; i++) {
        if (info_is(&info[i], PMIX_JOB_CTRL_KILL) && info_true(&info[i]))
            return SIGKILL;
        if (info_is(&info[i], PMIX_JOB_CTRL_TERMINATE) && info_true(&info[i]))
            return SIGTERM;
        if (info_is(&info[i], PMIX_JOB_CTRL_SIGNAL)) {
            if (pg_pmix_value_uint(&info[i].value, &n) && n > 0 && n < 65)
                return (int)n;
            *rc = PMIX_ERR_BAD_PARAM;
            return 0;
        }
    }
    return 0;
}

/* The ranks of this job the targets name (wildcard or none: all of them). */
static pmix_status_t jobctl_ranks(pg_peer_t *peer, const pmix_proc_t *t, size_t n, int **ranks,
                                  size_t *nranks)
{
    const char *own = peer->job->kvsname;

    *ranks = NULL;
    *nranks = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].nspace[0] != '\0' && strcmp(t[i].nspace, own) != 0)
            return PMIX_ERR_NOT_SUPPORTED; /* another job: not ours to signal */
        if (t[i].rank == PMIX_RANK_WILDCARD)
            return PMIX_SUCCESS;
        if (t[i].rank >= (pmix_rank_t)peer->job->size)
            return PMIX_ERR_BAD_PARAM;
    }
    if (n > 0 && (*ranks = calloc(n, sizeof(**ranks))) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        (*ranks)[i] = (int)t[i].rank;
    *nranks = n;
    return PMIX_SUCCESS;
}

/* targets[], directives[] -> status.  The host delivers the signal; the
 * reply goes first, so a caller that signals itself still hears back. */
static int cmd_job_control(pmix_in_t *in)
{
    pmix_proc_t *targets = NULL;
    pmix_info_t *info = NULL;
    size_t ntargets = 0, ninfo = 0, nranks = 0;
    int *ranks = NULL, signo;
    pmix_status_t rc;

    if (pg_pmix_unpack_array(in->args, (void **)&targets, &ntargets, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        pg_pmix_array_free(targets, ntargets, PMIX_PROC);
        return PG_HANDLER_FAIL;
    }
    signo = jobctl_signal(info, ninfo, &rc);
    if (signo != 0 && in->peer->ops->job_signal == NULL)
        rc = PMIX_ERR_NOT_SUPPORTED;
    else if (signo != 0)
        rc = jobctl_ranks(in->peer, targets, ntargets, &ranks, &nranks);
    (void)reply_status(in->peer, in->cmd, in->id, rc);
    if (signo != 0 && rc == PMIX_SUCCESS)
        in->peer->ops->job_signal(in->peer, ranks, nranks, signo);
    free(ranks);
    pg_pmix_array_free(targets, ntargets, PMIX_PROC);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return PG_HANDLER_OK;
}

/* ---- life cycle -------------------------------------------------------- */

static int cmd_abort(pmix_in_t *in)
{
    pmix_status_t code = 1;
    char *msg = NULL;

    /* whatever else is malformed, an abort is honoured */
    (void)pg_pmix_unpack_one(in->args, &code, PMIX_STATUS);
    (void)pg_pmix_unpack_one(in->args, &msg, PMIX_STRING);
    (void)reply_status(in->peer, in->cmd, in->id, PMIX_SUCCESS);
    if (in->s->inited) /* the others hear of it before the job is brought down */
        pg_peer_abort(in->peer, code, msg);
    else
        in->peer->ops->job_abort(in->peer, code, msg);
    free(msg);
    return PG_HANDLER_OK;
}

static int cmd_finalize(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);

    (void)reply_status(in->peer, in->cmd, in->id, PMIX_SUCCESS);
    events_unsubscribe(in->s); /* it wants no more */
    in->peer->ops->peer_finalize(in->peer);
    if (e != NULL)
        (void)pg_proc_finalize(e, &self);
    return PG_HANDLER_CLOSE;
}

/* ---- events ------------------------------------------------------------ */

/* The info[] an event carries on the wire: the notifier's, packed once for
 * all subscribers (ev->info), or for the events raised without a PMIx
 * packing (the engine's, a PMI-1/PMI-2 rank's abort, the host's) the
 * affected process (the source) and the event's typed details. */
static pmix_status_t event_pack_info(pmix_data_buffer_t *buf, const pg_event_t *ev)
{
    pmix_info_t *info;
    pmix_proc_t src;
    pmix_status_t rc = PMIX_SUCCESS;
    size_t n = 1;

    if (ev->info != NULL)
        return pg_buffer_append(buf, ev->info, ev->info_size);
    PMIX_INFO_CREATE(info, 1 + ev->ndetails);
    if (info == NULL)
        return PMIX_ERR_NOMEM;
    PMIX_LOAD_PROCID(&src, ev->source.nspace, ev->source.rank);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_AFFECTED_PROC, &src, PMIX_PROC);
    for (size_t i = 0; i < ev->ndetails && rc == PMIX_SUCCESS; i++, n++) {
        PMIX_LOAD_KEY(info[n].key, ev->details[i].key);
        rc = pg_pmix_value_from_engine(&ev->details[i].value, &info[n].value);
    }
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_array(buf, info, n, PMIX_INFO);
    PMIX_INFO_FREE(info, 1 + ev->ndetails);
    return rc;
}

/* The engine delivers an event to this connection's process: one frame,
 * unasked (id 0), read by libpmix's progress thread. */
static void session_event(const pg_event_t *ev, void *cbdata)
{
    pmix_session_t *s = cbdata;
    pmix_data_buffer_t buf;
    pmix_proc_t src;
    pmix_data_range_t range = ev->range;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&src, ev->source.nspace, ev->source.rank);
    pg_buffer_construct(&buf);
    rc = pg_pmix_msg_begin_reply(&buf, PG_PMIX_CMD_EVENT, 0, ev->status);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(&buf, &src, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_pack_one(&buf, &range, PMIX_DATA_RANGE);
    if (rc == PMIX_SUCCESS)
        rc = event_pack_info(&buf, ev);
    if (rc == PMIX_SUCCESS)
        (void)reply_send(s->peer, &buf); /* a dead peer is the host's to close */
    else
        pg_buffer_destruct(&buf);
}

/* Every PMIx process hears the events in its range from init on; libpmix
 * runs its handlers, or drops what no handler asked for. */
static void events_subscribe(pmix_session_t *s, pg_engine_t *e, const pg_proc_t *self)
{
    if (e != NULL && s->event_sub == 0 &&
        pg_event_subscribe(e, self, session_event, s, &s->event_sub) != PMIX_SUCCESS)
        s->event_sub = 0; /* no events for this process, init still succeeds */
}

static void events_unsubscribe(pmix_session_t *s)
{
    if (s->event_sub != 0)
        (void)pg_event_unsubscribe(s->peer->job->engine, s->event_sub);
    s->event_sub = 0;
}

/* Delivers `info` packed as the event's info[]. */
static pmix_status_t events_notify_with(pg_engine_t *e, pg_event_t *ev, const pmix_info_t *info,
                                        size_t ninfo)
{
    pmix_data_buffer_t packed;
    pmix_status_t rc;

    pg_buffer_construct(&packed);
    rc = pg_pmix_pack_array(&packed, info, ninfo, PMIX_INFO);
    if (rc == PMIX_SUCCESS) {
        ev->info = packed.base_ptr;
        ev->info_size = packed.bytes_used;
        rc = pg_event_notify(e, ev, NULL);
    }
    pg_buffer_destruct(&packed);
    return rc;
}

/* PMIx_Notify_event: status, source, range, custom targets[], info[]. */
static int cmd_notify(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s), *targets = NULL;
    pmix_status_t code = PMIX_SUCCESS, rc;
    pmix_proc_t src, *procs = NULL;
    pmix_info_t *info = NULL;
    size_t nprocs = 0, ninfo = 0;
    pmix_data_range_t range = PMIX_RANGE_UNDEF;
    int ret = PG_HANDLER_OK;

    memset(&src, 0, sizeof(src));
    if (pg_pmix_unpack_one(in->args, &code, PMIX_STATUS) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(in->args, &src, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_one(in->args, &range, PMIX_DATA_RANGE) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&procs, &nprocs, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    /* the source is reported as given; the range is measured from the sender */
    pg_event_t ev = { code, { src.nspace[0] != '\0' ? src.nspace : self.nspace, src.rank },
                      self, range, NULL, 0, NULL, 0, NULL, 0 };
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_SUCCESS;
    if (rc == PMIX_SUCCESS && nprocs > 0) {
        if ((targets = fence_participants(procs, nprocs, self.nspace)) == NULL)
            rc = PMIX_ERR_NOMEM;
        ev.targets = targets;
        ev.ntargets = nprocs;
    }
    if (rc == PMIX_SUCCESS)
        rc = events_notify_with(e, &ev, info, ninfo);
    (void)reply_status(in->peer, in->cmd, in->id, rc);
out:
    free(targets);
    pg_pmix_array_free(procs, nprocs, PMIX_PROC);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return ret;
}

/* ---- query ---------------------------------------------------------------- */

/* Results of one PMIx_Query_info call, grown as answers come. */
typedef struct query_out {
    pmix_info_t *info;
    size_t n, cap;
    size_t asked, answered; /* keys */
    bool can_spawn;         /* the host serves PMIx_Spawn (pg_peer_ops_t.spawn) */
} query_out_t;

/* A fresh slot for `key` (the caller fills its value), or NULL. */
static pmix_info_t *query_slot(query_out_t *o, const char *key)
{
    if (o->n == o->cap) {
        size_t cap = o->cap > 0 ? o->cap * 2 : 8;
        pmix_info_t *grown = realloc(o->info, cap * sizeof(*grown));

        if (grown == NULL)
            return NULL;
        o->info = grown;
        o->cap = cap;
    }
    PMIX_INFO_CONSTRUCT(&o->info[o->n]);
    PMIX_LOAD_KEY(o->info[o->n].key, key);
    return &o->info[o->n++];
}

static pmix_status_t query_add(query_out_t *o, const char *key, const void *data,
                               pmix_data_type_t type)
{
    pmix_info_t *slot = query_slot(o, key);

    if (slot == NULL)
        return PMIX_ERR_NOMEM;
    return PMIx_Value_load(&slot->value, data, type);
}

/* What a query's qualifiers name: a namespace (PMIX_NSPACE, or the
 * nspace of PMIX_PROCID) and a rank (PMIX_RANK, PMIX_PROCID). */
typedef struct query_target {
    const char *nspace; /* borrowed; the requester's when not qualified */
    pmix_rank_t rank;   /* WILDCARD when not qualified */
} query_target_t;

static query_target_t query_target_of(const pmix_info_t *q, size_t nq, const pg_proc_t *self)
{
    query_target_t t = { self->nspace, PMIX_RANK_WILDCARD };
    uint64_t u;

    for (size_t i = 0; i < nq; i++) {
        const pmix_value_t *v = &q[i].value;

        if (info_is(&q[i], PMIX_NSPACE) && v->type == PMIX_STRING && v->data.string != NULL)
            t.nspace = v->data.string;
        else if (info_is(&q[i], PMIX_RANK) && pg_pmix_value_uint(v, &u) && u <= UINT32_MAX)
            t.rank = (pmix_rank_t)u;
        else if (info_is(&q[i], PMIX_PROCID) && v->type == PMIX_PROC && v->data.proc != NULL) {
            if (v->data.proc->nspace[0] != '\0')
                t.nspace = v->data.proc->nspace;
            t.rank = v->data.proc->rank;
        }
    }
    return t;
}

static void strlist_append(void *arg, const char *item)
{
    char **list = arg, *grown;
    size_t have = *list != NULL ? strlen(*list) : 0;

    if (have > 0 && *list == NULL)
        return;
    grown = realloc(*list, have + strlen(item) + 2);
    if (grown == NULL)
        return; /* the answer is shorter; the query still answers */
    if (have > 0)
        grown[have++] = ',';
    strcpy(grown + have, item);
    *list = grown;
}

static pmix_status_t query_namespaces(query_out_t *o, pg_engine_t *e)
{
    char *list = NULL;
    pmix_status_t rc;

    pg_ns_foreach(e, strlist_append, &list);
    rc = query_add(o, PMIX_QUERY_NAMESPACES, list != NULL ? list : "", PMIX_STRING);
    free(list);
    return rc;
}

/* One pmix_proc_info_t row from the engine's process table. */
static pmix_status_t proc_row(pg_engine_t *e, const char *nspace, pmix_rank_t rank,
                              pmix_proc_info_t *row, pg_proc_desc_t *d)
{
    pg_proc_t p = { nspace, rank };
    pmix_status_t rc = pg_proc_describe(e, &p, d);

    if (rc != PMIX_SUCCESS)
        return rc;
    PMIX_LOAD_PROCID(&row->proc, nspace, rank);
    row->hostname = d->hostname != NULL ? strdup(d->hostname) : NULL;
    row->executable_name = d->executable != NULL ? strdup(d->executable) : NULL;
    row->pid = (pid_t)d->pid;
    row->exit_code = 0;
    row->state = d->state;
    if ((d->hostname != NULL && row->hostname == NULL) ||
        (d->executable != NULL && row->executable_name == NULL))
        return PMIX_ERR_NOMEM;
    return PMIX_SUCCESS;
}

/* PMIX_QUERY_PROC_TABLE (every rank of the nspace) or, `local`,
 * PMIX_QUERY_LOCAL_PROC_TABLE (the ranks on the requester's node). */
static pmix_status_t query_proc_table(query_out_t *o, pg_engine_t *e, const pg_proc_t *self,
                                      const query_target_t *t, bool local)
{
    pg_proc_desc_t mine, d;
    pmix_data_array_t *arr;
    pmix_proc_info_t *rows;
    size_t size = 0, n = 0;
    pmix_info_t *slot;
    pmix_status_t rc;
    pg_value_t v;

    if (pg_ns_attr(e, t->nspace, "universeSize", &v) != PMIX_SUCCESS)
        return PMIX_ERR_NOT_FOUND; /* not a namespace of this gateway */
    rc = pg_proc_describe(e, self, &mine);
    if (rc != PMIX_SUCCESS)
        return rc;
    while (pg_proc_describe(e, &(pg_proc_t){ t->nspace, (pmix_rank_t)size }, &d) == PMIX_SUCCESS)
        size++;
    arr = PMIx_Data_array_create(size, PMIX_PROC_INFO);
    if (arr == NULL && size > 0)
        return PMIX_ERR_NOMEM;
    rows = arr != NULL ? arr->array : NULL;
    for (size_t r = 0; r < size && rc == PMIX_SUCCESS; r++) {
        rc = proc_row(e, t->nspace, (pmix_rank_t)r, &rows[n], &d);
        if (rc == PMIX_SUCCESS && (!local || (d.hostname != NULL && mine.hostname != NULL &&
                                              strcmp(d.hostname, mine.hostname) == 0)))
            n++;
        else
            PMIX_PROC_INFO_DESTRUCT(&rows[n]);
    }
    if (arr != NULL)
        arr->size = n;
    if (rc == PMIX_SUCCESS && (slot = query_slot(o, local ? PMIX_QUERY_LOCAL_PROC_TABLE
                                                        : PMIX_QUERY_PROC_TABLE)) != NULL) {
        slot->value.type = PMIX_DATA_ARRAY;
        slot->value.data.darray = arr; /* the result owns it */
        return PMIX_SUCCESS;
    }
    PMIx_Data_array_free(arr);
    return rc == PMIX_SUCCESS ? PMIX_ERR_NOMEM : rc;
}

static void query_value_done(pmix_status_t status, const pg_value_t *value, pmix_rank_t poster,
                             void *cbdata)
{
    pmix_value_t *out = cbdata;

    (void)poster;
    if (status != PMIX_SUCCESS || pg_pmix_value_from_engine(value, out) != PMIX_SUCCESS)
        out->type = PMIX_UNDEF;
}

/* Any other reserved key (PMIX_JOB_SIZE, PMIX_LOCAL_PEERS, ...): the job
 * data a PMIx_Get of {nspace, rank} would read, at once. */
static pmix_status_t query_reserved(query_out_t *o, pg_engine_t *e, const pg_proc_t *self,
                                    const query_target_t *t, const char *key)
{
    pg_proc_t target = { t->nspace, t->rank };
    pmix_value_t v;
    pmix_info_t *slot;
    pg_get_req_t q;

    if (!PMIX_CHECK_RESERVED_KEY(key))
        return PMIX_ERR_NOT_FOUND; /* a query is about the system, not posted data */
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_UNDEF;
    pg_get_req_init(&q, self, &target, key);
    q.flags |= PG_GET_IMMEDIATE;
    (void)pg_get(e, &q, 0, query_value_done, &v); /* IMMEDIATE: inline, no clock */
    if (v.type == PMIX_UNDEF)
        return PMIX_ERR_NOT_FOUND;
    slot = query_slot(o, key);
    if (slot == NULL) {
        PMIX_VALUE_DESTRUCT(&v);
        return PMIX_ERR_NOMEM;
    }
    slot->value = v; /* moved */
    return PMIX_SUCCESS;
}

/* The query keys pmigate answers (PMIX_QUERY_SUPPORTED_KEYS); any other
 * reserved key is answered as job data (query_reserved). */
static const char *const query_keys[] = {
    PMIX_QUERY_NAMESPACES,      PMIX_QUERY_PROC_TABLE,   PMIX_QUERY_LOCAL_PROC_TABLE,
    PMIX_QUERY_SPAWN_SUPPORT,   PMIX_QUERY_DEBUG_SUPPORT, PMIX_QUERY_NUM_PSETS,
    PMIX_QUERY_PSET_NAMES,      PMIX_QUERY_SUPPORTED_KEYS, PMIX_QUERY_NUM_GROUPS,
};

static pmix_status_t query_supported_keys(query_out_t *o)
{
    char *list = NULL;
    pmix_status_t rc;

    for (size_t i = 0; i < sizeof(query_keys) / sizeof(query_keys[0]); i++)
        strlist_append(&list, query_keys[i]);
    rc = query_add(o, PMIX_QUERY_SUPPORTED_KEYS, list != NULL ? list : "", PMIX_STRING);
    free(list);
    return rc;
}

/* One key of one query. */
static pmix_status_t query_one(query_out_t *o, pg_engine_t *e, const pg_proc_t *self,
                               const char *key, const pmix_info_t *q, size_t nq)
{
    query_target_t t = query_target_of(q, nq, self);
    size_t zero = 0;

    if (strcmp(key, PMIX_QUERY_NAMESPACES) == 0)
        return query_namespaces(o, e);
    if (strcmp(key, PMIX_QUERY_PROC_TABLE) == 0 || strcmp(key, PMIX_QUERY_LOCAL_PROC_TABLE) == 0)
        return query_proc_table(o, e, self, &t, strcmp(key, PMIX_QUERY_LOCAL_PROC_TABLE) == 0);
    /* the spawn attributes the host honours (cmd_spawn); no debugger
     * attributes are served, and there are no psets or groups: empty
     * answers, not missing ones */
    if (strcmp(key, PMIX_QUERY_SPAWN_SUPPORT) == 0)
        return query_add(o, key,
                         o->can_spawn ? PMIX_WDIR "," PMIX_PREFIX "," PMIX_HOST "," PMIX_SET_ENVAR
                                            "," PMIX_NOTIFY_COMPLETION "," PMIX_NOTIFY_JOB_EVENTS
                                            "," PMIX_EVENT_SILENT_TERMINATION
                                      : "",
                         PMIX_STRING);
    if (strcmp(key, PMIX_QUERY_DEBUG_SUPPORT) == 0 || strcmp(key, PMIX_QUERY_PSET_NAMES) == 0)
        return query_add(o, key, "", PMIX_STRING);
    if (strcmp(key, PMIX_QUERY_NUM_PSETS) == 0 || strcmp(key, PMIX_QUERY_NUM_GROUPS) == 0)
        return query_add(o, key, &zero, PMIX_SIZE);
    if (strcmp(key, PMIX_QUERY_SUPPORTED_KEYS) == 0)
        return query_supported_keys(o);
    return query_reserved(o, e, self, &t, key);
}

/* One pmix_query_t off the wire: keys[], qualifiers[]. */
static pmix_status_t query_unpack_run(pmix_in_t *in, query_out_t *o, pg_engine_t *e,
                                      const pg_proc_t *self)
{
    char **keys = NULL;
    pmix_info_t *q = NULL;
    size_t nkeys = 0, nq = 0;
    pmix_status_t rc;

    rc = pg_pmix_unpack_array(in->args, (void **)&keys, &nkeys, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = pg_pmix_unpack_array(in->args, (void **)&q, &nq, PMIX_INFO);
    for (size_t k = 0; k < nkeys && rc == PMIX_SUCCESS; k++) {
        pmix_status_t one = keys[k] != NULL ? query_one(o, e, self, keys[k], q, nq)
                                            : PMIX_ERR_NOT_FOUND;
        o->asked++;
        if (one == PMIX_SUCCESS)
            o->answered++;
        else if (one == PMIX_ERR_NOMEM)
            rc = one;
    }
    pg_pmix_array_free(keys, nkeys, PMIX_STRING);
    pg_pmix_array_free(q, nq, PMIX_INFO);
    return rc;
}

static int cmd_query(pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = session_proc(in->s);
    query_out_t o = { .can_spawn = in->peer->ops->spawn != NULL };
    pmix_data_buffer_t buf;
    pmix_status_t rc, status;
    uint32_t n = 0;

    if (pg_pmix_unpack_one(in->args, &n, PMIX_UINT32) != PMIX_SUCCESS ||
        n > pg_buffer_unread(in->args))
        return PG_HANDLER_FAIL;
    if (e == NULL || n == 0)
        return reply_status(in->peer, in->cmd, in->id,
                            e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_BAD_PARAM),
               PG_HANDLER_OK;
    rc = PMIX_SUCCESS;
    for (uint32_t i = 0; i < n && rc == PMIX_SUCCESS; i++)
        rc = query_unpack_run(in, &o, e, &self);
    if (rc == PMIX_ERR_NOMEM || rc == PMIX_SUCCESS)
        status = rc != PMIX_SUCCESS           ? rc
                 : o.answered == o.asked      ? PMIX_SUCCESS
                 : o.answered > 0             ? PMIX_ERR_PARTIAL_SUCCESS
                                              : PMIX_ERR_NOT_FOUND;
    else {
        pg_pmix_array_free(o.info, o.n, PMIX_INFO);
        return PG_HANDLER_FAIL; /* not what libpmix sends */
    }
    pg_buffer_construct(&buf);
    rc = pg_pmix_msg_begin_reply(&buf, in->cmd, in->id, status);
    if (rc == PMIX_SUCCESS && (status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS))
        rc = pg_pmix_pack_array(&buf, o.info, o.n, PMIX_INFO);
    pg_pmix_array_free(o.info, o.n, PMIX_INFO);
    if (rc != PMIX_SUCCESS) {
        pg_buffer_destruct(&buf);
        return reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
    }
    return reply_send(in->peer, &buf) == 0 ? PG_HANDLER_OK : PG_HANDLER_FAIL;
}

/* ---- log ------------------------------------------------------------------ */

/* The channels the gateway serves: its own stdout and stderr (the job's
 * log line, where the rank is named and its text escaped so it cannot
 * forge a line) and the node's syslog (PMIX_LOG_SYSLOG, and
 * PMIX_LOG_LOCAL_SYSLOG: one node is the local one).  Email, the global
 * syslog, the job record and the data store are not served. */
static bool log_channel_of(const pmix_info_t *i, pg_log_channel_t *ch)
{
    if (info_is(i, PMIX_LOG_STDOUT))
        *ch = PG_LOG_STDOUT;
    else if (info_is(i, PMIX_LOG_STDERR))
        *ch = PG_LOG_STDERR;
    else if (info_is(i, PMIX_LOG_SYSLOG) || info_is(i, PMIX_LOG_LOCAL_SYSLOG))
        *ch = PG_LOG_SYSLOG;
    else
        return false;
    /* the channel's value is its text */
    return i->value.type == PMIX_STRING && i->value.data.string != NULL;
}

static bool log_is_channel(const pmix_info_t *i)
{
    static const char *const channels[] = {
        PMIX_LOG_STDERR,      PMIX_LOG_STDOUT,     PMIX_LOG_SYSLOG,    PMIX_LOG_LOCAL_SYSLOG,
        PMIX_LOG_GLOBAL_SYSLOG, PMIX_LOG_EMAIL,    PMIX_LOG_GLOBAL_DATASTORE,
        PMIX_LOG_JOB_RECORD,  PMIX_LOG_MSG,
    };

    for (size_t k = 0; k < sizeof(channels) / sizeof(channels[0]); k++)
        if (info_is(i, channels[k]))
            return true;
    return false;
}

/* How PMIx_Log's directives shape the lines: PMIX_LOG_ONCE (the first
 * served channel only), PMIX_LOG_SYSLOG_PRI (syslog's priority, LOG_NOTICE
 * by default: 5), PMIX_LOG_TIMESTAMP (the caller's time) or
 * PMIX_LOG_GENERATE_TIMESTAMP (the gateway's) in front of the text. */
typedef struct log_how {
    bool once;
    int priority;
    bool stamp;
    time_t when;
} log_how_t;

static void log_directives(const pmix_info_t *dirs, size_t ndirs, log_how_t *how)
{
    uint64_t u = 0;

    *how = (log_how_t){ .priority = 5 };
    for (size_t i = 0; i < ndirs; i++) {
        const pmix_value_t *v = &dirs[i].value;

        if (info_is(&dirs[i], PMIX_LOG_ONCE))
            how->once = info_true(&dirs[i]);
        else if (info_is(&dirs[i], PMIX_LOG_SYSLOG_PRI) && pg_pmix_value_uint(v, &u) && u <= 7)
            how->priority = (int)u;
        else if (info_is(&dirs[i], PMIX_LOG_TIMESTAMP) && v->type == PMIX_TIME) {
            how->stamp = true;
            how->when = v->data.time;
        } else if (info_is(&dirs[i], PMIX_LOG_GENERATE_TIMESTAMP) && info_true(&dirs[i]) &&
                   !how->stamp) {
            how->stamp = true;
            how->when = time(NULL);
        }
    }
}

/* One channel's text, "[2026-11-25T20:55:00Z] " first when stamped. */
static int log_one(pg_peer_t *peer, pg_log_channel_t ch, const log_how_t *how, const char *text)
{
    char line[1024];
    struct tm tm;

    if (how->stamp && gmtime_r(&how->when, &tm) != NULL &&
        strftime(line, sizeof(line), "[%Y-%m-%dT%H:%M:%SZ] ", &tm) > 0) {
        size_t n = strlen(line);

        snprintf(line + n, sizeof(line) - n, "%s", text);
        text = line;
    }
    if (peer->ops->log_to != NULL)
        return peer->ops->log_to(peer, ch, how->priority, text);
    if (ch != PG_LOG_STDERR)
        return -1;
    pg_peer_log(peer, "rank %d logged: %s", peer->rank, text);
    return 0;
}

/* PMIx_Log: data[] names the channels and texts, directives[] how.  All
 * requested channels served: SUCCESS; some: PARTIAL_SUCCESS; none:
 * NOT_SUPPORTED.  PMIX_LOG_ONCE: success once one channel took it. */
static pmix_status_t log_run(pg_peer_t *peer, const pmix_info_t *data, size_t ndata,
                             const pmix_info_t *dirs, size_t ndirs)
{
    log_how_t how;
    size_t asked = 0, served = 0;
    pg_log_channel_t ch;

    log_directives(dirs, ndirs, &how);
    for (size_t i = 0; i < ndata; i++) {
        if (!log_is_channel(&data[i]))
            continue; /* a directive given among the data (PMIX_LOG_SOURCE...) */
        asked++;
        if ((how.once && served > 0) || !log_channel_of(&data[i], &ch))
            continue;
        if (log_one(peer, ch, &how, data[i].value.data.string) == 0)
            served++;
    }
    if (asked == 0)
        return PMIX_ERR_BAD_PARAM; /* nothing to log */
    if (served == 0)
        return PMIX_ERR_NOT_SUPPORTED;
    return served == asked || how.once ? PMIX_SUCCESS : PMIX_ERR_PARTIAL_SUCCESS;
}

static int cmd_log(pmix_in_t *in)
{
    pmix_info_t *data = NULL, *dirs = NULL;
    size_t ndata = 0, ndirs = 0;
    pmix_status_t rc;

    if (pg_pmix_unpack_array(in->args, (void **)&data, &ndata, PMIX_INFO) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&dirs, &ndirs, PMIX_INFO) != PMIX_SUCCESS) {
        pg_pmix_array_free(data, ndata, PMIX_INFO);
        return PG_HANDLER_FAIL;
    }
    rc = log_run(in->peer, data, ndata, dirs, ndirs);
    pg_pmix_array_free(data, ndata, PMIX_INFO);
    pg_pmix_array_free(dirs, ndirs, PMIX_INFO);
    return reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
}

/* ---- dynamic jobs (issue 15) ------------------------------------------ */

/* One decoded PMIx_Spawn: the apps as pg_spawn_cmd_t (argv after argv[0]),
 * the info keys the gateway understands translated (PMIX_WDIR and cwd ->
 * wdir, PMIX_PREFIX -> path = prefix/bin, PMIX_HOST -> host), each app's
 * env and PMIX_SET_ENVAR as variables for the children. */
typedef struct spawn_in {
    pmix_info_t *jinfo;
    size_t njinfo;
    pmix_app_t *apps;
    uint32_t napps;
    pg_spawn_cmd_t *cmds;
    pg_kv_t *kv;      /* [napps * 4] translated infos, then env */
    char **owned;     /* strings made here */
    size_t nowned;
    pg_kv_t *env;
    size_t nenv;
} spawn_in_t;

static void spawn_app_free(pmix_app_t *app)
{
    for (char **p = app->argv; p != NULL && *p != NULL; p++)
        free(*p);
    for (char **p = app->env; p != NULL && *p != NULL; p++)
        free(*p);
    free(app->argv);
    free(app->env);
    free(app->cmd);
    free(app->cwd);
    pg_pmix_array_free(app->info, app->ninfo, PMIX_INFO);
}

static void spawn_in_free(spawn_in_t *sp)
{
    for (uint32_t a = 0; sp->apps != NULL && a < sp->napps; a++)
        spawn_app_free(&sp->apps[a]);
    free(sp->apps);
    pg_pmix_array_free(sp->jinfo, sp->njinfo, PMIX_INFO);
    for (size_t i = 0; i < sp->nowned; i++)
        free(sp->owned[i]);
    free(sp->owned);
    free(sp->cmds);
    free(sp->kv);
    free(sp->env);
}

static const char *spawn_keep(spawn_in_t *sp, char *text)
{
    char **grown = text != NULL ? realloc(sp->owned, (sp->nowned + 1) * sizeof(*grown)) : NULL;

    if (grown == NULL) {
        free(text);
        return NULL;
    }
    sp->owned = grown;
    return sp->owned[sp->nowned++] = text;
}

static pmix_status_t spawn_unpack_app(pmix_data_buffer_t *b, pmix_app_t *app)
{
    size_t nargv = 0, nenv = 0;
    char **argv = NULL, **env = NULL;
    pmix_status_t rc;

    if ((rc = pg_pmix_unpack_one(b, &app->cmd, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = pg_pmix_unpack_array(b, (void **)&argv, &nargv, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = pg_pmix_unpack_array(b, (void **)&env, &nenv, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = pg_pmix_unpack_one(b, &app->cwd, PMIX_STRING)) != PMIX_SUCCESS ||
        (rc = pg_pmix_unpack_one(b, &app->maxprocs, PMIX_INT32)) != PMIX_SUCCESS ||
        (rc = pg_pmix_unpack_array(b, (void **)&app->info, &app->ninfo, PMIX_INFO)) !=
            PMIX_SUCCESS) {
        pg_pmix_array_free(argv, nargv, PMIX_STRING);
        pg_pmix_array_free(env, nenv, PMIX_STRING);
        return rc;
    }
    /* NULL-terminated, as pmix_app_t holds them */
    app->argv = calloc(nargv + 1, sizeof(char *));
    app->env = calloc(nenv + 1, sizeof(char *));
    if (app->argv == NULL || app->env == NULL) {
        pg_pmix_array_free(argv, nargv, PMIX_STRING);
        pg_pmix_array_free(env, nenv, PMIX_STRING);
        return PMIX_ERR_NOMEM;
    }
    if (nargv > 0) /* an app without argv or env comes as NULL arrays */
        memcpy(app->argv, argv, nargv * sizeof(char *));
    if (nenv > 0)
        memcpy(app->env, env, nenv * sizeof(char *));
    free(argv);
    free(env);
    return PMIX_SUCCESS;
}

static pmix_status_t spawn_add_env(spawn_in_t *sp, const char *k, size_t klen, const char *v)
{
    pg_kv_t *grown = realloc(sp->env, (sp->nenv + 1) * sizeof(*grown));
    const char *key, *val;

    if (grown == NULL)
        return PMIX_ERR_NOMEM;
    sp->env = grown;
    key = spawn_keep(sp, strndup(k, klen));
    val = spawn_keep(sp, strdup(v));
    if (key == NULL || val == NULL)
        return PMIX_ERR_NOMEM;
    sp->env[sp->nenv++] = (pg_kv_t){ key, val };
    return PMIX_SUCCESS;
}

/* info[] of one app (or the job's) -> the gateway's spawn info keys. */
static pmix_status_t spawn_info(spawn_in_t *sp, const pmix_info_t *info, size_t n, pg_kv_t *kv,
                                int *nkv)
{
    for (size_t i = 0; i < n; i++) {
        const pmix_value_t *v = &info[i].value;
        char *prefix_bin;

        if (info_is(&info[i], "pmix.envar.set") && v->type == PMIX_ENVAR &&
            v->data.envar.envar != NULL) {
            if (spawn_add_env(sp, v->data.envar.envar, strlen(v->data.envar.envar),
                              v->data.envar.value ? v->data.envar.value : "") != PMIX_SUCCESS)
                return PMIX_ERR_NOMEM;
            continue;
        }
        if (v->type != PMIX_STRING || v->data.string == NULL || *nkv >= 3)
            continue;
        if (info_is(&info[i], PMIX_WDIR))
            kv[(*nkv)++] = (pg_kv_t){ "wdir", v->data.string };
        else if (info_is(&info[i], "pmix.host"))
            kv[(*nkv)++] = (pg_kv_t){ "host", v->data.string };
        else if (info_is(&info[i], "pmix.prefix")) {
            if (asprintf(&prefix_bin, "%s/bin", v->data.string) < 0 ||
                spawn_keep(sp, prefix_bin) == NULL)
                return PMIX_ERR_NOMEM;
            kv[(*nkv)++] = (pg_kv_t){ "path", prefix_bin };
        }
    }
    return PMIX_SUCCESS;
}

static pmix_status_t spawn_decode(pmix_data_buffer_t *b, spawn_in_t *sp)
{
    pmix_status_t rc;

    if ((rc = pg_pmix_unpack_array(b, (void **)&sp->jinfo, &sp->njinfo, PMIX_INFO)) !=
            PMIX_SUCCESS ||
        (rc = pg_pmix_unpack_one(b, &sp->napps, PMIX_UINT32)) != PMIX_SUCCESS)
        return rc;
    if (sp->napps == 0 || sp->napps > 4096)
        return PMIX_ERR_BAD_PARAM;
    sp->apps = calloc(sp->napps, sizeof(*sp->apps));
    sp->cmds = calloc(sp->napps, sizeof(*sp->cmds));
    sp->kv = calloc((size_t)sp->napps * 4, sizeof(*sp->kv));
    if (sp->apps == NULL || sp->cmds == NULL || sp->kv == NULL)
        return PMIX_ERR_NOMEM;
    for (uint32_t a = 0; a < sp->napps; a++) {
        pmix_app_t *app = &sp->apps[a];
        pg_kv_t *kv = &sp->kv[a * 4];
        int nkv = 0, argc = 0;

        if ((rc = spawn_unpack_app(b, app)) != PMIX_SUCCESS)
            return rc;
        if (app->cwd != NULL && app->cwd[0] != '\0')
            kv[nkv++] = (pg_kv_t){ "wdir", app->cwd };
        if ((rc = spawn_info(sp, sp->jinfo, sp->njinfo, kv, &nkv)) != PMIX_SUCCESS ||
            (rc = spawn_info(sp, app->info, app->ninfo, kv, &nkv)) != PMIX_SUCCESS)
            return rc;
        for (char **e = app->env; *e != NULL; e++) {
            const char *eq = strchr(*e, '=');

            if (eq != NULL && eq > *e && spawn_add_env(sp, *e, (size_t)(eq - *e), eq + 1) != PMIX_SUCCESS)
                return PMIX_ERR_NOMEM;
        }
        while (app->argv[argc] != NULL)
            argc++;
        /* argv[0] is the program (the Standard's pmix_app_t) */
        sp->cmds[a] = (pg_spawn_cmd_t){
            .command = app->cmd, .maxprocs = app->maxprocs, .argc = argc > 0 ? argc - 1 : 0,
            .argv = (const char *const *)(argc > 0 ? app->argv + 1 : app->argv),
            .ninfo = nkv, .info = kv,
        };
    }
    return PMIX_SUCCESS;
}

static void spawn_done(const pg_spawn_result_t *res, void *cbdata)
{
    pmix_req_t *r = cbdata;
    pmix_data_buffer_t buf;
    const char *nspace = res->jobid != NULL ? res->jobid : "";
    pmix_status_t st = res->rc;

    if (r->s != NULL) { /* the host logged why a spawn failed */
        pg_buffer_construct(&buf);
        if (pg_pmix_msg_begin_reply(&buf, r->cmd, r->id, st) == PMIX_SUCCESS &&
            pg_pmix_pack_one(&buf, &nspace, PMIX_STRING) == PMIX_SUCCESS)
            (void)reply_send(r->s->peer, &buf);
        else
            pg_buffer_destruct(&buf);
    }
    req_free(r);
}

/* Is boolean attribute `key` set (true) in the spawn's job info? */
static bool spawn_asks(const spawn_in_t *sp, const char *key)
{
    for (size_t i = 0; i < sp->njinfo; i++)
        if (info_is(&sp->jinfo[i], key) && info_true(&sp->jinfo[i]))
            return true;
    return false;
}

/* PMIx_Spawn: the host starts the job; the reply names its namespace. */
static int cmd_spawn(pmix_in_t *in)
{
    spawn_in_t sp = { 0 };
    pmix_status_t rc = spawn_decode(in->args, &sp);
    pmix_req_t *r;
    pg_spawn_req_t req;

    if (rc == PMIX_SUCCESS && in->peer->ops->spawn == NULL)
        rc = PMIX_ERR_NOT_SUPPORTED;
    if (rc == PMIX_SUCCESS && (r = req_new(in)) == NULL)
        rc = PMIX_ERR_NOMEM;
    if (rc != PMIX_SUCCESS) {
        spawn_in_free(&sp);
        return reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
    }
    req = (pg_spawn_req_t){
        .ncmds = (int)sp.napps, .cmds = sp.cmds, .env = sp.env, .nenv = (int)sp.nenv,
        .notify_end = spawn_asks(&sp, PMIX_NOTIFY_COMPLETION) ||
                      spawn_asks(&sp, PMIX_NOTIFY_JOB_EVENTS),
        .end_silent_ok = spawn_asks(&sp, PMIX_EVENT_SILENT_TERMINATION),
    };
    in->peer->ops->spawn(in->peer, &req, spawn_done, r); /* done always runs */
    spawn_in_free(&sp);
    return PG_HANDLER_OK;
}

/* PMIx_Connect / PMIx_Disconnect: every job of the gateway shares one
 * store, so a connect only checks that each namespace is one of them;
 * gets on a connected namespace then read its keys. */
static int cmd_connect(pmix_in_t *in)
{
    pmix_proc_t *procs = NULL;
    pmix_info_t *info = NULL;
    size_t nprocs = 0, ninfo = 0;
    pmix_status_t rc = PMIX_SUCCESS;
    pg_value_t v;

    if (pg_pmix_unpack_array(in->args, (void **)&procs, &nprocs, PMIX_PROC) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        pg_pmix_array_free(procs, nprocs, PMIX_PROC);
        return PG_HANDLER_FAIL;
    }
    for (size_t i = 0; i < nprocs && rc == PMIX_SUCCESS; i++)
        if (in->peer->job->engine == NULL ||
            pg_ns_attr(in->peer->job->engine, procs[i].nspace, "universeSize", &v) != PMIX_SUCCESS)
            rc = PMIX_ERR_NOT_FOUND;
    pg_pmix_array_free(procs, nprocs, PMIX_PROC);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
}

/* ---- dispatch ------------------------------------------------------------ */

typedef int (*pmix_cmd_fn)(pmix_in_t *in);

static const pmix_cmd_fn cmd_fns[PG_PMIX_CMD_MAX] = {
    [PG_PMIX_CMD_INIT] = cmd_init,         [PG_PMIX_CMD_COMMIT] = cmd_commit,
    [PG_PMIX_CMD_FENCE] = cmd_fence,       [PG_PMIX_CMD_GET] = cmd_get,
    [PG_PMIX_CMD_PUBLISH] = cmd_publish,   [PG_PMIX_CMD_LOOKUP] = cmd_lookup,
    [PG_PMIX_CMD_UNPUBLISH] = cmd_unpublish, [PG_PMIX_CMD_ABORT] = cmd_abort,
    [PG_PMIX_CMD_FINALIZE] = cmd_finalize, [PG_PMIX_CMD_NOTIFY] = cmd_notify,
    [PG_PMIX_CMD_QUERY] = cmd_query,       [PG_PMIX_CMD_LOG] = cmd_log,
    [PG_PMIX_CMD_GROUP_CONSTRUCT] = cmd_group_construct,
    [PG_PMIX_CMD_GROUP_DESTRUCT] = cmd_group_destruct,
    [PG_PMIX_CMD_GROUP_INVITE] = cmd_group_invite,
    [PG_PMIX_CMD_GROUP_JOIN] = cmd_group_join,
    [PG_PMIX_CMD_GROUP_LEAVE] = cmd_group_leave,
    [PG_PMIX_CMD_JOB_CONTROL] = cmd_job_control,
    [PG_PMIX_CMD_SPAWN] = cmd_spawn, [PG_PMIX_CMD_CONNECT] = cmd_connect,
    [PG_PMIX_CMD_DISCONNECT] = cmd_connect,
};

static int pmix_on_open(pg_peer_t *peer)
{
    pmix_session_t *s = calloc(1, sizeof(*s));

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
    pmix_session_t *s = peer->handler_data;
    pmix_data_buffer_t view;
    pmix_in_t in = { s, peer, 0, 0, &view };

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
        return reply_status(peer, in.cmd == PG_PMIX_CMD_EVENT ? 0 : in.cmd, in.id,
                            PMIX_ERR_NOT_SUPPORTED),
               PG_HANDLER_OK;
    if (!s->inited && in.cmd != PG_PMIX_CMD_INIT && in.cmd != PG_PMIX_CMD_ABORT)
        return reply_status(peer, in.cmd, in.id, PMIX_ERR_INIT), PG_HANDLER_OK;
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

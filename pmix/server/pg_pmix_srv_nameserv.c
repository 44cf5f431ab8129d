/*
 * pg_pmix_srv_nameserv: the name service of the PMIx handler -- publish
 * (all or nothing), lookup (one engine lookup per key, answered together,
 * held with PMIX_WAIT) and unpublish (each key, or everything the process
 * published: the session remembers its keys).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/pg_engine.h"
#include "wire/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server_int.h"
#include "pmix/server/pg_pmix_value.h"
#include "wire/pg_pmix_msg.h"

/* ---- name service ------------------------------------------------------ */

static void session_remember(pg_pmix_session_t *s, const char *key)
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

static void session_forget(pg_pmix_session_t *s, const char *key)
{
    for (size_t i = 0; i < s->npublished; i++)
        if (strcmp(s->published[i], key) == 0) {
            free(s->published[i]);
            s->published[i] = s->published[--s->npublished];
            return;
        }
}

typedef struct name_slot {
    pg_pmix_req_t *r;
    size_t slot;
} name_slot_t;

/* The per-key callback's record (freed by the callback); NULL when out of
 * memory. */
static name_slot_t *name_slot_new(pg_pmix_req_t *r, size_t slot)
{
    name_slot_t *ns = malloc(sizeof(*ns));

    if (ns != NULL)
        *ns = (name_slot_t){ r, slot };
    return ns;
}

/* A request over n keys: pdata[i].key, ok[i]; n + 1 answers outstanding
 * (+1: the starter's own, as callbacks may run inline). */
static pg_pmix_req_t *names_req_new(pg_pmix_in_t *in, size_t n)
{
    pg_pmix_req_t *r = pg_pmix_req_new(in);

    if (r == NULL)
        return NULL;
    r->pdata = n > 0 ? PMIx_Pdata_create(n) : NULL;
    r->ok = calloc(n > 0 ? n : 1, sizeof(*r->ok));
    if ((n > 0 && r->pdata == NULL) || r->ok == NULL) {
        pg_pmix_req_free(r);
        return NULL;
    }
    r->nkeys = n;
    r->outstanding = n + 1;
    return r;
}

/* One key's answer into the request; true when it was the last. */
static bool names_one_done(pg_pmix_req_t *r, size_t slot, pmix_status_t status)
{
    if (slot < r->nkeys)
        r->ok[slot] = status == PMIX_SUCCESS;
    if (status != PMIX_SUCCESS && r->rc == PMIX_SUCCESS)
        r->rc = status;
    return --r->outstanding == 0;
}

static void name_ignore(pmix_status_t status, void *cbdata)
{
    (void)status;
    (void)cbdata;
}

/* Every key of a publish answered: all stand, or the ones that did are
 * taken back (all or nothing). */
static void publish_finish(pg_pmix_req_t *r)
{
    pg_pmix_session_t *s = r->s;

    if (s == NULL)
        goto out; /* the process is gone; its names go with its job */
    for (size_t i = 0; i < r->nkeys; i++) {
        if (!r->ok[i])
            continue;
        if (r->rc == PMIX_SUCCESS) {
            session_remember(s, r->pdata[i].key);
            continue;
        }
        pg_proc_t self = pg_pmix_session_proc(s);
        (void)pg_unpublish(s->peer->job->engine, &self, r->pdata[i].key, name_ignore, NULL);
    }
    (void)pg_pmix_reply_status(s->peer, r->cmd, r->id, r->rc);
out:
    pg_pmix_req_free(r);
}

static void publish_cb(pmix_status_t status, void *cbdata)
{
    name_slot_t ns = *(name_slot_t *)cbdata;

    free(cbdata);
    if (names_one_done(ns.r, ns.slot, status))
        publish_finish(ns.r);
}

/* Publishes every non-directive entry of info[], all or nothing. */
static void publish_start(pg_pmix_in_t *in, pg_engine_t *e, const pmix_info_t *info, size_t n)
{
    pg_proc_t self = pg_pmix_session_proc(in->s);
    pg_pmix_req_t *r;
    size_t count = 0, k = 0;

    for (size_t i = 0; i < n; i++)
        if (!PMIX_CHECK_RESERVED_KEY(info[i].key)) /* PMIX_RANGE, PMIX_TIMEOUT...: directives */
            count++;
    if (count == 0) {
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_ERR_BAD_PARAM);
        return;
    }
    r = names_req_new(in, count);
    if (r == NULL) {
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_ERR_NOMEM);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        pmix_data_buffer_t scratch;
        pmix_status_t rc;
        name_slot_t *ns;
        pg_value_t v;

        if (PMIX_CHECK_RESERVED_KEY(info[i].key))
            continue;
        PMIX_LOAD_KEY(r->pdata[k].key, info[i].key);
        pg_buffer_construct(&scratch);
        rc = pg_pmix_value_to_engine(&info[i].value, &scratch, &v);
        ns = rc == PMIX_SUCCESS ? name_slot_new(r, k) : NULL;
        if (rc == PMIX_SUCCESS && ns == NULL)
            rc = PMIX_ERR_NOMEM;
        if (rc == PMIX_SUCCESS)
            (void)pg_publish(e, &self, info[i].key, &v, publish_cb, ns);
        else
            (void)names_one_done(r, k, rc);
        pg_buffer_destruct(&scratch);
        k++;
    }
    if (names_one_done(r, SIZE_MAX, PMIX_SUCCESS))
        publish_finish(r);
}

int pg_pmix_serve_publish(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;

    if (pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS)
        return PG_HANDLER_FAIL;
    if (e == NULL)
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_ERR_NOT_SUPPORTED);
    else
        publish_start(in, e, info, ninfo);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return PG_HANDLER_OK;
}

static void lookup_reply(pg_pmix_req_t *r)
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
        (void)pg_pmix_reply_send(r->s->peer, &buf);
    else {
        pg_buffer_destruct(&buf);
        (void)pg_pmix_reply_status(r->s->peer, r->cmd, r->id, rc);
    }
}

/* Fills the pdata slot this key owns (SIZE_MAX: none, the starter's own
 * count); the last one answers. */
static void lookup_one_done(pg_pmix_req_t *r, size_t slot, pmix_status_t status,
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
    pg_pmix_req_free(r);
}

static void lookup_cb(pmix_status_t status, const pg_value_t *value, const pg_proc_t *publisher,
                      void *cbdata)
{
    name_slot_t ns = *(name_slot_t *)cbdata;

    free(cbdata);
    lookup_one_done(ns.r, ns.slot, status, value, publisher);
}

static void lookup_start(pg_pmix_req_t *r, pg_engine_t *e, const pg_proc_t *self, bool wait,
                         pg_time_t timeout)
{
    pg_peer_t *peer = r->s->peer;
    pg_time_t now = pg_peer_now(peer);

    r->outstanding = r->nkeys + 1; /* +1: callbacks may run inline */
    for (size_t i = 0; i < r->nkeys; i++) {
        name_slot_t *ns = name_slot_new(r, i);

        if (ns == NULL) {
            lookup_one_done(r, i, PMIX_ERR_NOMEM, NULL, NULL);
            continue;
        }
        (void)pg_lookup(e, self, r->pdata[i].key, wait, timeout, now, lookup_cb, ns);
    }
    lookup_one_done(r, SIZE_MAX, PMIX_SUCCESS, NULL, NULL);
}

int pg_pmix_serve_lookup(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
    char **keys = NULL;
    pmix_info_t *info = NULL;
    size_t nkeys = 0, ninfo = 0;
    bool wait = false;
    pg_time_t timeout = 0;
    pg_pmix_req_t *r = NULL;
    int ret = PG_HANDLER_OK;

    if (pg_pmix_unpack_array(in->args, (void **)&keys, &nkeys, PMIX_STRING) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        ret = PG_HANDLER_FAIL;
        goto out;
    }
    for (size_t i = 0; i < ninfo; i++) {
        if (pg_pmix_info_is(&info[i], PMIX_WAIT))
            wait = true;
        else if (pg_pmix_info_is(&info[i], PMIX_TIMEOUT))
            timeout = pg_pmix_info_timeout(&info[i]);
    }
    for (size_t i = 0; i < nkeys; i++)
        if (keys[i] == NULL || keys[i][0] == '\0') {
            (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_ERR_BAD_PARAM);
            goto out;
        }
    if (e == NULL || nkeys == 0) {
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id,
                                   e == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_BAD_PARAM);
        goto out;
    }
    r = pg_pmix_req_new(in);
    if (r != NULL && (r->pdata = PMIx_Pdata_create(nkeys)) != NULL) {
        r->nkeys = nkeys;
        for (size_t i = 0; i < nkeys; i++)
            PMIX_LOAD_KEY(r->pdata[i].key, keys[i]);
        lookup_start(r, e, &self, wait, timeout);
        r = NULL;
    } else
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_ERR_NOMEM);
out:
    pg_pmix_req_free(r);
    pg_pmix_array_free(keys, nkeys, PMIX_STRING);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return ret;
}

/* One key's unpublish answered (slot SIZE_MAX: the starter's own count);
 * the last one replies. */
static void unpublish_one_done(pg_pmix_req_t *r, size_t slot, pmix_status_t status)
{
    if (status == PMIX_SUCCESS && slot < r->nkeys && r->s != NULL)
        session_forget(r->s, r->pdata[slot].key);
    if (!names_one_done(r, slot, status))
        return;
    if (r->s != NULL)
        (void)pg_pmix_reply_status(r->s->peer, r->cmd, r->id, r->rc);
    pg_pmix_req_free(r);
}

static void unpublish_cb(pmix_status_t status, void *cbdata)
{
    name_slot_t ns = *(name_slot_t *)cbdata;

    free(cbdata);
    unpublish_one_done(ns.r, ns.slot, status);
}

/* Unpublishes keys[] (NULL entries are refused), or with none everything
 * the process published; the first failure is the answer.  The keys are
 * copied first: an answer that comes inline changes the session's list. */
static void unpublish_start(pg_pmix_in_t *in, pg_engine_t *e, char **keys, size_t nkeys)
{
    pg_pmix_session_t *s = in->s;
    pg_proc_t self = pg_pmix_session_proc(s);
    size_t n = nkeys > 0 ? nkeys : s->npublished;
    pg_pmix_req_t *r = names_req_new(in, n);

    if (r == NULL) {
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_ERR_NOMEM);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const char *key = nkeys > 0 ? keys[i] : s->published[i];

        r->ok[i] = key != NULL; /* until its answer */
        if (key != NULL)
            PMIX_LOAD_KEY(r->pdata[i].key, key);
    }
    for (size_t i = 0; i < n; i++) {
        name_slot_t *ns = r->ok[i] ? name_slot_new(r, i) : NULL;

        if (ns == NULL)
            unpublish_one_done(r, i, r->ok[i] ? PMIX_ERR_NOMEM : PMIX_ERR_BAD_PARAM);
        else
            (void)pg_unpublish(e, &self, r->pdata[i].key, unpublish_cb, ns);
    }
    unpublish_one_done(r, SIZE_MAX, PMIX_SUCCESS);
}

int pg_pmix_serve_unpublish(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    char **keys = NULL;
    pmix_info_t *info = NULL;
    size_t nkeys = 0, ninfo = 0;

    if (pg_pmix_unpack_array(in->args, (void **)&keys, &nkeys, PMIX_STRING) != PMIX_SUCCESS ||
        pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS) {
        pg_pmix_array_free(keys, nkeys, PMIX_STRING);
        return PG_HANDLER_FAIL;
    }
    if (e == NULL)
        (void)pg_pmix_reply_status(in->peer, in->cmd, in->id, PMIX_ERR_NOT_SUPPORTED);
    else
        unpublish_start(in, e, keys, nkeys);
    pg_pmix_array_free(keys, nkeys, PMIX_STRING);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return PG_HANDLER_OK;
}

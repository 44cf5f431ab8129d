/*
 * pg_pmix_srv_nameserv: the name service of the PMIx handler -- publish
 * (all or nothing), lookup (one engine lookup per key, answered together,
 * held with PMIX_WAIT) and unpublish (each key, or everything the process
 * published: the session remembers its keys).
 */
#include <stdlib.h>
#include <string.h>

#include "pmix/engine/pg_engine.h"
#include "pmix/pack/pg_pack.h"
#include "pmix/server/pg_pmix_server_int.h"
#include "pmix/server/pg_pmix_value.h"
#include "pmix/transport/pg_pmix_msg.h"

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

/* Publishes every non-directive entry; all or nothing. */
static pmix_status_t publish_all(pg_pmix_session_t *s, pg_engine_t *e, const pmix_info_t *info,
                                 size_t n)
{
    pg_proc_t self = pg_pmix_session_proc(s);
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

int pg_pmix_serve_publish(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    pmix_status_t rc;

    if (pg_pmix_unpack_array(in->args, (void **)&info, &ninfo, PMIX_INFO) != PMIX_SUCCESS)
        return PG_HANDLER_FAIL;
    rc = e == NULL ? PMIX_ERR_NOT_SUPPORTED : publish_all(in->s, e, info, ninfo);
    pg_pmix_array_free(info, ninfo, PMIX_INFO);
    return pg_pmix_reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
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

typedef struct lookup_slot {
    pg_pmix_req_t *r;
    size_t slot;
} lookup_slot_t;

static void lookup_cb(pmix_status_t status, const pg_value_t *value, const pg_proc_t *publisher,
                      void *cbdata)
{
    lookup_slot_t ls = *(lookup_slot_t *)cbdata;

    free(cbdata);
    lookup_one_done(ls.r, ls.slot, status, value, publisher);
}

static void lookup_start(pg_pmix_req_t *r, pg_engine_t *e, const pg_proc_t *self, bool wait,
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

int pg_pmix_serve_unpublish(pg_pmix_in_t *in)
{
    pg_engine_t *e = in->peer->job->engine;
    pg_proc_t self = pg_pmix_session_proc(in->s);
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
    return pg_pmix_reply_status(in->peer, in->cmd, in->id, rc), PG_HANDLER_OK;
}

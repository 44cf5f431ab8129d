/*
 * pg_modex.c: the blob in which committed data travels between engines (a
 * fence's collected data, a direct-modex reply).
 *
 * Why its own format rather than pg_pack: the engine stores values as opaque
 * type-tagged bytes and must not depend on the PMIx pack layout.  Every
 * integer is big-endian so heterogeneous peers agree, and every length is
 * checked against the bytes left: a corrupt or truncated blob is
 * PMIX_ERR_UNPACK_FAILURE, never an overread.
 *
 *   record := u16 nslen, nspace, u32 rank, u16 keylen, key,
 *             u8 scope, u16 type, u32 size, bytes      (repeated)
 */
#include "engine/pg_engine_int.h"

#include <stdlib.h>
#include <utlist.h>

typedef struct {
    unsigned char *p;
    size_t len, cap;
    bool failed;
} wbuf_t;

static void w_bytes(wbuf_t *w, const void *src, size_t n)
{
    if (w->failed)
        return;
    if (w->len + n > w->cap) {
        size_t cap = (w->len + n) * 2 + 64;
        unsigned char *t = realloc(w->p, cap);
        if (t == NULL) {
            w->failed = true;
            return;
        }
        w->p = t;
        w->cap = cap;
    }
    memcpy(w->p + w->len, src, n);
    w->len += n;
}

static void w_uint(wbuf_t *w, uint64_t x, size_t n)
{
    unsigned char b[8];
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(x >> (8 * (n - 1 - i)));
    w_bytes(w, b, n);
}

static void w_record(wbuf_t *w, const pg_ns_t *job, const char *key, const pg_kv_t *kv)
{
    size_t nl = strlen(job->nspace), kl = strlen(key);
    w_uint(w, nl, 2);
    w_bytes(w, job->nspace, nl);
    w_uint(w, kv->rank, 4);
    w_uint(w, kl, 2);
    w_bytes(w, key, kl);
    w_uint(w, kv->scope, 1);
    w_uint(w, kv->type, 2);
    w_uint(w, kv->size, 4);
    w_bytes(w, kv->data, kv->size);
}

pmix_status_t pg_modex_build(pg_ns_t *job, pg_modex_want_t want, void *ctx, void **blob,
                             size_t *size)
{
    wbuf_t w = { NULL, 0, 0, false };
    pg_slot_t *s;
    for (s = job->slots; s != NULL; s = s->hh.next) {
        uint32_t n = pg_slot_ncells(job, s);
        for (uint32_t i = 0; i < n; i++) {
            pg_kv_t *kv = s->cells[i] != NULL ? pg_kv_published(s->cells[i]) : NULL;
            if (kv != NULL && (kv->scope == PMIX_GLOBAL || kv->scope == PMIX_REMOTE) &&
                want(ctx, kv))
                w_record(&w, job, s->key, kv);
        }
    }
    if (w.failed) {
        free(w.p);
        return PMIX_ERR_NOMEM;
    }
    *blob = w.p;
    *size = w.len;
    return PMIX_SUCCESS;
}

typedef struct {
    const unsigned char *p;
    size_t left;
} rbuf_t;

static bool r_uint(rbuf_t *r, size_t n, uint64_t *x)
{
    if (r->left < n)
        return false;
    *x = 0;
    for (size_t i = 0; i < n; i++)
        *x = (*x << 8) | r->p[i];
    r->p += n;
    r->left -= n;
    return true;
}

static bool r_bytes(rbuf_t *r, size_t n, const unsigned char **out)
{
    if (r->left < n)
        return false;
    *out = r->p;
    r->p += n;
    r->left -= n;
    return true;
}

/* Reads one record; strings are copied to NUL-terminated buffers. */
static pmix_status_t ingest_one(pg_engine_t *e, rbuf_t *r)
{
    uint64_t nl, rank, kl, scope, type, size;
    const unsigned char *ns, *key, *data;
    char nsbuf[PMIX_MAX_NSLEN + 1], keybuf[PMIX_MAX_KEYLEN + 1];

    if (!r_uint(r, 2, &nl) || nl > PMIX_MAX_NSLEN || !r_bytes(r, nl, &ns) ||
        !r_uint(r, 4, &rank) || !r_uint(r, 2, &kl) || kl == 0 || kl > PMIX_MAX_KEYLEN ||
        !r_bytes(r, kl, &key) || !r_uint(r, 1, &scope) || !r_uint(r, 2, &type) ||
        !r_uint(r, 4, &size) || !r_bytes(r, size, &data))
        return PMIX_ERR_UNPACK_FAILURE;
    memcpy(nsbuf, ns, nl);
    nsbuf[nl] = '\0';
    memcpy(keybuf, key, kl);
    keybuf[kl] = '\0';
    if (strlen(keybuf) != kl || strlen(nsbuf) != nl)
        return PMIX_ERR_UNPACK_FAILURE; /* embedded NUL */
    pg_ns_t *job = pg_ns_find(e, nsbuf);
    if (job == NULL)
        return PMIX_SUCCESS; /* a job this engine does not know: not ours to keep */
    pg_value_t v = pg_value_bytes((pmix_data_type_t)type, data, size);
    return pg_store_set_published(job, keybuf, (pmix_rank_t)rank, (pmix_scope_t)scope, &v);
}

pmix_status_t pg_modex_ingest(pg_engine_t *e, const void *data, size_t size)
{
    rbuf_t r = { data, size };
    while (r.left > 0) {
        pmix_status_t rc = ingest_one(e, &r);
        if (rc != PMIX_SUCCESS)
            return rc;
    }
    return PMIX_SUCCESS;
}

pmix_status_t pg_modex_host_ingest(pg_engine_t *e, const void *data, size_t size)
{
    if (e == NULL || (data == NULL && size > 0))
        return PMIX_ERR_BAD_PARAM;
    return pg_modex_ingest(e, data, size);
}

static bool want_rank(void *ctx, const pg_kv_t *kv)
{
    return *(const pmix_rank_t *)ctx == kv->rank;
}

pmix_status_t pg_proc_modex(pg_engine_t *e, const pg_proc_t *proc, void **blob, size_t *size)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, proc, &rc);
    if (job == NULL)
        return rc;
    if (blob == NULL || size == NULL)
        return PMIX_ERR_BAD_PARAM;
    pmix_rank_t rank = proc->rank;
    return pg_modex_build(job, want_rank, &rank, blob, size);
}

pmix_status_t pg_dmodex_host_done(pg_engine_t *e, uint64_t id, pmix_status_t status,
                                  const void *data, size_t size)
{
    pg_req_t *r;
    if (e == NULL || id == 0)
        return PMIX_ERR_BAD_PARAM;
    DL_FOREACH(e->held, r)
        if (r->dmodex_id == id)
            break;
    if (r == NULL)
        return PMIX_ERR_NOT_FOUND; /* stale: timed out or its job ended */
    r->dmodex_id = 0; /* answered: nothing to cancel when it completes */
    if (status == PMIX_SUCCESS && data != NULL && size > 0)
        status = pg_modex_ingest(e, data, size);
    if (r->held) /* the ingest did not bring the key */
        pg_req_complete(e, r, status == PMIX_SUCCESS ? PMIX_ERR_NOT_FOUND : status, NULL);
    pg_engine_flush(e);
    return PMIX_SUCCESS;
}

/*
 * pg_cache: own puts and cached values of libpmix (see pg_cache.h).
 * Two uthash tables; entry keys are built as "nspace NUL rank(4 bytes) key".
 */
#include "pmix/client/pg_cache.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "wire/pack/pg_pack.h"

typedef struct own_put {
    char *key;
    pmix_scope_t scope;
    pmix_value_t value;
    bool staged;
    size_t order;            /* put order, so commits replay in order */
    UT_hash_handle hh;
} own_put_t;

typedef struct cached {
    char *id;                /* nspace NUL rank key */
    size_t idlen;
    pmix_value_t value;
    bool permanent;
    bool reserved;           /* a reserved key's ("pmix" prefix) */
    UT_hash_handle hh;
} cached_t;

struct pg_cache {
    own_put_t *own;
    cached_t *values;
    /* Entries of non-reserved keys (fetched values, PMIx_Store_internal):
     * while there are none -- a wire-up's gets come from the segment --
     * a lookup of such a key skips the hash (N^2 misses in a wire-up). */
    size_t nplain;
    size_t nstaged;
    size_t next_order;
};

pg_cache_t *pg_cache_new(void)
{
    return calloc(1, sizeof(pg_cache_t));
}

static void own_free(own_put_t *p)
{
    pg_value_destruct(&p->value);
    free(p->key);
    free(p);
}

static void cached_free(cached_t *v)
{
    pg_value_destruct(&v->value);
    free(v->id);
    free(v);
}

void pg_cache_free(pg_cache_t *c)
{
    own_put_t *p, *ptmp;
    cached_t *v, *vtmp;

    if (c == NULL)
        return;
    HASH_ITER(hh, c->own, p, ptmp) {
        HASH_DELETE(hh, c->own, p);
        own_free(p);
    }
    HASH_ITER(hh, c->values, v, vtmp) {
        HASH_DELETE(hh, c->values, v);
        cached_free(v);
    }
    free(c);
}

pmix_status_t pg_cache_put_own(pg_cache_t *c, pmix_scope_t scope, const char *key,
                               const pmix_value_t *val)
{
    own_put_t *p = NULL;
    pmix_value_t copy;
    pmix_status_t rc;

    HASH_FIND_STR(c->own, key, p);
    if (p != NULL && p->scope != scope)
        return PMIX_ERR_BAD_PARAM;
    if ((rc = pg_value_copy(&copy, val)) != PMIX_SUCCESS)
        return rc;
    if (p == NULL) {
        p = calloc(1, sizeof(*p));
        if (p == NULL || (p->key = strdup(key)) == NULL) {
            free(p);
            pg_value_destruct(&copy);
            return PMIX_ERR_NOMEM;
        }
        p->scope = scope;
        HASH_ADD_KEYPTR(hh, c->own, p->key, strlen(p->key), p);
    } else
        pg_value_destruct(&p->value);
    p->value = copy;
    if (!p->staged)
        c->nstaged++;
    p->staged = true;
    p->order = c->next_order++;
    return PMIX_SUCCESS;
}

const pmix_value_t *pg_cache_own(const pg_cache_t *c, const char *key)
{
    own_put_t *p = NULL;

    HASH_FIND_STR(c->own, key, p);
    return p != NULL ? &p->value : NULL;
}

static int by_order(const void *a, const void *b)
{
    const own_put_t *x = *(own_put_t *const *)a, *y = *(own_put_t *const *)b;

    return x->order < y->order ? -1 : x->order > y->order;
}

pmix_status_t pg_cache_each_staged(const pg_cache_t *c, pg_cache_staged_fn fn, void *arg)
{
    own_put_t **list, *p, *tmp;
    size_t n = 0;
    pmix_status_t rc = PMIX_SUCCESS;

    if (c->nstaged == 0)
        return PMIX_SUCCESS;
    list = malloc(c->nstaged * sizeof(*list));
    if (list == NULL)
        return PMIX_ERR_NOMEM;
    HASH_ITER(hh, c->own, p, tmp)
        if (p->staged && n < c->nstaged)
            list[n++] = p;
    qsort(list, n, sizeof(*list), by_order);
    for (size_t i = 0; i < n && rc == PMIX_SUCCESS; i++)
        rc = fn(list[i]->scope, list[i]->key, &list[i]->value, arg);
    free(list);
    return rc;
}

size_t pg_cache_nstaged(const pg_cache_t *c)
{
    return c->nstaged;
}

void pg_cache_commit_done(pg_cache_t *c)
{
    own_put_t *p, *tmp;

    HASH_ITER(hh, c->own, p, tmp)
        p->staged = false;
    c->nstaged = 0;
}

/* "nspace NUL rank key" as a malloc'd byte string. */
static char *entry_id(const char *nspace, pmix_rank_t rank, const char *key, size_t *len)
{
    size_t nl = strlen(nspace), kl = strlen(key);
    char *id = malloc(nl + 1 + sizeof(rank) + kl);

    if (id == NULL)
        return NULL;
    memcpy(id, nspace, nl + 1);
    memcpy(id + nl + 1, &rank, sizeof(rank));
    memcpy(id + nl + 1 + sizeof(rank), key, kl);
    *len = nl + 1 + sizeof(rank) + kl;
    return id;
}

/* Looks the id up from the stack: a get looks here first, N^2 times in a
 * wire-up, and mostly finds nothing (docs/performance.md, "Own clients
 * at scale"). */
static cached_t *cached_find(const pg_cache_t *c, const char *nspace, pmix_rank_t rank,
                             const char *key)
{
    char id[PMIX_MAX_NSLEN + 1 + sizeof(rank) + PMIX_MAX_KEYLEN];
    size_t nl = strnlen(nspace, PMIX_MAX_NSLEN), kl = strnlen(key, PMIX_MAX_KEYLEN);
    cached_t *v = NULL;

    if (c->values == NULL)
        return NULL;
    memcpy(id, nspace, nl);
    id[nl] = '\0';
    memcpy(id + nl + 1, &rank, sizeof(rank));
    memcpy(id + nl + 1 + sizeof(rank), key, kl);
    HASH_FIND(hh, c->values, id, nl + 1 + sizeof(rank) + kl, v);
    return v;
}

pmix_status_t pg_cache_store(pg_cache_t *c, const char *nspace, pmix_rank_t rank,
                             const char *key, const pmix_value_t *val, bool permanent)
{
    cached_t *v = cached_find(c, nspace, rank, key);
    pmix_value_t copy;
    pmix_status_t rc;

    if ((rc = pg_value_copy(&copy, val)) != PMIX_SUCCESS)
        return rc;
    if (v == NULL) {
        v = calloc(1, sizeof(*v));
        if (v == NULL || (v->id = entry_id(nspace, rank, key, &v->idlen)) == NULL) {
            free(v);
            pg_value_destruct(&copy);
            return PMIX_ERR_NOMEM;
        }
        HASH_ADD_KEYPTR(hh, c->values, v->id, v->idlen, v);
        v->reserved = PMIX_CHECK_RESERVED_KEY(key);
        c->nplain += !v->reserved;
    } else
        pg_value_destruct(&v->value);
    v->value = copy;
    v->permanent = v->permanent || permanent;
    return PMIX_SUCCESS;
}

const pmix_value_t *pg_cache_find(const pg_cache_t *c, const char *nspace, pmix_rank_t rank,
                                  const char *key)
{
    cached_t *v = c->nplain > 0 || PMIX_CHECK_RESERVED_KEY(key) ? cached_find(c, nspace, rank, key)
                                                                   : NULL;

    return v != NULL ? &v->value : NULL;
}

void pg_cache_forget_fetched(pg_cache_t *c)
{
    cached_t *v, *tmp;

    HASH_ITER(hh, c->values, v, tmp)
        if (!v->permanent) {
            HASH_DELETE(hh, c->values, v);
            c->nplain -= !v->reserved;
            cached_free(v);
        }
}

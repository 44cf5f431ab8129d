/*
 * pg_cl_kv: uthash-backed string map for the client libraries' local stores
 * (see pg_cl_kv.h).
 */
#include "client/pg_cl_kv.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct pg_cl_kv_entry {
    char *key;      /* NUL-terminated copy */
    char *val;      /* NUL-terminated copy */
    size_t vlen;
    UT_hash_handle hh;
} pg_cl_kv_entry_t;

struct pg_cl_kv {
    pg_cl_kv_entry_t *head;
};

pg_cl_kv_t *pg_cl_kv_new(void)
{
    return calloc(1, sizeof(pg_cl_kv_t));
}

static void entry_free(pg_cl_kv_entry_t *e)
{
    free(e->key);
    free(e->val);
    free(e);
}

void pg_cl_kv_free(pg_cl_kv_t *kv)
{
    pg_cl_kv_entry_t *e, *tmp;

    if (kv == NULL)
        return;
    HASH_ITER(hh, kv->head, e, tmp) {
        HASH_DEL(kv->head, e);
        entry_free(e);
    }
    free(kv);
}

static char *dup_bytes(pg_str_t s)
{
    char *p = malloc((size_t)s.len + 1);

    if (p != NULL) {
        if (s.len)
            memcpy(p, s.ptr, s.len);
        p[s.len] = '\0';
    }
    return p;
}

int pg_cl_kv_put(pg_cl_kv_t *kv, pg_str_t key, pg_str_t val)
{
    pg_cl_kv_entry_t *e;
    char *copy = dup_bytes(val);

    if (copy == NULL)
        return -1;
    HASH_FIND(hh, kv->head, key.ptr, key.len, e);
    if (e != NULL) {
        free(e->val);
        e->val = copy;
        e->vlen = val.len;
        return 0;
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL || (e->key = dup_bytes(key)) == NULL) {
        free(e);
        free(copy);
        return -1;
    }
    e->val = copy;
    e->vlen = val.len;
    HASH_ADD_KEYPTR(hh, kv->head, e->key, key.len, e);
    return 0;
}

int pg_cl_kv_put_cstr(pg_cl_kv_t *kv, const char *key, const char *val)
{
    pg_str_t k = { key, (uint32_t)strlen(key) }, v = { val, (uint32_t)strlen(val) };

    return pg_cl_kv_put(kv, k, v);
}

const char *pg_cl_kv_get(const pg_cl_kv_t *kv, const char *key, size_t *len)
{
    pg_cl_kv_entry_t *e;

    HASH_FIND(hh, kv->head, key, strlen(key), e);
    if (e == NULL)
        return NULL;
    if (len != NULL)
        *len = e->vlen;
    return e->val;
}

int pg_cl_kv_del(pg_cl_kv_t *kv, const char *key)
{
    pg_cl_kv_entry_t *e;

    HASH_FIND(hh, kv->head, key, strlen(key), e);
    if (e == NULL)
        return -1;
    HASH_DEL(kv->head, e);
    entry_free(e);
    return 0;
}

size_t pg_cl_kv_count(const pg_cl_kv_t *kv)
{
    return HASH_COUNT(kv->head);
}

/*
 * pg_cl_kv: a small string -> string map the client libraries keep locally:
 * the PMI-1 key cache (own puts, keys the server pushed at a barrier) and the
 * whole store of a singleton (no process manager).  Keys and values are
 * copied in; a value may contain any byte (its length is kept).
 */
#ifndef PG_CL_KV_H
#define PG_CL_KV_H

#include <stddef.h>

#include "wire/pg_wire.h"

typedef struct pg_cl_kv pg_cl_kv_t;

/* Returns an empty map (NULL when out of memory); free with pg_cl_kv_free. */
pg_cl_kv_t *pg_cl_kv_new(void);
void pg_cl_kv_free(pg_cl_kv_t *kv);

/* Inserts or replaces (the last put wins, as in hydra and Slurm).
 * 0, or -1 when out of memory (the map is unchanged then). */
int pg_cl_kv_put(pg_cl_kv_t *kv, pg_str_t key, pg_str_t val);
int pg_cl_kv_put_cstr(pg_cl_kv_t *kv, const char *key, const char *val);

/* The value of key, or NULL.  The pointer (NUL-terminated, *len bytes
 * before the NUL; len may be NULL) is owned by the map and stays valid until
 * the key is replaced or removed or the map is freed. */
const char *pg_cl_kv_get(const pg_cl_kv_t *kv, const char *key, size_t *len);

/* Removes key: 0, or -1 if it was absent. */
int pg_cl_kv_del(pg_cl_kv_t *kv, const char *key);

size_t pg_cl_kv_count(const pg_cl_kv_t *kv);

#endif

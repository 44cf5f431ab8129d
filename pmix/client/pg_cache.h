/*
 * pg_cache: libpmix's client-side data: the process's own puts and the
 * values it learned from the gateway.
 *
 * Why it exists: the Standard's retrieval order starts in the client
 * ("check the local cache; stop there with PMIX_OPTIONAL"), a process must
 * read back its own puts before commit, and reserved job data must be
 * answerable without a round trip (Open MPI asks for everything with
 * PMIX_OPTIONAL).  Three kinds of entries:
 *   - own puts: key -> (scope, value, staged-since-last-commit);
 *   - permanent values: reserved data from the init reply and later
 *     reserved answers, and PMIx_Store_internal values; never dropped;
 *   - fetched values: non-reserved values a Get brought back; dropped when
 *     a fence completes (the fence may have brought newer data; the
 *     Standard's PMIX_GET_REFRESH_CACHE is the explicit form).
 * Entries are keyed by (nspace, rank, key); rank may be PMIX_RANK_WILDCARD
 * (job view) or PMIX_RANK_UNDEF (an UNDEF get's answer).
 *
 * Not thread-safe: the client library calls it under its own lock.
 * Values handed out are borrowed until the next modifying call; values
 * handed in are copied.
 */
#ifndef PG_CACHE_H
#define PG_CACHE_H

#include <stdbool.h>

#include <pmix_common.h>

typedef struct pg_cache pg_cache_t;

pg_cache_t *pg_cache_new(void);
void pg_cache_free(pg_cache_t *c);

/* Stages an own put.  PMIX_ERR_BAD_PARAM when the key was already put in a
 * different scope (the Standard: a key belongs to one scope);
 * PMIX_ERR_NOMEM; pg_value_copy's error for a value it cannot copy. */
pmix_status_t pg_cache_put_own(pg_cache_t *c, pmix_scope_t scope, const char *key,
                               const pmix_value_t *val);
/* The own value of `key`, or NULL. */
const pmix_value_t *pg_cache_own(const pg_cache_t *c, const char *key);

/* Calls fn for every put staged since the last pg_cache_commit_done, in
 * put order; stops at the first non-success and returns it. */
typedef pmix_status_t (*pg_cache_staged_fn)(pmix_scope_t scope, const char *key,
                                            const pmix_value_t *val, void *arg);
pmix_status_t pg_cache_each_staged(const pg_cache_t *c, pg_cache_staged_fn fn, void *arg);
size_t pg_cache_nstaged(const pg_cache_t *c);
/* The staged puts have been committed. */
void pg_cache_commit_done(pg_cache_t *c);

/* Stores a value for (nspace, rank, key), replacing any older one.
 * PMIX_ERR_NOMEM; pg_value_copy's error for a value it cannot copy. */
pmix_status_t pg_cache_store(pg_cache_t *c, const char *nspace, pmix_rank_t rank,
                             const char *key, const pmix_value_t *val, bool permanent);
/* The cached value, or NULL. */
const pmix_value_t *pg_cache_find(const pg_cache_t *c, const char *nspace, pmix_rank_t rank,
                                  const char *key);
/* Drops every fetched (non-permanent) value. */
void pg_cache_forget_fetched(pg_cache_t *c);

#endif

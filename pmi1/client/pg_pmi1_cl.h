/*
 * pg_pmi1_cl: one PMI-1 client session — the protocol logic of libpmi,
 * separate from the PMI_* entry points so the unit tests can run it against
 * a scripted server on a socketpair.  The PMI_* functions (pg_pmi1_api.c)
 * hold one session for the process.
 *
 * What it accepts from servers (docs/wire-protocol.md, "Client libraries"):
 * rc missing (success),
 * keys in any order, a not-found get as rc=-1 or rc=1 (or found=FALSE),
 * extra barrier_out lines, the four-line initack answer, and keyval_cache
 * lines at any point (their pairs go into the key cache).
 *
 * The get path is: the session's key cache (own puts, and the pairs a
 * pmigate server pushes before barrier_out when asked to with the init
 * extension), then the node's shared segment when pmigate offers one
 * (pg_cl_shm.h; the pushes are not asked for then), then the socket.
 *
 * Not thread-safe (the API layer serialises calls), except for abort.  Return values are the
 * PMI_* codes of pmi1/pmi.h.
 */
#ifndef PG_PMI1_CL_H
#define PG_PMI1_CL_H

#include <stdbool.h>
#include <stddef.h>

#include "wire/pg_enc.h"

typedef struct pg_pmi1_cl pg_pmi1_cl_t;

/* A session on fd (owned from now on: closed by finalize or _free), or a
 * singleton when fd < 0.  The server is pmigate (the launcher said so) and
 * the process will then: keyval_cache, ask it for keyval_cache pushes;
 * shm_reader, read its key segment (pg_pmi1_cl_use_shm), which init says
 * so the server writes one.  NULL when out of memory. */
pg_pmi1_cl_t *pg_pmi1_cl_new(int fd, bool keyval_cache, bool shm_reader);
void pg_pmi1_cl_free(pg_pmi1_cl_t *cl);

bool pg_pmi1_cl_is_singleton(const pg_pmi1_cl_t *cl);

/* PMI_PORT mode: "cmd=initack pmiid=<id>" and its four-line answer. */
int pg_pmi1_cl_initack(pg_pmi1_cl_t *cl, int pmiid, int *size, int *rank);

/* The version handshake, get_maxes and get_my_kvsname.  A singleton makes
 * up "singinit_kvs_<pid>_0". */
int pg_pmi1_cl_init(pg_pmi1_cl_t *cl);

const char *pg_pmi1_cl_kvsname(const pg_pmi1_cl_t *cl);
/* The limits a caller must respect; vallen is lowered so that a put line of
 * that value with the longest key still fits the 1024-byte PMI-1 line. */
void pg_pmi1_cl_maxes(const pg_pmi1_cl_t *cl, int *kvsname, int *keylen, int *vallen);

int pg_pmi1_cl_appnum(pg_pmi1_cl_t *cl, int *appnum);
int pg_pmi1_cl_universe_size(pg_pmi1_cl_t *cl, int *size);

int pg_pmi1_cl_put(pg_pmi1_cl_t *cl, const char *kvsname, const char *key, const char *value);
int pg_pmi1_cl_get(pg_pmi1_cl_t *cl, const char *kvsname, const char *key, char *value, int length);
int pg_pmi1_cl_barrier(pg_pmi1_cl_t *cl);

int pg_pmi1_cl_publish(pg_pmi1_cl_t *cl, const char *service, const char *port);
int pg_pmi1_cl_unpublish(pg_pmi1_cl_t *cl, const char *service);
int pg_pmi1_cl_lookup(pg_pmi1_cl_t *cl, const char *service, char *port, size_t cap);

/* Sends one mcmd=spawn block per command and reads the one result.
 * errors[0..nerrors) get the per-process codes (zeros if the server sent
 * none).  A server that cannot spawn answers rc != 0: PMI_FAIL. */
int pg_pmi1_cl_spawn(pg_pmi1_cl_t *cl, int count, const pg_spawn_cmd_t *cmds, int npreput,
                     const pg_kv_t *preput, int *errors, int nerrors);

/* Sends "cmd=abort exitcode=<code>" (no reply exists) and returns.  The
 * one call that may run in another thread while a call of this session
 * waits for its reply: the line is written whole between that call's
 * writes. */
int pg_pmi1_cl_abort(pg_pmi1_cl_t *cl, int code);

/* finalize / finalize_ack, then closes the socket. */
int pg_pmi1_cl_finalize(pg_pmi1_cl_t *cl);

/* Answers gets after each barrier from the node's shared segment at
 * `path` (PMIGATE_SHM), for the process of rank `rank`.  Call after
 * pg_pmi1_cl_init (the segment must be this kvsname's).  0, or -1 when out
 * of memory (gets then use the socket). */
int pg_pmi1_cl_use_shm(pg_pmi1_cl_t *cl, const char *path, int rank);

/* The key cache, for tests: the cached value of key or NULL. */
const char *pg_pmi1_cl_cached(const pg_pmi1_cl_t *cl, const char *key);

#endif

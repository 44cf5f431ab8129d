/*
 * pg_hostpmix: pmigate as a PMIx CLIENT of a host runtime (Open MPI's
 * mpirun hosting OpenPMIx, Slurm's srun --mpi=pmix), for `pmigate proxy`.
 *
 * Why a module of its own: it is the only file that includes OpenPMIx's
 * pmix.h, which must never meet pmigate's own pmix/include/pmix.h in one
 * translation unit (same names, different structs).  This header therefore
 * speaks plain C types only, and the gateway links OpenPMIx's libpmix.so.2
 * (never pmigate's client library of the same soname).
 *
 * The exchange primitive is an allgather between the proxies: every proxy
 * puts one blob under a key numbered by the exchange, commits, and joins a
 * fence of the host's whole namespace (collecting data or not); afterwards
 * it reads every peer's blob.  The fence runs non-blocking: OpenPMIx calls
 * back on its own progress thread, which puts one PMIx_Get_nb per peer in
 * flight at once (their round trips overlap) and, when the last one
 * answered, writes a byte into a pipe; the caller's callback runs on the
 * libevent thread.
 *
 * Ownership: pg_hostpmix_t owns its pipe and event; the blobs handed to a
 * done callback are borrowed for the call.
 */
#ifndef PG_HOSTPMIX_H
#define PG_HOSTPMIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
typedef struct pg_hostpmix pg_hostpmix_t;

/* Connects to the host's PMIx server (PMIx_Init).  NULL when there is none,
 * with a one-line reason in err. */
pg_hostpmix_t *pg_hostpmix_init(char *err, size_t errlen);

/* PMIx_Finalize and free.  NULL is ignored. */
void pg_hostpmix_finalize(pg_hostpmix_t *h);

/* This proxy's rank among the proxies (the node index) and their number. */
int pg_hostpmix_rank(const pg_hostpmix_t *h);
int pg_hostpmix_size(const pg_hostpmix_t *h);

/* Blocking allgather of one blob per proxy (used once, at start, before the
 * event loop runs).  On success *out is a malloc'd array of size() blob
 * pointers (each malloc'd, NULL for an empty blob) and *lens their lengths;
 * free with pg_hostpmix_blobs_free().  Returns 0 or -1 with err set. */
int pg_hostpmix_allgather(pg_hostpmix_t *h, const void *mine, size_t len, void ***out,
                          size_t **lens, char *err, size_t errlen);
void pg_hostpmix_blobs_free(const pg_hostpmix_t *h, void **blobs, size_t *lens);

/* Completion of a non-blocking exchange: status 0 or -1 (reason in msg);
 * blobs/lens as in pg_hostpmix_allgather but without this proxy's own blob
 * (its slot is NULL) and borrowed; NULL when the exchange did not collect. */
typedef void (*pg_hostpmix_done_fn)(void *arg, int status, const char *msg,
                                    void *const *blobs, const size_t *lens);

/* Sets the event loop the non-blocking exchange reports to.  Returns 0/-1. */
int pg_hostpmix_attach(pg_hostpmix_t *h, struct event_base *base);

/* Non-blocking exchange: collect=false is a bare fence (mine is ignored).
 * One exchange at a time: returns -1 when one is running or the host
 * refuses it (done is not called then). */
int pg_hostpmix_exchange(pg_hostpmix_t *h, bool collect, const void *mine, size_t len,
                         pg_hostpmix_done_fn done, void *arg);

/* Where the last non-blocking exchange's time went (ns): put + commit of
 * this proxy's blob, the host's fence (from the put to the completion
 * callback), the gets of the peers' blobs, the hand-off (from OpenPMIx's
 * progress thread finishing to the libevent thread taking over: waiting
 * for a CPU, mostly); and the bytes sent and received.  For `pmigate
 * proxy`'s timing line (PMIGATE_PROXY_TIMES). */
typedef struct pg_hostpmix_times {
    uint64_t put_ns, fence_ns, get_ns, handoff_ns;
    size_t bytes_out, bytes_in;
} pg_hostpmix_times_t;
void pg_hostpmix_last_times(const pg_hostpmix_t *h, pg_hostpmix_times_t *t);

/* Name service through the host (PMIx_Publish / PMIx_Lookup /
 * PMIx_Unpublish, blocking: one round trip to the local host server).  A
 * name's value travels with the rank that published it and its PMIx type.
 * publish returns 0, -1 when the host refuses (taken elsewhere), -2 when
 * the host has no name service.  lookup returns 0 with *data malloc'd (the
 * caller frees), -1 when the host does not know the name.  unpublish
 * returns 0 or -1. */
int pg_hostpmix_publish(pg_hostpmix_t *h, const char *key, unsigned rank, unsigned type,
                        const void *data, size_t len);
int pg_hostpmix_lookup(pg_hostpmix_t *h, const char *key, unsigned *rank, unsigned *type,
                       void **data, size_t *len);
int pg_hostpmix_unpublish(pg_hostpmix_t *h, const char *key);

/* PMIx_Abort of the host's whole namespace with `code`: the host ends every
 * proxy (and so every node's ranks) and exits with code. */
void pg_hostpmix_abort(pg_hostpmix_t *h, int code, const char *msg);

#endif

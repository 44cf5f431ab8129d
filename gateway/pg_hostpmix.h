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
 * puts its blob, commits, and joins a fence of the host's whole namespace
 * (collecting data or not); afterwards it reads every peer's blob.  The
 * blob goes into slots whose sizes never change (docs/architecture.md,
 * "Fence data through the host": OpenPMIx's store keeps and re-sends every
 * key ever put, and corrupts a key re-put with another size): two banks
 * used in turn, each a head slot and pieces of power-of-two sizes no
 * bigger than the host's store takes in one value.  Put and commit run on
 * a worker thread (a large commit takes seconds and must not stop the
 * event loop); the fence's callback, on OpenPMIx's progress thread, puts
 * the gets of every peer's head, then of its pieces, in flight at once,
 * and the last answer writes a byte into a pipe: the caller's callback
 * runs on the libevent thread.
 *
 * Ownership: pg_hostpmix_t owns its pipe, event, worker and the blobs
 * until they are handed to a done callback, which borrows them.
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

/* Sets the event loop the non-blocking exchange and the lost-host event
 * report to, and starts the worker thread.  Returns 0/-1. */
int pg_hostpmix_attach(pg_hostpmix_t *h, struct event_base *base);

/* Non-blocking exchange: collect=false is a bare fence (mine is ignored).
 * mine is copied before this returns.  One exchange at a time: returns -1
 * with err set when one is running, when the host refuses it, or when the
 * slots would hold more than this proxy's share of what the hosts'
 * collectives carry in one fence (32-bit lengths: 2 GiB in all, over the
 * nodes; PMIGATE_HOST_MAX bytes when that is set and smaller) -- done is
 * not called then. */
int pg_hostpmix_exchange(pg_hostpmix_t *h, bool collect, const void *mine, size_t len,
                         pg_hostpmix_done_fn done, void *arg, char *err, size_t errlen);

/* Where the last non-blocking exchange's time went (ns): put + commit of
 * this proxy's slots, the host's fence (from the commit to the completion
 * callback), the gets of the peers' blobs, the hand-off (from OpenPMIx's
 * progress thread finishing to the libevent thread taking over: waiting
 * for a CPU, mostly); the bytes of this proxy's blob and of the peers'
 * blobs; and the bytes the proxy wrote to the host while it put and
 * committed (the kernel's count, /proc/self/io): what the commit carried.
 * For `pmigate proxy`'s timing line (PMIGATE_PROXY_TIMES). */
typedef struct pg_hostpmix_times {
    uint64_t put_ns, fence_ns, get_ns, handoff_ns;
    size_t bytes_out, bytes_in;
    uint64_t commit_bytes; /* 0 when /proc/self/io cannot be read */
} pg_hostpmix_times_t;
void pg_hostpmix_last_times(const pg_hostpmix_t *h, pg_hostpmix_times_t *t);

/* The host's connection to this proxy is lost (OpenPMIx's
 * PMIX_ERR_LOST_CONNECTION event): fn runs once, on the libevent thread. */
void pg_hostpmix_on_lost(pg_hostpmix_t *h, void (*fn)(void *arg), void *arg);

/* PMIx_Abort of the host's whole namespace with `code`: the host ends every
 * proxy (and so every node's ranks) and exits with code.  Only for a
 * failure before the proxies' mesh is up (pg_proxy.c). */
void pg_hostpmix_abort(pg_hostpmix_t *h, int code, const char *msg);

#endif

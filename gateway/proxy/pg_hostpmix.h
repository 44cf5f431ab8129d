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
 * What it asks of the host: the start-up allgather of one small blob per
 * proxy (before the job runs, with a deadline) and non-blocking fences of
 * every proxy without data; the fences' data crosses the proxies' mesh
 * (pg_proxy_fence.c, docs/proxy.md "Fence data"), since OpenPMIx's
 * store re-sends every key a client ever put with every commit.  The
 * fence's callback runs on OpenPMIx's progress thread and writes a byte
 * into a pipe: the caller's callback runs on the libevent thread.
 *
 * Ownership: pg_hostpmix_t owns its pipe and event.
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

/* Allgather of one blob per proxy (used once, at start, before the job's
 * loop runs): the fence is non-blocking and the caller's event loop runs
 * (pg_hostpmix_attach first) until it is over or `deadline`
 * (pg_clock_now() time; 0: none) passed.  On success *out is a malloc'd
 * array of size() blob pointers (each malloc'd, NULL for an empty blob) and
 * *lens their lengths; free with pg_hostpmix_blobs_free().  Returns 0,
 * PG_HOSTPMIX_TIMED_OUT (the deadline passed: err untouched, the host's
 * fence still waits), or -1 with err set. */
enum { PG_HOSTPMIX_TIMED_OUT = -2 };
int pg_hostpmix_allgather(pg_hostpmix_t *h, const void *mine, size_t len, uint64_t deadline,
                          void ***out, size_t **lens, char *err, size_t errlen);
void pg_hostpmix_blobs_free(const pg_hostpmix_t *h, void **blobs, size_t *lens);

/* Completion of a non-blocking fence: status 0, or -1 with the reason in
 * msg. */
typedef void (*pg_hostpmix_done_fn)(void *arg, int status, const char *msg);

/* Sets the event loop the non-blocking fence and the lost-host event
 * report to.  Returns 0/-1. */
int pg_hostpmix_attach(pg_hostpmix_t *h, struct event_base *base);

/* Non-blocking fence of every proxy, without data of its own (it asks for
 * collection: Slurm's pmix plugin does not wait for the others in a fence
 * without it).  One at a time:
 * returns -1 with err set when one is running or the host refuses it --
 * done is not called then. */
int pg_hostpmix_fence(pg_hostpmix_t *h, pg_hostpmix_done_fn done, void *arg, char *err,
                      size_t errlen);

/* Where the last fence's time went (ns): the host's fence (from the call
 * to the completion callback), the hand-off (from OpenPMIx's progress
 * thread to the libevent thread taking over: waiting for a CPU, mostly).
 * For `pmigate proxy`'s timing line (PMIGATE_PROXY_TIMES). */
typedef struct pg_hostpmix_times {
    uint64_t fence_ns, handoff_ns;
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

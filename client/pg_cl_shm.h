/*
 * pg_cl_shm: the client end of the node-shared key segment
 * (docs/shm-segment.md).  After each whole-job fence pmigate publishes the
 * job's committed data as one read-only file per node; libpmi and libpmi2
 * map it once per fence and answer gets from it, so a get after a fence
 * costs a hash lookup instead of a socket round trip.  The segment is
 * mapped at the first lookup after the fence, not at the fence.
 *
 * The rule that keeps it correct: a lookup answers only when the mapped
 * segment was written for the fence this process completed last
 * (generation == the caller's fence count) and the entry says its value is
 * what this dialect's server would send verbatim.  Everything else -- no
 * segment, a stale or corrupt one, a key it does not hold -- returns
 * PG_CL_SHM_ASK and the caller asks the server as before.
 *
 * libpmix uses the same reader for typed values (pg_cl_shm_get_packed),
 * and, since PMIx processes may commit between fences, also maps the
 * commit table beside the segment (wire/pg_shm_format.h).
 *
 * Thread-safety: lookups may run in many threads at once; refresh and free
 * exclude them (a read-write lock), so a mapping is never unmapped under a
 * reader.  Ownership: the handle owns its path copy and its mapping.
 */
#ifndef PG_CL_SHM_H
#define PG_CL_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pg_cl_shm pg_cl_shm_t;

/* A reader of the segment `spec` names (PMIGATE_SHM: "SEGMENT:TABLE", the
 * paths of the segment and of its commit table; without ":TABLE", PMIx
 * lookups always ask) for job `nspace` (both copied).  NULL when spec or
 * nspace is NULL or empty (no segment offered: the caller keeps asking the
 * server) or out of memory.  Maps nothing yet.  Only sealed files are
 * ever mapped (see pg_cl_shm.c). */
pg_cl_shm_t *pg_cl_shm_new(const char *spec, const char *nspace);
/* Unmaps and frees; NULL is ignored. */
void pg_cl_shm_free(pg_cl_shm_t *s);

/* Call after this process's fence number `fences` (1, 2, ...) succeeded:
 * drops any mapping; the first lookup after it maps the segment if its
 * generation is exactly `fences` (one open/fstat/mmap, tried once per
 * fence), so a process that gets nothing maps nothing.  A segment that
 * fails any check is treated as absent. */
void pg_cl_shm_expect(pg_cl_shm_t *s, uint64_t fences);

/* pg_cl_shm_expect, then the mapping at once.  Returns true when lookups
 * can be answered. */
bool pg_cl_shm_refresh(pg_cl_shm_t *s, uint64_t fences);

/* Forgets the mapping (a fence failed, or the caller stops trusting it). */
void pg_cl_shm_drop(pg_cl_shm_t *s);

/* Lookup results. */
enum { PG_CL_SHM_ASK = 0, PG_CL_SHM_FOUND = 1 };

/* Which server's answer the lookup stands in for (pg_shm_format.h flags). */
enum { PG_CL_SHM_PMI1 = 0x1u, PG_CL_SHM_PMI2 = 0x2u };

/* Looks `key` up the way pmigate's server does for a PMI get: the value
 * `rank` posted when 0 <= rank < job size, else (or when rank posted none)
 * the value `self` posted, else the lowest posting rank's.  On
 * PG_CL_SHM_FOUND, *len = the value's length and dst holds as much of it as
 * fits in cap bytes, NUL-terminated (cap > 0).  NULL s: PG_CL_SHM_ASK. */
int pg_cl_shm_get(pg_cl_shm_t *s, unsigned dialect, const char *key, int rank, int self,
                  char *dst, size_t cap, size_t *len);

/* PMIx lookups (libpmix).  The entry of `key` posted by `rank` (rank <
 * job size), or with rank PG_CL_SHM_ANY the lowest poster's -- the server's
 * answer to a get without a rank from a process that posted no such key
 * itself.  It answers only when the entry carries the PMIx encoding and,
 * by the commit table, nobody whose commit could change the server's
 * answer (rank; any rank for PG_CL_SHM_ANY) has committed since this
 * generation was published.  Then take(bytes, len, arg) runs on the
 * packed pmix_value_t (the Standard's encoding, as the server's get reply
 * carries it) while the mapping is held, and its return decides:
 * PG_CL_SHM_FOUND when it returns 0, else PG_CL_SHM_ASK. */
#define PG_CL_SHM_ANY UINT32_MAX
typedef int (*pg_cl_shm_take_fn)(const void *bytes, size_t len, void *arg);
int pg_cl_shm_get_packed(pg_cl_shm_t *s, const char *key, uint32_t rank, pg_cl_shm_take_fn take,
                         void *arg);

/* The generation mapped now, 0 when none (tests; an expected segment is
 * mapped by the first lookup). */
uint64_t pg_cl_shm_generation(pg_cl_shm_t *s);

#endif

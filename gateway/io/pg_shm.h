/*
 * pg_shm: the writer of a job's node-shared key segment
 * (docs/shm-segment.md, layout in wire/pg_shm_format.h).
 *
 * Why: after a fence every rank of a wire-up reads every other rank's
 * card.  Served over the socket that is N^2 round trips through the
 * gateway's one thread; published once per node as a read-only file that
 * libpmi/libpmi2 map, it is N^2 hash lookups spread over the ranks.
 *
 * Use: pg_shm_add() every value of the new generation (the gateway walks
 * the engine with pg_ns_foreach_visible), then pg_shm_publish().  Publish
 * writes a new sealed memfd and swaps it in at the descriptor number the
 * readers open (/proc/<pmigate's pid>/fd/<n>), so a reader sees a whole
 * generation or the previous one, and a process that mapped the previous
 * one keeps a valid mapping.  A published generation can be changed by
 * nobody, pmigate included (F_SEAL_WRITE, F_SEAL_SHRINK).
 *
 * Beside the segments lives the commit table (wire/pg_shm_format.h), the
 * one memory the gateway changes in place: libpmix's processes may commit
 * between fences, and a reader must know when the server's answer has
 * moved past its segment.  Only the gateway's own mapping can write it,
 * and nobody can resize it, so no rank can make the gateway fault.
 *
 * Nothing lives in the file system: the memfds go with their last
 * descriptor or mapping, whatever kills pmigate.
 *
 * Ownership: pg_shm_t owns its descriptors and mappings, released by
 * pg_shm_free().  Keys and string values given to pg_shm_add() are
 * borrowed until the next pg_shm_publish() or pg_shm_abort(); the packed
 * PMIx values are copied.
 */
#ifndef PG_SHM_H
#define PG_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "engine/pg_engine.h"

typedef struct pg_shm pg_shm_t;

/* A writer for job `nspace` of `job_size` ranks: makes the commit table
 * and reserves the segment's descriptor.  NULL with *err = errno on
 * failure (no memfd sealing: the readers then use the socket). */
pg_shm_t *pg_shm_new(const char *nspace, uint32_t job_size, int *err);
/* Closes and unmaps everything; NULL is ignored. */
void pg_shm_free(pg_shm_t *w);

/* What readers open (PMIGATE_SHM): "SEGMENT:TABLE", the paths of the
 * segment and of the commit table, each /proc/<pid>/fd/<n>. */
const char *pg_shm_path(const pg_shm_t *w);

/* Stages `key` posted by `rank` with the engine's value `v`.  A string is
 * also stored as the text the PMI servers would send; any other type only
 * for PMIx readers (the PMI servers would convert it: such an entry still
 * takes part in "which rank answers a get without a rank" but tells PMI
 * readers to ask the server).  Every value is stored as the pmix_value_t
 * the PMIx server would send (pg_pmix_value_from_engine, packed); one it
 * cannot convert tells PMIx readers to ask.  0, -EINVAL (empty key, rank
 * out of range) or -ENOMEM. */
int pg_shm_add(pg_shm_t *w, const char *key, uint32_t rank, const pg_value_t *v);

/* `rank` committed while `generation` was the last published segment:
 * PMIx readers of that generation then ask the server for its values (and
 * for gets without a rank).  Call before the commit is answered. */
void pg_shm_committed(pg_shm_t *w, uint32_t rank, uint64_t generation);

/* Writes the staged entries as `generation` and swaps the file into
 * place; the staging is emptied either way.  0 or -errno (the previous
 * generation then stays, and readers, finding it stale, use the socket). */
int pg_shm_publish(pg_shm_t *w, uint64_t generation);

/* Empties the staging without publishing. */
void pg_shm_abort(pg_shm_t *w);

#endif

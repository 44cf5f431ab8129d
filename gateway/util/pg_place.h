/*
 * pg_place: what hwloc sees on this host and where each rank runs.  The
 * launcher binds a child before exec from the cpuset computed here, and the
 * same cpuset, as a list string ("0-3"), becomes the rank's locality for the
 * engine; unbound ranks get the whole machine's.
 *
 * Ownership: pg_place_t owns the hwloc topology and every cpuset; strings
 * returned by pg_place_cpuset_str() belong to the pg_place_t.
 */
#ifndef PG_PLACE_H
#define PG_PLACE_H

#include <sched.h>

#include "gateway/util/pg_cli.h"

typedef struct pg_place pg_place_t;

typedef struct pg_topo_counts {
    int packages;
    int cores;
    int pus;
    int numa_nodes;
} pg_topo_counts_t;

/* An empty placement (NULL: out of memory).  hwloc's topology is loaded on
 * first use, by pg_place_counts() or a binding in pg_place_assign(). */
pg_place_t *pg_place_new(void);
void pg_place_free(pg_place_t *place);

/* What hwloc sees.  Returns 0, or -errno when the topology cannot be read. */
int pg_place_counts(pg_place_t *place, pg_topo_counts_t *out);

/* Computes the binding of nranks local ranks under `bind`.  Unbound ranks
 * get this process's own CPU affinity (what they inherit, e.g. under
 * taskset), without reading the topology.  Returns 0, or -errno (-ENOMEM,
 * or the topology cannot be read).  More ranks than cores (or packages)
 * wrap round-robin; pg_place_oversubscribed() then says so. */
int pg_place_assign(pg_place_t *place, pg_bind_t bind, int nranks);
int pg_place_oversubscribed(const pg_place_t *place);

/* The cpuset of local rank i as a list string ("0-1"), valid while place lives. */
const char *pg_place_cpuset_str(const pg_place_t *place, int local_rank);

/* Local rank i's cpuset as a sched_setaffinity() mask, computed by the
 * launcher so that the child between vfork and exec makes one system call.
 * Returns 1 (mask filled), 0 (the rank is unbound: mask untouched) or
 * -errno (e.g. -EOVERFLOW: a CPU beyond cpu_set_t; run it unbound). */
int pg_place_affinity(const pg_place_t *place, int local_rank, cpu_set_t *mask);

/* hwloc's runtime API version (hwloc_get_api_version()). */
unsigned pg_place_hwloc_runtime_version(void);

#endif

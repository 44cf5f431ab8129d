/*
 * pg_place: hwloc topology, per-rank cpusets and binding.  See pg_place.h.
 *
 * The topology is read only when something needs it (a binding, the
 * counts of `pmigate info`): loading it dlopens hwloc's I/O plugins and
 * walks /sys, ~6 ms that every unbound job would otherwise pay at start.
 */
#include "gateway/util/pg_place.h"

#include <errno.h>
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <stdlib.h>

struct pg_place {
    hwloc_topology_t topo; /* NULL until place_topology() loads it */
    pg_bind_t bind;
    int nranks;
    int oversubscribed;
    hwloc_bitmap_t *sets; /* per local rank, owned */
    char **strs;          /* per local rank, owned (hwloc_bitmap_list_asprintf) */
};

pg_place_t *pg_place_new(void)
{
    return calloc(1, sizeof(pg_place_t));
}

/* Loads the topology on first use.  Returns 0 or -errno. */
static int place_topology(pg_place_t *place)
{
    hwloc_topology_t topo;

    if (place->topo != NULL)
        return 0;
    if (hwloc_topology_init(&topo) != 0)
        return -(errno ? errno : EINVAL);
    if (hwloc_topology_load(topo) != 0) {
        int err = errno ? errno : EINVAL;
        hwloc_topology_destroy(topo);
        return -err;
    }
    place->topo = topo;
    return 0;
}

static void place_clear(pg_place_t *place)
{
    for (int i = 0; i < place->nranks; i++) {
        if (place->sets)
            hwloc_bitmap_free(place->sets[i]);
        if (place->strs)
            free(place->strs[i]);
    }
    free(place->sets);
    free(place->strs);
    place->sets = NULL;
    place->strs = NULL;
    place->nranks = 0;
}

void pg_place_free(pg_place_t *place)
{
    if (place == NULL)
        return;
    place_clear(place);
    if (place->topo != NULL)
        hwloc_topology_destroy(place->topo);
    free(place);
}

static int count_type(hwloc_topology_t topo, hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(topo, type);

    return n < 0 ? 0 : n;
}

int pg_place_counts(pg_place_t *place, pg_topo_counts_t *out)
{
    int rc = place_topology(place);

    if (rc != 0)
        return rc;
    out->packages = count_type(place->topo, HWLOC_OBJ_PACKAGE);
    out->cores = count_type(place->topo, HWLOC_OBJ_CORE);
    out->pus = count_type(place->topo, HWLOC_OBJ_PU);
    out->numa_nodes = count_type(place->topo, HWLOC_OBJ_NUMANODE);
    return 0;
}

/* The objects ranks are spread over; falls back to PUs when the topology has
 * no cores or packages (some VMs). */
static hwloc_obj_type_t bind_type(const pg_place_t *place, pg_bind_t bind)
{
    hwloc_obj_type_t type = bind == PG_BIND_SOCKET ? HWLOC_OBJ_PACKAGE : HWLOC_OBJ_CORE;

    return count_type(place->topo, type) > 0 ? type : HWLOC_OBJ_PU;
}

/* The CPUs this process may run on: what an unbound rank inherits.  A new
 * bitmap (caller frees), or NULL. */
static hwloc_bitmap_t own_cpuset(void)
{
    cpu_set_t mask;
    hwloc_bitmap_t set;

    if (sched_getaffinity(0, sizeof(mask), &mask) != 0)
        return NULL;
    set = hwloc_bitmap_alloc();
    if (set == NULL)
        return NULL;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &mask))
            hwloc_bitmap_set(set, (unsigned)cpu);
    return set;
}

static hwloc_const_cpuset_t rank_cpuset(const pg_place_t *place, pg_bind_t bind, int i)
{
    hwloc_obj_type_t type = bind_type(place, bind);
    int nobjs;

    nobjs = count_type(place->topo, type);
    if (nobjs <= 0)
        return hwloc_topology_get_allowed_cpuset(place->topo);
    return hwloc_get_obj_by_type(place->topo, type, (unsigned)(i % nobjs))->cpuset;
}

int pg_place_assign(pg_place_t *place, pg_bind_t bind, int nranks)
{
    hwloc_bitmap_t own = NULL;
    int rc = bind == PG_BIND_NONE ? 0 : place_topology(place);

    place_clear(place);
    if (rc != 0)
        return rc;
    place->bind = bind;
    place->sets = calloc((size_t)nranks, sizeof(*place->sets));
    place->strs = calloc((size_t)nranks, sizeof(*place->strs));
    if (nranks > 0 && (place->sets == NULL || place->strs == NULL))
        goto oom;
    if (bind == PG_BIND_NONE && (own = own_cpuset()) == NULL)
        goto oom;
    place->nranks = nranks;
    for (int i = 0; i < nranks; i++) {
        place->sets[i] = hwloc_bitmap_dup(own != NULL ? own : rank_cpuset(place, bind, i));
        if (place->sets[i] == NULL || hwloc_bitmap_list_asprintf(&place->strs[i], place->sets[i]) < 0)
            goto oom;
    }
    place->oversubscribed =
        bind != PG_BIND_NONE && nranks > count_type(place->topo, bind_type(place, bind));
    hwloc_bitmap_free(own);
    return 0;
oom:
    hwloc_bitmap_free(own);
    place_clear(place);
    return -ENOMEM;
}

int pg_place_oversubscribed(const pg_place_t *place)
{
    return place->oversubscribed;
}

const char *pg_place_cpuset_str(const pg_place_t *place, int local_rank)
{
    if (local_rank < 0 || local_rank >= place->nranks)
        return "";
    return place->strs[local_rank];
}

int pg_place_affinity(const pg_place_t *place, int local_rank, cpu_set_t *mask)
{
    if (place->bind == PG_BIND_NONE || local_rank < 0 || local_rank >= place->nranks)
        return 0;
    if (hwloc_bitmap_last(place->sets[local_rank]) >= CPU_SETSIZE)
        return -EOVERFLOW;
    if (hwloc_cpuset_to_glibc_sched_affinity(place->topo, place->sets[local_rank], mask,
                                             sizeof(*mask)) != 0)
        return -(errno ? errno : EINVAL);
    return 1;
}

unsigned pg_place_hwloc_runtime_version(void)
{
    return hwloc_get_api_version();
}

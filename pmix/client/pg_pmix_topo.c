/*
 * pg_pmix_topo: topology, binding and locality in libpmix (hwloc).
 *
 * Why it exists: programs place threads and memory by the node's topology
 * and ask how close two peers are (PMIX_LOCALITY_STRING).  pmigate's
 * gateway binds ranks with hwloc already; the client loads the node's
 * topology with the same library, in the process itself (a topology is
 * process-local memory, never shipped over the socket).  Objects made
 * here carry source "hwloc" and are released by PMIx_Topology_destruct /
 * PMIx_Cpuset_destruct.
 *
 * hwloc is loaded at the first call that needs it (dlopen of the soname
 * configure found), not linked: linked, it and the libraries it pulls in
 * (udev, libm) were opened and relocated by every rank at its start, ~0.25
 * ms of a 0.5 ms start on the test machine, for a topology few programs
 * ask for (docs/performance.md, "Own clients at scale").  Without hwloc
 * the calls return PMIX_ERR_NOT_AVAILABLE.
 *
 * Locality strings are the Standard's/OpenPMIx's form,
 * "NM<list>:SK<list>:L3<list>:L2<list>:L1<list>:CR<list>:HWT<list>", each
 * list the cpuset's objects of that level; two processes share a level
 * when their lists there intersect.
 */
#include "config/config.h"

#include <pmix.h>

#include <dlfcn.h>
#include <hwloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pmix/client/pg_pmix_api.h"

static const char pg_hwloc_source[] = "hwloc";

/* The hwloc calls made here, found in the loaded library. */
static struct {
    int (*topology_init)(hwloc_topology_t *);
    int (*topology_load)(hwloc_topology_t);
    void (*topology_destroy)(hwloc_topology_t);
    hwloc_bitmap_t (*bitmap_alloc)(void);
    void (*bitmap_free)(hwloc_bitmap_t);
    void (*bitmap_zero)(hwloc_bitmap_t);
    int (*bitmap_list_sscanf)(hwloc_bitmap_t, const char *);
    int (*bitmap_intersects)(hwloc_const_bitmap_t, hwloc_const_bitmap_t);
    int (*get_cpubind)(hwloc_topology_t, hwloc_bitmap_t, int);
} hw;
static bool hw_loaded;
static pthread_once_t hw_once = PTHREAD_ONCE_INIT;

/* dlsym into *slot (a function pointer's storage); false when missing. */
static bool hw_find(void *lib, const char *name, void *slot)
{
    void *f = dlsym(lib, name);

    memcpy(slot, &f, sizeof(f)); /* ISO C has no cast from void * to a function pointer */
    return f != NULL;
}

static void hw_load(void)
{
    void *lib = dlopen(PG_HWLOC_SONAME, RTLD_NOW | RTLD_LOCAL);

    if (lib == NULL)
        return;
    hw_loaded = hw_find(lib, "hwloc_topology_init", &hw.topology_init) &&
                hw_find(lib, "hwloc_topology_load", &hw.topology_load) &&
                hw_find(lib, "hwloc_topology_destroy", &hw.topology_destroy) &&
                hw_find(lib, "hwloc_bitmap_alloc", &hw.bitmap_alloc) &&
                hw_find(lib, "hwloc_bitmap_free", &hw.bitmap_free) &&
                hw_find(lib, "hwloc_bitmap_zero", &hw.bitmap_zero) &&
                hw_find(lib, "hwloc_bitmap_list_sscanf", &hw.bitmap_list_sscanf) &&
                hw_find(lib, "hwloc_bitmap_intersects", &hw.bitmap_intersects) &&
                hw_find(lib, "hwloc_get_cpubind", &hw.get_cpubind);
    if (!hw_loaded)
        dlclose(lib);
}

/* Loads hwloc once; false when it cannot be. */
static bool hw_ready(void)
{
    return pthread_once(&hw_once, hw_load) == 0 && hw_loaded;
}

static bool is_hwloc(const char *source)
{
    return source != NULL && strncmp(source, pg_hwloc_source, sizeof(pg_hwloc_source) - 1) == 0;
}

pmix_status_t PMIx_Load_topology(pmix_topology_t *topo)
{
    hwloc_topology_t t;

    if (topo == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (topo->topology != NULL)
        return is_hwloc(topo->source) ? PMIX_SUCCESS : PMIX_ERR_NOT_SUPPORTED;
    if (topo->source != NULL && !is_hwloc(topo->source))
        return PMIX_ERR_NOT_SUPPORTED; /* another library's topology was asked for */
    if (!hw_ready())
        return PMIX_ERR_NOT_AVAILABLE;
    if (hw.topology_init(&t) != 0)
        return PMIX_ERR_NOMEM;
    if (hw.topology_load(t) != 0) {
        hw.topology_destroy(t);
        return PMIX_ERR_NOT_AVAILABLE;
    }
    if (topo->source == NULL && (topo->source = strdup(pg_hwloc_source)) == NULL) {
        hw.topology_destroy(t);
        return PMIX_ERR_NOMEM;
    }
    topo->topology = t;
    return PMIX_SUCCESS;
}

void PMIx_Topology_destruct(pmix_topology_t *topo)
{
    if (topo == NULL)
        return;
    if (topo->topology != NULL && is_hwloc(topo->source) && hw_ready())
        hw.topology_destroy(topo->topology);
    free(topo->source);
    topo->source = NULL;
    topo->topology = NULL;
}

void PMIx_Cpuset_destruct(pmix_cpuset_t *cpuset)
{
    if (cpuset == NULL)
        return;
    if (cpuset->bitmap != NULL && is_hwloc(cpuset->source) && hw_ready())
        hw.bitmap_free(cpuset->bitmap);
    free(cpuset->source);
    cpuset->source = NULL;
    cpuset->bitmap = NULL;
}

/* "hwloc:0-3,8" (PMIX_CPUSET's form) or a bare list. */
pmix_status_t PMIx_Parse_cpuset_string(const char *cpuset_string, pmix_cpuset_t *cpuset)
{
    const char *list = cpuset_string;
    hwloc_bitmap_t b;

    if (cpuset_string == NULL || cpuset == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (strchr(list, ':') != NULL) {
        if (!is_hwloc(list))
            return PMIX_ERR_NOT_SUPPORTED;
        list = strchr(list, ':') + 1;
    }
    if (!hw_ready())
        return PMIX_ERR_NOT_AVAILABLE;
    if ((b = hw.bitmap_alloc()) == NULL)
        return PMIX_ERR_NOMEM;
    if (hw.bitmap_list_sscanf(b, list) != 0) {
        hw.bitmap_free(b);
        return PMIX_ERR_BAD_PARAM;
    }
    if ((cpuset->source = strdup(pg_hwloc_source)) == NULL) {
        hw.bitmap_free(b);
        return PMIX_ERR_NOMEM;
    }
    cpuset->bitmap = b;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Get_cpuset(pmix_cpuset_t *cpuset, pmix_bind_envelope_t ref)
{
    pmix_topology_t topo = PMIX_TOPOLOGY_STATIC_INIT;
    hwloc_bitmap_t b = NULL;
    pmix_status_t rc;
    int flags = ref == PMIX_CPUBIND_THREAD ? HWLOC_CPUBIND_THREAD : HWLOC_CPUBIND_PROCESS;

    if (cpuset == NULL || (ref != PMIX_CPUBIND_PROCESS && ref != PMIX_CPUBIND_THREAD))
        return PMIX_ERR_BAD_PARAM;
    if ((rc = PMIx_Load_topology(&topo)) != PMIX_SUCCESS)
        return rc;
    rc = PMIX_ERR_NOMEM;
    if ((b = hw.bitmap_alloc()) != NULL) {
        rc = hw.get_cpubind(topo.topology, b, flags) == 0 ? PMIX_SUCCESS : PMIX_ERR_NOT_AVAILABLE;
        if (rc == PMIX_SUCCESS && (cpuset->source = strdup(pg_hwloc_source)) == NULL)
            rc = PMIX_ERR_NOMEM;
    }
    if (rc == PMIX_SUCCESS)
        cpuset->bitmap = b;
    else if (b != NULL)
        hw.bitmap_free(b);
    PMIx_Topology_destruct(&topo);
    return rc;
}

/* ---- relative locality ----------------------------------------------- */

static const struct {
    const char *prefix;
    pmix_locality_t flag;
} levels[] = {
    { "NM", PMIX_LOCALITY_SHARE_NUMA },     { "SK", PMIX_LOCALITY_SHARE_PACKAGE },
    { "L3", PMIX_LOCALITY_SHARE_L3CACHE },  { "L2", PMIX_LOCALITY_SHARE_L2CACHE },
    { "L1", PMIX_LOCALITY_SHARE_L1CACHE },  { "CR", PMIX_LOCALITY_SHARE_CORE },
    { "HWT", PMIX_LOCALITY_SHARE_HWTHREAD },
};

/* The list of `prefix` in a locality string as a bitmap (empty if absent). */
static hwloc_bitmap_t level_of(const char *loc, const char *prefix)
{
    hwloc_bitmap_t b = hw.bitmap_alloc();
    size_t plen = strlen(prefix);

    for (const char *p = loc; b != NULL && p != NULL && *p != '\0';) {
        const char *end = strchr(p, ':');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len > plen && strncmp(p, prefix, plen) == 0) {
            char *list = strndup(p + plen, len - plen);
            if (list == NULL || hw.bitmap_list_sscanf(b, list) != 0)
                hw.bitmap_zero(b);
            free(list);
            break;
        }
        p = end != NULL ? end + 1 : NULL;
    }
    return b;
}

pmix_status_t PMIx_Get_relative_locality(const char *locality1, const char *locality2,
                                         pmix_locality_t *locality)
{
    pmix_locality_t loc = PMIX_LOCALITY_SHARE_NODE;

    if (locality1 == NULL || locality2 == NULL || locality == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (!hw_ready())
        return PMIX_ERR_NOT_AVAILABLE;
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        hwloc_bitmap_t a = level_of(locality1, levels[i].prefix);
        hwloc_bitmap_t b = level_of(locality2, levels[i].prefix);
        if (a == NULL || b == NULL) {
            hw.bitmap_free(a);
            hw.bitmap_free(b);
            return PMIX_ERR_NOMEM;
        }
        if (hw.bitmap_intersects(a, b))
            loc |= levels[i].flag;
        hw.bitmap_free(a);
        hw.bitmap_free(b);
    }
    *locality = loc;
    return PMIX_SUCCESS;
}

/* ---- device distances: pmigate does not track devices ------------------ */

pmix_status_t PMIx_Compute_distances(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                     pmix_info_t info[], size_t ninfo,
                                     pmix_device_distance_t *distances[], size_t *ndist)
{
    (void)topo, (void)cpuset, (void)info, (void)ninfo;
    if (distances != NULL)
        *distances = NULL;
    if (ndist != NULL)
        *ndist = 0;
    return PMIX_ERR_NOT_SUPPORTED;
}

typedef struct dist_nb {
    pmix_device_dist_cbfunc_t cb;
    void *cbdata;
} dist_nb_t;

static void dist_nb_run(pmix_status_t status, void *arg)
{
    dist_nb_t *d = arg;

    if (d->cb != NULL)
        d->cb(status, NULL, 0, d->cbdata, NULL, NULL);
    free(d);
}

pmix_status_t PMIx_Compute_distances_nb(pmix_topology_t *topo, pmix_cpuset_t *cpuset,
                                        pmix_info_t info[], size_t ninfo,
                                        pmix_device_dist_cbfunc_t cbfunc, void *cbdata)
{
    dist_nb_t *d = calloc(1, sizeof(*d));
    pmix_status_t rc;

    (void)topo, (void)cpuset, (void)info, (void)ninfo;
    if (d == NULL)
        return PMIX_ERR_NOMEM;
    *d = (dist_nb_t){ cbfunc, cbdata };
    rc = pg_pmix_defer_op(dist_nb_run, d, PMIX_ERR_NOT_SUPPORTED);
    if (rc != PMIX_SUCCESS)
        free(d);
    return rc;
}

/*
 * pg_ns.c: namespaces (jobs, as PMIx names them; pg_ns_t, never the
 * gateway's pg_job_t) and processes -- registration from the host's layout, the
 * reserved keys and PMI job attributes derived from it, process life cycle,
 * and teardown that completes every request of the job first.
 *
 * Reserved keys are not stored as key/value pairs: they are computed from
 * the layout when asked (a handful of switch-like comparisons), so they
 * cost no memory per rank and can never block.
 */
#include "engine/pg_engine_int.h"

#include <stdio.h>
#include <utlist.h>

#define PG_ANL_MAP_MAX 1024 /* PMI-2 value limit: longer maps are sent as "" */

/* Up to this many jobs, comparing names costs less than hashing the one
 * sought (~30 instructions against ~150 for a kvsname): a gateway serves
 * the job it launched and the few that job spawns, and every get looks up
 * its requester's namespace and its target's. */
#define PG_JOB_SCAN_MAX 4

pg_ns_t *pg_ns_find(pg_engine_t *e, const char *nspace)
{
    pg_ns_t *job = NULL;
    if (nspace == NULL)
        return NULL;
    if (HASH_COUNT(e->jobs) > PG_JOB_SCAN_MAX) {
        HASH_FIND_STR(e->jobs, nspace, job);
        return job;
    }
    for (job = e->jobs; job != NULL; job = job->hh.next)
        if (strcmp(job->nspace, nspace) == 0)
            return job;
    return NULL;
}

/* Resolves a process: PMIX_ERR_NOT_FOUND for an unknown nspace,
 * PMIX_ERR_BAD_PARAM for a missing engine or process, or a rank that is
 * not a rank of the job. Taking a NULL engine here spares every public
 * entry point its own check. */
pg_ns_t *pg_ns_of(pg_engine_t *e, const pg_proc_t *proc, pmix_status_t *rc)
{
    pg_ns_t *job = e != NULL && proc != NULL ? pg_ns_find(e, proc->nspace) : NULL;
    if (job == NULL) {
        *rc = e == NULL || proc == NULL ? PMIX_ERR_BAD_PARAM : PMIX_ERR_NOT_FOUND;
        return NULL;
    }
    if (proc->rank >= job->size) {
        *rc = PMIX_ERR_BAD_PARAM;
        return NULL;
    }
    *rc = PMIX_SUCCESS;
    return job;
}

/* ---- interned hostnames ---- */

static pg_host_t *host_intern(pg_engine_t *e, const char *name)
{
    pg_host_t *h = NULL;
    HASH_FIND_STR(e->hosts, name, h);
    if (h == NULL) {
        size_t n = strlen(name) + 1;
        h = pg_mem_alloc(e, sizeof(*h) + n);
        if (h == NULL)
            return NULL;
        memcpy(h->name, name, n);
        HASH_ADD_STR(e->hosts, name, h);
    }
    h->refs++;
    return h;
}

static void host_release(pg_engine_t *e, pg_host_t *h)
{
    if (h == NULL || --h->refs > 0)
        return;
    HASH_DEL(e->hosts, h);
    pg_mem_free(e, h, sizeof(*h) + strlen(h->name) + 1);
}

/* ---- the ANL process map (docs/wire-protocol.md, "PMI_process_mapping") ---- */

typedef struct { uint32_t start, nnodes, ppn; } anl_block_t;

/* Decodes blocks with MPICH's wrap-around rule: later passes restart at the
 * first block whose start node is 0.  Returns true when the result equals
 * rank_node. */
static bool anl_matches(const anl_block_t *b, size_t nb, const uint32_t *rank_node, uint32_t size)
{
    uint32_t r = 0;
    size_t first = 0;
    while (r < size) {
        for (size_t i = first; i < nb && r < size; i++)
            for (uint32_t n = 0; n < b[i].nnodes && r < size; n++)
                for (uint32_t p = 0; p < b[i].ppn && r < size; p++, r++)
                    if (rank_node[r] != b[i].start + n)
                        return false;
        for (first = 0; first < nb && b[first].start != 0; first++)
            ;
        if (first == nb)
            return r >= size;
    }
    return true;
}

/* Runs of consecutive ranks on one node, merged into (start, nnodes, ppn)
 * blocks when consecutive runs sit on consecutive nodes with equal counts. */
static size_t anl_blocks(const uint32_t *rank_node, uint32_t size, anl_block_t *b)
{
    size_t nb = 0;
    uint32_t r = 0;
    while (r < size) {
        uint32_t node = rank_node[r], cnt = 0;
        while (r < size && rank_node[r] == node) {
            r++;
            cnt++;
        }
        if (nb > 0 && b[nb - 1].ppn == cnt && b[nb - 1].start + b[nb - 1].nnodes == node)
            b[nb - 1].nnodes++;
        else
            b[nb++] = (anl_block_t){ node, 1, cnt };
    }
    return nb;
}

/* The shortest block prefix that decodes to the layout (hydra's compact
 * form), else every block (Slurm's form); "" when over 1024 bytes.
 * Returns a malloc'd string, NULL on allocation failure. */
char *pg_anl_map(const uint32_t *rank_node, uint32_t size)
{
    anl_block_t *b = malloc((size + 1) * sizeof(*b));
    char *out = calloc(1, PG_ANL_MAP_MAX + 1);
    if (b == NULL || out == NULL) {
        free(b);
        free(out);
        return NULL;
    }
    size_t nb = anl_blocks(rank_node, size, b), use = nb;
    for (size_t k = 1; k < nb && k <= 64; k++)
        if (b[0].start == 0 && anl_matches(b, k, rank_node, size)) {
            use = k;
            break;
        }
    size_t len = (size_t)snprintf(out, PG_ANL_MAP_MAX + 1, "(vector");
    for (size_t i = 0; i < use && len <= PG_ANL_MAP_MAX; i++)
        len += (size_t)snprintf(out + len, PG_ANL_MAP_MAX + 1 - len, ",(%u,%u,%u)", b[i].start,
                                b[i].nnodes, b[i].ppn);
    if (len < PG_ANL_MAP_MAX)
        len += (size_t)snprintf(out + len, PG_ANL_MAP_MAX + 1 - len, ")");
    if (len > PG_ANL_MAP_MAX)
        out[0] = '\0';
    free(b);
    return out;
}

/* ---- registration ---- */

static char *engine_copy_str(pg_engine_t *e, char *heap)
{
    /* moves a plain malloc'd string into accounted memory */
    char *c = heap != NULL ? pg_mem_strdup(e, heap) : NULL;
    free(heap);
    return c;
}

static bool layout_valid(const pg_ns_layout_t *l)
{
    if (l == NULL || l->size == 0 || l->nnodes == 0 || l->hostnames == NULL ||
        l->rank_node == NULL || l->size >= PMIX_RANK_VALID)
        return false;
    for (uint32_t n = 0; n < l->nnodes; n++)
        if (l->hostnames[n] == NULL || l->hostnames[n][0] == '\0')
            return false;
    for (uint32_t r = 0; r < l->size; r++)
        if (l->rank_node[r] >= l->nnodes)
            return false;
    return true;
}

/* A separator-joined list (the reserved keys that list ranks or hosts),
 * grown in plain malloc'd memory while it is built and then moved into
 * accounted memory by engine_copy_str. A failed allocation sticks: the
 * list ends as NULL, which the callers report as PMIX_ERR_NOMEM. */
typedef struct {
    char *s; /* NULL once an allocation failed */
    size_t len, cap;
    uint32_t nitems; /* the separator goes between items, even empty ones */
    char sep;
} strlist_t;

static strlist_t strlist_start(char sep)
{
    strlist_t l = {.s = calloc(1, 64), .cap = 64, .sep = sep};
    return l;
}

static void strlist_add(strlist_t *l, const char *item)
{
    if (l->s == NULL)
        return;
    size_t need = l->len + strlen(item) + 2;
    if (need > l->cap) {
        char *t = realloc(l->s, need * 2);
        if (t == NULL) {
            free(l->s);
            l->s = NULL;
            return;
        }
        l->s = t;
        l->cap = need * 2;
    }
    if (l->nitems++ > 0)
        l->s[l->len++] = l->sep;
    l->len += (size_t)sprintf(l->s + l->len, "%s", item);
}

static void strlist_add_rank(strlist_t *l, uint32_t rank)
{
    char num[16];
    snprintf(num, sizeof(num), "%u", rank);
    strlist_add(l, num);
}

/* PMIX_LOCAL_PEERS of one node: the comma list of its ranks. */
static char *node_peers(pg_engine_t *e, pg_ns_t *job, uint32_t node)
{
    strlist_t l = strlist_start(',');
    for (uint32_t r = 0; r < job->size; r++)
        if (job->rank_node[r] == node)
            strlist_add_rank(&l, r);
    return engine_copy_str(e, l.s);
}

/* PMIX_NODE_LIST: the comma list of the job's hostnames. */
static char *node_list(pg_engine_t *e, pg_ns_t *job)
{
    strlist_t l = strlist_start(',');
    for (uint32_t n = 0; n < job->nnodes; n++)
        strlist_add(&l, job->nodes[n]->name);
    return engine_copy_str(e, l.s);
}

/* PMIX_PROC_MAP: per node (';'-separated) the comma list of its ranks. */
static char *proc_map(pg_engine_t *e, pg_ns_t *job)
{
    strlist_t l = strlist_start(';');
    for (uint32_t n = 0; n < job->nnodes; n++)
        strlist_add(&l, job->node_peers[n]);
    return engine_copy_str(e, l.s);
}

static char **copy_str_array(pg_engine_t *e, const char *const *src, uint32_t n)
{
    if (src == NULL)
        return NULL;
    char **a = pg_mem_alloc(e, n * sizeof(*a));
    if (a == NULL)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        if (src[i] != NULL)
            a[i] = pg_mem_strdup(e, src[i]);
    return a;
}

static void free_str_array(pg_engine_t *e, char **a, uint32_t n)
{
    if (a == NULL)
        return;
    for (uint32_t i = 0; i < n; i++)
        pg_mem_strfree(e, a[i]);
    pg_mem_free(e, a, n * sizeof(*a));
}

static pmix_status_t job_fill(pg_engine_t *e, pg_ns_t *job, const pg_ns_layout_t *l)
{
    uint32_t size = l->size, nn = l->nnodes;

    job->nodes = pg_mem_alloc(e, nn * sizeof(*job->nodes));
    job->rank_node = pg_mem_alloc(e, size * sizeof(uint32_t));
    job->local_rank = pg_mem_alloc(e, size * sizeof(uint16_t));
    job->node_rank = pg_mem_alloc(e, size * sizeof(uint16_t));
    job->appnum = pg_mem_alloc(e, size * sizeof(uint32_t));
    job->node_nlocal = pg_mem_alloc(e, nn * sizeof(uint32_t));
    job->node_peers = pg_mem_alloc(e, nn * sizeof(char *));
    job->node_served = pg_mem_alloc(e, nn * sizeof(bool));
    job->procs = pg_mem_alloc(e, size * sizeof(pg_procst_t));
    job->nattrs = pg_mem_alloc(e, nn * sizeof(pg_nattr_t *));
    job->node_able = pg_mem_alloc(e, nn * sizeof(uint32_t));
    if (!job->node_able || !job->nodes || !job->rank_node || !job->local_rank || !job->node_rank || !job->appnum ||
        !job->node_nlocal || !job->node_peers || !job->node_served || !job->procs || !job->nattrs)
        return PMIX_ERR_NOMEM;
    for (uint32_t n = 0; n < nn; n++) {
        if ((job->nodes[n] = host_intern(e, l->hostnames[n])) == NULL)
            return PMIX_ERR_NOMEM;
        job->node_served[n] = l->node_served == NULL || l->node_served[n];
    }
    uint32_t maxapp = 0;
    for (uint32_t r = 0; r < size; r++) {
        uint32_t node = l->rank_node[r];
        job->rank_node[r] = node;
        job->local_rank[r] = l->local_rank ? l->local_rank[r] : (uint16_t)job->node_nlocal[node];
        job->node_nlocal[node]++;
        job->node_rank[r] = l->node_rank ? l->node_rank[r] : job->local_rank[r];
        job->appnum[r] = l->appnum ? l->appnum[r] : 0;
        if (job->appnum[r] > maxapp)
            maxapp = job->appnum[r];
    }
    job->napps = l->napps ? l->napps : maxapp + 1;
    for (uint32_t n = 0; n < nn; n++)
        if ((job->node_peers[n] = node_peers(e, job, n)) == NULL)
            return PMIX_ERR_NOMEM;
    job->cpuset = copy_str_array(e, l->cpuset, size);
    job->locality = copy_str_array(e, l->locality, size);
    char univ[16];
    snprintf(univ, sizeof(univ), "%u", job->univ_size);
    job->univ_str = pg_mem_strdup(e, univ);
    job->anl_map = engine_copy_str(e, pg_anl_map(job->rank_node, size));
    job->node_list = node_list(e, job);
    job->proc_map = proc_map(e, job);
    if (!job->univ_str || !job->anl_map || !job->node_list || !job->proc_map)
        return PMIX_ERR_NOMEM;
    return PMIX_SUCCESS;
}

pmix_status_t pg_ns_register(pg_engine_t *e, const char *nspace, const pg_ns_layout_t *l)
{
    if (e == NULL || nspace == NULL || nspace[0] == '\0' || strlen(nspace) > PMIX_MAX_NSLEN ||
        !layout_valid(l) ||
        (l->parent_nspace != NULL &&
         (l->parent_nspace[0] == '\0' || strlen(l->parent_nspace) > PMIX_MAX_NSLEN)))
        return PMIX_ERR_BAD_PARAM;
    if (pg_ns_find(e, nspace) != NULL)
        return PMIX_ERR_EXISTS;
    size_t n = strlen(nspace) + 1;
    pg_ns_t *job = pg_mem_alloc(e, sizeof(*job) + n);
    if (job == NULL)
        return PMIX_ERR_NOMEM;
    memcpy(job->nspace, nspace, n);
    job->engine = e;
    job->refs = 1;
    job->size = l->size;
    job->nnodes = l->nnodes;
    job->univ_size = l->univ_size ? l->univ_size : l->size;
    job->spawned = l->spawned;
    job->stop_in_init = l->stop_in_init;
    job->stop_rank = l->stop_rank;
    job->tool = l->tool;
    if (l->parent_nspace != NULL) {
        job->has_parent = true;
        PMIX_LOAD_PROCID(&job->parent, l->parent_nspace, l->parent_rank);
    }
    pmix_status_t rc = job_fill(e, job, l);
    if (rc != PMIX_SUCCESS) {
        pg_ns_destroy(job);
        return rc;
    }
    HASH_ADD_STR(e->jobs, nspace, job);
    return PMIX_SUCCESS;
}

/* Frees the job's memory once nothing refers to it any more. */
void pg_ns_destroy(pg_ns_t *job)
{
    pg_engine_t *e = job->engine;
    uint32_t size = job->size, nn = job->nnodes;

    pg_store_free_job(e, job);
    pg_event_free_exec(e, job);
    pg_jobctl_free(e, job);
    if (job->nodes != NULL)
        for (uint32_t i = 0; i < nn; i++)
            host_release(e, job->nodes[i]);
    if (job->node_peers != NULL)
        for (uint32_t i = 0; i < nn; i++)
            pg_mem_strfree(e, job->node_peers[i]);
    pg_mem_free(e, job->nodes, nn * sizeof(*job->nodes));
    pg_mem_free(e, job->rank_node, size * sizeof(uint32_t));
    pg_mem_free(e, job->local_rank, size * sizeof(uint16_t));
    pg_mem_free(e, job->node_rank, size * sizeof(uint16_t));
    pg_mem_free(e, job->appnum, size * sizeof(uint32_t));
    pg_mem_free(e, job->node_nlocal, nn * sizeof(uint32_t));
    pg_mem_free(e, job->node_peers, nn * sizeof(char *));
    pg_mem_free(e, job->node_served, nn * sizeof(bool));
    pg_mem_free(e, job->procs, size * sizeof(pg_procst_t));
    pg_mem_free(e, job->nattrs, nn * sizeof(pg_nattr_t *));
    pg_mem_free(e, job->node_able, nn * sizeof(uint32_t));
    free_str_array(e, job->cpuset, size);
    free_str_array(e, job->locality, size);
    pg_mem_strfree(e, job->univ_str);
    pg_mem_strfree(e, job->anl_map);
    pg_mem_strfree(e, job->node_list);
    pg_mem_strfree(e, job->proc_map);
    pg_mem_strfree(e, job->dead_str);
    pg_mem_free(e, job, sizeof(*job) + strlen(job->nspace) + 1);
}

pmix_status_t pg_ns_deregister(pg_engine_t *e, const char *nspace)
{
    pg_ns_t *job = e != NULL ? pg_ns_find(e, nspace) : NULL;
    if (job == NULL)
        return PMIX_ERR_NOT_FOUND;
    HASH_DEL(e->jobs, job);
    job->dead = true;
    pg_req_t *r, *tmp;
    DL_FOREACH_SAFE(e->held, r, tmp)
        if (r->job == job || r->tjob == job)
            pg_req_complete(e, r, PMIX_ERR_JOB_TERMINATED, NULL);
    pg_fence_drop_job(e, job);
    pg_names_drop_job(e, job);
    pg_event_drop_job(e, job);
    pg_groups_drop_job(e, job);
    pg_engine_flush(e);
    pg_ns_unref(job);
    return PMIX_SUCCESS;
}

/* ---- PMI job attributes ---- */

/* PMI_dead_processes: the comma list of lost ranks, rebuilt per ask since
 * ranks are lost while the job runs. */
static const char *dead_list(pg_engine_t *e, pg_ns_t *job)
{
    strlist_t l = strlist_start(',');
    for (uint32_t r = 0; r < job->size; r++)
        if (job->procs[r].state == PG_PROC_LOST)
            strlist_add_rank(&l, r);
    pg_mem_strfree(e, job->dead_str);
    job->dead_str = engine_copy_str(e, l.s);
    return job->dead_str;
}

enum { ATTR_NONE = -1, ATTR_MAPPING, ATTR_UNIVERSE, ATTR_DEAD };

/* Which job attribute `name` is.  Asked of every PMI get, so the first
 * byte settles nearly every key without a string compare. */
static int job_attr_of(const char *name)
{
    if (name == NULL)
        return ATTR_NONE;
    if (name[0] == 'P') {
        if (strcmp(name, "PMI_process_mapping") == 0)
            return ATTR_MAPPING;
        return strcmp(name, "PMI_dead_processes") == 0 ? ATTR_DEAD : ATTR_NONE;
    }
    return name[0] == 'u' && strcmp(name, "universeSize") == 0 ? ATTR_UNIVERSE : ATTR_NONE;
}

bool pg_ns_attr_known(const char *name)
{
    return job_attr_of(name) != ATTR_NONE;
}

pmix_status_t pg_ns_attr(pg_engine_t *e, const char *nspace, const char *name, pg_value_t *out)
{
    int attr = job_attr_of(name);
    if (attr == ATTR_NONE)
        return PMIX_ERR_NOT_FOUND;
    pg_ns_t *job = e != NULL ? pg_ns_find(e, nspace) : NULL;
    if (job == NULL || out == NULL)
        return job == NULL ? PMIX_ERR_NOT_FOUND : PMIX_ERR_BAD_PARAM;
    const char *s = attr == ATTR_MAPPING ? job->anl_map
                  : attr == ATTR_UNIVERSE ? job->univ_str : dead_list(e, job);
    if (s == NULL)
        return PMIX_ERR_NOT_FOUND;
    *out = pg_value_string(s);
    return PMIX_SUCCESS;
}

/* ---- reserved keys ---- */

typedef struct {
    union { uint32_t u32; uint16_t u16; bool b; pmix_proc_t proc; } num;
    pg_value_t v;
} rsv_out_t;

static bool rsv_u32(rsv_out_t *o, pmix_data_type_t type, uint32_t x)
{
    o->num.u32 = x;
    o->v = pg_value_bytes(type, &o->num.u32, sizeof(uint32_t));
    return true;
}

static bool rsv_u16(rsv_out_t *o, uint16_t x)
{
    o->num.u16 = x;
    o->v = pg_value_bytes(PMIX_UINT16, &o->num.u16, sizeof(uint16_t));
    return true;
}

static bool rsv_str(rsv_out_t *o, const char *s)
{
    if (s == NULL)
        return false;
    o->v = pg_value_string(s);
    return true;
}

#define KEY_IS(k, name) (strcmp((k), (name)) == 0)

/* PMIX_PARENT_ID: a pmix_proc_t, kept as its native bytes (no pointer
 * inside; pmix/server/pg_pmix_value.c turns them into a PMIX_PROC value).
 * Job data that every process of a spawned job shares, so answered in the
 * job and the process realms. */
static bool rsv_parent(const pg_ns_t *job, const char *k, rsv_out_t *o)
{
    if (!job->has_parent || !KEY_IS(k, PMIX_PARENT_ID))
        return false;
    o->num.proc = job->parent;
    o->v = pg_value_bytes(PMIX_PROC, &o->num.proc, sizeof(pmix_proc_t));
    return true;
}

static bool rsv_session(const pg_ns_t *job, const char *k, rsv_out_t *o)
{
    if (KEY_IS(k, PMIX_UNIV_SIZE))
        return rsv_u32(o, PMIX_UINT32, job->univ_size);
    return false;
}

static bool rsv_job(const pg_ns_t *job, const char *k, rsv_out_t *o)
{
    if (KEY_IS(k, PMIX_JOB_SIZE))
        return rsv_u32(o, PMIX_UINT32, job->size);
    if (KEY_IS(k, PMIX_MAX_PROCS))
        return rsv_u32(o, PMIX_UINT32, job->univ_size);
    if (KEY_IS(k, PMIX_JOB_NUM_APPS))
        return rsv_u32(o, PMIX_UINT32, job->napps);
    if (KEY_IS(k, PMIX_NUM_NODES))
        return rsv_u32(o, PMIX_UINT32, job->nnodes);
    if (KEY_IS(k, PMIX_NPROC_OFFSET))
        return rsv_u32(o, PMIX_PROC_RANK, 0);
    if (KEY_IS(k, PMIX_NSPACE) || KEY_IS(k, PMIX_JOBID))
        return rsv_str(o, job->nspace);
    if (KEY_IS(k, PMIX_NODE_LIST) || KEY_IS(k, PMIX_NODE_MAP))
        return rsv_str(o, job->node_list);
    if (KEY_IS(k, PMIX_PROC_MAP))
        return rsv_str(o, job->proc_map);
    if (KEY_IS(k, PMIX_ANL_MAP))
        return rsv_str(o, job->anl_map);
    if (KEY_IS(k, PMIX_DEBUG_STOP_IN_INIT))
        return job->stop_in_init && rsv_u32(o, PMIX_PROC_RANK, job->stop_rank);
    if (KEY_IS(k, PMIX_SPAWNED)) {
        o->num.b = job->spawned;
        o->v = pg_value_bytes(PMIX_BOOL, &o->num.b, sizeof(bool));
        return true;
    }
    return rsv_parent(job, k, o);
}

static bool rsv_app(const pg_ns_t *job, uint32_t app, const char *k, rsv_out_t *o)
{
    uint32_t n = 0, leader = UINT32_MAX;
    bool size_key = KEY_IS(k, PMIX_APP_SIZE), ldr_key = KEY_IS(k, PMIX_APPLDR);
    if (app >= job->napps || !(size_key || ldr_key))
        return false;
    for (uint32_t r = 0; r < job->size; r++)
        if (job->appnum[r] == app) {
            if (leader == UINT32_MAX)
                leader = r;
            n++;
        }
    if (size_key)
        return rsv_u32(o, PMIX_UINT32, n);
    return leader != UINT32_MAX && rsv_u32(o, PMIX_PROC_RANK, leader);
}

static bool rsv_node(const pg_ns_t *job, uint32_t node, const char *k, rsv_out_t *o)
{
    if (node >= job->nnodes)
        return false;
    if (KEY_IS(k, PMIX_HOSTNAME))
        return rsv_str(o, job->nodes[node]->name);
    if (KEY_IS(k, PMIX_NODEID))
        return rsv_u32(o, PMIX_UINT32, node);
    if (KEY_IS(k, PMIX_LOCAL_SIZE) || KEY_IS(k, PMIX_NODE_SIZE))
        return rsv_u32(o, PMIX_UINT32, job->node_nlocal[node]);
    if (KEY_IS(k, PMIX_LOCAL_PEERS))
        return rsv_str(o, job->node_peers[node]);
    if (KEY_IS(k, PMIX_LOCALLDR)) {
        for (uint32_t r = 0; r < job->size; r++)
            if (job->rank_node[r] == node)
                return rsv_u32(o, PMIX_PROC_RANK, r);
    }
    return false;
}

static uint32_t app_rank(const pg_ns_t *job, pmix_rank_t rank)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < rank; r++)
        if (job->appnum[r] == job->appnum[rank])
            n++;
    return n;
}

static bool rsv_proc(const pg_ns_t *job, pmix_rank_t r, const char *k, rsv_out_t *o)
{
    if (KEY_IS(k, PMIX_RANK) || KEY_IS(k, PMIX_GLOBAL_RANK))
        return rsv_u32(o, PMIX_PROC_RANK, r);
    if (KEY_IS(k, PMIX_APP_RANK))
        return rsv_u32(o, PMIX_PROC_RANK, app_rank(job, r));
    if (KEY_IS(k, PMIX_APPNUM))
        return rsv_u32(o, PMIX_UINT32, job->appnum[r]);
    if (KEY_IS(k, PMIX_LOCAL_RANK))
        return rsv_u16(o, job->local_rank[r]);
    if (KEY_IS(k, PMIX_NODE_RANK))
        return rsv_u16(o, job->node_rank[r]);
    if (KEY_IS(k, PMIX_CPUSET))
        return job->cpuset != NULL && rsv_str(o, job->cpuset[r]);
    if (KEY_IS(k, PMIX_LOCALITY_STRING))
        return job->locality != NULL && rsv_str(o, job->locality[r]);
    return rsv_parent(job, k, o);
}

/* The requester's node seen from the target job (same interned host), or
 * UINT32_MAX when the target job has no rank there. */
uint32_t pg_ns_node_of(const pg_ns_t *tjob, const pg_ns_t *rjob, pmix_rank_t rrank)
{
    if (rjob == NULL || rrank >= rjob->size)
        return UINT32_MAX;
    const pg_host_t *h = rjob->nodes[rjob->rank_node[rrank]];
    for (uint32_t n = 0; n < tjob->nnodes; n++)
        if (tjob->nodes[n] == h)
            return n;
    return UINT32_MAX;
}

static bool rsv_resolve(const pg_get_req_t *q, const pg_ns_t *rjob, const pg_ns_t *tjob,
                        rsv_out_t *o)
{
    const char *k = q->key;
    pmix_rank_t t = q->target.rank;
    bool proc = t < tjob->size;
    uint32_t node = q->nodeid != UINT32_MAX ? q->nodeid
                    : proc                   ? tjob->rank_node[t]
                                             : pg_ns_node_of(tjob, rjob, q->requester.rank);
    uint32_t app = q->appnum != UINT32_MAX ? q->appnum
                   : proc                   ? tjob->appnum[t]
                   : rjob == tjob && q->requester.rank < tjob->size
                       ? tjob->appnum[q->requester.rank]
                       : 0;

    switch (q->realm) {
    case PG_REALM_SESSION: return rsv_session(tjob, k, o);
    case PG_REALM_JOB: return rsv_job(tjob, k, o);
    case PG_REALM_APP: return rsv_app(tjob, app, k, o);
    case PG_REALM_NODE: return rsv_node(tjob, node, k, o);
    case PG_REALM_PROC: return proc && rsv_proc(tjob, t, k, o);
    case PG_REALM_DEFAULT: break;
    }
    if (proc && rsv_proc(tjob, t, k, o))
        return true;
    return rsv_node(tjob, node, k, o) || rsv_app(tjob, app, k, o) || rsv_job(tjob, k, o) ||
           rsv_session(tjob, k, o);
}

/* Reserved keys never block: found -> value, else PMIX_ERR_NOT_FOUND. */
pmix_status_t pg_reserved_get(const pg_get_req_t *q, pg_ns_t *rjob, pg_ns_t *tjob,
                              pg_get_cb_t cb, void *cbdata)
{
    rsv_out_t o;
    if (tjob != NULL && rsv_resolve(q, rjob, tjob, &o))
        cb(PMIX_SUCCESS, &o.v, q->target.rank, cbdata);
    else
        cb(PMIX_ERR_NOT_FOUND, NULL, PMIX_RANK_UNDEF, cbdata);
    return PMIX_SUCCESS;
}

/* ---- process life cycle ---- */

pmix_status_t pg_proc_connect(pg_engine_t *e, const pg_proc_t *proc)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, proc, &rc);
    if (job == NULL)
        return rc;
    pg_procst_t *p = &job->procs[proc->rank];
    if (p->state != PG_PROC_NEW && p->state != PG_PROC_CONNECTED)
        return PMIX_ERR_INVALID_OPERATION;
    p->state = PG_PROC_CONNECTED;
    return PMIX_SUCCESS;
}

/* A process that will never post again: its own requests end, fences
 * waiting for it fail, and gets waiting for its data are re-judged. */
static pmix_status_t proc_gone(pg_engine_t *e, const pg_proc_t *proc, pg_proc_state_t state)
{
    pmix_status_t rc;
    pg_ns_t *job = pg_ns_of(e, proc, &rc);
    if (job == NULL)
        return rc;
    pg_procst_t *p = &job->procs[proc->rank];
    if (p->state == PG_PROC_LOST)
        return PMIX_SUCCESS;
    p->state = (uint8_t)state;
    if (state == PG_PROC_LOST) {
        pg_req_t *r, *tmp;
        DL_FOREACH_SAFE(e->held, r, tmp)
            if (r->job == job && r->rank == proc->rank)
                pg_req_complete(e, r, PMIX_ERR_LOST_CONNECTION, NULL);
    }
    pg_fence_proc_gone(e);
    e->hang_dirty = true;
    pg_engine_flush(e);
    if (state == PG_PROC_LOST)
        pg_event_raise_lost(e, job, proc->rank); /* its peers' handlers learn it */
    return PMIX_SUCCESS;
}

pmix_status_t pg_proc_finalize(pg_engine_t *e, const pg_proc_t *proc)
{
    return proc_gone(e, proc, PG_PROC_FINALIZED);
}

pmix_status_t pg_proc_lost(pg_engine_t *e, const pg_proc_t *proc)
{
    return proc_gone(e, proc, PG_PROC_LOST);
}

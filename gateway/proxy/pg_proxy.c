/*
 * pg_proxy: `pmigate proxy`.  See pg_proxy.h.
 *
 * Start-up, in order: PMIx_Init with the host (node index = rank among the
 * proxies, number of nodes = the host job's size); this node's rank count
 * from -n (blocks, the first nodes take one more) or --ppn; the proxies'
 * mesh listening (pg_mesh.h); one allgather through the host of
 * "count pid hostname meshcard" per node, so every proxy checks that all
 * were started with the same job and learns the host names, the
 * namespace (node 0's, identical everywhere: the engines' modex blobs name
 * it) and the mesh's addresses and secret; the mesh comes up; then the
 * node's job runs in pg_run, and pg_proxy_end.c sees that it ends as the
 * whole job does.  The start-up has one deadline, from the proxy's start
 * (the mesh's, pg_mesh.h's connect_ns, or --timeout when sooner): the
 * host's exchange runs the loop until it is over or that deadline passed,
 * and the mesh must be up by then too (docs/proxy.md, "Start-up").
 *
 * Fences across nodes and their data are pg_proxy_fence.c's, direct
 * modex across nodes pg_proxy_modex.c's.
 */
#include "gateway/proxy/pg_proxy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gateway/job/pg_job_engine.h"
#include "gateway/proxy/pg_proxy_int.h"
#include "gateway/run/pg_run.h"
#include "gateway/util/pg_status.h"
#include "engine/pg_engine.h"
#include "wire/pg_clock.h"

const char pg_proxy_usage[] =
    "Usage: pmigate proxy [run options] -n N prog [args] [: ...]\n"
    "\n"
    "Run one node's share of a job that spans several nodes.  Start it once per\n"
    "node under a PMIx host runtime, e.g.\n"
    "  mpirun.openmpi --map-by ppr:1:node -np K pmigate proxy -n N ./app\n"
    "  srun --mpi=pmix --ntasks-per-node=1 -N K pmigate proxy -n N ./app\n"
    "Each proxy is a PMIx client of the host, serves its node's ranks PMI-1,\n"
    "PMI-2 and PMIx as `pmigate run` does, and exchanges fence data with the\n"
    "other nodes through the host.\n"
    "\n"
    "  -n N      the job's total; ranks are spread in blocks, node 0 first,\n"
    "            the first N mod K nodes taking one more\n"
    "  --ppn M   M ranks on every node instead (the job has M x K ranks)\n"
    "The other options are those of `pmigate run` (see pmigate run --help);\n"
    "--tag-output and the messages name global ranks.\n";


/* Variables of the host's rendezvous that a rank must not inherit: with
 * them a PMIx-aware rank would talk to the host instead of its pmigate. */
static const char *const host_prefixes[] = { "PMIX_", "OMPI_", "PRTE_", "ORTE_", NULL };

static int is_host_var(const char *kv)
{
    for (int i = 0; host_prefixes[i] != NULL; i++)
        if (strncmp(kv, host_prefixes[i], strlen(host_prefixes[i])) == 0)
            return 1;
    return 0;
}

/* A copy of the pointers of environ without the host's variables. */
static char **env_without_host(void)
{
    extern char **environ;
    size_t n = 0, k = 0;
    char **env;

    while (environ[n] != NULL)
        n++;
    env = calloc(n + 1, sizeof(*env));
    for (size_t i = 0; env != NULL && i < n; i++)
        if (!is_host_var(environ[i]))
            env[k++] = environ[i];
    return env;
}

/* How many ranks each node runs.  Returns 0 or -1 with err set. */
static int plan_counts(proxy_t *p, pg_run_opts_t *opts, char *err, size_t errlen)
{
    int k = p->nnodes;

    if (opts->ppn > 0) {
        /* -n not given (one segment of the default 1 rank): M on every node */
        if (opts->nsegments == 1 && opts->nprocs == 1 && opts->ppn * k != 1)
            opts->segments[0].nprocs = opts->nprocs = opts->ppn * k;
        if (opts->nprocs != opts->ppn * k) {
            snprintf(err, errlen, "--ppn %d on %d nodes makes %d ranks, but -n says %d",
                     opts->ppn, k, opts->ppn * k, opts->nprocs);
            return -1;
        }
    }
    if (opts->nprocs < k) {
        snprintf(err, errlen, "%d rank%s cannot fill %d nodes: give -n at least %d",
                 opts->nprocs, opts->nprocs == 1 ? "" : "s", k, k);
        return -1;
    }
    p->counts = calloc((size_t)k, sizeof(*p->counts));
    if (p->counts == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int n = 0; n < k; n++)
        p->counts[n] = opts->nprocs / k + (n < opts->nprocs % k ? 1 : 0);
    return 0;
}

/* One node's card: "count pid hostname[ meshcard]" (the mesh's card is
 * the rest of the line: port, token and addresses). */
static int parse_card(const char *blob, size_t len, int *count, long *pid, char **host,
                      char **mesh)
{
    char buf[PG_MESH_CARD_MAX + 512], name[300];
    int used = 0;

    if (blob == NULL || len == 0 || len >= sizeof(buf))
        return -1;
    memcpy(buf, blob, len);
    buf[len] = '\0';
    if (sscanf(buf, "%d %ld %299s%n", count, pid, name, &used) != 3)
        return -1;
    *host = strdup(name);
    *mesh = strdup(buf[used] == ' ' ? buf + used + 1 : buf + used);
    return *host != NULL && *mesh != NULL ? 0 : -1;
}

/* Nodes are told apart by host name (the engine keys node data on it), but
 * several proxies may share a host (simulated nodes, or a host runtime
 * placing two per host): each node whose name is shared becomes
 * "<host>-n<index>".  Returns 0 or -1 (out of memory). */
static int name_nodes_apart(proxy_t *p)
{
    char *shared = calloc((size_t)p->nnodes, 1);

    if (shared == NULL)
        return -1;
    for (int n = 0; n < p->nnodes; n++) /* decide first: renaming changes names */
        for (int m = 0; m < p->nnodes; m++)
            if (m != n && strcmp(p->hostnames[m], p->hostnames[n]) == 0)
                shared[n] = 1;
    for (int n = 0; n < p->nnodes; n++) {
        char *name;

        if (!shared[n])
            continue;
        if (asprintf(&name, "%s-n%d", p->hostnames[n], n) < 0) {
            free(shared);
            return -1;
        }
        free(p->hostnames[n]);
        p->hostnames[n] = name;
    }
    free(shared);
    return 0;
}

/* When the whole start-up (the host's exchange, the mesh) must be over:
 * the mesh's bound (PMIGATE_MESH_CONNECT from the proxy's start, or
 * --timeout when sooner); one node, which waits for no one: --timeout's. */
static uint64_t start_deadline(const proxy_t *p)
{
    return p->mesh != NULL ? pg_mesh_start_deadline(p->mesh) : p->timeout_at;
}

/* The start deadline passed (a timer may fire up to its microsecond
 * rounding early: 1 ms of slack). */
static bool start_deadline_passed(const proxy_t *p)
{
    return start_deadline(p) > 0 && pg_clock_now() + 1000000u >= start_deadline(p);
}

/* A start-up that took longer than --timeout is the job's timeout. */
static bool start_timed_out(const proxy_t *p)
{
    return p->timeout_at > 0 && p->timeout_at <= start_deadline(p) && start_deadline_passed(p);
}

/* The start-up allgather: checks the counts, learns host names, the
 * namespace and the mesh's cards.  Returns 0, PG_HOSTPMIX_TIMED_OUT with
 * err set (the start deadline passed in the host's exchange), or -1 with
 * err set. */
static int agree_on_job(proxy_t *p, char *err, size_t errlen)
{
    char me[PG_MESH_CARD_MAX + 512], host[256];
    void **blobs = NULL;
    size_t *lens = NULL;
    uint64_t deadline = start_deadline(p);
    int rc = -1;

    if (gethostname(host, sizeof(host) - 1) != 0)
        strcpy(host, "localhost");
    host[sizeof(host) - 1] = '\0';
    snprintf(me, sizeof(me), "%d %ld %s %s", p->counts[p->nodeid], (long)getpid(), host,
             p->mesh != NULL ? pg_mesh_card(p->mesh) : "-");
    rc = pg_hostpmix_allgather(p->host, me, strlen(me), deadline, &blobs, &lens, err, errlen);
    if (rc == PG_HOSTPMIX_TIMED_OUT) /* which node is missing, the host does not say */
        snprintf(err, errlen,
                 "the host's start-up exchange (its fence of the proxies) did not complete "
                 "within %.0f s: a node did not join it (not started, stopped, or gone)",
                 (double)(deadline - p->started_at) / 1e9);
    if (rc != 0)
        return rc;
    rc = -1;
    p->hostnames = calloc((size_t)p->nnodes, sizeof(*p->hostnames));
    p->mesh_cards = calloc((size_t)p->nnodes, sizeof(*p->mesh_cards));
    if (p->hostnames == NULL || p->mesh_cards == NULL) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int n = 0; n < p->nnodes; n++) {
        int count;
        long pid;

        if (parse_card(blobs[n], lens[n], &count, &pid, &p->hostnames[n], &p->mesh_cards[n]) !=
            0) {
            snprintf(err, errlen, "node %d sent no usable description of itself", n);
            goto out;
        }
        if (count != p->counts[n]) {
            snprintf(err, errlen,
                     "node %d runs %d ranks but this node expected %d: were all proxies "
                     "started with the same -n/--ppn?",
                     n, count, p->counts[n]);
            goto out;
        }
        if (n == 0)
            snprintf(p->kvsname, sizeof(p->kvsname), "kvs_%ld_0", pid);
    }
    if (name_nodes_apart(p) != 0) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    rc = 0;
out:
    pg_hostpmix_blobs_free(p->host, blobs, lens);
    return rc;
}

/* The mesh among the proxies: listening before the allgather (its card
 * goes in it), up after it.  One node needs none. */
static int mesh_open(proxy_t *p, char *err, size_t errlen)
{
    pg_mesh_opts_t o = { .nodeid = p->nodeid, .nnodes = p->nnodes, .start_by = p->timeout_at };

    if (p->nnodes < 2)
        return 0;
    p->mesh = pg_mesh_new(p->base, &o, err, errlen);
    return p->mesh != NULL ? 0 : -1;
}

static int mesh_up(proxy_t *p, char *err, size_t errlen)
{
    if (p->mesh == NULL)
        return 0;
    if (pg_mesh_start(p->mesh, (const char *const *)p->mesh_cards, err, errlen) != 0)
        return -1;
    return pg_mesh_wait_ready(p->mesh, err, errlen);
}

/* The engine's hooks for what crosses nodes through the mesh: names
 * (pg_proxy_names.c), events (pg_proxy_events.c), groups
 * (pg_proxy_group.c), a timed-out fence taken back (pg_proxy_fence.c). */
static const pg_host_ops_t node_ops = {
    .publish = pg_proxy_name_publish,
    .unpublish = pg_proxy_name_unpublish,
    .lookup = pg_proxy_name_lookup,
    .lookup_cancel = pg_proxy_name_cancel,
    .names_drop = pg_proxy_names_drop,
    .event = pg_proxy_event,
    .group = pg_proxy_group,
    .group_left = pg_proxy_group_left,
    .group_invite = pg_proxy_group_invite,
    .group_cancel = pg_proxy_group_cancel,
    .fence_cancel = pg_proxy_fence_cancel,
};

/* ---- the whole proxy ---- */

/* The timing lines' last: what this node's mesh carried, from its own
 * counters (the scale benchmark reads it: docs/performance.md). */
static void say_mesh_counters(const proxy_t *p)
{
    pg_mesh_counters_t c;
    struct rusage ru = { 0 };

    pg_mesh_counters(p->mesh, &c);
    (void)getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr,
            "pmigate: node %d: mesh: nodes=%d links=%d links_max=%d sent_bytes=%llu "
            "sent_frames=%llu relayed_bytes=%llu rss_kb=%ld\n",
            p->nodeid, p->nnodes, c.links, c.links_max, (unsigned long long)c.sent_bytes,
            (unsigned long long)c.sent_frames, (unsigned long long)c.relayed_bytes, ru.ru_maxrss);
}

static void proxy_free(proxy_t *p)
{
    pg_proxy_spawn_free(p);
    pg_proxy_group_free(p);
    pg_proxy_dyn_free(p);
    pg_proxy_end_free(p);
    pg_proxy_names_free(p);
    pg_proxy_status_free(p);
    pg_proxy_fence_free(p);
    pg_proxy_modex_free(p);
    if (p->say_times && p->mesh != NULL)
        say_mesh_counters(p);
    pg_mesh_free(p->mesh);
    for (int n = 0; p->hostnames != NULL && n < p->nnodes; n++)
        free(p->hostnames[n]);
    for (int n = 0; p->mesh_cards != NULL && n < p->nnodes; n++)
        free(p->mesh_cards[n]);
    free(p->hostnames);
    free(p->mesh_cards);
    free(p->counts);
    free(p->env);
    free(p->trace_path);
}

/* --trace FILE: every proxy writes FILE.<node index> (the proxies of one
 * host would otherwise write the same file); the trace's ranks are global
 * and its header names the node (index, count, host name: set once the
 * proxies agreed on the job). */
static int trace_per_node(proxy_t *p, pg_run_opts_t *opts)
{
    if (opts->trace_path == NULL)
        return 0;
    if (asprintf(&p->trace_path, "%s.%d", opts->trace_path, p->nodeid) < 0) {
        p->trace_path = NULL;
        return -1;
    }
    opts->trace_path = p->trace_path;
    return 0;
}

/* Runs this node's job; returns its exit status. */
static int run_node(proxy_t *p, const pg_run_opts_t *opts, const pg_handler_table_t *handlers,
                    int *signalled)
{
    pg_job_node_t node = {
        .nnodes = p->nnodes, .nodeid = p->nodeid, .counts = p->counts,
        .hostnames = (const char *const *)p->hostnames, .kvsname = p->kvsname,
        .base_env = p->env, .xfence = pg_proxy_on_xfence, .xfence_ctx = p,
        .name_ops = p->mesh != NULL ? &node_ops : NULL, .name_ctx = p,
        .data_ops = p->mesh != NULL ? &proxy_modex_ops : NULL, .data_ctx = p,
        .failed = pg_proxy_on_verdict, .failed_ctx = p,
        .spawn = pg_proxy_spawn_request, .ended = pg_proxy_spawn_ended,
        .may_end = pg_proxy_spawn_may_end, .dyn_ctx = p,
    };
    pg_run_t *run = pg_run_new(p->base, opts, handlers);
    int status = PG_EXIT_INTERNAL;

    p->run = run;
    if (run != NULL && pg_run_set_node(run, &node) == 0) {
        pg_proxy_status_attach(p);
        pg_proxy_dyn_run_started(p);
        if (p->host_lost) /* gone while the mesh came up */
            pg_job_abort(pg_run_root(run), -1, PG_EXIT_INTERNAL, "the host runtime is gone");
        else if (pg_proxy_end_decided(p)) /* by a node whose ranks ran first */
            pg_proxy_end_apply_soon(p);
        status = pg_run_dispatch(run);
    }
    pg_proxy_spawn_run_ended(p); /* before the run's jobs go */
    p->ran = true;
    *signalled = run != NULL && pg_run_ended_by_signal(run);
    p->run = NULL;
    pg_run_free(run); /* the run's directories are gone, its keeper dismissed */
    return status;
}

/* A start-up failure before the mesh could carry it: the host's abort
 * ends the other proxies -- from node 0 only when every node sees the
 * same failure (the allgather's checks, its deadline), so the host never
 * gets K aborts at once.  A start-up that outlived --timeout ends as the
 * job's timeout does (exit 124): --timeout counts from the proxy's start. */
static int start_failed(proxy_t *p, const char *err, bool seen_by_all)
{
    enum { START_ABORT_GRACE_MS = 1000 };
    bool deadline_passed = start_deadline_passed(p);
    int status = start_timed_out(p) ? PG_EXIT_TIMEOUT : PG_EXIT_INTERNAL;

    if (status == PG_EXIT_TIMEOUT)
        fprintf(stderr, "pmigate proxy: node %d: job timed out after %g s, in the start-up: %s\n",
                p->nodeid, p->timeout, err);
    else
        fprintf(stderr, "pmigate proxy: node %d: %s\n", p->nodeid, err);
    /* the others' start deadlines pass about when this one's did: node 0
     * lets them say so themselves before its abort ends them */
    if (seen_by_all && p->nodeid == 0 && deadline_passed)
        usleep(START_ABORT_GRACE_MS * 1000);
    if (!seen_by_all || p->nodeid == 0)
        pg_hostpmix_abort(p->host, status, err);
    pg_hostpmix_finalize(p->host);
    proxy_free(p);
    return status;
}

int pg_proxy_run(struct event_base *base, pg_run_opts_t *opts, const pg_handler_table_t *handlers)
{
    proxy_t p = { .parent = getppid(), .base = base }; /* the parent first: it may die */
    char err[512] = "";
    int status, signalled = 0, rc;

    p.started_at = opts->timeout_from = pg_clock_now(); /* --timeout counts from here */
    p.timeout = opts->timeout;
    if (opts->timeout > 0)
        p.timeout_at = p.started_at + (uint64_t)(opts->timeout * 1e9);

    p.host = pg_hostpmix_init(err, sizeof(err));
    if (p.host == NULL) {
        fprintf(stderr, "pmigate proxy: %s\n", err);
        return PG_EXIT_INTERNAL;
    }
    p.nnodes = pg_hostpmix_size(p.host);
    p.nodeid = pg_hostpmix_rank(p.host);
    p.env = env_without_host();
    p.say_times = opts->verbose || getenv("PMIGATE_PROXY_TIMES") != NULL;
    if (p.env == NULL || pg_hostpmix_attach(p.host, base) != 0 || trace_per_node(&p, opts) != 0) {
        snprintf(err, sizeof(err), "out of resources");
        return start_failed(&p, err, false);
    }
    if (plan_counts(&p, opts, err, sizeof(err)) != 0)
        return start_failed(&p, err, true);
    if (mesh_open(&p, err, sizeof(err)) != 0)
        return start_failed(&p, err, false);
    rc = agree_on_job(&p, err, sizeof(err));
    if (rc != 0) /* a deadline in the host's exchange passes alike on every waiting node */
        return start_failed(&p, err, true);
    /* every frame's reader before the mesh comes up: a node that is up
     * first starts its ranks, and what they cause (a failure, a publish)
     * reaches the nodes still waiting for the rest of the mesh */
    if (pg_proxy_end_setup(&p) != 0 || pg_proxy_names_setup(&p) != 0 || pg_proxy_events_setup(&p) != 0 ||
        pg_proxy_status_setup(&p) != 0 || pg_proxy_fence_setup(&p) != 0 || pg_proxy_modex_setup(&p) != 0 ||
        pg_proxy_dyn_setup(&p) != 0 || pg_proxy_spawn_setup(&p, opts) != 0 ||
        pg_proxy_group_setup(&p) != 0)
        return start_failed(&p, "out of resources", false);
    if (mesh_up(&p, err, sizeof(err)) != 0)
        return start_failed(&p, err, false);
    opts->trace_node = p.nodeid;
    opts->trace_nnodes = p.nnodes;
    opts->trace_host = p.hostnames[p.nodeid];
    status = run_node(&p, opts, handlers, &signalled);
    status = pg_proxy_end_finish(&p, status);
    /* a host tearing the job down, or gone, has nothing left to hear */
    if (!signalled && !p.host_lost)
        pg_hostpmix_finalize(p.host);
    proxy_free(&p);
    return status;
}

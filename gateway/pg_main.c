/*
 * pmigate's main(): the subcommands (run, proxy, status, probe, info,
 * trace, replay) and the version and help
 * texts.  Everything with logic lives in libpggateway so tests can reach it;
 * this file only wires the pieces to the command line.
 */
#include "config/config.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <hwloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gateway/util/pg_cli.h"
#include "gateway/job/pg_env_pmix.h"
#include "server/pg_handler.h"
#include "gateway/run/pg_run.h"
#include "gateway/util/pg_place.h"
#include "gateway/tools/pg_probe.h"
#include "gateway/proxy/pg_proxy.h"
#include "gateway/proxy/pg_replay_node.h"
#include "gateway/util/pg_status.h"
#include "gateway/tools/pg_status_cli.h"
#include "pmi1/pg_pmi1_server.h"
#include "pmi2/pg_pmi2_server.h"
#include "pmix/server/pg_pmix_server.h"
#include "trace/pg_replay.h"
#include "trace/pg_replay_gw.h"
#include "trace/pg_trace_cli.h"
#include "wire/pg_pmix_frame.h"
#include "wire/pg_wire.h"

static const char main_usage[] =
    "Usage: pmigate run [options] prog [args] [: ...]   launch a job (see pmigate run --help)\n"
    "       pmigate proxy [options] -n N prog [args]     one node's share of a job under a\n"
    "                                                  PMIx host (see pmigate proxy --help)\n"
    "       pmigate status [--watch] [JOB]             your running jobs on this node: ranks,\n"
    "                                                  fences and the ranks they wait for\n"
    "       pmigate probe [--pmi1|--pmi2|--pmix]       as the ranks of any launcher: check\n"
    "                                                  the PMI it offers (see probe --help)\n"
    "       pmigate info                               version, PMI limits, topology\n"
    "       pmigate trace show|stats|timeline FILE ... read a --trace file\n"
    "       pmigate replay [--fast] [--ranks N] FILE   replay a trace without the application\n"
    "       pmigate --version | --help\n";

/* The protocol handlers connections dispatch to, by the protocol their
 * first message shows.  A protocol without an entry is refused with a
 * message naming the rank. */
static const pg_handler_table_t handlers = { {
    [PG_PROTO_PMI1] = &pg_pmi1_handler,
    [PG_PROTO_PMI2] = &pg_pmi2_handler,
    [PG_PROTO_PMIX] = &pg_pmix_handler,
} };

static void print_hwloc_version(FILE *f, unsigned v)
{
    fprintf(f, "%u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
}

static int cmd_version(void)
{
    printf("pmigate %s\n", PACKAGE_VERSION);
    printf("libevent %s (built against %s)\n", event_get_version(), LIBEVENT_VERSION);
    printf("hwloc API ");
    print_hwloc_version(stdout, pg_place_hwloc_runtime_version());
    printf(" (built against ");
    print_hwloc_version(stdout, HWLOC_API_VERSION);
    printf(")\n");
    return 0;
}

static int cmd_info(void)
{
    pg_topo_counts_t c;
    pg_place_t *place;
    int rc;

    printf("pmigate %s\n", PACKAGE_VERSION);
    printf("PMI-1 limits: keylen_max %d, vallen_max %d, kvsname_max %d, line %d bytes\n",
           PG_PMI1_KEYLEN_MAX, PG_PMI1_VALLEN_MAX, PG_PMI1_KVSNAME_MAX, PG_PMI1_LINE_MAX);
    printf("PMI-2 limits: keylen_max %d, vallen_max %d, message %d bytes\n", PG_PMI2_KEYLEN_MAX,
           PG_PMI2_VALLEN_MAX, PG_PMI2_BODY_MAX);
    printf("PMIx limits: value %d bytes packed (PMIx_Put refuses a larger one), message %d bytes "
           "(a larger commit is sent in parts)\n",
           PG_PMIX_VALUE_MAX, PG_PMIX_FRAME_MAX);
    place = pg_place_new();
    rc = place == NULL ? -ENOMEM : pg_place_counts(place, &c);
    if (rc != 0) {
        fprintf(stderr, "pmigate: cannot read the topology with hwloc: %s\n", strerror(-rc));
        pg_place_free(place);
        return 1;
    }
    printf("topology (hwloc): %d package%s, %d core%s, %d PU%s, %d NUMA node%s\n", c.packages,
           c.packages == 1 ? "" : "s", c.cores, c.cores == 1 ? "" : "s", c.pus,
           c.pus == 1 ? "" : "s", c.numa_nodes, c.numa_nodes == 1 ? "" : "s");
    pg_place_free(place);
    return 0;
}

/* fds 0-2 must be open, or a pipe created for a rank could land on them and
 * be dup2'ed over in the child. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0)
            (void)open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
}

/* Every rank costs pmigate three descriptors (its PMI socket, stdout and
 * stderr pipes): lift the soft limit. */
static void raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* `run` launches a job on this host; `proxy` runs one node's share of a job
 * under a PMIx host runtime (pg_proxy.h); `__replay-node TRACE` serves one
 * recorded node of such a job again, for `pmigate replay`
 * (pg_replay_node.h).  Same options, same set-up. */
static int cmd_run(int argc, char **argv, int proxy, const char *replay_node)
{
    const char *name = proxy ? "pmigate proxy" : "pmigate run";
    pg_run_opts_t opts;
    char err[256];
    struct event_base *base = NULL;
    pg_run_t *run = NULL;
    int status = PG_EXIT_INTERNAL;

    if (pg_cli_parse_run(argc, argv, &opts, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        pg_run_opts_free(&opts);
        return PG_EXIT_USAGE;
    }
    if (opts.help) {
        fputs(proxy ? pg_proxy_usage : pg_cli_run_usage, stdout);
        pg_run_opts_free(&opts);
        return 0;
    }
    ensure_std_fds();
    raise_fd_limit();
    signal(SIGPIPE, SIG_IGN); /* a rank that goes away must not kill pmigate */
    base = event_base_new();
    if (base == NULL) {
        fprintf(stderr, "pmigate: cannot create the event loop\n");
        goto out;
    }
    if (proxy) {
        status = pg_proxy_run(base, &opts, &handlers);
        goto out;
    }
    if (replay_node != NULL) {
        status = pg_replay_node_run(base, &opts, &handlers, replay_node);
        goto out;
    }
    run = pg_run_new(base, &opts, &handlers);
    if (run != NULL)
        status = pg_run_dispatch(run);
out:
    pg_run_free(run);
    if (base != NULL)
        event_base_free(base);
    pg_run_opts_free(&opts);
    return status;
}

/* `probe`: a PMI self-test as a rank of any launcher (pg_probe.h).  The
 * backend is the interface the environment offers; PMIx under pmigate is
 * pmigate's own libpmix, beside this binary's. */
static int cmd_probe(int argc, char **argv)
{
    extern char **environ;
    pg_probe_opts_t opts;
    pg_probe_env_t env;
    char err[512], lib[4096];
    void *be = NULL;

    if (pg_probe_parse(argc, argv, &opts, err, sizeof(err)) != 0) {
        fprintf(stderr, "pmigate probe: %s\n", err);
        return PG_EXIT_USAGE;
    }
    if (opts.help) {
        fputs(pg_probe_usage, stdout);
        return 0;
    }
    if (pg_probe_detect(environ, opts.iface, &env, err, sizeof(err)) != 0) {
        fprintf(stderr, "probe: %s\n", err);
        return 1;
    }
    switch (env.iface) {
    case PG_PROBE_PMI1:
        return pg_probe_run(&pg_probe_pmi1_ops, NULL, &env, opts.timeout, stdout, stderr);
    case PG_PROBE_PMI2:
        return pg_probe_run(&pg_probe_pmi2_ops, NULL, &env, opts.timeout, stdout, stderr);
    default:
        break;
    }
    if (env.pmigate) {
        if (pg_env_libpmix_dir() == NULL) {
            fprintf(stderr, "probe: PMIx: this pmigate's libpmix.so.2 is not installed\n");
            return 1;
        }
        snprintf(lib, sizeof(lib), "%s/libpmix.so.2", pg_env_libpmix_dir());
    }
    be = pg_probe_pmix_open(env.pmigate ? lib : NULL, err, sizeof(err));
    if (be == NULL) {
        fprintf(stderr, "probe: PMIx: %s\n", err);
        return 1;
    }
    return pg_probe_run(&pg_probe_pmix_ops, be, &env, opts.timeout, stdout, stderr);
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;

    if (cmd == NULL) {
        fputs(main_usage, stderr);
        return PG_EXIT_USAGE;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0 || strcmp(cmd, "version") == 0)
        return cmd_version();
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(main_usage, stdout);
        return 0;
    }
    if (strcmp(cmd, "info") == 0)
        return cmd_info();
    if (strcmp(cmd, "trace") == 0)
        return pg_trace_main(argc - 2, argv + 2);
    if (strcmp(cmd, "replay") == 0)
        return pg_replay_main(argc - 2, argv + 2);
    if (strcmp(cmd, "__replay-stub") == 0) /* a rank of the gateway replay starts */
        return pg_replay_stub_main(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 2, argv + 2, 0, NULL);
    if (strcmp(cmd, "proxy") == 0)
        return cmd_run(argc - 2, argv + 2, 1, NULL);
    if (strcmp(cmd, "__replay-node") == 0 && argc > 2) /* pmigate replay of one node's trace */
        return cmd_run(argc - 3, argv + 3, 0, argv[2]);
    if (strcmp(cmd, "probe") == 0)
        return cmd_probe(argc - 2, argv + 2);
    if (strcmp(cmd, "status") == 0)
        return pg_status_main(argc - 2, argv + 2);
    fprintf(stderr, "pmigate: unknown command '%s'\n%s", cmd, main_usage);
    return PG_EXIT_USAGE;
}

/*
 * pg_cli: parses `pmigate run` the way mpiexec users type it.  See pg_cli.h.
 *
 * Options are accepted with one or two dashes (`-np 4`, `--np=4`), because
 * hydra users type single dashes and GNU users double ones.  Global options
 * may appear in any segment; -n and --env belong to the segment they are in.
 */
#include "gateway/util/pg_cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/pg_decimal.h"

/* Upper bound on the ranks of one job: far above what one node can run, low
 * enough that per-rank arrays cannot overflow. */
enum { PG_CLI_NPROCS_MAX = 1 << 20 };
/* --heartbeat: as --timeout's bound, far longer than any silence worth watching */
enum { PG_CLI_HEARTBEAT_MAX = 10000000 };

const char pg_cli_run_usage[] =
    "Usage: pmigate run [options] prog [args] [: [-n M] [--env K=V] prog2 [args]]...\n"
    "\n"
    "Launch a parallel job on this host and serve it PMI-1, PMI-2 and PMIx.\n"
    "Segments separated by ':' form one job (MPMD): one namespace, ranks\n"
    "numbered across segments, appnum = segment index.\n"
    "\n"
    "Per-segment options:\n"
    "  -n, -np N              ranks in this segment (default 1)\n"
    "  --env K=V              set K=V for this segment's ranks (repeatable)\n"
    "\n"
    "Global options:\n"
    "  --genv K=V             set K=V for every rank (repeatable)\n"
    "  --ppn K                ranks per node for PMI_process_mapping; with one\n"
    "                         host every rank is local, so it changes nothing\n"
    "  --bind-to core|socket|none\n"
    "                         bind ranks round-robin to cores or packages\n"
    "                         (default none, as hydra)\n"
    "  --sched normal|batch   scheduling policy of the ranks; batch (SCHED_BATCH)\n"
    "                         stops a waking rank from preempting the gateway\n"
    "                         or another rank: faster PMI wire-up on busy cores\n"
    "                         (default normal)\n"
    "  --timeout S            kill the job after S seconds, exit status 124\n"
    "  --heartbeat S          a rank that sends no PMI message and writes no\n"
    "                         output for S seconds (whole) has stalled: named,\n"
    "                         its job's PMIx ranks alerted, the job killed, 124\n"
    "  --tag-output           prefix every output line with [rank] ([job.rank]\n"
    "                         for the ranks of a spawned job)\n"
    "  --max-procs N          at most N processes spawned by the ranks over the\n"
    "                         whole run (default 256; 0 refuses spawn)\n"
    "  --verbose              print every PMI command and reply with its rank\n"
    "  --trace FILE           record every PMI message to FILE (see pmigate trace)\n"
    "  --strict               fail the job (status 125) when a rank ran without\n"
    "                         speaking PMI, instead of only warning\n"
    "  --stop-in-init         hold every rank in its PMI init until a PMIx tool\n"
    "                         releases the job (PMIX_DEBUGGER_RELEASE)\n"
    "  -h, --help             this text\n"
    "\n"
    "Exit status: the first non-zero rank status (128+N for a rank killed by\n"
    "signal N); the abort code after a PMI abort; 124 after --timeout or a\n"
    "stalled rank (--heartbeat, PMIx_Process_monitor);\n"
    "127 when a program cannot be started; 125 under --strict when a rank\n"
    "never spoke PMI; 2 for bad usage.\n";

typedef struct cli_state {
    pg_run_opts_t *opts;
    char *err;
    size_t errlen;
} cli_state_t;

static int fail(cli_state_t *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(cli_state_t *st, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(st->err, st->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int pg_bind_parse(const char *word, pg_bind_t *out)
{
    if (strcmp(word, "none") == 0)
        *out = PG_BIND_NONE;
    else if (strcmp(word, "core") == 0 || strcmp(word, "cores") == 0)
        *out = PG_BIND_CORE;
    else if (strcmp(word, "socket") == 0 || strcmp(word, "sockets") == 0 ||
             strcmp(word, "package") == 0)
        *out = PG_BIND_SOCKET;
    else
        return -1;
    return 0;
}

const char *pg_bind_name(pg_bind_t bind)
{
    switch (bind) {
    case PG_BIND_CORE:
        return "core";
    case PG_BIND_SOCKET:
        return "socket";
    default:
        return "none";
    }
}

int pg_sched_parse(const char *word, pg_sched_t *out)
{
    if (strcmp(word, "normal") == 0 || strcmp(word, "other") == 0)
        *out = PG_SCHED_NORMAL;
    else if (strcmp(word, "batch") == 0)
        *out = PG_SCHED_BATCH;
    else
        return -1;
    return 0;
}

const char *pg_sched_name(pg_sched_t sched)
{
    return sched == PG_SCHED_BATCH ? "batch" : "normal";
}

int pg_cli_parse_seconds(const char *s, int zero_ok, double *out)
{
    char *end;
    double v;

    if (s == NULL || *s == '\0' || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    v = strtod(s, &end);
    /* a day is far more than any job this tool runs interactively, and keeps
     * the libevent timeval well inside its range */
    if (errno != 0 || *end != '\0' || !(zero_ok ? v >= 0.0 : v > 0.0) || v > 1e7)
        return -1;
    *out = v;
    return 0;
}

/* Appends a borrowed string to a growable const char* array. */
static int push_str(const char ***arr, int *n, const char *s)
{
    const char **grown = realloc(*arr, (size_t)(*n + 1) * sizeof(**arr));

    if (grown == NULL)
        return -1;
    grown[*n] = s;
    *arr = grown;
    (*n)++;
    return 0;
}

/* Matches `-name`, `--name`, and their `=value` forms.  On a match returns 1
 * and sets *inline_val to the text after '=' (or NULL). */
static int opt_is(const char *arg, const char *name, const char **inline_val)
{
    size_t len = strlen(name);

    if (arg[0] != '-')
        return 0;
    arg += (arg[1] == '-') ? 2 : 1;
    if (strncmp(arg, name, len) != 0)
        return 0;
    if (arg[len] == '\0') {
        *inline_val = NULL;
        return 1;
    }
    if (arg[len] == '=') {
        *inline_val = arg + len + 1;
        return 1;
    }
    return 0;
}

/* Returns the option's value (inline or the next argument) and advances *i. */
static const char *opt_value(int argc, char **argv, int *i, const char *inline_val)
{
    if (inline_val != NULL)
        return inline_val;
    if (*i + 1 >= argc)
        return NULL;
    (*i)++;
    return argv[*i];
}

static int check_kv(cli_state_t *st, const char *opt, const char *kv)
{
    const char *eq = kv ? strchr(kv, '=') : NULL;

    if (kv == NULL)
        return fail(st, "%s needs an argument K=V", opt);
    if (eq == NULL || eq == kv)
        return fail(st, "%s expects K=V, got '%s'", opt, kv);
    return 0;
}

/* Handles one option at argv[*i] for segment seg.  Returns 0 when consumed,
 * -1 on error (message set). */
static int parse_option(cli_state_t *st, int argc, char **argv, int *i, pg_segment_t *seg)
{
    pg_run_opts_t *opts = st->opts;
    const char *arg = argv[*i];
    const char *iv = NULL;
    const char *val;

    if (opt_is(arg, "n", &iv) || opt_is(arg, "np", &iv)) {
        val = opt_value(argc, argv, i, iv);
        if (pg_decimal_parse(val, 1, PG_CLI_NPROCS_MAX, &seg->nprocs) != 0)
            return fail(st, "%s expects a positive number of ranks, got '%s'", arg,
                        val ? val : "");
        return 0;
    }
    if (opt_is(arg, "env", &iv)) {
        val = opt_value(argc, argv, i, iv);
        if (check_kv(st, "--env", val) != 0)
            return -1;
        return push_str(&seg->env, &seg->nenv, val) == 0 ? 0 : fail(st, "out of memory");
    }
    if (opt_is(arg, "genv", &iv)) {
        val = opt_value(argc, argv, i, iv);
        if (check_kv(st, "--genv", val) != 0)
            return -1;
        return push_str(&opts->genv, &opts->ngenv, val) == 0 ? 0 : fail(st, "out of memory");
    }
    if (opt_is(arg, "ppn", &iv)) {
        val = opt_value(argc, argv, i, iv);
        if (pg_decimal_parse(val, 1, PG_CLI_NPROCS_MAX, &opts->ppn) != 0)
            return fail(st, "--ppn expects a positive number, got '%s'", val ? val : "");
        return 0;
    }
    if (opt_is(arg, "max-procs", &iv)) {
        val = opt_value(argc, argv, i, iv);
        if (pg_decimal_parse(val, 0, PG_CLI_NPROCS_MAX, &opts->max_procs) != 0)
            return fail(st, "--max-procs expects a number of processes, got '%s'",
                        val ? val : "");
        opts->max_procs_set = 1;
        return 0;
    }
    if (opt_is(arg, "bind-to", &iv)) {
        val = opt_value(argc, argv, i, iv);
        if (val == NULL || pg_bind_parse(val, &opts->bind) != 0)
            return fail(st, "--bind-to expects core, socket or none, got '%s'", val ? val : "");
        return 0;
    }
    if (opt_is(arg, "sched", &iv)) {
        val = opt_value(argc, argv, i, iv);
        if (val == NULL || pg_sched_parse(val, &opts->sched) != 0)
            return fail(st, "--sched expects normal or batch, got '%s'", val ? val : "");
        return 0;
    }
    if (opt_is(arg, "timeout", &iv)) {
        val = opt_value(argc, argv, i, iv);
        if (pg_cli_parse_seconds(val, 0, &opts->timeout) != 0)
            return fail(st, "--timeout expects a positive number of seconds, got '%s'",
                        val ? val : "");
        return 0;
    }
    if (opt_is(arg, "heartbeat", &iv)) {
        val = opt_value(argc, argv, i, iv);
        if (pg_decimal_parse(val, 1, PG_CLI_HEARTBEAT_MAX, &opts->heartbeat) != 0)
            return fail(st, "--heartbeat expects a positive whole number of seconds, got '%s'",
                        val ? val : "");
        return 0;
    }
    if (opt_is(arg, "tag-output", &iv) && iv == NULL) {
        opts->tag_output = 1;
        return 0;
    }
    if (opt_is(arg, "strict", &iv) && iv == NULL) {
        opts->strict = 1;
        return 0;
    }
    if (opt_is(arg, "stop-in-init", &iv) && iv == NULL) {
        opts->stop_in_init = 1;
        return 0;
    }
    if ((opt_is(arg, "verbose", &iv) || opt_is(arg, "v", &iv)) && iv == NULL) {
        opts->verbose = 1;
        return 0;
    }
    if (opt_is(arg, "trace", &iv)) {
        opts->trace_path = opt_value(argc, argv, i, iv);
        if (opts->trace_path == NULL || opts->trace_path[0] == '\0')
            return fail(st, "--trace needs a file name");
        return 0;
    }
    if ((opt_is(arg, "help", &iv) || opt_is(arg, "h", &iv)) && iv == NULL) {
        opts->help = 1;
        return 0;
    }
    return fail(st, "unknown option '%s' (see pmigate run --help)", arg);
}

static int add_segment(pg_run_opts_t *opts, pg_segment_t **out)
{
    pg_segment_t *grown =
        realloc(opts->segments, (size_t)(opts->nsegments + 1) * sizeof(*grown));

    if (grown == NULL)
        return -1;
    opts->segments = grown;
    *out = &grown[opts->nsegments++];
    memset(*out, 0, sizeof(**out));
    (*out)->nprocs = 1;
    return 0;
}

/* Parses one segment starting at *i; leaves *i after its ':' (or at argc). */
static int parse_segment(cli_state_t *st, int argc, char **argv, int *i)
{
    pg_segment_t *seg;
    int first_arg;

    if (add_segment(st->opts, &seg) != 0)
        return fail(st, "out of memory");
    while (*i < argc && argv[*i][0] == '-' && argv[*i][1] != '\0') {
        if (strcmp(argv[*i], "--") == 0) {
            (*i)++;
            break;
        }
        if (parse_option(st, argc, argv, i, seg) != 0)
            return -1;
        (*i)++;
    }
    if (st->opts->help)
        return 0;
    if (*i >= argc || strcmp(argv[*i], ":") == 0)
        return fail(st, st->opts->nsegments == 1 ? "missing program to run"
                                                 : "missing program after ':' (segment %d)",
                    st->opts->nsegments);
    first_arg = *i;
    while (*i < argc && strcmp(argv[*i], ":") != 0)
        (*i)++;
    seg->argc = *i - first_arg;
    seg->argv = calloc((size_t)seg->argc + 1, sizeof(char *));
    if (seg->argv == NULL)
        return fail(st, "out of memory");
    memcpy(seg->argv, &argv[first_arg], (size_t)seg->argc * sizeof(char *));
    if (*i < argc) {
        (*i)++; /* the ':' */
        if (*i >= argc)
            return fail(st, "missing program after the last ':'");
    }
    return 0;
}

int pg_cli_parse_run(int argc, char **argv, pg_run_opts_t *opts, char *err, size_t errlen)
{
    cli_state_t st = { opts, err, errlen };
    int i = 0;

    memset(opts, 0, sizeof(*opts));
    if (errlen > 0)
        err[0] = '\0';
    if (argc <= 0)
        return fail(&st, "missing program to run");
    while (i < argc) {
        if (parse_segment(&st, argc, argv, &i) != 0)
            return -1;
        if (opts->help)
            return 0;
    }
    for (int s = 0; s < opts->nsegments; s++) {
        if (opts->nprocs > PG_CLI_NPROCS_MAX - opts->segments[s].nprocs)
            return fail(&st, "too many ranks (more than %d)", PG_CLI_NPROCS_MAX);
        opts->nprocs += opts->segments[s].nprocs;
    }
    return 0;
}

void pg_run_opts_free(pg_run_opts_t *opts)
{
    for (int s = 0; s < opts->nsegments; s++) {
        free(opts->segments[s].argv);
        free(opts->segments[s].env);
    }
    free(opts->segments);
    free(opts->genv);
    memset(opts, 0, sizeof(*opts));
}

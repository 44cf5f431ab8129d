/*
 * pg_probe: the steps and the report of `pmigate probe`.  See pg_probe.h.
 */
#include "gateway/tools/pg_probe.h"

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "gateway/util/pg_cli.h"
#include "gateway/util/pg_mapping.h"
#include "wire/pg_clock.h"

const char pg_probe_usage[] =
    "Usage: pmigate probe [--pmi1 | --pmi2 | --pmix] [--timeout S]\n"
    "\n"
    "Run as the ranks of any launcher (mpiexec.hydra -n 4 pmigate probe,\n"
    "srun --mpi=pmi2 pmigate probe, mpirun -n 4 pmigate probe,\n"
    "pmigate run -n 4 pmigate probe): checks the PMI the launcher offers --\n"
    "init, the job and node attributes, put and commit, a fence, a get of\n"
    "every rank's key -- and rank 0 prints one line saying what worked, how\n"
    "long the fence and the gets took (the slowest rank's), or which step\n"
    "failed on which rank.  Exit status 0 only when every step worked.\n"
    "\n"
    "  --pmi1, --pmi2, --pmix  speak this interface (default: PMIx under pmigate\n"
    "                          and under a PMIx server, PMI-2 under srun's\n"
    "                          PMI_FD, else PMI-1 on PMI_FD or PMI_PORT)\n"
    "  --timeout S             a step that takes longer than S seconds fails\n"
    "                          the probe (default 120; 0: wait for ever)\n"
    "  -h, --help              this text\n";

const char *pg_probe_iface_name(pg_probe_iface_t iface)
{
    switch (iface) {
    case PG_PROBE_PMI1:
        return "PMI-1";
    case PG_PROBE_PMI2:
        return "PMI-2";
    case PG_PROBE_PMIX:
        return "PMIx";
    default:
        return "auto";
    }
}

int pg_probe_parse(int argc, char **argv, pg_probe_opts_t *opts, char *err, size_t errlen)
{
    memset(opts, 0, sizeof(*opts));
    opts->timeout = PG_PROBE_TIMEOUT_DEFAULT;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        pg_probe_iface_t iface = PG_PROBE_AUTO;

        if (strcmp(a, "--pmi1") == 0)
            iface = PG_PROBE_PMI1;
        else if (strcmp(a, "--pmi2") == 0)
            iface = PG_PROBE_PMI2;
        else if (strcmp(a, "--pmix") == 0)
            iface = PG_PROBE_PMIX;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            opts->help = true;
        else if (strcmp(a, "--timeout") == 0 || strncmp(a, "--timeout=", 10) == 0) {
            const char *v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);

            if (pg_cli_parse_seconds(v, 1, &opts->timeout) != 0) {
                snprintf(err, errlen, "--timeout wants seconds (0 for none), not '%s'",
                         v != NULL ? v : "");
                return -1;
            }
        } else {
            snprintf(err, errlen, "unknown argument '%s' (see pmigate probe --help)", a);
            return -1;
        }
        if (iface != PG_PROBE_AUTO) {
            if (opts->iface != PG_PROBE_AUTO && opts->iface != iface) {
                snprintf(err, errlen, "choose one of --pmi1, --pmi2, --pmix");
                return -1;
            }
            opts->iface = iface;
        }
    }
    return 0;
}

/* ---- the environment ------------------------------------------------------ */

static const char *env_get(char *const *envp, const char *name)
{
    size_t n = strlen(name);

    for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
        if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

static bool env_has_prefix(char *const *envp, const char *prefix)
{
    for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
        if (strncmp(envp[i], prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

/* Who started a rank that reaches its server by PMI_FD / PMI_PORT or by a
 * PMIx server URI: each launcher leaves a variable only it sets. */
static const char *launcher_of(char *const *envp)
{
    if (env_get(envp, "SLURM_STEP_ID") != NULL)
        return "srun";
    if (env_get(envp, "OMPI_COMMAND") != NULL || env_get(envp, "OMPI_MCA_orte_hnp_uri") != NULL)
        return "Open MPI mpirun";
    if (env_get(envp, "PRTE_LAUNCHED") != NULL)
        return "prterun";
    if (env_get(envp, "FLUX_JOB_ID") != NULL)
        return "flux";
    if (env_get(envp, "MPIR_CVAR_CH3_INTERFACE_HOSTNAME") != NULL)
        return "hydra";
    return "an unknown launcher";
}

int pg_probe_detect(char *const *envp, pg_probe_iface_t forced, pg_probe_env_t *out, char *err,
                    size_t errlen)
{
    const char *ext = env_get(envp, "PMIGATE_PMI_EXT");
    const char *fd = env_get(envp, "PMI_FD"), *port = env_get(envp, "PMI_PORT");
    bool pmigate = ext != NULL && strcmp(ext, "1") == 0 &&
                   (fd != NULL || env_get(envp, "PMIGATE_PMI_PORT") != NULL);
    bool pmix_server = env_has_prefix(envp, "PMIX_SERVER_URI");
    bool pmi_wire = fd != NULL || port != NULL;

    memset(out, 0, sizeof(*out));
    out->pmigate = pmigate;
    out->launcher = pmigate ? "pmigate" : launcher_of(envp);
    if (forced == PG_PROBE_AUTO) {
        if (pmigate || pmix_server)
            forced = PG_PROBE_PMIX;
        else if (pmi_wire)
            forced = env_get(envp, "SLURM_STEP_ID") != NULL ? PG_PROBE_PMI2 : PG_PROBE_PMI1;
        else {
            snprintf(err, errlen,
                     "no PMI in the environment (PMI_FD, PMI_PORT, PMIX_SERVER_URI*): run it "
                     "as the ranks of a launcher, e.g. mpiexec.hydra -n 4 pmigate probe");
            return -1;
        }
    }
    out->iface = forced;
    if (forced == PG_PROBE_PMIX) {
        if (!pmigate && !pmix_server) {
            snprintf(err, errlen, "--pmix: no PMIx server in the environment "
                                  "(PMIX_SERVER_URI*) and not launched by pmigate");
            return -1;
        }
        out->via = pmigate ? (fd != NULL ? "PMI_FD" : "PMIGATE_PMI_PORT") : "PMIX_SERVER_URI";
        return 0;
    }
    if (!pmi_wire) {
        snprintf(err, errlen, "%s: neither PMI_FD nor PMI_PORT is set",
                 forced == PG_PROBE_PMI1 ? "--pmi1" : "--pmi2");
        return -1;
    }
    out->via = fd != NULL ? "PMI_FD" : "PMI_PORT";
    return 0;
}

int pg_probe_mapping(const char *mapping, pg_probe_facts_t *f, int *node, int *first,
                     char *err, size_t errlen)
{
    int *node_of = f->size > 0 ? calloc((size_t)f->size, sizeof(int)) : NULL;
    int nnodes = 0, local = 0;

    if (node_of == NULL || pg_mapping_decode(mapping, f->size, node_of) != 0) {
        snprintf(err, errlen, "PMI_process_mapping '%.100s' is no mapping of %d ranks", mapping,
                 f->size);
        free(node_of);
        return -1;
    }
    for (int r = 0; r < f->size; r++) {
        if (node_of[r] + 1 > nnodes)
            nnodes = node_of[r] + 1;
        if (node_of[r] == node_of[f->rank] && local++ == 0 && first != NULL)
            *first = r;
    }
    if (node != NULL)
        *node = node_of[f->rank];
    f->nnodes = nnodes;
    f->local_size = local;
    free(node_of);
    return 0;
}

/* ---- the report ------------------------------------------------------------- */

/* snprintf that appends at *at and never runs past len. */
static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*at >= len)
        return;
    va_start(ap, fmt);
    n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (n > 0)
        *at = (size_t)n < len - *at ? *at + (size_t)n : len;
}

void pg_probe_describe(const pg_probe_env_t *env, const pg_probe_facts_t *f, char *buf, size_t len)
{
    size_t at = 0;

    append(buf, len, &at, "(%s via %s", env->launcher, env->via);
    if (f->client[0] != '\0')
        append(buf, len, &at, ", %s", f->client);
    if (f->job[0] != '\0')
        append(buf, len, &at, ", job %s", f->job);
    if (f->nnodes > 0)
        append(buf, len, &at, ", %d node%s", f->nnodes, f->nnodes == 1 ? "" : "s");
    if (f->local_size > 0)
        append(buf, len, &at, ", %d local", f->local_size);
    if (f->universe > 0)
        append(buf, len, &at, ", universe %d", f->universe);
    append(buf, len, &at, ")");
}

/* ---- the steps -------------------------------------------------------------- */

/* Two rounds of keys: the probe's own, then each rank's verdict for rank 0. */
#define PROBE_KEY "pmigate.probe.%d"
#define VERDICT_KEY "pmigate.probe.verdict.%d"
/* What rank r puts: the checks of the others compare the prefix.  Values
 * carry no space, '=' or ';': PMI-1 lines cannot. */
#define PROBE_VALUE "probe-%d-of-%d-from-"

typedef struct probe {
    const pg_probe_ops_t *ops;
    void *be;
    const pg_probe_env_t *env;
    double timeout;
    pg_probe_facts_t f;
    char err[256];
    /* this rank's verdict: the first step that failed, or none */
    const char *failed_step;
    char why[512];
    uint64_t fence_ns, get_ns;
} probe_t;

/* The alarm of a step: its message is written by the handler, so it is
 * formatted before the step starts. */
static char alarm_msg[512];
static size_t alarm_len;

static void on_alarm(int sig)
{
    (void)sig;
    if (write(STDERR_FILENO, alarm_msg, alarm_len) < 0) {
        /* nothing left to tell it with */
    }
    _exit(1);
}

static void arm_timer(double seconds)
{
    struct itimerval it = { { 0, 0 }, { 0, 0 } };

    it.it_value.tv_sec = (time_t)seconds;
    it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    (void)setitimer(ITIMER_REAL, &it, NULL);
}

static void step_begin(probe_t *p, const char *step)
{
    int n;

    if (p->timeout <= 0)
        return;
    n = snprintf(alarm_msg, sizeof(alarm_msg),
                 "probe: %s rank %d: %s did not finish within %g s\n",
                 pg_probe_iface_name(p->env->iface), p->f.rank, step, p->timeout);
    alarm_len = n < 0 ? 0 : ((size_t)n < sizeof(alarm_msg) ? (size_t)n : sizeof(alarm_msg) - 1);
    signal(SIGALRM, on_alarm);
    arm_timer(p->timeout);
}

static void steps_end(void)
{
    arm_timer(0);
    signal(SIGALRM, SIG_DFL);
}

/* Records the first failure of this rank. */
static void verdict_fail(probe_t *p, const char *step, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void verdict_fail(probe_t *p, const char *step, const char *fmt, ...)
{
    va_list ap;

    if (p->failed_step != NULL)
        return;
    p->failed_step = step;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof(p->why), fmt, ap);
    va_end(ap);
}

/* A step this rank cannot go on from: tell, take the job down, exit 1. */
static int fatal(probe_t *p, const char *step, bool abort_job, FILE *errf)
{
    char desc[512], msg[1024];

    steps_end();
    pg_probe_describe(p->env, &p->f, desc, sizeof(desc));
    snprintf(msg, sizeof(msg), "probe: %s %s rank %d of %d: %s failed: %s",
             pg_probe_iface_name(p->env->iface), desc, p->f.rank, p->f.size, step, p->err);
    fprintf(errf, "%s\n", msg);
    fflush(errf);
    if (abort_job)
        p->ops->abort(p->be, 1, msg);
    return 1;
}

static int put_commit_fence(probe_t *p, const char *key, const char *value, uint64_t *fence_ns,
                            FILE *errf)
{
    uint64_t t0;

    step_begin(p, "put");
    if (p->ops->put(p->be, key, value, p->err, sizeof(p->err)) != 0)
        return fatal(p, "put", true, errf);
    step_begin(p, "commit");
    if (p->ops->commit(p->be, p->err, sizeof(p->err)) != 0)
        return fatal(p, "commit", true, errf);
    step_begin(p, "fence");
    t0 = pg_clock_now();
    if (p->ops->fence(p->be, p->err, sizeof(p->err)) != 0)
        return fatal(p, "fence", true, errf);
    if (fence_ns != NULL)
        *fence_ns = pg_clock_now() - t0;
    return 0;
}

/* Every rank's key, each value checked. */
static void get_all(probe_t *p)
{
    char key[64], want[64], value[1024];
    uint64_t t0 = pg_clock_now();

    step_begin(p, "all-get");
    for (int r = 0; r < p->f.size; r++) {
        snprintf(key, sizeof(key), PROBE_KEY, r);
        snprintf(want, sizeof(want), PROBE_VALUE, r, p->f.size);
        if (p->ops->get(p->be, r, key, value, sizeof(value), p->err, sizeof(p->err)) != 0) {
            verdict_fail(p, "get", "rank %d's key %s: %s", r, key, p->err);
            break;
        }
        if (strncmp(value, want, strlen(want)) != 0) {
            verdict_fail(p, "get", "rank %d's key %s holds '%.100s', not '%s...'", r, key, value,
                         want);
            break;
        }
    }
    p->get_ns = pg_clock_now() - t0;
}

/* One rank's verdict as rank 0 reads it: "ok:<fence ns>:<all-get ns>" or
 * "fail:<step>:<why>", the reason %XX-escaped (a PMI-1 value holds no
 * space, '=' or ';'). */
typedef struct verdict {
    bool ok;
    uint64_t fence_ns, get_ns;
    char step[32];
    char why[512];
} verdict_t;

static bool plain_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("._-/,()'", c) != NULL;
}

static void verdict_format(const probe_t *p, char *buf, size_t len)
{
    size_t at = 0;

    if (p->failed_step == NULL) {
        snprintf(buf, len, "ok:%llu:%llu", (unsigned long long)p->fence_ns,
                 (unsigned long long)p->get_ns);
        return;
    }
    append(buf, len, &at, "fail:%s:", p->failed_step);
    for (const unsigned char *c = (const unsigned char *)p->why; *c != '\0' && at + 4 < len; c++)
        append(buf, len, &at, plain_char(*c) ? "%c" : "%%%02X", *c);
}

static int verdict_parse(const char *s, verdict_t *v)
{
    unsigned long long fence, get;
    size_t at = 0;
    int n = 0;

    memset(v, 0, sizeof(*v));
    if (sscanf(s, "ok:%llu:%llu", &fence, &get) == 2) {
        v->ok = true;
        v->fence_ns = fence;
        v->get_ns = get;
        return 0;
    }
    if (sscanf(s, "fail:%31[^:]:%n", v->step, &n) != 1 || n == 0)
        return -1;
    for (const char *c = s + n; *c != '\0' && at + 1 < sizeof(v->why); c++) {
        unsigned x;

        if (*c == '%' && sscanf(c + 1, "%2x", &x) == 1) {
            v->why[at++] = (char)x;
            c += 2;
        } else
            v->why[at++] = *c;
    }
    v->why[at] = '\0';
    return 0;
}

/* Rank 0: every rank's verdict into one line; 0 when all were ok. */
static int report(probe_t *p, FILE *out)
{
    char key[64], value[1024], desc[512], first[700] = "";
    uint64_t fence_max = 0, get_max = 0;
    int failed = 0;

    step_begin(p, "collecting-verdicts");
    for (int r = 0; r < p->f.size; r++) {
        verdict_t v;

        snprintf(key, sizeof(key), VERDICT_KEY, r);
        if (p->ops->get(p->be, r, key, value, sizeof(value), p->err, sizeof(p->err)) != 0) {
            memset(&v, 0, sizeof(v));
            snprintf(v.step, sizeof(v.step), "get");
            snprintf(v.why, sizeof(v.why), "rank %d's verdict: %s", r, p->err);
        } else if (verdict_parse(value, &v) != 0) {
            snprintf(v.step, sizeof(v.step), "get");
            snprintf(v.why, sizeof(v.why), "rank %d's verdict reads '%.100s'", r, value);
        }
        if (!v.ok) {
            if (failed++ == 0)
                snprintf(first, sizeof(first), "%s failed on rank %d: %s", v.step, r, v.why);
            continue;
        }
        if (v.fence_ns > fence_max)
            fence_max = v.fence_ns;
        if (v.get_ns > get_max)
            get_max = v.get_ns;
    }
    step_begin(p, "finalize");
    if (p->ops->finalize(p->be, p->err, sizeof(p->err)) != 0 && failed++ == 0)
        snprintf(first, sizeof(first), "finalize failed on rank 0: %s", p->err);
    steps_end();
    pg_probe_describe(p->env, &p->f, desc, sizeof(desc));
    if (failed == 0) {
        fprintf(out,
                "probe: %s %s rank 0 of %d, put/fence/get ok, fence %.2f ms, all-get %.2f ms\n",
                pg_probe_iface_name(p->env->iface), desc, p->f.size, (double)fence_max / 1e6,
                (double)get_max / 1e6);
        return 0;
    }
    fprintf(out, "probe: %s %s rank 0 of %d, %s", pg_probe_iface_name(p->env->iface), desc,
            p->f.size, first);
    if (failed > 1)
        fprintf(out, " (%d ranks failed)", failed);
    fputc('\n', out);
    return 1;
}

int pg_probe_run(const pg_probe_ops_t *ops, void *be, const pg_probe_env_t *env, double timeout,
                 FILE *out, FILE *errf)
{
    probe_t p = { .ops = ops, .be = be, .env = env, .timeout = timeout };
    char key[64], value[1024], host[256] = "?";
    int rc;

    p.f = (pg_probe_facts_t){ .rank = -1, .size = -1, .universe = -1, .nnodes = -1,
                              .local_size = -1 };
    step_begin(&p, "init");
    if (ops->init(be, &p.f, p.err, sizeof(p.err)) != 0)
        return fatal(&p, "init", false, errf);
    if (p.f.size < 1 || p.f.rank < 0 || p.f.rank >= p.f.size) {
        snprintf(p.err, sizeof(p.err), "rank %d of %d makes no sense", p.f.rank, p.f.size);
        return fatal(&p, "init", true, errf);
    }
    step_begin(&p, "attributes");
    if (ops->attrs(be, &p.f, p.err, sizeof(p.err)) != 0)
        verdict_fail(&p, "attributes", "%s", p.err);

    (void)gethostname(host, sizeof(host) - 1);
    snprintf(key, sizeof(key), PROBE_KEY, p.f.rank);
    snprintf(value, sizeof(value), PROBE_VALUE "%.200s", p.f.rank, p.f.size, host);
    if ((rc = put_commit_fence(&p, key, value, &p.fence_ns, errf)) != 0)
        return rc;
    get_all(&p);

    /* the second round carries the verdicts to rank 0 */
    snprintf(key, sizeof(key), VERDICT_KEY, p.f.rank);
    verdict_format(&p, value, sizeof(value));
    if ((rc = put_commit_fence(&p, key, value, NULL, errf)) != 0)
        return rc;
    if (p.f.rank == 0)
        return report(&p, out) != 0 || p.failed_step != NULL ? 1 : 0;
    step_begin(&p, "finalize");
    if (ops->finalize(be, p.err, sizeof(p.err)) != 0)
        verdict_fail(&p, "finalize", "%s", p.err);
    steps_end();
    if (p.failed_step != NULL) {
        fprintf(errf, "probe: %s rank %d of %d: %s failed: %s\n", pg_probe_iface_name(env->iface),
                p.f.rank, p.f.size, p.failed_step, p.why);
        return 1;
    }
    return 0;
}

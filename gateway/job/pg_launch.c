/*
 * pg_launch: how a job's ranks start.  See pg_launch.h.
 *
 * A rank starts with vfork from a plan made in the parent (child_plan_t):
 * the child shares pmigate's memory until it execs, so it makes nothing
 * but system calls, and reports a failed exec through the plan.
 *
 * Below pg_job.c (which starts and takes back launches) and above
 * pg_job_conn.c (the ranks' connections); the run -- its process group,
 * sinks, stdin, PMI_PORT socket, teardown -- is reached through the job's
 * context (pg_job_ctx.h).
 */
#include "gateway/job/pg_launch.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gateway/job/pg_env_pmix.h"
#include "gateway/job/pg_job_ctx.h"
#include "gateway/job/pg_job_int.h"
#include "gateway/io/pg_listen.h"
#include "gateway/io/pg_stdin.h"

enum {
    /* Ranks started per turn of the event loop: the ranks already running
     * are served between batches instead of waiting for the last spawn. */
    PG_LAUNCH_BATCH = 16,
};

/* ---------------------------------------------------------------- */
/* preparation                                                        */
/* ---------------------------------------------------------------- */

int pg_launch_program_check(const char *prog)
{
    return pg_launch_program_check_at(AT_FDCWD, prog);
}

int pg_launch_program_check_at(int dirfd, const char *prog)
{
    const char *path = getenv("PATH");
    char candidate[PATH_MAX];
    int err = ENOENT;

    if (strchr(prog, '/') != NULL)
        return faccessat(dirfd, prog, X_OK, 0) == 0 ? 0 : errno;
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path != '\0') {
        size_t dirlen = strcspn(path, ":");
        struct stat st;

        if (snprintf(candidate, sizeof(candidate), "%.*s%s%s", (int)dirlen, path,
                     dirlen ? "/" : "", prog) < (int)sizeof(candidate) &&
            fstatat(dirfd, candidate, &st, 0) == 0 && !S_ISDIR(st.st_mode)) {
            if (faccessat(dirfd, candidate, X_OK, 0) == 0)
                return 0;
            err = EACCES;
        }
        path += dirlen;
        if (*path == ':')
            path++;
    }
    return err;
}

int pg_launch_check_programs(pg_job_t *job)
{
    for (int s = 0; s < job->opts->nsegments; s++) {
        const char *prog = job->opts->segments[s].argv[0];
        int err = pg_launch_program_check(prog);

        if (err != 0) {
            pg_verdict_launch_failed(job->v, -1, err);
            pg_job_log(job, "cannot run '%s': %s", prog,
                       err == ENOENT && strchr(prog, '/') == NULL ? "command not found"
                                                                   : strerror(err));
            return -1;
        }
    }
    return 0;
}

static int build_envs(pg_job_t *job)
{
    extern char **environ;
    const pg_run_opts_t *o = job->opts;

    job->seg_env = calloc((unsigned)o->nsegments, sizeof(*job->seg_env));
    if (job->seg_env == NULL)
        return -1;
    for (int s = 0; s < o->nsegments; s++) {
        pg_env_t *env = pg_env_new(job->node != NULL && job->node->base_env != NULL
                                       ? job->node->base_env
                                       : environ);

        job->seg_env[s] = env;
        if (env == NULL)
            return -1;
        for (int i = 0; i < o->ngenv; i++)
            if (pg_env_put(env, o->genv[i]) != 0)
                return -1;
        for (int i = 0; i < o->segments[s].nenv; i++)
            if (pg_env_put(env, o->segments[s].env[i]) != 0)
                return -1;
    }
    return 0;
}

static int build_placement(pg_job_t *job)
{
    int slots = job->size; /* one node: every rank is local, whatever --ppn says */
    int rc;

    job->place = pg_place_new();
    if (job->place == NULL)
        return -1;
    rc = pg_place_assign(job->place, job->opts->bind, job->nlocal);
    if (rc == -ENOMEM)
        return -1;
    if (rc != 0) {
        pg_job_log(job, "cannot read the topology with hwloc: %s", strerror(-rc));
        return -1;
    }
    if (pg_place_oversubscribed(job->place))
        pg_job_log(job, "more ranks than %ss: binding wraps round-robin",
                   job->opts->bind == PG_BIND_SOCKET ? "package" : "core");
    job->cpusets = calloc((size_t)job->size, sizeof(*job->cpusets));
    if (job->cpusets == NULL)
        return -1;
    for (int i = 0; i < job->nlocal; i++) /* other nodes' ranks: NULL */
        if (asprintf(&job->cpusets[job->first + i], "hwloc:%s",
                     pg_place_cpuset_str(job->place, i)) < 0) {
            job->cpusets[job->first + i] = NULL;
            return -1;
        }
    if (job->node != NULL)
        pg_mapping_format(job->node->counts, job->node->nnodes, job->size, job->mapping,
                          sizeof(job->mapping));
    else
        pg_mapping_format(&slots, 1, job->size, job->mapping, sizeof(job->mapping));
    return 0;
}

static void on_launch_batch(evutil_socket_t fd, short what, void *arg);
static void on_spawned_batch(evutil_socket_t fd, short what, void *arg);

int pg_launch_prepare(pg_job_t *job)
{
    if (build_envs(job) != 0)
        return -1;
    /* a spawned job is not bound: its ranks share the root's cores */
    if (job->jobno == 0 && build_placement(job) != 0)
        return -1;
    job->ev_launch = evtimer_new(job->base, job->jobno == 0 ? on_launch_batch : on_spawned_batch,
                                 job);
    return job->ev_launch != NULL ? 0 : -1;
}

void pg_launch_log_layout(const pg_job_t *job)
{
    pg_job_log(job, "job %s: %d rank%s, PMI_process_mapping %s, binding %s, scheduling %s",
               job->kvsname, job->size, job->size == 1 ? "" : "s", job->mapping,
               pg_bind_name(job->opts->bind), pg_sched_name(job->opts->sched));
    if (job->node != NULL)
        pg_job_log(job, "node %d of %d (%s): ranks %d-%d", job->node->nodeid, job->node->nnodes,
                   job->node->hostnames[job->node->nodeid], job->first,
                   job->first + job->nlocal - 1);
    for (int i = job->first; i < job->first + job->nlocal; i++)
        pg_job_log(job, "rank %d: pid %d, appnum %d, cpuset %s", i, (int)job->ranks[i].pid,
                   job->ranks[i].appnum,
                   job->place != NULL ? pg_place_cpuset_str(job->place, i - job->first) : "-");
}

/* ---------------------------------------------------------------- */
/* one child                                                          */
/* ---------------------------------------------------------------- */

typedef struct child_fds {
    int pmi;      /* the child's socketpair end */
    int out_w;    /* stdout pipe, write end */
    int err_w;    /* stderr pipe, write end */
    int stdin_fd; /* -1: /dev/null */
} child_fds_t;

/* Everything a child needs between vfork and exec, prepared by the parent:
 * the child runs in the parent's memory and may only make system calls
 * (no malloc, no stdio, no hwloc) before it execs. */
typedef struct child_plan {
    child_fds_t fds;
    pid_t pgid;         /* the job's process group; 0: the child starts it */
    pid_t parent;       /* pmigate */
    char *const *argv;  /* argv[0] is searched in PATH */
    char *const *envp;
    int bound;          /* apply cpus */
    cpu_set_t cpus;
    int batch;          /* run under SCHED_BATCH (--sched batch) */
    const char *wdir;   /* chdir here first, or NULL */
    int lent_top;       /* the child copies pmigate's table up to here */
    /* The child's errno when it cannot exec.  vfork lends the child the
     * parent's memory until exec or _exit, so this is how it reports;
     * volatile: the parent reads what another process wrote. */
    volatile int exec_err;
} child_plan_t;

enum {
    /* The rank's PMI_FD: the first descriptor after stdin, stdout and
     * stderr, whatever number the socketpair got in pmigate. */
    PG_CHILD_PMI_FD = 3,
    /* The first descriptor a rank does not inherit. */
    PG_CHILD_FIRST_CLOSED = PG_CHILD_PMI_FD + 1,
};

/* Signals pmigate catches or ignores: back to their defaults in the child,
 * so no pmigate handler runs there and exec does not keep SIG_IGN. */
static const int child_default_signals[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGPIPE };

/* Closes every descriptor from 'first' up.  close_range(2) needs Linux
 * 5.9; before it, one close per descriptor the limit allows. */
static void child_close_from(int first)
{
    struct rlimit lim;

    if (close_range((unsigned)first, ~0U, 0) == 0)
        return;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY ||
        lim.rlim_cur > INT_MAX)
        lim.rlim_cur = 65536;
    for (int fd = first; fd < (int)lim.rlim_cur; fd++)
        (void)close(fd);
}

/* Gives the rank its four descriptors -- stdin, stdout, stderr and its
 * PMI_FD at PG_CHILD_PMI_FD -- and nothing else: not pmigate's listening
 * socket, connections, event loop or job directory, not a proxy's mesh
 * links or its connection to the host runtime, not what the host runtime
 * or whoever started pmigate left open, close-on-exec or not (docs/user-guide.md,
 * "What pmigate guarantees").  Each source is first copied above the four
 * targets, so that no dup2 overwrites a source that sits at 0-3.  0, or -1
 * with errno. */
static int child_own_fds(const child_fds_t *f)
{
    int src[PG_CHILD_FIRST_CLOSED] = { f->stdin_fd, f->out_w, f->err_w, f->pmi };

    if (src[0] < 0 && (src[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    for (int i = 0; i < PG_CHILD_FIRST_CLOSED; i++)
        if ((src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, PG_CHILD_FIRST_CLOSED)) < 0)
            return -1;
    for (int i = 0; i < PG_CHILD_FIRST_CLOSED; i++) /* dup2's copy is not close-on-exec */
        if (dup2(src[i], i) < 0)
            return -1;
    child_close_from(PG_CHILD_FIRST_CLOSED);
    return 0;
}

/* Descriptors at low numbers, kept for pmigate's whole run, on which the
 * parent lends a child its four sources for the length of the spawn:
 * [0..3] the lent ones, [4] /dev/null, what they hold between spawns.
 * Why: a child that inherits a copy of pmigate's table (four descriptors
 * per running rank) takes and drops a reference to each one; N ranks cost
 * N^2 of them (docs/performance.md, "Own clients at scale").  A child
 * that shares the table instead takes a private copy of its first few
 * numbers only, these among them. */
enum { LENT_NULL = PG_CHILD_FIRST_CLOSED };
static int lent[PG_CHILD_FIRST_CLOSED + 1] = { -1, -1, -1, -1, -1 };

/* Reserves lent[] at the lowest free numbers: at the first launch they are
 * among pmigate's first few.  0, or -1 with errno. */
static int lent_reserve(void)
{
    for (int i = 0; i <= LENT_NULL; i++)
        if (lent[i] < 0 && (lent[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
            return -1;
    return 0;
}

/* The highest lent number: a child copies the table up to it. */
static int lent_top(void)
{
    int top = 0;

    for (int i = 0; i <= LENT_NULL; i++)
        top = lent[i] > top ? lent[i] : top;
    return top;
}

/* Puts the sources on the lent numbers, and rewrites *f to name those;
 * 0, or -1 with errno (then nothing is lent: lent_back restores). */
static int lent_lend(child_fds_t *f)
{
    int *src[PG_CHILD_FIRST_CLOSED] = { &f->stdin_fd, &f->out_w, &f->err_w, &f->pmi };

    for (int i = 0; i < PG_CHILD_FIRST_CLOSED; i++) {
        if (*src[i] < 0)
            continue; /* the child opens /dev/null itself */
        if (dup3(*src[i], lent[i], O_CLOEXEC) < 0)
            return -1;
        *src[i] = lent[i];
    }
    return 0;
}

/* Drops the parent's lent references again (a child's socket end held here
 * would hide that child's end of the connection). */
static void lent_back(void)
{
    for (int i = 0; i < PG_CHILD_FIRST_CLOSED; i++)
        (void)dup3(lent[LENT_NULL], lent[i], O_CLOEXEC);
}

/* In the child, first: its own table, a copy of pmigate's up to the lent
 * numbers only (close_range's UNSHARE: Linux 5.9), or of all of it.  A
 * child that cannot have one must not touch pmigate's. */
static int child_unshare(int top)
{
    if (close_range((unsigned)top + 1, ~0U, CLOSE_RANGE_UNSHARE) == 0)
        return 0;
    return unshare(CLONE_FILES);
}

/* In the child, between vfork and exec: system calls only.  Never returns. */
static void child_exec(child_plan_t *p)
{
    struct sigaction dfl;
    sigset_t none;
    int err;

    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (size_t i = 0; i < sizeof(child_default_signals) / sizeof(child_default_signals[0]); i++)
        (void)sigaction(child_default_signals[i], &dfl, NULL);
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    (void)setpgid(0, p->pgid);
    /* the rank dies with pmigate even if pmigate is SIGKILLed.  The signal
     * comes when the parent *thread* ends: pmigate forks from its one
     * thread, which lives until pmigate exits.  It covers the rank only,
     * not the rank's own children (see "What pmigate guarantees" in the
     * user guide). */
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != p->parent)
        _exit(PG_EXIT_INTERNAL);
    if (child_unshare(p->lent_top) != 0 || child_own_fds(&p->fds) != 0) {
        err = errno;
        goto fail;
    }
    if (p->wdir != NULL && chdir(p->wdir) != 0) {
        err = errno;
        goto fail;
    }
    if (p->bound)
        (void)sched_setaffinity(0, sizeof(p->cpus), &p->cpus); /* unbound beats not running */
    if (p->batch) {
        struct sched_param normal_priority = { 0 };
        /* always allowed from SCHED_OTHER; the inherited policy beats not running */
        (void)sched_setscheduler(0, SCHED_BATCH, &normal_priority);
    }
    execvpe(p->argv[0], p->argv, p->envp);
    err = errno;
fail:
    p->exec_err = err != 0 ? err : EINVAL;
    _exit(err == ENOENT ? PG_EXIT_NOT_FOUND : PG_EXIT_CANNOT_EXEC);
}

/* Prepares rank r's child: its environment and binding.  The segment's
 * environment is reused for each of its ranks in turn: vfork returns only
 * once the child has exec'd, so the kernel has copied it by then.  Only
 * the jobs whose connections the PMI_PORT admits (the root) are told of
 * the port and the job directory. */
static int rank_plan(pg_job_t *job, const pg_rank_t *r, const child_fds_t *fds, child_plan_t *plan)
{
    pg_env_t *env = job->seg_env[r->appnum];
    pg_rank_env_t re = {
        .pmi_fd = PG_CHILD_PMI_FD, .rank = r->rank, .size = job->size,
        .local_rank = r->local_rank, .local_size = job->nlocal, .jobid = job->kvsname,
        .port = job->port != NULL ? job->ctx->port_path : NULL,
        .shm = pg_job_engine_shm_path(job->je),
        .libpmix_dir = pg_env_libpmix_dir(),
        .job_dir = job->port != NULL ? job->ctx->job_dir : NULL,
    };

    memset(plan, 0, sizeof(*plan));
    plan->fds = *fds;
    plan->pgid = job->ctx->pgid;
    plan->parent = job->ctx->pid;
    plan->argv = job->opts->segments[r->appnum].argv;
    if (pg_env_set_rank(env, &re) != 0) {
        errno = ENOMEM;
        return -1;
    }
    plan->envp = pg_env_array(env);
    plan->bound = job->place != NULL && pg_place_affinity(job->place, r->local_rank, &plan->cpus) > 0;
    plan->wdir = job->wdirs != NULL ? job->wdirs[r->appnum] : NULL;
    plan->batch = job->opts->sched == PG_SCHED_BATCH;
    return 0;
}

/* The child's stack while it shares pmigate's memory: one child at a
 * time, as the parent waits until it has exec'd (CLONE_VFORK). */
static char child_stack[256 * 1024] __attribute__((aligned(16)));

static int child_main(void *plan)
{
    child_exec(plan);
    return 0;
}

/* vfork, not fork: no page tables are copied (fork's cost grew with the
 * gateway's size, superlinearly in N) and the parent resumes once the child
 * has exec'd.  Signals stay blocked across it so that none of pmigate's
 * handlers runs in the child, which shares pmigate's memory.  (Spawned
 * jobs use it too: fork without the wait, and clone(CLONE_VM) without it,
 * were measured no faster to a spawn's reply -- the children's execs are
 * the cost -- and fork costs page copies, clone a shared errno; see
 * docs/performance.md, "Spawn latency".)  vfork by clone, sharing the
 * descriptor table too: the child copies only its first numbers
 * (child_unshare), not a table that grows with the ranks. */
static pid_t spawn_child(child_plan_t *plan)
{
    sigset_t all, old;
    pid_t pid;
    int saved;

    sigfillset(&all);
    (void)sigprocmask(SIG_SETMASK, &all, &old);
    pid = clone(child_main, child_stack + sizeof(child_stack),
                CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, plan);
    saved = errno;
    (void)sigprocmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return pid;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Creates the rank's pipes and socketpair; parent ends close-on-exec. */
static int rank_make_fds(int sv[2], int out[2], int err[2])
{
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
        return -1;
    return 0;
}

/* Sets up the parent's side of a forked rank. */
static int rank_watch(pg_job_t *job, pg_rank_t *r, int pmi_fd, int out_r, int err_r)
{
    int tag = job->opts->tag_output ? r->rank : -1;

    char label[32];

    r->out = pg_output_new(job->base, out_r, job->ctx->out_sink, tag);
    if (r->out == NULL)
        close(out_r);
    r->err = pg_output_new(job->base, err_r, job->ctx->err_sink, tag);
    if (r->err == NULL)
        close(err_r);
    if (tag >= 0 && job->jobno > 0) { /* "[job.rank] ": a spawned job's rank */
        snprintf(label, sizeof(label), "%d.%d", job->jobno, r->rank);
        pg_output_set_label(r->out, label);
        pg_output_set_label(r->err, label);
    }
    r->fd_conn = pg_job_conn_new(job, pmi_fd, r->rank);
    if (r->out == NULL || r->err == NULL || r->fd_conn == NULL)
        return -1;
    return pg_job_watch_silence(job, r);
}

static int rank_launch(pg_job_t *job, pg_rank_t *r)
{
    int sv[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
    pg_stdin_t *in = r->rank == 0 && job->jobno == 0 ? job->ctx->stdin_fwd : NULL;
    child_fds_t fds;
    child_plan_t plan;
    pid_t pid;
    int saved;

    if (rank_make_fds(sv, out, err) != 0)
        goto fail;
    fds = (child_fds_t){ sv[1], out[1], err[1], -1 };
    if (in != NULL)
        fds.stdin_fd = pg_stdin_child_fd(in);
    if (lent_reserve() != 0 || rank_plan(job, r, &fds, &plan) != 0)
        goto fail;
    plan.lent_top = lent_top();
    pid = lent_lend(&plan.fds) == 0 ? spawn_child(&plan) : -1;
    saved = errno;
    lent_back();
    errno = saved;
    if (pid < 0)
        goto fail;
    /* both sides set the group: whichever runs first wins the race */
    (void)setpgid(pid, job->ctx->ops->adopt(job->ctx->run, pid));
    r->pid = pid;
    job->pids[r->rank] = pid;
    pg_job_engine_started(job->je, r->rank, pid, job->opts->segments[r->appnum].argv[0]);
    r->exec_err = plan.exec_err; /* vfork returned: the child exec'd or gave up */
    job->nlive++;
    close_fd(&sv[1]);
    close_fd(&out[1]);
    close_fd(&err[1]);
    if (in != NULL)
        pg_stdin_start(in);
    if (rank_watch(job, r, sv[0], out[0], err[0]) != 0) {
        pg_job_log(job, "out of resources watching rank %d", r->rank);
        return -1;
    }
    return 0;
fail:
    saved = errno;
    /* a spawned job's launch failure is the spawn's errcode, not the job's end */
    if (job->jobno > 0 || pg_verdict_launch_failed(job->v, r->rank, saved))
        pg_job_log(job, "cannot start rank %d: %s", r->rank, strerror(saved));
    close_fd(&sv[0]);
    close_fd(&sv[1]);
    close_fd(&out[0]);
    close_fd(&out[1]);
    close_fd(&err[0]);
    close_fd(&err[1]);
    errno = saved;
    return -1;
}

/* ---------------------------------------------------------------- */
/* the root job's batches                                             */
/* ---------------------------------------------------------------- */

/* Starts the next batch of ranks; the rest wait for the next turn of the
 * loop (a zero timer runs after the pending I/O, an active event would not). */
static void launch_batch(pg_job_t *job)
{
    static const struct timeval next_turn = { 0, 0 };
    int end = job->next_launch + PG_LAUNCH_BATCH;
    int last = job->first + job->nlocal; /* this node's ranks only */

    for (; job->next_launch < last && job->next_launch < end && !job->ctx->tearing_down;
         job->next_launch++) {
        if (rank_launch(job, &job->ranks[job->next_launch]) != 0) {
            pg_verdict_launch_failed(job->v, job->next_launch, EAGAIN);
            pg_job_ctx_teardown(job->ctx, SIGTERM);
        }
    }
    if (job->next_launch < last && !job->ctx->tearing_down &&
        evtimer_add(job->ev_launch, &next_turn) == 0)
        return;
    if (job->next_launch < last && !job->ctx->tearing_down) {
        pg_verdict_launch_failed(job->v, job->next_launch, EAGAIN);
        pg_job_log(job, "out of resources starting rank %d", job->next_launch);
        pg_job_ctx_teardown(job->ctx, SIGTERM);
    }
    job->launching = 0;
    if (job->opts->verbose)
        pg_launch_log_layout(job);
    pg_job_ctx_maybe_done(job->ctx);
}

static void on_launch_batch(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    launch_batch(arg);
}

/* ---------------------------------------------------------------- */
/* a spawned job's batches                                            */
/* ---------------------------------------------------------------- */

/* A child could not start: the job is taken back (its started ranks are
 * killed, their exits decide nothing, no more are started) and the parent
 * gets the errcodes. */
void pg_launch_take_back(pg_job_t *sub)
{
    sub->discarded = 1;
    for (int i = 0; i < sub->size; i++) {
        sub->ranks[i].exec_err = 0;
        if (sub->ranks[i].pid > 0 && !sub->ranks[i].reaped)
            (void)kill(sub->ranks[i].pid, SIGKILL);
    }
}

/* Every child has exec'd or failed: the spawner learns how it went. */
static void spawned_launch_done(pg_job_t *sub)
{
    pg_job_launched_fn launched = sub->launched;
    void *arg = sub->launched_arg;
    int failed = 0;

    sub->launching = 0;
    for (int i = 0; i < sub->size; i++)
        failed += sub->errcodes[i] != 0;
    if (failed > 0 && !sub->discarded)
        pg_launch_take_back(sub);
    else if (failed == 0 && sub->opts->verbose)
        pg_launch_log_layout(sub);
    sub->launched = NULL;
    sub->errcodes = NULL;
    launched(failed, NULL, arg);
    pg_job_ctx_maybe_done(sub->ctx);
}

/* Starts the next batch of the spawned job's ranks; the rest on the next
 * turn of the loop, so the gateway serves the running ranks in between
 * instead of holding them for the whole spawn.  A child that cannot start
 * stops the launch (its errno in errcodes, ECANCELED for the ranks never
 * started) and takes the job back. */
static void spawned_launch_batch(pg_job_t *sub)
{
    static const struct timeval next_turn = { 0, 0 };
    int end = sub->next_launch + PG_LAUNCH_BATCH;
    int last = sub->first + sub->nlocal; /* this node's share */

    for (; sub->next_launch < last && sub->next_launch < end &&
           !sub->ctx->tearing_down && !sub->discarded;
         sub->next_launch++) {
        pg_rank_t *r = &sub->ranks[sub->next_launch];
        int err;

        errno = 0;
        if (rank_launch(sub, r) != 0) /* not started, or started but not watched */
            err = errno != 0 ? errno : EAGAIN;
        else
            err = r->exec_err; /* vfork returned: it exec'd or gave up */
        r->exec_err = 0;       /* the spawn's errcode, not the gateway's failure */
        sub->errcodes[r->rank] = err;
        if (err != 0)
            pg_launch_take_back(sub);
    }
    if (sub->next_launch < last && !sub->ctx->tearing_down && !sub->discarded &&
        evtimer_add(sub->ev_launch, &next_turn) == 0)
        return;
    for (; sub->next_launch < last; sub->next_launch++) { /* never started */
        sub->errcodes[sub->next_launch] = ECANCELED;
        pg_job_ctx_spawned_add(sub->ctx, -1);
    }
    spawned_launch_done(sub);
}

static void on_spawned_batch(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    spawned_launch_batch(arg);
}

void pg_launch_start(pg_job_t *job)
{
    job->launching = 1;
    job->next_launch = job->first;
    if (job->jobno == 0) {
        launch_batch(job);
        return;
    }
    pg_job_ctx_spawned_add(job->ctx, job->nlocal);
    spawned_launch_batch(job);
}

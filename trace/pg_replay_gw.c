/*
 * pg_replay_gw: the child gateway and its stub ranks.  See pg_replay_gw.h.
 *
 * The control socket is an abstract unix socket ("@pmigate-replay.<pid>.
 * <random>"): nothing in the file system, so a replay killed at any point
 * leaves nothing behind, and no $TMPDIR is too long for it.  Its peers are
 * held to this user by their credentials (SO_PEERCRED), as a 0700
 * directory would hold them.
 */
#include "trace/pg_replay_gw.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wire/pg_clock.h"

enum { STUB_MSG_MAX = 4096, ACCEPT_POLL_MS = 50, REPLAY_APPS_MAX = 64 };

typedef struct stub {
    int ctl;     /* control socket: closing it releases the stub */
    int pmi_fd;  /* the rank's PMI_FD, until taken */
} stub_t;

struct pg_replay_gw {
    pid_t child;
    int reaped;
    int wstatus;
    int listen_fd;
    char ctl_name[64];  /* "@pmigate-replay...": the abstract control socket */
    int nranks;
    int nstubs;         /* how many report: the ranks the gateway starts */
    stub_t *stubs;
    char kvsname[256];
    char port[256];
};

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* The address of the control socket `name` ("@..." abstract, else a
 * path); returns its length for bind/connect. */
static socklen_t ctl_address(const char *name, struct sockaddr_un *sa)
{
    size_t len = strlen(name);

    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    if (len >= sizeof(sa->sun_path))
        len = sizeof(sa->sun_path) - 1;
    memcpy(sa->sun_path, name, len);
    if (name[0] != '@')
        return (socklen_t)sizeof(*sa);
    sa->sun_path[0] = '\0';
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
}

static int open_ctl(pg_replay_gw_t *gw)
{
    struct sockaddr_un sa;
    unsigned char r[8];

    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
        return -1;
    snprintf(gw->ctl_name, sizeof(gw->ctl_name),
             "@pmigate-replay.%ld.%02x%02x%02x%02x%02x%02x%02x%02x", (long)getpid(), r[0], r[1],
             r[2], r[3], r[4], r[5], r[6], r[7]);
    gw->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (gw->listen_fd < 0 ||
        bind(gw->listen_fd, (struct sockaddr *)&sa, ctl_address(gw->ctl_name, &sa)) != 0 ||
        listen(gw->listen_fd, 4096) != 0)
        return -1;
    return 0;
}

/* Accepts one peer of the control socket if it runs as this user. */
static int accept_stub(int listen_fd)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    int ctl = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

    if (ctl >= 0 && (getsockopt(ctl, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
                     cred.uid != geteuid())) {
        close(ctl);
        ctl = -1;
    }
    return ctl;
}

/* Ranks per application: apps "2,2,2" as recorded when it adds up to
 * nranks, else one application of nranks.  Returns the count (<= max). */
static int app_sizes(int nranks, const char *apps, int *sizes, int max)
{
    int n = 0, sum = 0;

    for (const char *p = apps; p != NULL && *p != '\0' && n < max; n++) {
        sizes[n] = atoi(p);
        sum += sizes[n];
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    if (n < 2 || sum != nranks || n == max) {
        sizes[0] = nranks;
        return 1;
    }
    return n;
}

/* `pmigate run [--trace T] -n A stub CTL : -n B stub CTL ...`, or
 * `pmigate __replay-node NODE_TRACE ...` */
static pid_t spawn_gateway(const pg_replay_gw_t *gw, const char *self_exe,
                           const pg_replay_gw_job_t *job)
{
    int sizes[REPLAY_APPS_MAX], napps = app_sizes(gw->nranks, job->apps, sizes, REPLAY_APPS_MAX);
    char n[REPLAY_APPS_MAX][16];
    const char *argv[8 + 6 * REPLAY_APPS_MAX];
    int k = 0;
    pid_t pid;

    argv[k++] = "pmigate";
    if (job->node_trace != NULL) {
        argv[k++] = "__replay-node";
        argv[k++] = job->node_trace;
    } else {
        argv[k++] = "run";
    }
    if (job->trace_path != NULL) {
        argv[k++] = "--trace";
        argv[k++] = job->trace_path;
    }
    for (int a = 0; a < napps; a++) {
        snprintf(n[a], sizeof(n[a]), "%d", sizes[a]);
        if (a > 0)
            argv[k++] = ":";
        argv[k++] = "-n";
        argv[k++] = n[a];
        argv[k++] = self_exe;
        argv[k++] = "__replay-stub";
        argv[k++] = gw->ctl_name;
    }
    argv[k] = NULL;
    pid = fork();
    if (pid == 0) {
        execv(self_exe, (char *const *)argv);
        fprintf(stderr, "pmigate replay: cannot run %s: %s\n", self_exe, strerror(errno));
        _exit(127);
    }
    return pid;
}

/* Copies the value of "key=" in a stub's report (space-separated). */
static void report_field(const char *msg, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    const char *p = msg;

    out[0] = '\0';
    while ((p = strstr(p, key)) != NULL) {
        if ((p == msg || p[-1] == ' ') && p[klen] == '=') {
            snprintf(out, cap, "%.*s", (int)strcspn(p + klen + 1, " \n"), p + klen + 1);
            return;
        }
        p += klen;
    }
}

/* Reads one message of a stub into msg[STUB_MSG_MAX + 1] and the fd riding
 * with it (-1 if none), waiting at most 5 s. */
static int recv_with_fd(int ctl, char *msg)
{
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { msg, STUB_MSG_MAX };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                         .msg_controllen = sizeof(cbuf) };
    struct timeval tv = { 5, 0 };
    struct cmsghdr *cm;
    ssize_t n;
    int fd = -1;

    (void)setsockopt(ctl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    n = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC);
    cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
    if (cm != NULL && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
        memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
    msg[n > 0 ? n : 0] = '\0';
    return fd;
}

/* Reads one stub's report and the fd riding with it. */
static int take_report(pg_replay_gw_t *gw, int ctl, char *err, size_t errlen)
{
    char msg[STUB_MSG_MAX + 1], rank_s[16];
    int fd = recv_with_fd(ctl, msg);
    long rank;

    report_field(msg, "rank", rank_s, sizeof(rank_s));
    rank = strtol(rank_s, NULL, 10);
    if (fd < 0 || rank_s[0] == '\0' || rank < 0 || rank >= gw->nranks ||
        gw->stubs[rank].ctl >= 0) {
        snprintf(err, errlen, "a replay stub sent a bad report ('%.60s')", msg);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    gw->stubs[rank] = (stub_t){ ctl, fd };
    if (gw->kvsname[0] == '\0')
        report_field(msg, "jobid", gw->kvsname, sizeof(gw->kvsname));
    if (gw->port[0] == '\0')
        report_field(msg, "port", gw->port, sizeof(gw->port));
    return 0;
}

static int child_gone(pg_replay_gw_t *gw)
{
    if (!gw->reaped && waitpid(gw->child, &gw->wstatus, WNOHANG) == gw->child)
        gw->reaped = 1;
    return gw->reaped;
}

static int gather_stubs(pg_replay_gw_t *gw, uint64_t deadline, char *err, size_t errlen)
{
    for (int got = 0; got < gw->nstubs;) {
        struct pollfd p = { gw->listen_fd, POLLIN, 0 };
        int ctl;

        if (child_gone(gw)) {
            snprintf(err, errlen, "the gateway exited before its %d ranks started",
                     gw->nstubs);
            return -1;
        }
        if (pg_clock_now() > deadline) {
            snprintf(err, errlen, "timed out: %d of %d ranks of the replay gateway started", got,
                     gw->nstubs);
            return -1;
        }
        if (poll(&p, 1, ACCEPT_POLL_MS) <= 0)
            continue;
        ctl = accept_stub(gw->listen_fd);
        if (ctl < 0)
            continue;
        if (take_report(gw, ctl, err, errlen) != 0) {
            close(ctl);
            return -1;
        }
        got++;
    }
    return 0;
}

pg_replay_gw_t *pg_replay_gw_start(const char *self_exe, const pg_replay_gw_job_t *job,
                                   uint64_t deadline_ns, char *err, size_t errlen)
{
    pg_replay_gw_t *gw = calloc(1, sizeof(*gw));
    int nranks = job->nranks;

    if (gw == NULL || (gw->stubs = calloc((size_t)nranks, sizeof(*gw->stubs))) == NULL) {
        snprintf(err, errlen, "out of memory");
        free(gw);
        return NULL;
    }
    gw->nranks = nranks;
    gw->nstubs = job->nstubs;
    gw->listen_fd = -1;
    for (int r = 0; r < nranks; r++)
        gw->stubs[r] = (stub_t){ -1, -1 };
    if (open_ctl(gw) != 0) {
        snprintf(err, errlen, "cannot open the replay control socket: %s", strerror(errno));
        goto fail;
    }
    gw->child = spawn_gateway(gw, self_exe, job);
    if (gw->child < 0) {
        snprintf(err, errlen, "cannot fork the gateway: %s", strerror(errno));
        goto fail;
    }
    if (gather_stubs(gw, deadline_ns, err, errlen) != 0)
        goto fail;
    close_fd(&gw->listen_fd);
    return gw;
fail:
    pg_replay_gw_finish(gw, 1, pg_clock_now() + 2000000000u);
    pg_replay_gw_free(gw);
    return NULL;
}

int pg_replay_gw_take_fd(pg_replay_gw_t *gw, int rank)
{
    int fd;

    if (rank < 0 || rank >= gw->nranks)
        return -1;
    fd = gw->stubs[rank].pmi_fd;
    gw->stubs[rank].pmi_fd = -1;
    return fd;
}

const char *pg_replay_gw_kvsname(const pg_replay_gw_t *gw)
{
    return gw->kvsname;
}

const char *pg_replay_gw_port(const pg_replay_gw_t *gw)
{
    return gw->port[0] ? gw->port : NULL;
}

int pg_replay_gw_port_fd(pg_replay_gw_t *gw, int rank)
{
    char msg[STUB_MSG_MAX + 1];

    if (rank < 0 || rank >= gw->nranks || gw->stubs[rank].ctl < 0 || gw->port[0] == '\0' ||
        send(gw->stubs[rank].ctl, "P\n", 2, MSG_NOSIGNAL) != 2)
        return -1;
    return recv_with_fd(gw->stubs[rank].ctl, msg);
}

int pg_replay_gw_exit(pg_replay_gw_t *gw, int rank, int code, int sig)
{
    char cmd[32];
    int len;

    if (rank < 0 || rank >= gw->nranks || gw->stubs[rank].ctl < 0)
        return -1;
    close_fd(&gw->stubs[rank].pmi_fd); /* a rank that never spoke PMI: its socket goes too */
    len = snprintf(cmd, sizeof(cmd), sig ? "K %d\n" : "X %d\n", sig ? sig : code);
    if (send(gw->stubs[rank].ctl, cmd, (size_t)len, MSG_NOSIGNAL) != len)
        return -1;
    close_fd(&gw->stubs[rank].ctl);
    return 0;
}

int pg_replay_gw_finish(pg_replay_gw_t *gw, int kill_first, uint64_t deadline_ns)
{
    if (gw == NULL || gw->child <= 0)
        return -1;
    if (kill_first && !child_gone(gw))
        kill(gw->child, SIGTERM);
    for (int r = 0; r < gw->nranks; r++) {
        close_fd(&gw->stubs[r].pmi_fd);
        close_fd(&gw->stubs[r].ctl);
    }
    while (!child_gone(gw)) {
        struct timespec nap = { 0, 5000000 };

        if (pg_clock_now() > deadline_ns) {
            kill(gw->child, SIGKILL);
            waitpid(gw->child, &gw->wstatus, 0);
            gw->reaped = 1;
            return -1;
        }
        nanosleep(&nap, NULL);
    }
    return gw->wstatus;
}

void pg_replay_gw_free(pg_replay_gw_t *gw)
{
    if (gw == NULL)
        return;
    if (gw->child > 0 && !gw->reaped) {
        kill(gw->child, SIGKILL);
        waitpid(gw->child, &gw->wstatus, 0);
    }
    for (int r = 0; gw->stubs != NULL && r < gw->nranks; r++) {
        close_fd(&gw->stubs[r].pmi_fd);
        close_fd(&gw->stubs[r].ctl);
    }
    close_fd(&gw->listen_fd);
    free(gw->stubs);
    free(gw);
}

/* ---------------------------------------------------------------- */
/* the stub rank                                                      */
/* ---------------------------------------------------------------- */

static int stub_send(int ctl, int pmi_fd, const char *report)
{
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { (void *)report, strlen(report) };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                         .msg_controllen = sizeof(cbuf) };
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

    memset(cbuf, 0, sizeof(cbuf));
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &pmi_fd, sizeof(int));
    return sendmsg(ctl, &mh, MSG_NOSIGNAL) == (ssize_t)iov.iov_len ? 0 : -1;
}

/* Connects to the gateway's PMI_PORT as this rank's process and hands the
 * socket to the replayer (no fd rides along when it cannot connect). */
static void stub_send_port_conn(int ctl, const char *port)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = port != NULL ? socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;

    if (fd >= 0) {
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", port);
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
            close(fd);
            fd = -1;
        }
    }
    if (fd < 0 || stub_send(ctl, fd, "port\n") != 0)
        (void)send(ctl, "none\n", 5, MSG_NOSIGNAL);
    if (fd >= 0)
        close(fd);
}

/* Ends the stub as its recorded rank ended: exit `what` 'X' with code v,
 * or 'K' by signal v (without a core file). */
static void stub_end(char what, int v)
{
    struct rlimit no_core = { 0, 0 };

    if (what == 'K' && v > 0 && v < NSIG) {
        (void)setrlimit(RLIMIT_CORE, &no_core);
        signal(v, SIG_DFL);
        raise(v);
    }
    _exit(what == 'X' ? v & 0xff : 1);
}

int pg_replay_stub_main(int argc, char **argv)
{
    struct sockaddr_un sa;
    const char *fd_s = getenv("PMI_FD"), *rank = getenv("PMI_RANK");
    const char *jobid = getenv("PMI_JOBID"), *port = getenv("PMIGATE_PMI_PORT");
    char report[STUB_MSG_MAX], line[64];
    size_t len = 0;
    int ctl, pmi_fd;
    ssize_t n;

    if (argc < 2 || fd_s == NULL || rank == NULL) {
        fprintf(stderr, "pmigate __replay-stub: run by pmigate replay only\n");
        return 2;
    }
    pmi_fd = atoi(fd_s);
    snprintf(report, sizeof(report), "rank=%s jobid=%s port=%s\n", rank, jobid ? jobid : "",
             port ? port : "");
    ctl = socket(AF_UNIX, SOCK_STREAM, 0);
    if (ctl < 0 || connect(ctl, (struct sockaddr *)&sa, ctl_address(argv[1], &sa)) != 0 ||
        stub_send(ctl, pmi_fd, report) != 0) {
        fprintf(stderr, "pmigate __replay-stub: rank %s cannot reach the replayer: %s\n", rank,
                strerror(errno));
        return 1;
    }
    close(pmi_fd); /* the replayer's copy is now the only one */
    /* until released, one command a line: "P" asks for a PMI_PORT
     * connection of this rank; "X code" and "K signal" end the stub as
     * the recorded rank ended */
    while ((n = read(ctl, line + len, sizeof(line) - 1 - len)) > 0) {
        char *nl;

        len += (size_t)n;
        line[len] = '\0';
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            if (line[0] == 'P')
                stub_send_port_conn(ctl, port);
            else if (line[0] == 'X' || line[0] == 'K')
                stub_end(line[0], atoi(line + 1));
            len -= (size_t)(nl + 1 - line);
            memmove(line, nl + 1, len + 1);
        }
        if (len == sizeof(line) - 1)
            len = 0; /* not from the replayer */
    }
    return 0;
}

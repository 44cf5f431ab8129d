/*
 * gw_attack: a hostile PMI-1 rank for the gateway's bad-input tests.  It
 * runs under `pmigate run` with the real handlers and attacks through real
 * connections (its PMI_FD socketpair and the PMIGATE_PMI_PORT socket), then
 * reports what it saw and the gateway's peak memory (VmHWM of its parent,
 * which is pmigate) so the test script can judge.
 *
 * Usage: gw_attack MODE [args...]; the rank comes from PMI_RANK.
 *   flood fd|port MS   init (on PMI_FD, or on PMI_PORT with initack), then
 *                      send get_maxes requests as fast as the gateway takes
 *                      them for MS ms without reading a reply; then read
 *                      every reply, finalize and print
 *                      "rank R sent N got M hwm K" (K in kB).  Exits 0 only
 *                      if every request got its reply.
 *   hoard N            open N PMI_PORT connections that each send part of a
 *                      large spawn block and stay silent; print
 *                      "rank R hoard C hwm K" (C connections the gateway or
 *                      the kernel took), then close them, and finish a
 *                      normal PMI_FD init/finalize.
 *   fd-hog N MS        raise its own descriptor limit, open N PMI_PORT
 *                      connections and hold them MS ms while counting the
 *                      gateway's CPU time; print "rank R cpu T" (T in clock
 *                      ticks per second of holding), release them, then
 *                      talk PMI over a new PMI_PORT connection to show the
 *                      gateway still accepts; exit 0 if that worked.
 *   spam-exit N CODE   init; then, with the gateway stopped (SIGSTOP), send
 *                      N get_maxes requests, close PMI_FD, let the gateway
 *                      go on (SIGCONT) and exit CODE: the gateway finds the
 *                      replies undeliverable, every time.
 *   fin-exit           init; then, the gateway stopped, send finalize, close
 *                      PMI_FD, let it go on and exit 0 (the finalize ack is
 *                      undeliverable: the rank still finalized cleanly).
 *   impostor P R       (run outside the job, PMIGATE_PMI_PORT set by the
 *                      test) connect to PMI_PORT and claim rank R in
 *                      protocol P (pmi1: init + initack pmiid=R; pmi2: init
 *                      + fullinit pmirank=R; pmix: the preamble naming R);
 *                      print "impostor P rank R: refused" and exit 0 when
 *                      the gateway closes the connection without accepting
 *                      the claim, else "...: accepted" and exit 1.
 *   silent MS          open a PMI_PORT connection and say nothing; print
 *                      "rank R silent connection closed by the gateway" (or
 *                      "...still open after MS ms"), then finish a normal
 *                      PMI_FD init/finalize; exit 0 only if it was closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "wire/pg_io.h"
#include "wire/pg_pmix_frame.h"

static const char init_line[] = "cmd=init pmi_version=1 pmi_subversion=1\n";
static const char request[] = "cmd=get_maxes\n";

static int my_rank(void)
{
    const char *r = getenv("PMI_RANK");

    return r ? atoi(r) : -1;
}

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The gateway's peak resident size in kB (pmigate is our parent). */
static long gateway_hwm_kb(void)
{
    char path[64], line[256];
    long kb = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)getppid());
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmHWM: %ld", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* The gateway's user+system CPU time in clock ticks. */
static long gateway_cpu_ticks(void)
{
    char path[64], buf[1024];
    unsigned long utime, stime;
    const char *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)getppid());
    fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                            &utime, &stime) != 2)
        return -1;
    return (long)(utime + stime);
}

/* Reads one reply line (byte by byte: replies are short).  0 or -1. */
static int read_line(int fd)
{
    char ch;
    ssize_t n;

    while ((n = read(fd, &ch, 1)) == 1)
        if (ch == '\n')
            return 0;
    return -1;
}

static int port_connect(int nonblocking)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    const char *port = getenv("PMIGATE_PMI_PORT");
    int fd;

    if (port == NULL)
        return -1;
    fd = socket(AF_UNIX, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0)
        return -1;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", port);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* init on fd, plus initack naming our rank when it is a PMI_PORT socket. */
static int pmi_hello(int fd, int on_port)
{
    char line[64];

    if (pg_io_send_all(fd, init_line, sizeof(init_line) - 1) != 0 || read_line(fd) != 0)
        return -1;
    if (!on_port)
        return 0;
    snprintf(line, sizeof(line), "cmd=initack pmiid=%d\n", my_rank());
    if (pg_io_send_all(fd, line, strlen(line)) != 0)
        return -1;
    /* initack, then set size=, set rank=, set debug= */
    for (int i = 0; i < 4; i++)
        if (read_line(fd) != 0)
            return -1;
    return 0;
}

static int pmi_finalize(int fd)
{
    static const char fin[] = "cmd=finalize\n";

    return pg_io_send_all(fd, fin, sizeof(fin) - 1) == 0 && read_line(fd) == 0 ? 0 : -1;
}

/* Counts reply lines until `want` have come (or the peer stops). */
static long read_replies(int fd, long want)
{
    char buf[65536];
    long got = 0;

    while (got < want) {
        ssize_t n = read(fd, buf, sizeof(buf));

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            got += buf[i] == '\n';
    }
    return got;
}

/* Sends requests without reading for `ms` ms; returns how many went out
 * (a request cut by a full socket is completed before returning). */
static long send_unread(int fd, long ms)
{
    enum { REQ_LEN = sizeof(request) - 1, BURST = 64 };
    char burst[REQ_LEN * BURST];
    long deadline = now_ms() + ms;
    size_t total = 0;

    for (int i = 0; i < BURST; i++)
        memcpy(burst + i * REQ_LEN, request, REQ_LEN);
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    while (now_ms() < deadline) {
        size_t off = total % sizeof(burst);
        ssize_t n = write(fd, burst + off, sizeof(burst) - off);
        struct pollfd pfd = { .fd = fd, .events = POLLOUT };

        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        if (n > 0)
            total += (size_t)n;
        else
            (void)poll(&pfd, 1, 10);
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (total % REQ_LEN != 0) {
        size_t off = total % sizeof(burst), rest = REQ_LEN - total % REQ_LEN;

        if (pg_io_send_all(fd, burst + off, rest) != 0)
            return -1;
        total += rest;
    }
    return (long)(total / REQ_LEN);
}

static int mode_flood(const char *via, long ms)
{
    int on_port = strcmp(via, "port") == 0;
    int fd = on_port ? port_connect(0) : atoi(getenv("PMI_FD") ? getenv("PMI_FD") : "-1");
    long sent, got;

    if (fd < 0 || pmi_hello(fd, on_port) != 0)
        return 3;
    sent = send_unread(fd, ms);
    if (sent < 0)
        return 4;
    got = read_replies(fd, sent);
    printf("rank %d sent %ld got %ld hwm %ld\n", my_rank(), sent, got, gateway_hwm_kb());
    if (got != sent)
        return 5;
    return pmi_finalize(fd) == 0 ? 0 : 6;
}

/* One silent connection holding part of a spawn block; -1 if refused. */
static int hoard_one(void)
{
    static char block[200 * 1024];
    int fd = port_connect(1);

    if (fd < 0)
        return -1;
    if (block[0] == '\0') {
        memset(block, 'y', sizeof(block));
        memcpy(block, "mcmd=spawn\narg1=", 16);
    }
    (void)write(fd, block, sizeof(block)); /* whatever the socket takes */
    return fd;
}

static int mode_hoard(int n)
{
    int *fds = calloc((size_t)n, sizeof(*fds));
    int held = 0, pmi = atoi(getenv("PMI_FD") ? getenv("PMI_FD") : "-1");
    struct rlimit rl;

    if (fds == NULL || getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 3;
    rl.rlim_cur = rl.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &rl);
    for (int i = 0; i < n; i++)
        if ((fds[held] = hoard_one()) >= 0)
            held++;
    usleep(500000); /* let the gateway read what it accepted */
    printf("rank %d hoard %d hwm %ld\n", my_rank(), held, gateway_hwm_kb());
    for (int i = 0; i < held; i++)
        close(fds[i]);
    free(fds);
    if (pmi_hello(pmi, 0) != 0 || pmi_finalize(pmi) != 0)
        return 4;
    return 0;
}

static int mode_fd_hog(int n, long ms)
{
    int *fds = calloc((size_t)n, sizeof(*fds));
    int held = 0, fd, ok;
    long before, after;
    struct rlimit rl;

    if (fds == NULL || getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 3;
    rl.rlim_cur = rl.rlim_max; /* the gateway keeps the low limit it was given */
    (void)setrlimit(RLIMIT_NOFILE, &rl);
    for (int i = 0; i < n; i++)
        if ((fds[held] = port_connect(1)) >= 0)
            held++;
    usleep(200000);
    before = gateway_cpu_ticks();
    usleep((useconds_t)ms * 1000);
    after = gateway_cpu_ticks();
    printf("rank %d held %d cpu %ld\n", my_rank(), held, (after - before) * 1000 / ms);
    for (int i = 0; i < held; i++)
        close(fds[i]);
    free(fds);
    usleep(200000); /* the gateway sees the hogs go */
    fd = port_connect(0);
    ok = fd >= 0 && pmi_hello(fd, 1) == 0 && pmi_finalize(fd) == 0;
    printf("rank %d after the hog: %s\n", my_rank(), ok ? "served" : "not served");
    return ok ? 0 : 4;
}

/* Sends `bytes` and closes PMI_FD while the gateway is stopped, so it meets
 * a closed peer whatever the scheduling. */
static void send_behind_gateway_back(int fd, const char *bytes, size_t len)
{
    pid_t gateway = getppid();

    (void)kill(gateway, SIGSTOP);
    (void)pg_io_send_all(fd, bytes, len);
    close(fd);
    (void)kill(gateway, SIGCONT);
}

static int mode_spam_exit(long n, int code)
{
    int fd = atoi(getenv("PMI_FD") ? getenv("PMI_FD") : "-1");
    size_t len = (size_t)n * (sizeof(request) - 1);
    char *burst = malloc(len);

    if (burst == NULL || pmi_hello(fd, 0) != 0)
        return 3;
    for (long i = 0; i < n; i++)
        memcpy(burst + (size_t)i * (sizeof(request) - 1), request, sizeof(request) - 1);
    send_behind_gateway_back(fd, burst, len);
    free(burst);
    return code;
}

static int mode_fin_exit(void)
{
    static const char fin[] = "cmd=finalize\n";
    int fd = atoi(getenv("PMI_FD") ? getenv("PMI_FD") : "-1");

    if (pmi_hello(fd, 0) != 0)
        return 3;
    send_behind_gateway_back(fd, fin, sizeof(fin) - 1);
    return 0;
}

/* Waits up to `ms` for the peer to close; whatever it sends meanwhile is
 * appended to got[] (NUL-terminated).  1 on EOF, 0 if still open. */
static int closed_within(int fd, long ms, char *got, size_t cap)
{
    long deadline = now_ms() + ms;
    size_t len = strlen(got);

    for (long left = ms; left > 0; left = deadline - now_ms()) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        char buf[4096];
        ssize_t n;

        if (poll(&pfd, 1, (int)left) <= 0)
            continue;
        n = read(fd, buf, sizeof(buf));
        if (n <= 0)
            return 1; /* EOF, or reset by the gateway */
        if (len + (size_t)n < cap) {
            memcpy(got + len, buf, (size_t)n);
            len += (size_t)n;
            got[len] = '\0';
        }
    }
    return 0;
}

/* Sends proto's claim of `rank`; 0, or -1 if the gateway hung up first. */
static int send_claim(int fd, const char *proto, int rank)
{
    char line[128], body[96];

    if (strcmp(proto, "pmix") == 0) {
        unsigned char pre[PG_PMIX_PREAMBLE_LEN];

        pg_pmix_preamble_encode(pre, (uint32_t)rank);
        return pg_io_send_all(fd, pre, sizeof(pre));
    }
    snprintf(line, sizeof(line), "cmd=init pmi_version=%d pmi_subversion=%d\n",
             strcmp(proto, "pmi2") == 0 ? 2 : 1, strcmp(proto, "pmi2") == 0 ? 0 : 1);
    if (pg_io_send_all(fd, line, strlen(line)) != 0 || read_line(fd) != 0)
        return -1;
    if (strcmp(proto, "pmi1") == 0)
        snprintf(line, sizeof(line), "cmd=initack pmiid=%d\n", rank);
    else {
        snprintf(body, sizeof(body), "cmd=fullinit;pmirank=%d;threaded=FALSE;", rank);
        snprintf(line, sizeof(line), "%-6d%s", (int)strlen(body), body); /* as Slurm frames */
    }
    return pg_io_send_all(fd, line, strlen(line));
}

static int mode_impostor(const char *proto, int rank)
{
    char got[4096] = "";
    int fd = port_connect(0), refused;

    if (fd < 0)
        return 3;
    /* refused: the gateway hangs up without a successful reply to the claim
     * (an accepted claim is answered, and the connection stays open) */
    refused = send_claim(fd, proto, rank) != 0 ||
              (closed_within(fd, 3000, got, sizeof(got)) && strstr(got, "initack") == NULL &&
               strstr(got, "rc=0") == NULL);
    printf("impostor %s rank %d: %s\n", proto, rank, refused ? "refused" : "accepted");
    close(fd);
    return refused ? 0 : 1;
}

static int mode_silent(long ms)
{
    char got[64] = "";
    int fd = port_connect(0), pmi = atoi(getenv("PMI_FD") ? getenv("PMI_FD") : "-1"), closed;

    if (fd < 0)
        return 3;
    closed = closed_within(fd, ms, got, sizeof(got));
    if (closed)
        printf("rank %d silent connection closed by the gateway\n", my_rank());
    else
        printf("rank %d silent connection still open after %ld ms\n", my_rank(), ms);
    close(fd);
    if (pmi_hello(pmi, 0) != 0 || pmi_finalize(pmi) != 0)
        return 4;
    return closed ? 0 : 5;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "flood") == 0 && argc > 3)
        return mode_flood(argv[2], atol(argv[3]));
    if (strcmp(mode, "hoard") == 0 && argc > 2)
        return mode_hoard(atoi(argv[2]));
    if (strcmp(mode, "fd-hog") == 0 && argc > 3)
        return mode_fd_hog(atoi(argv[2]), atol(argv[3]));
    if (strcmp(mode, "spam-exit") == 0 && argc > 3)
        return mode_spam_exit(atol(argv[2]), atoi(argv[3]));
    if (strcmp(mode, "fin-exit") == 0)
        return mode_fin_exit();
    if (strcmp(mode, "impostor") == 0 && argc > 3)
        return mode_impostor(argv[2], atoi(argv[3]));
    if (strcmp(mode, "silent") == 0 && argc > 2)
        return mode_silent(atol(argv[2]));
    fprintf(stderr, "gw_attack: unknown mode '%s'\n", mode);
    return 2;
}

/*
 * floor_epoll: the physical floor of the wire-up benchmark's all-get phase.
 *
 * Any PMI server on this machine pays for the same system calls and context
 * switches when N clients with one outstanding request each get N cards one
 * at a time.  This program measures that cost with the least server
 * possible: one epoll loop that answers every kvs-get with a canned reply (no
 * lookup, no allocation).  A real server's all-get phase is then compared
 * with this figure, measured in the same run on the same machine.
 *
 * It forks N clients, each on its own socketpair (as PMI_FD), which do what
 * the wire-up workload does after its put: a kvs-fence (the start barrier),
 * then N kvs-gets, each sent and awaited as Slurm's libpmi2 does (one write,
 * a read of the length field, a read of the body).  The phase runs from the
 * fence's release to the last reply.
 *
 * usage: floor_epoll N [gets-per-client]
 * prints: floor n=N gets=G phase_us=… per_get_us=… per_client_get_us=…
 *   per_get_us        = phase / (N * G): server time per get served
 *   per_client_get_us = phase / G: one client's latency per get under load
 */
#include "pg_bench.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CLIENTS 65536

static const char fence_request[] = "cmd=kvs-fence;";
static const char fence_reply[] = "cmd=kvs-fence-response;rc=0;";
static const char get_command[] = "cmd=kvs-get;";
static const char get_reply_head[] = "cmd=kvs-get-response;found=TRUE;value=";

/* The server's view of one client. */
struct floor_conn {
    int fd;                         /* server end of the socketpair; owned */
    pid_t pid;                      /* the client process */
    char buf[PG_BENCH_FRAME_MAX];   /* bytes received, not yet handled */
    size_t len;
    int gets_done;
};

struct floor_server {
    int epfd;                       /* owned */
    struct floor_conn *conns;       /* n of them; owned */
    int n, gets;                    /* clients, gets per client */
    int fenced, finished;           /* clients in the fence, clients done */
    double t_start, t_end;          /* the all-get phase */
    char get_reply[PG_BENCH_FRAME_MAX];
    size_t get_reply_len;
    char fence_frame[64];
    size_t fence_frame_len;
};

/* ---- client side ------------------------------------------------------ */

static int client_send(int fd, const char *frame, ssize_t len)
{
    return len < 0 ? -1 : pg_bench_write_all(fd, frame, (size_t)len);
}

/* One client: fence, then `gets` kvs-gets, each awaited.  Returns 0 when
 * every reply was the expected one. */
static int client_run(int fd, int n, int gets)
{
    char frame[PG_BENCH_FRAME_MAX], body[PG_BENCH_FRAME_MAX];

    if (client_send(fd, frame, pg_bench_frame_format(frame, sizeof frame, fence_request)) < 0 ||
        pg_bench_frame_recv(fd, body, sizeof body) < 0 || strcmp(body, fence_reply) != 0)
        return -1;
    for (int i = 0; i < gets; i++) {
        ssize_t len = pg_bench_get_request(frame, sizeof frame, i % n);
        ssize_t got;
        if (client_send(fd, frame, len) < 0 || (got = pg_bench_frame_recv(fd, body, sizeof body)) < 0)
            return -1;
        if (strncmp(body, get_reply_head, sizeof get_reply_head - 1) != 0 ||
            got != (ssize_t)(sizeof get_reply_head - 1 + PG_BENCH_CARD_LEN + 6))
            return -1;
    }
    return 0;
}

/* ---- server side ------------------------------------------------------ */

static int server_fence_release(struct floor_server *s)
{
    s->t_start = pg_bench_now_us();
    for (int i = 0; i < s->n; i++)
        if (pg_bench_write_all(s->conns[i].fd, s->fence_frame, s->fence_frame_len) < 0)
            return -1;
    return 0;
}

/* Answers one complete request body. */
static int server_handle(struct floor_server *s, struct floor_conn *c, const char *body, size_t len)
{
    if (len >= sizeof get_command - 1 && memcmp(body, get_command, sizeof get_command - 1) == 0) {
        if (pg_bench_write_all(c->fd, s->get_reply, s->get_reply_len) < 0)
            return -1;
        if (++c->gets_done == s->gets && ++s->finished == s->n)
            s->t_end = pg_bench_now_us();
        return 0;
    }
    if (len == sizeof fence_request - 1 && memcmp(body, fence_request, len) == 0)
        return ++s->fenced == s->n ? server_fence_release(s) : 0;
    fprintf(stderr, "floor_epoll: unexpected request %.*s\n", (int)len, body);
    return -1;
}

/* Reads what the client sent and handles every complete frame in it. */
static int server_readable(struct floor_server *s, struct floor_conn *c)
{
    ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n == 0 && c->gets_done == s->gets)
        return epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);    /* done and gone */
    if (n <= 0) {
        fprintf(stderr, "floor_epoll: client %d closed early\n", (int)(c - s->conns));
        return -1;
    }
    c->len += (size_t)n;
    size_t used = 0;
    while (c->len - used >= PG_BENCH_LENGTH_FIELD) {
        long body = pg_bench_frame_length(c->buf + used);
        if (body < 0 || PG_BENCH_LENGTH_FIELD + (size_t)body > sizeof c->buf) {
            fprintf(stderr, "floor_epoll: bad length field\n");
            return -1;
        }
        if (c->len - used < PG_BENCH_LENGTH_FIELD + (size_t)body)
            break;
        if (server_handle(s, c, c->buf + used + PG_BENCH_LENGTH_FIELD, (size_t)body) < 0)
            return -1;
        used += PG_BENCH_LENGTH_FIELD + (size_t)body;
    }
    memmove(c->buf, c->buf + used, c->len - used);
    c->len -= used;
    return 0;
}

/* Creates client i's socketpair and forks it.  The child closes every
 * server end it inherited, runs, and exits. */
static int server_spawn(struct floor_server *s, int i)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        for (int j = 0; j < i; j++)
            close(s->conns[j].fd);
        close(sv[0]);
        close(s->epfd);
        _exit(client_run(sv[1], s->n, s->gets) == 0 ? 0 : 1);
    }
    close(sv[1]);
    s->conns[i].fd = sv[0];
    s->conns[i].pid = pid;
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &s->conns[i] };
    return epoll_ctl(s->epfd, EPOLL_CTL_ADD, sv[0], &ev);
}

static int server_on_ready(void *s, void *conn)
{
    return server_readable(s, conn);
}

static int server_loop(struct floor_server *s)
{
    return pg_bench_epoll_run(s->epfd, &s->finished, s->n, server_on_ready, s);
}

/* Reaps every client; returns 0 when all exited 0.  On failure the
 * survivors are killed first so nothing is left behind. */
static int server_reap(struct floor_server *s, int failed)
{
    int bad = 0;
    for (int i = 0; i < s->n; i++) {
        if (s->conns[i].pid <= 0)
            continue;
        if (failed)
            kill(s->conns[i].pid, SIGKILL);
        int status;
        if (waitpid(s->conns[i].pid, &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            bad++;
    }
    if (bad && !failed)
        fprintf(stderr, "floor_epoll: %d clients failed\n", bad);
    return bad ? -1 : 0;
}

static int server_run(struct floor_server *s)
{
    int rc = -1, spawned = 0;
    for (; spawned < s->n; spawned++)
        if (server_spawn(s, spawned) < 0) {
            perror("floor_epoll: spawning clients");
            goto out;
        }
    rc = server_loop(s);
out:
    for (int i = 0; i < spawned; i++)
        close(s->conns[i].fd);
    if (server_reap(s, rc < 0) < 0)
        rc = -1;
    return rc;
}

static int parse_count(const char *arg, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*arg == '\0' || *end != '\0' || v < 1 || v > MAX_CLIENTS)
        return -1;
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    struct floor_server s = { .epfd = -1 };
    int rc = 1;

    if (argc < 2 || argc > 3 || parse_count(argv[1], &s.n) < 0 ||
        (argc == 3 ? parse_count(argv[2], &s.gets) : parse_count(argv[1], &s.gets)) < 0) {
        fprintf(stderr, "usage: floor_epoll N [gets-per-client]  (1 <= N <= %d)\n", MAX_CLIENTS);
        return 2;
    }
    /* A client that dies must show up as an error, not kill the server. */
    signal(SIGPIPE, SIG_IGN);
    if (pg_bench_raise_nofile(s.n + 64L) < 0) {
        fprintf(stderr, "floor_epoll: cannot open %d descriptors (ulimit -n)\n", s.n + 64);
        return 1;
    }
    ssize_t len = pg_bench_get_reply(s.get_reply, sizeof s.get_reply);
    ssize_t flen = pg_bench_frame_format(s.fence_frame, sizeof s.fence_frame, fence_reply);
    s.conns = calloc((size_t)s.n, sizeof *s.conns);
    s.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (len < 0 || flen < 0 || s.conns == NULL || s.epfd < 0) {
        perror("floor_epoll: setup");
        goto out;
    }
    s.get_reply_len = (size_t)len;
    s.fence_frame_len = (size_t)flen;
    if (server_run(&s) < 0)
        goto out;

    double phase = s.t_end - s.t_start;
    printf("floor n=%d gets=%d phase_us=%.0f per_get_us=%.2f per_client_get_us=%.1f\n", s.n, s.gets,
           phase, phase / ((double)s.n * s.gets), phase / s.gets);
    rc = 0;
out:
    if (s.epfd >= 0)
        close(s.epfd);
    free(s.conns);
    return rc;
}

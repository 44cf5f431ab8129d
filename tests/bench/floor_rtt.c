/*
 * floor_rtt: the raw socketpair round trip of one client — the least one
 * kvs-get can cost on this machine, whatever the server does.
 *
 * A forked echo server blocks in read() on its end of a socketpair and
 * answers each request with the canned kvs-get reply; the client sends the
 * same request bytes Slurm's libpmi2 sends and reads the reply the way it
 * does (length field, then body).  Each round trip is timed on its own, and
 * the median is the figure a one-client kvs-get through a real server is
 * compared with.
 *
 * usage: floor_rtt [iterations]      (default 20000, after 1000 warm-up)
 * prints: rtt iters=I median_us=… p10_us=… p90_us=…
 */
#include "pg_bench.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define WARMUP 1000
#define DEFAULT_ITERS 20000
#define MAX_ITERS 10000000

/* The server: one read per request (requests never pipeline here), one
 * write per reply.  Returns when the client closes. */
static int echo_serve(int fd)
{
    char reply[PG_BENCH_FRAME_MAX], req[PG_BENCH_FRAME_MAX];
    ssize_t len = pg_bench_get_reply(reply, sizeof reply);
    if (len < 0)
        return -1;
    for (;;) {
        ssize_t n = read(fd, req, sizeof req);
        if (n == 0)
            return 0;
        if (n < 0 || pg_bench_write_all(fd, reply, (size_t)len) < 0)
            return -1;
    }
}

/* Times `iters` round trips after the warm-up; samples[] gets each one. */
static int client_time(int fd, double *samples, int iters)
{
    char req[PG_BENCH_FRAME_MAX], body[PG_BENCH_FRAME_MAX];
    ssize_t len = pg_bench_get_request(req, sizeof req, 1);
    if (len < 0)
        return -1;
    for (int i = -WARMUP; i < iters; i++) {
        double t0 = pg_bench_now_us();
        if (pg_bench_write_all(fd, req, (size_t)len) < 0 ||
            pg_bench_frame_recv(fd, body, sizeof body) < 0)
            return -1;
        if (i >= 0)
            samples[i] = pg_bench_now_us() - t0;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int iters = DEFAULT_ITERS, sv[2] = { -1, -1 }, rc = 1, status;
    double *samples = NULL;
    pid_t pid = -1;

    if (argc > 2 || (argc == 2 && ((iters = atoi(argv[1])) < 1 || iters > MAX_ITERS))) {
        fprintf(stderr, "usage: floor_rtt [iterations 1..%d]\n", MAX_ITERS);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    samples = calloc((size_t)iters, sizeof *samples);
    if (samples == NULL || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
        perror("floor_rtt: setup");
        goto out;
    }
    if ((pid = fork()) < 0) {
        perror("floor_rtt: fork");
        goto out;
    }
    if (pid == 0) {
        close(sv[1]);
        _exit(echo_serve(sv[0]) == 0 ? 0 : 1);
    }
    close(sv[0]);
    sv[0] = -1;
    if (client_time(sv[1], samples, iters) < 0) {
        perror("floor_rtt: round trip");
        goto out;
    }
    double median = pg_bench_median(samples, (size_t)iters);  /* sorts samples */
    printf("rtt iters=%d median_us=%.2f p10_us=%.2f p90_us=%.2f\n", iters, median,
           samples[iters / 10], samples[iters - 1 - iters / 10]);
    rc = 0;
out:
    if (sv[0] >= 0)
        close(sv[0]);
    if (sv[1] >= 0)
        close(sv[1]);   /* the server sees end of file and exits */
    if (pid > 0 && (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)))
        rc = 1;
    free(samples);
    return rc;
}

/*
 * pg_bench.c: shared helpers of the benchmark's floor programs (see
 * pg_bench.h for why the bytes and system calls mirror the real workload).
 */
#include "pg_bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>


double pg_bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int pg_bench_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int pg_bench_read_exact(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = 0;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

long pg_bench_frame_length(const char *field)
{
    long value = 0;
    int i = 0, digits = 0;
    while (i < PG_BENCH_LENGTH_FIELD && field[i] == ' ')
        i++;
    for (; i < PG_BENCH_LENGTH_FIELD && field[i] >= '0' && field[i] <= '9'; i++, digits++)
        value = value * 10 + (field[i] - '0');
    while (i < PG_BENCH_LENGTH_FIELD && field[i] == ' ')
        i++;
    return (digits == 0 || i != PG_BENCH_LENGTH_FIELD) ? -1 : value;
}

ssize_t pg_bench_frame_recv(int fd, char *body, size_t cap)
{
    char field[PG_BENCH_LENGTH_FIELD];
    if (pg_bench_read_exact(fd, field, sizeof field) < 0)
        return -1;
    long len = pg_bench_frame_length(field);
    if (len < 0 || (size_t)len >= cap) {
        errno = EPROTO;
        return -1;
    }
    if (pg_bench_read_exact(fd, body, (size_t)len) < 0)
        return -1;
    body[len] = '\0';
    return len;
}

ssize_t pg_bench_frame_format(char *buf, size_t cap, const char *body)
{
    size_t len = strlen(body);
    int n = snprintf(buf, cap, "%-6zu%s", len, body);
    return (n < 0 || (size_t)n >= cap) ? -1 : n;
}

ssize_t pg_bench_get_request(char *buf, size_t cap, int src)
{
    char body[256];
    snprintf(body, sizeof body, "cmd=kvs-get;jobid=%s;srcid=%d;key=card-%d;", PG_BENCH_JOBID, src,
             src);
    return pg_bench_frame_format(buf, cap, body);
}

ssize_t pg_bench_get_reply(char *buf, size_t cap)
{
    static const char head[] = "cmd=kvs-get-response;found=TRUE;value=";
    static const char tail[] = ";rc=0;";
    size_t body_len = sizeof head - 1 + PG_BENCH_CARD_LEN + sizeof tail - 1;
    if (PG_BENCH_LENGTH_FIELD + body_len + 1 > cap)
        return -1;
    char *p = buf + snprintf(buf, cap, "%6zu%s", body_len, head);
    for (int i = 0; i < PG_BENCH_CARD_LEN; i++)
        *p++ = "0123456789ABCDEF"[i % 16];
    memcpy(p, tail, sizeof tail);
    return (ssize_t)(PG_BENCH_LENGTH_FIELD + body_len);
}

static int double_compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pg_bench_median(double *samples, size_t n)
{
    if (n == 0)
        return 0;
    qsort(samples, n, sizeof *samples, double_compare);
    return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

int pg_bench_raise_nofile(long want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -1;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)want) {
        rl.rlim_cur = (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)want) ? (rlim_t)want
                                                                                    : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            return -1;
    }
    return (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= (rlim_t)want) ? 0 : -1;
}

int pg_bench_epoll_run(int epfd, const int *done, int n, int (*on_ready)(void *ctx, void *ptr),
                       void *ctx)
{
    struct epoll_event events[256];

    while (*done < n) {
        int k = epoll_wait(epfd, events, (int)(sizeof(events) / sizeof(events[0])), -1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        for (int i = 0; i < k; i++)
            if (on_ready(ctx, events[i].data.ptr) < 0)
                return -1;
    }
    return 0;
}

/*
 * hostfence: the floors under `pmigate proxy`'s cross-node fence, for
 * `./dev bench nodes` (tests/bench/nodes.sh).  Built against OpenPMIx
 * (pkg-config pmix, never pmigate's pmix.h) and started K times under the
 * same host as the proxies (mpirun.openmpi --oversubscribe -np K), it does
 * what one proxy's exchange must do and nothing else: put one blob of the
 * same size as a proxy's node blob, commit, PMIx_Fence(PMIX_COLLECT_DATA),
 * get every peer's blob and check its size and first bytes.
 *
 * Like the proxies (whose start-up allgather warms the host's collective
 * path first), it runs one small collecting fence before measuring; each
 * measured round starts after a fence without data, so the processes enter
 * together.  OpenPMIx's commit sends every blob the process ever put, so
 * only the first measured round carries the same bytes as a proxy's first
 * fence; nodes.sh runs one round per start.
 *
 * With RANKS (M) it also measures the least any bridge must add: the M
 * replies that release a node's ranks from the fence.  Before PMIx_Init it
 * forks M children, each on a socketpair, which do what a Slurm-libpmi2
 * rank of the wire-up workload does around its fence: send kvs-fence,
 * block reading the reply (length field, then body), then get GETS cards,
 * one kvs-get at a time.  Each round the process first takes the M
 * kvs-fence requests (untimed: the ranks ran just before, as a proxy's
 * did), after the exchange writes the fence reply to each child, as a
 * proxy answers its ranks, and after the clock stops answers their gets
 * with a canned card, as fast as it can: so while one process releases its
 * ranks, the others' ranks may already be getting, as on the proxies'
 * machine.  With "batch" the children run under SCHED_BATCH, as
 * `pmigate proxy --sched batch` runs its ranks.
 *
 * Usage: hostfence BYTES ROUNDS [RANKS GETS [batch]].  Every process prints
 *   hostfence rank=R k=K bytes=B us=T1,... [fanout=M bridge_us=U1,...]
 * (µs of each round from its put: to its last get, and to its last reply);
 * nodes.sh takes, per round, the fastest process (the one that entered
 * last: its time is the exchange itself, not waiting for the others) and
 * the median over rounds.
 */
#define _GNU_SOURCE
#include <pmix.h>

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pg_bench.h"

/* The frame pmigate and hydra answer a kvs-fence with (right-aligned
 * length field). */
static const char fence_reply[] = "    28cmd=kvs-fence-response;rc=0;";

/* A child's `gets` kvs-gets, each awaited.  Returns 0 or -1. */
static int rank_get_all(int fd, int gets)
{
    char body[PG_BENCH_FRAME_MAX], req[PG_BENCH_FRAME_MAX];

    for (int g = 0; g < gets; g++) {
        ssize_t len = pg_bench_get_request(req, sizeof(req), g);

        if (len < 0 || pg_bench_write_all(fd, req, (size_t)len) != 0 ||
            pg_bench_frame_recv(fd, body, sizeof(body)) < 0)
            return -1;
    }
    return 0;
}

/* One child: a rank around its fence, `rounds` times: waits for the
 * word (a kvs-get answer), enters the fence, waits for its release, gets
 * `gets` cards. */
static void rank_child(int fd, int rounds, int gets, bool batch)
{
    char body[PG_BENCH_FRAME_MAX], fence[64];
    ssize_t flen = pg_bench_frame_format(fence, sizeof(fence), "cmd=kvs-fence;");

    if (batch) {
        struct sched_param normal = { 0 };

        (void)sched_setscheduler(0, SCHED_BATCH, &normal);
    }
    for (int r = 0; r < rounds && flen > 0; r++)
        if (pg_bench_frame_recv(fd, body, sizeof(body)) < 0 ||
            pg_bench_write_all(fd, fence, (size_t)flen) != 0 ||
            pg_bench_frame_recv(fd, body, sizeof(body)) < 0 || rank_get_all(fd, gets) != 0)
            break;
    /* then wait for the end: exiting now would put M process teardowns
     * into another process's release */
    while (read(fd, body, sizeof(body)) > 0)
        ;
    _exit(0);
}

/* Forks m rank children; fds[i] is the process's end of child i's
 * socketpair.  Returns 0, or -1 with a message on stderr. */
static int ranks_start(int *fds, int m, int rounds, int gets, bool batch)
{
    for (int i = 0; i < m; i++) {
        int sv[2];
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || (pid = fork()) < 0) {
            perror("hostfence: ranks");
            return -1;
        }
        if (pid == 0) {
            close(sv[0]);
            for (int j = 0; j < i; j++)
                close(fds[j]);
            rank_child(sv[1], rounds, gets, batch);
        }
        close(sv[1]);
        fds[i] = sv[0];
    }
    return 0;
}

/* Brings the m ranks into their fence, so that they ran just before the
 * exchange, as a proxy's ranks did (their put and fence started it). */
static int ranks_enter(const int *fds, int m)
{
    char frame[PG_BENCH_FRAME_MAX], body[64];
    ssize_t len = pg_bench_get_reply(frame, sizeof(frame));

    for (int i = 0; i < m; i++)
        if (len < 0 || pg_bench_write_all(fds[i], frame, (size_t)len) != 0)
            return -1;
    for (int i = 0; i < m; i++)
        if (pg_bench_frame_recv(fds[i], body, sizeof(body)) < 0 ||
            strcmp(body, "cmd=kvs-fence;") != 0)
            return -1;
    return 0;
}

/* Releases the m ranks from their fence (timed by the caller). */
static int ranks_release(const int *fds, int m)
{
    for (int i = 0; i < m; i++)
        if (pg_bench_write_all(fds[i], fence_reply, sizeof(fence_reply) - 1) != 0)
            return -1;
    return 0;
}

/* The server side of the released ranks' gets (after the clock stopped). */
struct get_server {
    int served;
    char reply[PG_BENCH_FRAME_MAX];
    size_t reply_len;
};

static int serve_one(void *ctx, void *ptr)
{
    struct get_server *gs = ctx;
    int fd = (int)(intptr_t)ptr;
    char body[PG_BENCH_FRAME_MAX];

    if (pg_bench_frame_recv(fd, body, sizeof(body)) < 0 || strncmp(body, "cmd=kvs-get;", 12) != 0 ||
        pg_bench_write_all(fd, gs->reply, gs->reply_len) != 0)
        return -1;
    gs->served++;
    return 0;
}

/* Answers the m ranks' `gets` kvs-gets each, in the order they come. */
static int ranks_serve(int epfd, int m, int gets)
{
    struct get_server gs = { 0 };
    ssize_t len = pg_bench_get_reply(gs.reply, sizeof(gs.reply));

    if (len < 0)
        return -1;
    gs.reply_len = (size_t)len;
    return pg_bench_epoll_run(epfd, &gs.served, m * gets, serve_one, &gs);
}

/* An epoll set of the m ranks' sockets, for ranks_serve. */
static int ranks_epoll(const int *fds, int m)
{
    int epfd = epoll_create1(EPOLL_CLOEXEC);

    for (int i = 0; epfd >= 0 && i < m; i++) {
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = (void *)(intptr_t)fds[i] };

        if (epoll_ctl(epfd, EPOLL_CTL_ADD, fds[i], &ev) != 0) {
            close(epfd);
            return -1;
        }
    }
    return epfd;
}

static void ranks_stop(int *fds, int m)
{
    for (int i = 0; i < m; i++)
        if (fds[i] >= 0)
            close(fds[i]); /* end of file ends the child */
    while (wait(NULL) > 0)
        ;
}

static void print_list(const char *name, const double *us, int rounds)
{
    printf(" %s=", name);
    for (int r = 0; r < rounds; r++)
        printf("%s%.0f", r ? "," : "", us[r]);
}

static pmix_status_t fence(bool collect)
{
    pmix_info_t info;
    pmix_status_t rc;

    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

/* A blob whose bytes say whose and which round it is. */
static void fill(char *blob, size_t len, pmix_rank_t rank, int round)
{
    for (size_t i = 0; i < len; i++)
        blob[i] = (char)('a' + (rank * 7 + (unsigned)round + i) % 26);
}

/* One exchange of round `round`: put, commit, collecting fence, get the
 * K - 1 peers' blobs.  Returns 0, or -1 with a message on stderr. */
static int exchange(const pmix_proc_t *me, int k, char *blob, char *want, size_t len, int round)
{
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t v;
    pmix_status_t rc;

    snprintf(key, sizeof(key), "hostfence.%d", round);
    fill(blob, len, me->rank, round);
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = blob;
    v.data.bo.size = len;
    rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc == PMIX_SUCCESS)
        rc = fence(true);
    for (int r = 0; rc == PMIX_SUCCESS && r < k; r++) {
        pmix_proc_t peer;
        pmix_value_t *got = NULL;

        if ((pmix_rank_t)r == me->rank)
            continue;
        PMIX_LOAD_PROCID(&peer, me->nspace, (pmix_rank_t)r);
        rc = PMIx_Get(&peer, key, NULL, 0, &got);
        fill(want, len, (pmix_rank_t)r, round);
        if (rc == PMIX_SUCCESS &&
            (got->type != PMIX_BYTE_OBJECT || got->data.bo.size != len ||
             memcmp(got->data.bo.bytes, want, len) != 0))
            rc = PMIX_ERR_BAD_PARAM;
        if (got != NULL)
            PMIX_VALUE_RELEASE(got);
    }
    if (rc != PMIX_SUCCESS)
        fprintf(stderr, "hostfence rank %u: round %d: %s\n", me->rank, round,
                PMIx_Error_string(rc));
    return rc == PMIX_SUCCESS ? 0 : -1;
}

int main(int argc, char **argv)
{
    pmix_proc_t me, wild;
    pmix_value_t *v = NULL;
    size_t len = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
    int rounds = argc > 2 ? atoi(argv[2]) : 5, k = 0, rc = 1;
    int m = argc > 3 ? atoi(argv[3]) : 0, gets = argc > 4 ? atoi(argv[4]) : 0, epfd = -1;
    bool batch = argc > 5 && strcmp(argv[5], "batch") == 0;
    char *blob = malloc(len + 32), *want = malloc(len + 32); /* the warm-up sends 32 */
    size_t nr = (size_t)(rounds > 0 ? rounds : 1);
    double *us = calloc(nr, sizeof(*us)), *bridge_us = calloc(nr, sizeof(*bridge_us));
    int *fds = calloc((size_t)(m > 0 ? m : 1), sizeof(*fds));

    if (len == 0 || rounds < 1 || m < 0 || gets < 0 || (m > 0 && argc < 5) || blob == NULL || want == NULL || us == NULL ||
        bridge_us == NULL || fds == NULL) {
        fprintf(stderr, "usage: hostfence BYTES ROUNDS [RANKS GETS [batch]] (under a PMIx host)\n");
        return 2;
    }
    for (int i = 0; i < m; i++)
        fds[i] = -1;
    signal(SIGPIPE, SIG_IGN);
    /* before PMIx_Init: its threads must not be forked */
    if (ranks_start(fds, m, rounds, gets, batch) != 0 || (epfd = ranks_epoll(fds, m)) < 0) {
        ranks_stop(fds, m);
        return 1;
    }
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
        fprintf(stderr, "hostfence: no PMIx host\n");
        ranks_stop(fds, m);
        return 1;
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_UINT32)
        k = (int)v->data.uint32;
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
    if (k < 1 || exchange(&me, k, blob, want, 32, 0) != 0) /* the warm-up */
        goto out;
    for (int r = 1; r <= rounds; r++) {
        double t0;

        if (fence(false) != PMIX_SUCCESS || ranks_enter(fds, m) != 0)
            goto out;
        t0 = pg_bench_now_us();
        if (exchange(&me, k, blob, want, len, r) != 0)
            goto out;
        us[r - 1] = pg_bench_now_us() - t0;
        if (ranks_release(fds, m) != 0)
            goto out;
        bridge_us[r - 1] = pg_bench_now_us() - t0;
        if (ranks_serve(epfd, m, gets) != 0)
            goto out;
    }
    printf("hostfence rank=%u k=%d bytes=%zu", me.rank, k, len);
    print_list("us", us, rounds);
    if (m > 0) {
        printf(" fanout=%d", m);
        print_list("bridge_us", bridge_us, rounds);
    }
    printf("\n");
    fflush(stdout);
    rc = 0;
out:
    PMIx_Finalize(NULL, 0);
    close(epfd);
    ranks_stop(fds, m);
    free(blob);
    free(want);
    free(us);
    free(bridge_us);
    free(fds);
    return rc;
}

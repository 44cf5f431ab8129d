/*
 * pmix_fork: fork() after PMIx_Init.  The Standard leaves it undefined;
 * pmigate's libpmix makes every request of the child that needs the
 * server fail at once (PMIX_ERR_UNREACH), where it used to wait for ever
 * for a reply no thread would read, and the child must not disturb its
 * parent's connection.  Rank 0 forks; its child tries a get of a key no one
 * put (the server would have to answer), a put + commit, a fence and a
 * finalize, each bounded by an alarm, and exits 0 when all failed at once.
 * Then every rank puts, fences and reads its peers' keys, so the parent's
 * connection is shown intact.  Prints "pmix_fork rank R: ok".
 */
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "pmix_fork rank %u: ", me.rank);                   \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The forked child: every request that needs the server fails, at once. */
static int child(void)
{
    pmix_proc_t peer = me;
    pmix_value_t v, *got = NULL;
    pmix_status_t rc;
    double t0 = now();

    alarm(20); /* a hang is a failure, not a stuck test */
    peer.rank = 1;
    rc = PMIx_Get(&peer, "pg-fork-never-put", NULL, 0, &got);
    if (rc == PMIX_SUCCESS)
        return 2;
    PMIX_VALUE_LOAD(&v, "from-the-child", PMIX_STRING);
    (void)PMIx_Put(PMIX_GLOBAL, "pg-fork-child", &v);
    PMIX_VALUE_DESTRUCT(&v);
    if (PMIx_Commit() == PMIX_SUCCESS)
        return 3;
    if (PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS)
        return 4;
    (void)PMIx_Finalize(NULL, 0);
    return now() - t0 < 5.0 ? 0 : 5;
}

int main(void)
{
    pmix_proc_t wild;
    pmix_value_t v, *got = NULL;
    pmix_status_t rc;
    uint32_t size;
    char key[64], want[64];

    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "init");
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &got) == PMIX_SUCCESS, "job size");
    size = got->data.uint32;
    PMIX_VALUE_RELEASE(got);
    if (me.rank == 0) {
        int st;
        pid_t pid = fork();

        CHECK(pid >= 0, "fork");
        if (pid == 0)
            _exit(child());
        CHECK(waitpid(pid, &st, 0) == pid, "wait");
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "the forked child's requests did not all fail at once (%s %d)",
              WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    }
    snprintf(key, sizeof(key), "pg-fork-%u", me.rank);
    snprintf(want, sizeof(want), "value-%u", me.rank);
    PMIX_VALUE_LOAD(&v, want, PMIX_STRING);
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &v) == PMIX_SUCCESS, "put");
    PMIX_VALUE_DESTRUCT(&v);
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");
    CHECK(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "fence");
    for (uint32_t r = 0; r < size; r++) {
        pmix_proc_t peer = me;

        peer.rank = r;
        snprintf(key, sizeof(key), "pg-fork-%u", r);
        snprintf(want, sizeof(want), "value-%u", r);
        rc = PMIx_Get(&peer, key, NULL, 0, &got);
        CHECK(rc == PMIX_SUCCESS && got->type == PMIX_STRING && strcmp(got->data.string, want) == 0,
              "get %s", key);
        PMIX_VALUE_RELEASE(got);
    }
    CHECK(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "finalize");
    printf("pmix_fork rank %u: ok\n", me.rank);
    return 0;
}

/*
 * pmix_xdata: job data across nodes, checked from inside a job of
 * pmigate's libpmix under `pmigate proxy` (tests/cluster/proxy_xdata.sh):
 * fences over subsets of ranks on several nodes, and direct modex.
 *
 * Fences over subsets ("fences"; F = the first node's first rank, L = the
 * last node's last rank, F2 and L2 the ranks beside them), after a fence
 * of the whole job that starts their delays together:
 *   - {F, L} collecting: each puts a key first; after the fence each reads
 *     the other's with PMIX_IMMEDIATE (the fence brought it);
 *   - {F, L} without data: L joins 300 ms late, F's fence lasts that long;
 *   - {F, F2, L}: F's fence under PMIX_TIMEOUT 1 s ends with
 *     PMIX_ERR_TIMEOUT before F2 joins (L waits in it all along); then F,
 *     F2 and L fence over the same ranks, which must meet L's fence;
 *   - {F, L} with L 1.5 s late: F's fence under PMIX_TIMEOUT 1 s ends
 *     with PMIX_ERR_TIMEOUT though its node already sent its part; F's
 *     next fence over {F, L} meets L's;
 *   - {F, L2} and {F2, L} at once, over the same nodes, joined in opposite
 *     orders: L2 joins late; F2 waits (a get held until L2 commits a key
 *     after its fence) before it joins {F2, L}, so the two fences must not
 *     be taken for one, nor wait for each other;
 *   - {F, F2} collecting, on one node: its data still reaches the other
 *     nodes with the next whole-job fence;
 *   - a whole-job collecting fence last: every rank reads every rank's
 *     card with PMIX_IMMEDIATE.
 * Direct modex ("dmodex"):
 *   - F gets L's key that L commits 500 ms later: the value, after >= 0.4 s;
 *   - F gets L's key that L never commits, PMIX_TIMEOUT 1 s: TIMEOUT,
 *     after 0.9 s or more;
 *   - F gets L's key while L waits in a whole-job fence without it: not a
 *     deadlock, NOT_FOUND (as on one node), then F joins the fence.
 * Timeouts of fences over subsets ("timeouts"; A = the first node's first
 * rank, B = the second node's, C = the last rank; X = {A, B}, Z = {A, C};
 * every member of a fence must see the same outcome, as on one node):
 *   - X and Z joined in opposite orders, each instance by one member only
 *     before its PMIX_TIMEOUT: A's X (2 s) then Z (1 s); C's Z (1 s) at
 *     once and again after A's; B's X (1 s) after A's: every one ends
 *     with PMIX_ERR_TIMEOUT (a timed-out member's part never completes
 *     a later fence of another member);
 *   - then X and Z with a generous PMIX_TIMEOUT: they meet;
 *   - X under PMIX_TIMEOUT 1 s for both, B joining 0.7 to 1.3 s late
 *     (around A's deadline): A and B get the same status, and a
 *     collecting X after it brings each the other's status.
 * argv[1] is the rank count of every node ("2,2,2"; every node at least 2
 * ranks, at least 2 nodes), argv[2] "fences", "dmodex", "timeouts" or
 * "all".  Prints
 * "pmix_xdata rank R: ok" or names the broken rule and exits 1.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank = -1;
static pmix_proc_t me;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "pmix_xdata rank %d: ", rank);                     \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static pmix_proc_t proc(int r)
{
    pmix_proc_t p;

    PMIX_LOAD_PROCID(&p, me.nspace, (pmix_rank_t)r);
    return p;
}

static void put(const char *key, const char *val)
{
    pmix_value_t v;

    PMIX_VALUE_LOAD(&v, val, PMIX_STRING);
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &v) == PMIX_SUCCESS, "put %s", key);
    PMIX_VALUE_DESTRUCT(&v);
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit of %s", key);
}

/* A get of rank r's key: its status, the value compared with want (when
 * the get succeeds); immediate: PMIX_IMMEDIATE; secs > 0: PMIX_TIMEOUT. */
static pmix_status_t get(int r, const char *key, const char *want, int immediate, int secs)
{
    pmix_proc_t p = proc(r);
    pmix_info_t info[2];
    size_t n = 0;
    pmix_value_t *v = NULL;
    bool yes = true;
    pmix_status_t st;

    if (immediate)
        PMIX_INFO_LOAD(&info[n++], PMIX_IMMEDIATE, &yes, PMIX_BOOL);
    if (secs > 0)
        PMIX_INFO_LOAD(&info[n++], PMIX_TIMEOUT, &secs, PMIX_INT);
    st = PMIx_Get(&p, key, n > 0 ? info : NULL, n, &v);
    if (st == PMIX_SUCCESS && want != NULL)
        CHECK(v != NULL && v->type == PMIX_STRING && strcmp(v->data.string, want) == 0,
              "%s of rank %d is not '%s'", key, r, want);
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
    for (size_t i = 0; i < n; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
    return st;
}

/* A fence over ranks[] (NULL, 0: the whole job), collecting or not,
 * under PMIX_TIMEOUT secs when secs > 0: its status. */
static pmix_status_t fence_st(const int *ranks, size_t n, int collect, int secs)
{
    pmix_proc_t procs[8];
    pmix_info_t info[2];
    size_t ninfo = 0;
    bool yes = true;
    pmix_status_t st;

    for (size_t i = 0; i < n; i++)
        procs[i] = proc(ranks[i]);
    if (collect)
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (secs > 0)
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_TIMEOUT, &secs, PMIX_INT);
    st = PMIx_Fence(n > 0 ? procs : NULL, n, ninfo > 0 ? info : NULL, ninfo);
    for (size_t i = 0; i < ninfo; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
    return st;
}

static void fence(const int *ranks, size_t n, int collect)
{
    pmix_status_t st = fence_st(ranks, n, collect, 0);

    CHECK(st == PMIX_SUCCESS, "fence over %zu rank%s (%s): %s", n, n == 1 ? "" : "s",
          collect ? "collecting" : "no data", PMIx_Error_string(st));
}

static void fences(int size, int f, int f2, int l2, int l)
{
    char key[64], want[64];
    int pair[2] = { l, f }; /* listed in any order */
    double t0;

    /* The delays below (F2's 1.5 s, L's 300 ms) are counted against F's
     * PMIX_TIMEOUTs, so they must start together: over many nodes the
     * ranks come out of PMIx_Init a second or more apart, and F2 would
     * join F's first {F, F2, L} try before its timeout. */
    fence(NULL, 0, 0);
    /* {F, L} collecting: the other's key came with the fence */
    if (rank == f || rank == l) {
        int other = rank == f ? l : f;

        snprintf(want, sizeof(want), "sub from %d", rank);
        put("sub", want);
        fence(pair, 2, 1);
        snprintf(want, sizeof(want), "sub from %d", other);
        CHECK(get(other, "sub", want, 1, 0) == PMIX_SUCCESS,
              "after a collecting fence over {%d, %d}: rank %d's key is not here", f, l, other);
    }
    /* {F, L} without data: a synchronisation */
    if (rank == l)
        usleep(300 * 1000);
    if (rank == f || rank == l) {
        t0 = now();
        fence(pair, 2, 0);
        CHECK(rank != f || now() - t0 > 0.25,
              "a fence over {%d, %d} ended after %.3f s, before rank %d (300 ms late) joined", f,
              l, now() - t0, l);
    }
    /* {F, F2, L}: F's first try ends at its PMIX_TIMEOUT before F2 joins;
     * the try was never this node's part, so the next fence over the
     * same ranks meets L's, which waited all along */
    {
        int three[3] = { f, f2, l };
        pmix_status_t st;

        if (rank == f) {
            t0 = now();
            st = fence_st(three, 3, 0, 1);
            CHECK(st == PMIX_ERR_TIMEOUT && now() - t0 > 0.9,
                  "a fence over {%d, %d, %d} without rank %d, PMIX_TIMEOUT 1 s: %s after %.3f s",
                  f, f2, l, f2, PMIx_Error_string(st), now() - t0);
        } else if (rank == f2) {
            usleep(1500 * 1000);
        }
        if (rank == f || rank == f2 || rank == l)
            fence(three, 3, 0);
    }
    /* {F, L} again: L is 1.5 s late, F's fence under PMIX_TIMEOUT 1 s was
     * already with the other nodes when it ended; F's next fence over
     * {F, L} still meets L's */
    if (rank == f) {
        pmix_status_t st;

        t0 = now();
        st = fence_st(pair, 2, 0, 1);
        CHECK(st == PMIX_ERR_TIMEOUT && now() - t0 > 0.9,
              "a fence over {%d, %d} that rank %d joins 1.5 s late, PMIX_TIMEOUT 1 s: %s after "
              "%.3f s",
              f, l, l, PMIx_Error_string(st), now() - t0);
        fence(pair, 2, 0);
    } else if (rank == l) {
        usleep(1500 * 1000);
        fence(pair, 2, 0);
    }
    /* {F, L2} and {F2, L} at once over the same nodes */
    {
        int a[2] = { f, l2 }, b[2] = { f2, l };

        if (rank == l2) {
            usleep(300 * 1000);
            put("a-ready", "ready");
            fence(a, 2, 1);
            put("after-a", "done");
        } else if (rank == f) {
            fence(a, 2, 1);
            CHECK(get(l2, "a-ready", "ready", 1, 0) == PMIX_SUCCESS,
                  "fence {%d, %d} ended without rank %d's key", f, l2, l2);
        } else if (rank == f2) {
            pmix_status_t st = get(l2, "after-a", "done", 0, 60);

            CHECK(st == PMIX_SUCCESS, "rank %d's key put after its fence {%d, %d}: %s", l2, f,
                  l2, PMIx_Error_string(st));
            put("b-ready", "ready");
            fence(b, 2, 1);
        } else if (rank == l) {
            put("b-ready", "ready");
            fence(b, 2, 1);
            CHECK(get(f2, "b-ready", "ready", 1, 0) == PMIX_SUCCESS,
                  "fence {%d, %d} ended without rank %d's key", f2, l, f2);
        }
    }
    /* every rank's card; {F, F2} collecting on one node first */
    snprintf(key, sizeof(key), "card-%d", rank);
    snprintf(want, sizeof(want), "card of rank %d", rank);
    put(key, want);
    if (rank == f || rank == f2) {
        int local[2] = { f, f2 };

        fence(local, 2, 1);
    }
    fence(NULL, 0, 1);
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof(key), "card-%d", r);
        snprintf(want, sizeof(want), "card of rank %d", r);
        CHECK(get(r, key, want, 1, 0) == PMIX_SUCCESS,
              "after the whole-job fence: %s is not here", key);
    }
}

/* Sleeps until `at` seconds after t0. */
static void sleep_until(double t0, double at)
{
    double left = t0 + at - now();

    if (left > 0)
        usleep((useconds_t)(left * 1e6));
}

/* A fence over {me, other} under PMIX_TIMEOUT secs that no other member
 * joins before its deadline: PMIX_ERR_TIMEOUT, after 0.9 s or more. */
static void fence_alone(int other, int secs, const char *what)
{
    int pair[2] = { rank, other };
    double t0 = now();
    pmix_status_t st = fence_st(pair, 2, 0, secs);

    CHECK(st == PMIX_ERR_TIMEOUT && now() - t0 > 0.9,
          "%s: a fence over {%d, %d} rank %d does not join, PMIX_TIMEOUT %d s: %s after %.3f s",
          what, rank, other, other, secs, PMIx_Error_string(st), now() - t0);
}

/* Each instance of X = {A, B} and Z = {A, C} is joined by one member
 * before it times out; then both meet with a generous PMIX_TIMEOUT. */
static void timeouts_alone(int a, int b, int c)
{
    int x[2] = { a, b }, z[2] = { a, c };
    double t0;

    fence(NULL, 0, 0); /* every rank starts the clock together */
    t0 = now();
    if (rank == a) {
        fence_alone(b, 2, "A's X first");
        sleep_until(t0, 3);
        fence_alone(c, 1, "A's Z, 2 s after C's timed out");
    } else if (rank == b) {
        sleep_until(t0, 3);
        fence_alone(a, 1, "B's X, 1 s after A's timed out");
    } else if (rank == c) {
        fence_alone(a, 1, "C's Z first");
        sleep_until(t0, 5);
        fence_alone(a, 1, "C's Z again, 1 s after A's timed out");
    }
    sleep_until(t0, 6.5); /* C's last try is over */
    if (rank == a || rank == b)
        CHECK(fence_st(x, 2, 0, 30) == PMIX_SUCCESS, "X after its timeouts does not meet");
    if (rank == a || rank == c)
        CHECK(fence_st(z, 2, 0, 30) == PMIX_SUCCESS, "Z after its timeouts does not meet");
}

/* X under PMIX_TIMEOUT 1 s for A and B, B `late` s late: whatever the
 * outcome, both see the same; the next X (collecting, generous) meets. */
static void timeout_race(int a, int b, double late, int trial)
{
    int x[2] = { a, b };
    int other = rank == a ? b : a;
    char key[32], mine[32], want[32];
    pmix_status_t st, theirs = PMIX_SUCCESS;
    pmix_value_t *v = NULL;
    pmix_proc_t p = proc(other);
    double t0 = now();

    if (rank == b)
        usleep((useconds_t)(late * 1e6));
    st = fence_st(x, 2, 0, 1);
    /* a late B alone in a new instance times out 1 s after it joined:
     * the collecting X must not meet that one */
    sleep_until(t0, late + 1.5);
    snprintf(key, sizeof(key), "race-%d", trial);
    snprintf(mine, sizeof(mine), "%d", (int)st);
    put(key, mine);
    CHECK(fence_st(x, 2, 1, 30) == PMIX_SUCCESS,
          "trial %d (B %.2f s late): the collecting X after it does not meet (this rank: %s)",
          trial, late, PMIx_Error_string(st));
    CHECK(PMIx_Get(&p, key, NULL, 0, &v) == PMIX_SUCCESS && v != NULL &&
              v->type == PMIX_STRING,
          "trial %d: rank %d's status is not here", trial, other);
    theirs = (pmix_status_t)atoi(v->data.string);
    snprintf(want, sizeof(want), "%s", PMIx_Error_string(theirs));
    PMIX_VALUE_RELEASE(v);
    CHECK(theirs == st,
          "trial %d (B %.2f s late): one fence over {%d, %d}, two outcomes: %s here, %s at "
          "rank %d",
          trial, late, a, b, PMIx_Error_string(st), want, other);
}

static void timeouts(int a, int b, int c)
{
    static const double late[] = { 0.7, 0.95, 1.0, 1.05, 1.3 };

    timeouts_alone(a, b, c);
    for (int i = 0; i < (int)(sizeof(late) / sizeof(late[0])); i++)
        if (rank == a || rank == b)
            timeout_race(a, b, late[i], i);
    fence(NULL, 0, 0);
}

static void dmodex(int f, int l)
{
    double t0;
    pmix_status_t st;

    if (rank == l) {
        usleep(500 * 1000);
        put("late", "committed late");
        /* F's next get must find "never" uncommitted, and L not fenced:
         * L waits (a get held until F commits) until F is done with it */
        CHECK(get(f, "timed-out", "yes", 0, 60) == PMIX_SUCCESS, "rank %d's key", f);
    } else if (rank == f) {
        t0 = now();
        st = get(l, "late", "committed late", 0, 60);
        CHECK(st == PMIX_SUCCESS && now() - t0 > 0.4,
              "a get of rank %d's key it commits 500 ms later: %s after %.3f s", l,
              PMIx_Error_string(st), now() - t0);
        t0 = now();
        st = get(l, "never", NULL, 0, 1);
        CHECK(st == PMIX_ERR_TIMEOUT && now() - t0 > 0.9 && now() - t0 < 10,
              "a get of a key rank %d never commits, PMIX_TIMEOUT 1 s: %s after %.3f s", l,
              PMIx_Error_string(st), now() - t0);
        put("timed-out", "yes");
        /* L is in the whole-job fence without "nokey", waiting for F */
        usleep(200 * 1000);
        t0 = now();
        st = get(l, "nokey", NULL, 0, 0);
        CHECK(st == PMIX_ERR_NOT_FOUND,
              "a get of a key rank %d, in a fence that waits for this rank, never commits: "
              "%s after %.3f s, expected NOT_FOUND",
              l, PMIx_Error_string(st), now() - t0);
    }
    fence(NULL, 0, 0);
}

int main(int argc, char **argv)
{
    int counts[64], nnodes = 0, size = 0;
    const char *what;

    CHECK(argc == 3, "usage: pmix_xdata COUNTS fences|dmodex|timeouts|all");
    what = argv[2];
    for (char *p = argv[1]; *p && nnodes < 64; p = strchr(p, ',') ? strchr(p, ',') + 1 : "") {
        counts[nnodes] = atoi(p);
        CHECK(counts[nnodes] >= 2, "every node needs 2 ranks at least");
        size += counts[nnodes++];
    }
    CHECK(nnodes >= 2, "2 nodes at least");
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "PMIx_Init");
    rank = (int)me.rank;
    if (strcmp(what, "fences") == 0 || strcmp(what, "all") == 0)
        fences(size, 0, 1, size - 2, size - 1);
    if (strcmp(what, "dmodex") == 0 || strcmp(what, "all") == 0)
        dmodex(0, size - 1);
    if (strcmp(what, "timeouts") == 0 || strcmp(what, "all") == 0)
        timeouts(0, counts[0], size - 1);
    CHECK(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "finalize");
    printf("pmix_xdata rank %d: ok\n", rank);
    return 0;
}

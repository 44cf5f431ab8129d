/*
 * hostfence: the floor under `pmigate proxy`'s cross-node fence, for
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
 * together.  Usage: hostfence BYTES ROUNDS.  Every process prints one line
 *   hostfence rank=R k=K bytes=B us=T1,T2,...
 * (µs of each round, from its put to its last get); nodes.sh takes, per
 * round, the fastest process (the one that entered last: its time is the
 * exchange itself, not waiting for the others) and the median over rounds.
 */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
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
    char *blob = malloc(len + 32), *want = malloc(len + 32); /* the warm-up sends 32 */
    double *us = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof(*us));

    if (len == 0 || rounds < 1 || blob == NULL || want == NULL || us == NULL) {
        fprintf(stderr, "usage: hostfence BYTES ROUNDS (under a PMIx host)\n");
        return 2;
    }
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
        fprintf(stderr, "hostfence: no PMIx host\n");
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

        if (fence(false) != PMIX_SUCCESS)
            goto out;
        t0 = now_us();
        if (exchange(&me, k, blob, want, len, r) != 0)
            goto out;
        us[r - 1] = now_us() - t0;
    }
    printf("hostfence rank=%u k=%d bytes=%zu us=", me.rank, k, len);
    for (int r = 0; r < rounds; r++)
        printf("%s%.0f", r ? "," : "", us[r]);
    printf("\n");
    fflush(stdout);
    rc = 0;
out:
    PMIx_Finalize(NULL, 0);
    free(blob);
    free(want);
    free(us);
    return rc;
}

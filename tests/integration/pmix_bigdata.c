/*
 * pmix_bigdata: a job that moves a lot of modex data through its fences,
 * for `pmigate proxy` across nodes (tests/cluster/proxy_data.sh).
 * Every rank puts KB kilobytes per fence (in keys of at most 1 MiB, each
 * byte a function of the rank, the fence and the key), commits, fences
 * with PMIX_COLLECT_DATA, and checks every byte of the same keys of one
 * rank on another node (rank + size/2: the other half of the job), for
 * FENCES fences, each with keys of its own (KB "FIRST:REST": the first
 * fence FIRST kilobytes, every later one REST).  Prints "pmix_bigdata rank
 * R: ok" or what was wrong, and exits 1; with LINGER, sleeps that many
 * seconds after the line (a test reads the proxies' counters meanwhile).
 *
 * Usage: pmix_bigdata KB[:REST] FENCES [LINGER]
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank = -1;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "pmix_bigdata rank %d: ", rank);                   \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

enum { KEY_MAX = 1 << 20 };

static unsigned char pattern(int r, int fence, int key, size_t at)
{
    return (unsigned char)(r * 31 + fence * 7 + key * 3 + (int)(at % 251));
}

static void fill(unsigned char *buf, size_t len, int r, int fence, int key)
{
    for (size_t at = 0; at < len; at++)
        buf[at] = pattern(r, fence, key, at);
}

int main(int argc, char **argv)
{
    pmix_proc_t me, wild, peer;
    pmix_value_t *v = NULL;
    pmix_info_t info;
    size_t first, rest, total, nkeys;
    int fences, size;
    char *end;
    unsigned char *buf;
    bool yes = true;

    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: pmix_bigdata KB[:REST] FENCES [LINGER]\n");
        return 2;
    }
    first = strtoul(argv[1], &end, 10) * 1024;
    rest = *end == ':' ? strtoul(end + 1, NULL, 10) * 1024 : first;
    fences = atoi(argv[2]);
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "PMIx_Init failed");
    rank = (int)me.rank;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS, "no job size");
    size = (int)v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t)((rank + size / 2) % size));
    buf = malloc(KEY_MAX);
    CHECK(buf != NULL, "out of memory");
    for (int f = 1; f <= fences; f++) {
        total = f == 1 ? first : rest;
        nkeys = (total + KEY_MAX - 1) / KEY_MAX;
        for (size_t k = 0; k < nkeys; k++) {
            size_t len = k + 1 < nkeys || total % KEY_MAX == 0 ? KEY_MAX : total % KEY_MAX;
            pmix_value_t val;
            char key[64];

            snprintf(key, sizeof(key), "big.%d.%zu", f, k);
            fill(buf, len, rank, f, (int)k);
            PMIX_VALUE_CONSTRUCT(&val);
            val.type = PMIX_BYTE_OBJECT;
            val.data.bo.bytes = (char *)buf;
            val.data.bo.size = len;
            CHECK(PMIx_Put(PMIX_GLOBAL, key, &val) == PMIX_SUCCESS, "put %s", key);
        }
        CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit of fence %d", f);
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        CHECK(PMIx_Fence(NULL, 0, &info, 1) == PMIX_SUCCESS, "fence %d failed", f);
        for (size_t k = 0; k < nkeys; k++) {
            size_t len = k + 1 < nkeys || total % KEY_MAX == 0 ? KEY_MAX : total % KEY_MAX;
            char key[64];

            snprintf(key, sizeof(key), "big.%d.%zu", f, k);
            v = NULL;
            CHECK(PMIx_Get(&peer, key, NULL, 0, &v) == PMIX_SUCCESS && v != NULL,
                  "get %s of rank %u after fence %d", key, peer.rank, f);
            CHECK(v->type == PMIX_BYTE_OBJECT && v->data.bo.size == len,
                  "%s of rank %u: %zu bytes, want %zu", key, peer.rank, v->data.bo.size, len);
            for (size_t at = 0; at < len; at++)
                CHECK((unsigned char)v->data.bo.bytes[at] ==
                          pattern((int)peer.rank, f, (int)k, at),
                      "%s of rank %u: byte %zu differs", key, peer.rank, at);
            PMIX_VALUE_RELEASE(v);
        }
    }
    printf("pmix_bigdata rank %d: ok\n", rank);
    fflush(stdout);
    if (argc == 4)
        sleep((unsigned)atoi(argv[3]));
    free(buf);
    PMIx_Finalize(NULL, 0);
    return 0;
}

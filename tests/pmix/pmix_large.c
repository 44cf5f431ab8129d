/*
 * pmix_large: what a PMIx rank may put, at the size limits (docs/user-guide.md,
 * "Limits at a glance").  Every rank of a 2-rank job:
 *   - puts a value larger than a PMIx message can hold: PMIx_Put refuses it
 *     with PMIX_ERR_BAD_PARAM, and the puts staged before it are not lost;
 *   - puts a value just under 15 MiB and 24 keys of 1 MiB (39 MiB in all,
 *     more than one message), commits (PMIX_SUCCESS), fences with
 *     PMIX_COLLECT_DATA and checks every byte of the other rank's keys.
 * Prints "pmix_large rank R: ok" or what was wrong, and exits 1.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "pmix_large rank %d: ", rank);                     \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

enum { NKEYS = 24, KEY_BYTES = 1 << 20, BIG_BYTES = 15 << 20, TOO_BIG = 17 << 20 };

static unsigned char pattern(int r, int key, size_t at)
{
    return (unsigned char)(r * 31 + key * 3 + (int)(at % 251));
}

static pmix_status_t put_bytes(const char *key, int r, int k, size_t len)
{
    pmix_value_t v = { .type = PMIX_BYTE_OBJECT };
    pmix_status_t rc;

    v.data.bo.bytes = malloc(len);
    CHECK(v.data.bo.bytes != NULL, "out of memory");
    v.data.bo.size = len;
    for (size_t i = 0; i < len; i++)
        v.data.bo.bytes[i] = (char)pattern(r, k, i);
    rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    free(v.data.bo.bytes);
    return rc;
}

static void expect_bytes(const pmix_proc_t *peer, const char *key, int k, size_t len)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(peer, key, NULL, 0, &v);

    CHECK(rc == PMIX_SUCCESS && v != NULL, "get %s of rank %u: %s", key, peer->rank,
          PMIx_Error_string(rc));
    CHECK(v->type == PMIX_BYTE_OBJECT && v->data.bo.size == len,
          "get %s of rank %u: type %d, %zu bytes (want %zu)", key, peer->rank, (int)v->type,
          v->data.bo.size, len);
    for (size_t i = 0; i < len; i++)
        CHECK((unsigned char)v->data.bo.bytes[i] == pattern((int)peer->rank, k, i),
              "get %s of rank %u: byte %zu differs", key, peer->rank, i);
    PMIX_VALUE_RELEASE(v);
}

int main(void)
{
    pmix_proc_t me, peer;
    pmix_info_t collect;
    bool yes = true;
    char key[32];
    pmix_status_t rc;

    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "PMIx_Init failed");
    rank = (int)me.rank;
    CHECK(put_bytes("small", rank, 99, 100) == PMIX_SUCCESS, "put of 100 bytes refused");
    rc = put_bytes("too-big", rank, 98, TOO_BIG);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "put of %d bytes: %s, want PMIX_ERR_BAD_PARAM", TOO_BIG,
          PMIx_Error_string(rc));
    CHECK(put_bytes("big", rank, 97, BIG_BYTES) == PMIX_SUCCESS, "put of %d bytes refused",
          BIG_BYTES);
    for (int k = 0; k < NKEYS; k++) {
        snprintf(key, sizeof(key), "key-%d", k);
        CHECK(put_bytes(key, rank, k, KEY_BYTES) == PMIX_SUCCESS, "put of %s refused", key);
    }
    rc = PMIx_Commit();
    CHECK(rc == PMIX_SUCCESS, "commit of %d MiB: %s", 15 + NKEYS, PMIx_Error_string(rc));
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &collect, 1);
    CHECK(rc == PMIX_SUCCESS, "fence: %s", PMIx_Error_string(rc));
    PMIX_PROC_LOAD(&peer, me.nspace, (pmix_rank_t)(1 - rank));
    expect_bytes(&peer, "small", 99, 100);
    expect_bytes(&peer, "big", 97, BIG_BYTES);
    for (int k = 0; k < NKEYS; k++) {
        snprintf(key, sizeof(key), "key-%d", k);
        expect_bytes(&peer, key, k, KEY_BYTES);
    }
    {
        pmix_value_t *v = NULL;

        rc = PMIx_Get(&peer, "too-big", NULL, 0, &v);
        CHECK(rc == PMIX_ERR_NOT_FOUND, "the refused key was stored: %s", PMIx_Error_string(rc));
    }
    printf("pmix_large rank %d: ok\n", rank);
    PMIx_Finalize(NULL, 0);
    return 0;
}

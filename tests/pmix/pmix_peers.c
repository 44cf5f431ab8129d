/*
 * pmix_peers: the C rank of a mixed job with Python ranks
 * (tests/pmix/pmix_python.sh): puts "peer-<rank>" = "from rank <rank>",
 * commits, fences collecting data, reads every rank's key, fences again
 * (the Python ranks' name-service lookups happen in between).  Prints
 * "pmix_peers rank R: ok", or what was wrong on stderr and exits 1.
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    pmix_proc_t me, peer, job;
    pmix_value_t *v = NULL, mine;
    pmix_info_t collect;
    bool yes = true;
    char key[64], text[64];
    uint32_t size;

    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
        return 1;
    PMIX_PROC_LOAD(&job, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v) != PMIX_SUCCESS)
        goto fail;
    size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    snprintf(key, sizeof(key), "peer-%u", me.rank);
    snprintf(text, sizeof(text), "from rank %u", me.rank);
    PMIX_VALUE_LOAD(&mine, text, PMIX_STRING);
    if (PMIx_Put(PMIX_GLOBAL, key, &mine) != PMIX_SUCCESS || PMIx_Commit() != PMIX_SUCCESS)
        goto fail;
    PMIX_VALUE_DESTRUCT(&mine);
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (PMIx_Fence(NULL, 0, &collect, 1) != PMIX_SUCCESS)
        goto fail;
    for (uint32_t r = 0; r < size; r++) {
        PMIX_PROC_LOAD(&peer, me.nspace, r);
        snprintf(key, sizeof(key), "peer-%u", r);
        snprintf(text, sizeof(text), "from rank %u", r);
        if (PMIx_Get(&peer, key, NULL, 0, &v) != PMIX_SUCCESS || v->type != PMIX_STRING ||
            strcmp(v->data.string, text) != 0) {
            fprintf(stderr, "pmix_peers rank %u: %s of rank %u is wrong or missing\n", me.rank,
                    key, r);
            return 1;
        }
        PMIX_VALUE_RELEASE(v);
    }
    if (PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS)
        goto fail;
    printf("pmix_peers rank %u: ok\n", me.rank);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
fail:
    fprintf(stderr, "pmix_peers rank %u: a PMIx call failed\n", me.rank);
    return 1;
}

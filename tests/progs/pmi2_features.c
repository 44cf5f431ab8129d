/*
 * pmi2_features: what a Slurm-libpmi2 program relies on from its PMI server,
 * checked from inside a real job.  Run with N >= 2 ranks; prints
 * "pmi2_features rank R: ok" per rank or names the first broken rule and
 * exits 1.  Rules: init values, job id, job attributes (PMI_process_mapping,
 * universeSize), every rank's key after a fence, a missing key answered at
 * once, a value with ';' and spaces round-tripping, node attributes (one
 * posted later and waited for; one never posted: the wait must end with
 * found=0 instead of hanging), name publish / lookup / unpublish.
 */
#include <slurm/pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank = -1;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "pmi2_features rank %d: ", rank);                  \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

int main(void)
{
    int spawned, size, appnum, found, len, rc;
    char jobid[256], key[64], val[PMI2_MAX_VALLEN + 1], want[PMI2_MAX_VALLEN];

    CHECK(PMI2_Init(&spawned, &size, &rank, &appnum) == PMI2_SUCCESS, "PMI2_Init");
    CHECK(PMI2_Initialized(), "PMI2_Initialized is false after init");
    CHECK(size >= 2 && rank >= 0 && rank < size, "bad rank %d / size %d", rank, size);
    CHECK(spawned == 0 && appnum == 0, "spawned=%d appnum=%d", spawned, appnum);
    CHECK(PMI2_Job_GetId(jobid, sizeof jobid) == PMI2_SUCCESS && jobid[0], "PMI2_Job_GetId");

    /* job attributes */
    rc = PMI2_Info_GetJobAttr("PMI_process_mapping", val, sizeof val, &found);
    snprintf(want, sizeof want, "(vector,(0,1,%d))", size);
    CHECK(rc == PMI2_SUCCESS && found && strcmp(val, want) == 0,
          "PMI_process_mapping is '%s' (found=%d), expected '%s'", found ? val : "", found, want);
    rc = PMI2_Info_GetJobAttr("universeSize", val, sizeof val, &found);
    CHECK(rc == PMI2_SUCCESS && found && atoi(val) == size, "universeSize '%s' (found=%d)",
          found ? val : "", found);

    /* kvs: every rank's key after the fence, escaping of ';' */
    snprintf(key, sizeof key, "key-%d", rank);
    snprintf(val, sizeof val, "value of %d; with semicolons;;", rank);
    CHECK(PMI2_KVS_Put(key, val) == PMI2_SUCCESS, "PMI2_KVS_Put");
    CHECK(PMI2_KVS_Fence() == PMI2_SUCCESS, "PMI2_KVS_Fence");
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof key, "key-%d", r);
        snprintf(want, sizeof want, "value of %d; with semicolons;;", r);
        rc = PMI2_KVS_Get(jobid, r, key, val, sizeof val, &len);
        CHECK(rc == PMI2_SUCCESS && strcmp(val, want) == 0, "get %s gave rc=%d '%s'", key, rc,
              rc == PMI2_SUCCESS ? val : "");
    }
    rc = PMI2_KVS_Get(jobid, PMI2_ID_NULL, "no-such-key", val, sizeof val, &len);
    CHECK(rc != PMI2_SUCCESS, "a missing key was found");

    /* node attributes: rank 0 posts late, the others wait for it */
    if (rank == 0) {
        usleep(200 * 1000);
        CHECK(PMI2_Info_PutNodeAttr("late-attr", "posted-by-0") == PMI2_SUCCESS, "PutNodeAttr");
    }
    rc = PMI2_Info_GetNodeAttr("late-attr", val, sizeof val, &found, 1);
    CHECK(rc == PMI2_SUCCESS && found && strcmp(val, "posted-by-0") == 0,
          "waited node attribute: rc=%d found=%d", rc, found);
    /* everyone waits for an attribute nobody posts: must end, not hang */
    rc = PMI2_Info_GetNodeAttr("never-posted", val, sizeof val, &found, 1);
    CHECK(rc == PMI2_SUCCESS && !found, "never-posted attribute: rc=%d found=%d", rc, found);

    /* name service */
    CHECK(PMI2_KVS_Fence() == PMI2_SUCCESS, "fence before publish");
    if (rank == 0)
        CHECK(PMI2_Nameserv_publish("pmigate-svc", NULL, "tag#0$port#4242$") == PMI2_SUCCESS,
              "publish");
    CHECK(PMI2_KVS_Fence() == PMI2_SUCCESS, "fence after publish");
    rc = PMI2_Nameserv_lookup("pmigate-svc", NULL, val, sizeof val);
    CHECK(rc == PMI2_SUCCESS && strcmp(val, "tag#0$port#4242$") == 0, "lookup rc=%d", rc);
    CHECK(PMI2_KVS_Fence() == PMI2_SUCCESS, "fence after lookup");
    if (rank == 0) {
        CHECK(PMI2_Nameserv_publish("pmigate-svc", NULL, "again") != PMI2_SUCCESS,
              "a duplicate publish succeeded");
        CHECK(PMI2_Nameserv_unpublish("pmigate-svc", NULL) == PMI2_SUCCESS, "unpublish");
    }
    CHECK(PMI2_KVS_Fence() == PMI2_SUCCESS, "fence after unpublish");
    CHECK(PMI2_Nameserv_lookup("pmigate-svc", NULL, val, sizeof val) != PMI2_SUCCESS,
          "lookup after unpublish succeeded");

    CHECK(PMI2_Finalize() == PMI2_SUCCESS, "PMI2_Finalize");
    printf("pmi2_features rank %d: ok\n", rank);
    return 0;
}

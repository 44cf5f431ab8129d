/*
 * pmi2_features: what a Slurm-libpmi2 program relies on from its PMI server,
 * checked from inside a real job.  Run with N >= 2 ranks; prints
 * "pmi2_features rank R: ok" per rank or names the first broken rule and
 * exits 1.  Rules: init values, job id, job attributes (PMI_process_mapping,
 * universeSize), every rank's key after a fence, a missing key answered at
 * once, a value with ';' and spaces round-tripping, node attributes (one
 * posted later and waited for; one never posted: the wait must end with
 * found=0 instead of hanging), name publish / lookup / unpublish (seen by
 * every rank; PG_SKIP_NAMESERV=1: not tried).
 */
#include <slurm/pmi2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank = -1;

/* The first rank on `me`'s node, decoded from a "(vector,(start,nnodes,ppn),
 * ...)" mapping the way MPICH reads it (blocks repeat until every rank has a
 * node); -1 when the mapping cannot be read. */
static int node_first_rank(const char *map, int size, int me)
{
    int node_of[4096], r = 0;
    const char *p;

    if (size > 4096 || strncmp(map, "(vector", 7) != 0)
        return -1;
    while (r < size) {
        int start, nnodes, ppn, n, used;
        int before = r;

        for (p = map + 7; (p = strchr(p, '(')) != NULL && r < size; p++) {
            if (sscanf(p, "(%d,%d,%d)%n", &start, &nnodes, &ppn, &used) != 3)
                return -1;
            for (n = start; n < start + nnodes; n++)
                for (int k = 0; k < ppn && r < size; k++)
                    node_of[r++] = n;
        }
        if (r == before)
            return -1;
    }
    for (r = 0; r < size; r++)
        if (node_of[r] == node_of[me])
            return r;
    return -1;
}

/* Names the broken rule in one write(): stderr is unbuffered, and two ranks'
 * verdicts written piecewise can meet mid-line under a launcher that forwards
 * whatever each read() returns (hydra does). */
static void fail_rule(const char *fmt, ...)
{
    char line[2 * PMI2_MAX_VALLEN + 256];
    int n = snprintf(line, sizeof line, "pmi2_features rank %d: ", rank);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    (void)!write(STDERR_FILENO, line, strlen(line));
    exit(1);
}

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond))                                                           \
            fail_rule(__VA_ARGS__);                                            \
    } while (0)

/* Name publish / lookup / unpublish: rank 0 publishes, every rank looks
 * up; every rank, on any node, finds it.  A second publish of the name is
 * refused; once unpublished nobody finds it. */
static void check_names(void)
{
    char val[PMI2_MAX_VALLEN + 1];
    int rc;

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
}

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
    if (getenv("PG_EXPECT_MAPPING") != NULL)
        snprintf(want, sizeof want, "%s", getenv("PG_EXPECT_MAPPING"));
    else
        snprintf(want, sizeof want, "(vector,(0,1,%d))", size);
    CHECK(rc == PMI2_SUCCESS && found && strcmp(val, want) == 0,
          "PMI_process_mapping is '%s' (found=%d), expected '%s'", found ? val : "", found, want);
    int poster = node_first_rank(val, size, rank);
    CHECK(poster >= 0, "cannot read PMI_process_mapping '%s'", val);
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

    /* node attributes: the node's first rank posts late, the others wait */
    snprintf(want, sizeof want, "posted-by-%d", poster);
    if (rank == poster) {
        usleep(200 * 1000);
        CHECK(PMI2_Info_PutNodeAttr("late-attr", want) == PMI2_SUCCESS, "PutNodeAttr");
    }
    rc = PMI2_Info_GetNodeAttr("late-attr", val, sizeof val, &found, 1);
    CHECK(rc == PMI2_SUCCESS && found && strcmp(val, want) == 0,
          "waited node attribute: rc=%d found=%d '%s', expected '%s'", rc, found,
          found ? val : "", want);
    /* everyone waits for an attribute nobody posts: must end, not hang */
    rc = PMI2_Info_GetNodeAttr("never-posted", val, sizeof val, &found, 1);
    CHECK(rc == PMI2_SUCCESS && !found, "never-posted attribute: rc=%d found=%d", rc, found);

    if (getenv("PG_SKIP_NAMESERV") == NULL || strcmp(getenv("PG_SKIP_NAMESERV"), "1") != 0)
        check_names();

    CHECK(PMI2_Finalize() == PMI2_SUCCESS, "PMI2_Finalize");
    printf("pmi2_features rank %d: ok\n", rank);
    return 0;
}

/*
 * pg_probe_pmi2: `pmigate probe` over PMI-2, through libpmi2's own code
 * (pmi2/client: the PMI_FD socket of srun --mpi=pmi2, hydra or pmigate).
 * See pg_probe.h.  The process holds one PMI-2 session, so `be` is unused.
 *
 * Besides the job attributes it checks node attributes, the part of PMI-2
 * PMI-1 lacks: the first rank of each node (PMI_process_mapping) puts its
 * host name as a node attribute, and every rank of the node waits for it
 * and finds its own host name there.
 */
#include "gateway/tools/pg_probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmi2/pmi2.h"

static char jobid[256];

/* 0, or -1 with "<call>: PMI-2 error <rc>" in err. */
static int check(int rc, const char *call, char *err, size_t errlen)
{
    if (rc == PMI2_SUCCESS)
        return 0;
    snprintf(err, errlen, "%s: %s (%d)", call, rc == PMI2_FAIL ? "PMI2_FAIL" : "PMI-2 error", rc);
    return -1;
}

static int pmi2_init(void *be, pg_probe_facts_t *f, char *err, size_t errlen)
{
    int spawned = 0, appnum = 0;

    (void)be;
    if (check(PMI2_Init(&spawned, &f->size, &f->rank, &appnum), "PMI2_Init", err, errlen) != 0 ||
        check(PMI2_Job_GetId(jobid, (int)sizeof(jobid)), "PMI2_Job_GetId", err, errlen) != 0)
        return -1;
    snprintf(f->job, sizeof(f->job), "%s", jobid);
    return 0;
}

static int job_attr(const char *name, char *value, int len, char *err, size_t errlen)
{
    char call[96];
    int found = 0;

    snprintf(call, sizeof(call), "PMI2_Info_GetJobAttr(%s)", name);
    if (check(PMI2_Info_GetJobAttr(name, value, len, &found), call, err, errlen) != 0)
        return -1;
    if (!found) {
        snprintf(err, errlen, "%s: not found", call);
        return -1;
    }
    return 0;
}

/* This node's attribute, put by the node's first rank. */
static int node_attr(const pg_probe_facts_t *f, int node, int first, char *err, size_t errlen)
{
    char name[64], host[256] = "", value[1024] = "";
    int found = 0;

    (void)gethostname(host, sizeof(host) - 1);
    snprintf(name, sizeof(name), "pmigate.probe.node.%d", node);
    if (f->rank == first &&
        check(PMI2_Info_PutNodeAttr(name, host), "PMI2_Info_PutNodeAttr", err, errlen) != 0)
        return -1;
    if (check(PMI2_Info_GetNodeAttr(name, value, (int)sizeof(value), &found, 1),
              "PMI2_Info_GetNodeAttr", err, errlen) != 0)
        return -1;
    if (!found || strcmp(value, host) != 0) {
        snprintf(err, errlen, "node attribute %s put by rank %d: %s '%.100s', host %s", name,
                 first, found ? "reads" : "not found", value, host);
        return -1;
    }
    return 0;
}

static int pmi2_attrs(void *be, pg_probe_facts_t *f, char *err, size_t errlen)
{
    char value[1024];
    int local = 0, node = 0, first = 0;

    (void)be;
    if (job_attr("universeSize", value, (int)sizeof(value), err, errlen) != 0)
        return -1;
    f->universe = atoi(value);
    if (job_attr("PMI_process_mapping", value, (int)sizeof(value), err, errlen) != 0 ||
        pg_probe_mapping(value, f, &node, &first, err, errlen) != 0 ||
        check(PMI2_Info_GetSize(&local), "PMI2_Info_GetSize", err, errlen) != 0)
        return -1;
    if (local != f->local_size) {
        snprintf(err, errlen, "PMI2_Info_GetSize says %d ranks on this node, "
                              "PMI_process_mapping %d", local, f->local_size);
        return -1;
    }
    return node_attr(f, node, first, err, errlen);
}

static int pmi2_put(void *be, const char *key, const char *value, char *err, size_t errlen)
{
    (void)be;
    return check(PMI2_KVS_Put(key, value), "PMI2_KVS_Put", err, errlen);
}

/* PMI-2 has no commit: the fence carries the puts. */
static int pmi2_commit(void *be, char *err, size_t errlen)
{
    (void)be;
    (void)err;
    (void)errlen;
    return 0;
}

static int pmi2_fence(void *be, char *err, size_t errlen)
{
    (void)be;
    return check(PMI2_KVS_Fence(), "PMI2_KVS_Fence", err, errlen);
}

static int pmi2_get(void *be, int rank, const char *key, char *value, size_t cap, char *err,
                    size_t errlen)
{
    int len = 0;

    (void)be;
    return check(PMI2_KVS_Get(jobid, rank, key, value, (int)cap, &len), "PMI2_KVS_Get", err,
                 errlen);
}

static void pmi2_abort(void *be, int code, const char *msg)
{
    (void)be;
    (void)code; /* PMI-2's abort has a flag (the whole job), not a code */
    (void)PMI2_Abort(1, msg);
}

static int pmi2_finalize(void *be, char *err, size_t errlen)
{
    (void)be;
    return check(PMI2_Finalize(), "PMI2_Finalize", err, errlen);
}

const pg_probe_ops_t pg_probe_pmi2_ops = {
    .init = pmi2_init,
    .attrs = pmi2_attrs,
    .put = pmi2_put,
    .commit = pmi2_commit,
    .fence = pmi2_fence,
    .get = pmi2_get,
    .abort = pmi2_abort,
    .finalize = pmi2_finalize,
};

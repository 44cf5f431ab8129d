/*
 * pg_probe_pmi1: `pmigate probe` over PMI-1, through libpmi's own code
 * (pmi1/client: PMI_FD or PMI_PORT, the launcher's choice).  See
 * pg_probe.h.  The process holds one PMI-1 session, so `be` is unused.
 */
#include "gateway/tools/pg_probe.h"

#include <stdio.h>
#include <stdlib.h>

#include "pmi1/pmi.h"

static char kvsname[256];

static const char *pmi1_strerror(int rc)
{
    static char text[32];

    switch (rc) {
    case PMI_FAIL:
        return "PMI_FAIL";
    case PMI_ERR_INIT:
        return "PMI_ERR_INIT";
    case PMI_ERR_NOMEM:
        return "PMI_ERR_NOMEM";
    case PMI_ERR_INVALID_ARG:
        return "PMI_ERR_INVALID_ARG";
    case PMI_ERR_INVALID_KEY:
        return "PMI_ERR_INVALID_KEY";
    case PMI_ERR_INVALID_VAL:
        return "PMI_ERR_INVALID_VAL";
    case PMI_ERR_INVALID_LENGTH:
        return "PMI_ERR_INVALID_LENGTH";
    default:
        snprintf(text, sizeof(text), "PMI error %d", rc);
        return text;
    }
}

/* 0, or -1 with "<call>: <code>" in err. */
static int check(int rc, const char *call, char *err, size_t errlen)
{
    if (rc == PMI_SUCCESS)
        return 0;
    snprintf(err, errlen, "%s: %s", call, pmi1_strerror(rc));
    return -1;
}

static int pmi1_init(void *be, pg_probe_facts_t *f, char *err, size_t errlen)
{
    int spawned = 0;

    (void)be;
    if (check(PMI_Init(&spawned), "PMI_Init", err, errlen) != 0 ||
        check(PMI_Get_size(&f->size), "PMI_Get_size", err, errlen) != 0 ||
        check(PMI_Get_rank(&f->rank), "PMI_Get_rank", err, errlen) != 0 ||
        check(PMI_KVS_Get_my_name(kvsname, (int)sizeof(kvsname)), "PMI_KVS_Get_my_name", err,
              errlen) != 0)
        return -1;
    snprintf(f->job, sizeof(f->job), "%s", kvsname);
    return 0;
}

/* The universe size, the appnum, the clique (ranks on this node) and
 * PMI_process_mapping, which must agree with it. */
static int pmi1_attrs(void *be, pg_probe_facts_t *f, char *err, size_t errlen)
{
    char mapping[1024];
    int appnum, clique;

    (void)be;
    if (check(PMI_Get_universe_size(&f->universe), "PMI_Get_universe_size", err, errlen) != 0 ||
        check(PMI_Get_appnum(&appnum), "PMI_Get_appnum", err, errlen) != 0 ||
        check(PMI_Get_clique_size(&clique), "PMI_Get_clique_size", err, errlen) != 0 ||
        check(PMI_KVS_Get(kvsname, "PMI_process_mapping", mapping, (int)sizeof(mapping)),
              "PMI_KVS_Get(PMI_process_mapping)", err, errlen) != 0 ||
        pg_probe_mapping(mapping, f, NULL, NULL, err, errlen) != 0)
        return -1;
    if (clique != f->local_size) {
        snprintf(err, errlen, "PMI_Get_clique_size says %d ranks on this node, "
                              "PMI_process_mapping %d", clique, f->local_size);
        return -1;
    }
    return 0;
}

static int pmi1_put(void *be, const char *key, const char *value, char *err, size_t errlen)
{
    (void)be;
    return check(PMI_KVS_Put(kvsname, key, value), "PMI_KVS_Put", err, errlen);
}

static int pmi1_commit(void *be, char *err, size_t errlen)
{
    (void)be;
    return check(PMI_KVS_Commit(kvsname), "PMI_KVS_Commit", err, errlen);
}

static int pmi1_fence(void *be, char *err, size_t errlen)
{
    (void)be;
    return check(PMI_Barrier(), "PMI_Barrier", err, errlen);
}

/* PMI-1 keys are flat: the rank is in the key. */
static int pmi1_get(void *be, int rank, const char *key, char *value, size_t cap, char *err,
                    size_t errlen)
{
    (void)be;
    (void)rank;
    return check(PMI_KVS_Get(kvsname, key, value, (int)cap), "PMI_KVS_Get", err, errlen);
}

static void pmi1_abort(void *be, int code, const char *msg)
{
    (void)be;
    (void)PMI_Abort(code, msg);
}

static int pmi1_finalize(void *be, char *err, size_t errlen)
{
    (void)be;
    return check(PMI_Finalize(), "PMI_Finalize", err, errlen);
}

const pg_probe_ops_t pg_probe_pmi1_ops = {
    .init = pmi1_init,
    .attrs = pmi1_attrs,
    .put = pmi1_put,
    .commit = pmi1_commit,
    .fence = pmi1_fence,
    .get = pmi1_get,
    .abort = pmi1_abort,
    .finalize = pmi1_finalize,
};

/*
 * Unit tests for `pmigate probe`'s logic (gateway/tools/pg_probe.c): which
 * interface an environment offers, the options, PMI_process_mapping's
 * facts, and what rank 0 reports -- the one line when every rank's
 * verdict is ok (with the slowest rank's times), the step and the rank
 * when one failed, and a fatal step that aborts the job.  The backend is
 * scripted: one process plays rank 0 against a key store the other ranks
 * "filled" before the fence.  The real backends are run by
 * tests/integration/probe.sh under hydra, pmigate, mpirun and srun.
 */
#include <stdlib.h>
#include <string.h>

#include "gateway/tools/pg_probe.h"
#include "tests/pg_cunit.h"

/* ---- the environment ---- */

static void test_detect_hydra_is_pmi1(void)
{
    char *envp[] = { "PMI_FD=6", "PMI_RANK=0", "PMI_SIZE=4",
                     "MPIR_CVAR_CH3_INTERFACE_HOSTNAME=vm", NULL };
    pg_probe_env_t env;
    char err[256];

    CU_ASSERT_EQUAL_FATAL(pg_probe_detect(envp, PG_PROBE_AUTO, &env, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(env.iface, PG_PROBE_PMI1);
    CU_ASSERT_STRING_EQUAL(env.launcher, "hydra");
    CU_ASSERT_STRING_EQUAL(env.via, "PMI_FD");
    CU_ASSERT_FALSE(env.pmigate);
    /* a forced interface on the same socket */
    CU_ASSERT_EQUAL_FATAL(pg_probe_detect(envp, PG_PROBE_PMI2, &env, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(env.iface, PG_PROBE_PMI2);
}

static void test_detect_srun_pmi_fd_is_pmi2(void)
{
    char *envp[] = { "SLURM_JOB_ID=7", "SLURM_STEP_ID=0", "PMI_FD=5", "PMI_JOBID=7.0", NULL };
    pg_probe_env_t env;
    char err[256];

    CU_ASSERT_EQUAL_FATAL(pg_probe_detect(envp, PG_PROBE_AUTO, &env, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(env.iface, PG_PROBE_PMI2);
    CU_ASSERT_STRING_EQUAL(env.launcher, "srun");
}

static void test_detect_pmix_server_and_pmigate(void)
{
    char *mpirun[] = { "OMPI_COMMAND=pmigate", "PMIX_NAMESPACE=12", "PMIX_RANK=0",
                       "PMIX_SERVER_URI41=1.0;tcp4://127.0.0.1:3", NULL };
    char *pmigate[] = { "PMI_FD=5", "PMI_RANK=0", "PMI_SIZE=2", "PMIGATE_PMI_EXT=1", NULL };
    pg_probe_env_t env;
    char err[256];

    CU_ASSERT_EQUAL_FATAL(pg_probe_detect(mpirun, PG_PROBE_AUTO, &env, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(env.iface, PG_PROBE_PMIX);
    CU_ASSERT_FALSE(env.pmigate);
    CU_ASSERT_STRING_EQUAL(env.launcher, "Open MPI mpirun");
    CU_ASSERT_STRING_EQUAL(env.via, "PMIX_SERVER_URI");
    CU_ASSERT_EQUAL_FATAL(pg_probe_detect(pmigate, PG_PROBE_AUTO, &env, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(env.iface, PG_PROBE_PMIX);
    CU_ASSERT_TRUE(env.pmigate);
    CU_ASSERT_STRING_EQUAL(env.launcher, "pmigate");
    CU_ASSERT_EQUAL_FATAL(pg_probe_detect(pmigate, PG_PROBE_PMI1, &env, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(env.iface, PG_PROBE_PMI1);
}

static void test_detect_refuses_what_is_not_there(void)
{
    char *none[] = { "HOME=/root", "PMIGATE_PMI_EXT=1", NULL };
    char *hydra[] = { "PMI_FD=6", NULL };
    char *pmix[] = { "PMIX_SERVER_URI4=x", NULL };
    pg_probe_env_t env;
    char err[256] = "";

    CU_ASSERT_EQUAL(pg_probe_detect(none, PG_PROBE_AUTO, &env, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no PMI in the environment"));
    CU_ASSERT_EQUAL(pg_probe_detect(hydra, PG_PROBE_PMIX, &env, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--pmix"));
    CU_ASSERT_EQUAL(pg_probe_detect(pmix, PG_PROBE_PMI1, &env, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "PMI_FD"));
}

static void test_parse_options(void)
{
    char *ok[] = { "--pmi2", "--timeout", "2.5" };
    char *eq[] = { "--timeout=0", "--pmix" };
    char *both[] = { "--pmi1", "--pmix" };
    char *bad[] = { "--timeout", "-1" };
    char *unknown[] = { "-n", "4" };
    pg_probe_opts_t o;
    char err[256];

    CU_ASSERT_EQUAL_FATAL(pg_probe_parse(0, NULL, &o, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(o.iface, PG_PROBE_AUTO);
    CU_ASSERT_DOUBLE_EQUAL(o.timeout, PG_PROBE_TIMEOUT_DEFAULT, 1e-9);
    CU_ASSERT_EQUAL_FATAL(pg_probe_parse(3, ok, &o, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(o.iface, PG_PROBE_PMI2);
    CU_ASSERT_DOUBLE_EQUAL(o.timeout, 2.5, 1e-9);
    CU_ASSERT_EQUAL_FATAL(pg_probe_parse(2, eq, &o, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(o.iface, PG_PROBE_PMIX);
    CU_ASSERT_DOUBLE_EQUAL(o.timeout, 0.0, 1e-9);
    CU_ASSERT_EQUAL(pg_probe_parse(2, both, &o, err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(pg_probe_parse(2, bad, &o, err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(pg_probe_parse(2, unknown, &o, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "'-n'"));
}

static void test_mapping_facts(void)
{
    pg_probe_facts_t f = { .rank = 3, .size = 5 };
    int node = -1, first = -1;
    char err[256];

    /* two nodes of 2, then wrap-around: rank 4 on node 0 */
    CU_ASSERT_EQUAL_FATAL(pg_probe_mapping("(vector,(0,2,2))", &f, &node, &first, err,
                                           sizeof(err)), 0);
    CU_ASSERT_EQUAL(f.nnodes, 2);
    CU_ASSERT_EQUAL(f.local_size, 2);
    CU_ASSERT_EQUAL(node, 1);
    CU_ASSERT_EQUAL(first, 2);
    f.rank = 4;
    CU_ASSERT_EQUAL_FATAL(pg_probe_mapping("(vector,(0,2,2))", &f, &node, &first, err,
                                           sizeof(err)), 0);
    CU_ASSERT_EQUAL(f.local_size, 3);
    CU_ASSERT_EQUAL(node, 0);
    CU_ASSERT_EQUAL(first, 0);
    CU_ASSERT_EQUAL(pg_probe_mapping("nonsense", &f, NULL, NULL, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no mapping of 5 ranks"));
}

/* ---- a scripted backend: rank 0 of a job whose other ranks put first ---- */

enum { FAKE_KEYS = 32 };

typedef struct fake {
    int size;
    const char *fail_step; /* "init", "attributes", "fence", ... or NULL */
    struct {
        char key[64], value[1024];
    } kv[FAKE_KEYS];
    int nkv;
    int aborted;
    char abort_msg[1024];
    int finalized;
} fake_t;

static void fake_put_kv(fake_t *b, const char *key, const char *value)
{
    snprintf(b->kv[b->nkv].key, sizeof(b->kv[b->nkv].key), "%s", key);
    snprintf(b->kv[b->nkv].value, sizeof(b->kv[b->nkv].value), "%s", value);
    b->nkv++;
}

static int fake_fails(fake_t *b, const char *step, char *err, size_t errlen)
{
    if (b->fail_step == NULL || strcmp(b->fail_step, step) != 0)
        return 0;
    snprintf(err, errlen, "scripted %s failure", step);
    return -1;
}

static int fake_init(void *be, pg_probe_facts_t *f, char *err, size_t errlen)
{
    fake_t *b = be;

    f->rank = 0;
    f->size = b->size;
    snprintf(f->job, sizeof(f->job), "kvs_9_0");
    return fake_fails(b, "init", err, errlen);
}

static int fake_attrs(void *be, pg_probe_facts_t *f, char *err, size_t errlen)
{
    fake_t *b = be;

    f->universe = b->size;
    f->nnodes = 1;
    f->local_size = b->size;
    return fake_fails(b, "attributes", err, errlen);
}

static int fake_put(void *be, const char *key, const char *value, char *err, size_t errlen)
{
    fake_t *b = be;

    if (fake_fails(b, "put", err, errlen) != 0)
        return -1;
    fake_put_kv(b, key, value);
    return 0;
}

static int fake_commit(void *be, char *err, size_t errlen)
{
    return fake_fails(be, "commit", err, errlen);
}

static int fake_fence(void *be, char *err, size_t errlen)
{
    return fake_fails(be, "fence", err, errlen);
}

static int fake_get(void *be, int rank, const char *key, char *value, size_t cap, char *err,
                    size_t errlen)
{
    fake_t *b = be;

    (void)rank;
    for (int i = 0; i < b->nkv; i++)
        if (strcmp(b->kv[i].key, key) == 0) {
            snprintf(value, cap, "%s", b->kv[i].value);
            return 0;
        }
    snprintf(err, errlen, "not found");
    return -1;
}

static void fake_abort(void *be, int code, const char *msg)
{
    fake_t *b = be;

    b->aborted = code;
    snprintf(b->abort_msg, sizeof(b->abort_msg), "%s", msg);
}

static int fake_finalize(void *be, char *err, size_t errlen)
{
    fake_t *b = be;

    b->finalized++;
    return fake_fails(b, "finalize", err, errlen);
}

static const pg_probe_ops_t fake_ops = {
    fake_init, fake_attrs, fake_put, fake_commit, fake_fence, fake_get, fake_abort, fake_finalize,
};

static const pg_probe_env_t hydra_env = { PG_PROBE_PMI1, false, "hydra", "PMI_FD" };

/* Ranks 1..size-1 as they would have put before the fences. */
static void fake_job(fake_t *b, int size)
{
    char key[64], value[128];

    memset(b, 0, sizeof(*b));
    b->size = size;
    for (int r = 1; r < size; r++) {
        snprintf(key, sizeof(key), "pmigate.probe.%d", r);
        snprintf(value, sizeof(value), "probe-%d-of-%d-from-node%d", r, size, r);
        fake_put_kv(b, key, value);
        snprintf(key, sizeof(key), "pmigate.probe.verdict.%d", r);
        fake_put_kv(b, key, "ok:1000:1000");
    }
}

static void fake_set(fake_t *b, const char *key, const char *value)
{
    for (int i = 0; i < b->nkv; i++)
        if (strcmp(b->kv[i].key, key) == 0)
            snprintf(b->kv[i].value, sizeof(b->kv[i].value), "%s", value);
}

/* Runs rank 0; *out and *err get what it printed (free them). */
static int run_rank0(fake_t *b, char **out, char **err)
{
    size_t olen, elen;
    FILE *o = open_memstream(out, &olen), *e = open_memstream(err, &elen);
    int rc = pg_probe_run(&fake_ops, b, &hydra_env, 0, o, e);

    fclose(o);
    fclose(e);
    return rc;
}

static void test_all_ok_reports_the_slowest_rank(void)
{
    fake_t b;
    char *out, *err;

    fake_job(&b, 3);
    /* far slower than rank 0 itself can be, even under valgrind */
    fake_set(&b, "pmigate.probe.verdict.2", "ok:60000000000:30000000000");
    CU_ASSERT_EQUAL(run_rank0(&b, &out, &err), 0);
    CU_ASSERT_STRING_EQUAL(out, "probe: PMI-1 (hydra via PMI_FD, job kvs_9_0, 1 node, 3 local, "
                                "universe 3) rank 0 of 3, put/fence/get ok, fence 60000.00 ms, "
                                "all-get 30000.00 ms\n");
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_EQUAL(b.finalized, 1);
    CU_ASSERT_EQUAL(b.aborted, 0);
    free(out);
    free(err);
}

static void test_another_ranks_failure_is_named(void)
{
    fake_t b;
    char *out, *err;

    fake_job(&b, 4);
    /* what rank 2 put after its get of rank 1's key failed */
    fake_set(&b, "pmigate.probe.verdict.2",
             "fail:get:rank%201's%20key%20pmigate.probe.1:%20PMI_KVS_Get:%20PMI_FAIL");
    fake_set(&b, "pmigate.probe.verdict.3", "fail:attributes:no%20mapping");
    CU_ASSERT_EQUAL(run_rank0(&b, &out, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "rank 0 of 4, get failed on rank 2: rank 1's key "
                                       "pmigate.probe.1: PMI_KVS_Get: PMI_FAIL "
                                       "(2 ranks failed)\n"));
    free(out);
    free(err);
}

static void test_own_get_checks_the_values(void)
{
    fake_t b;
    char *out, *err;

    fake_job(&b, 3);
    fake_set(&b, "pmigate.probe.2", "probe-7-of-3-from-x");
    CU_ASSERT_EQUAL(run_rank0(&b, &out, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "get failed on rank 0: rank 2's key pmigate.probe.2 holds "
                                       "'probe-7-of-3-from-x', not 'probe-2-of-3-from-...'"));
    free(out);
    free(err);
    fake_job(&b, 3);
    b.nkv = 0; /* nobody else put anything: rank 1's key is missing */
    CU_ASSERT_EQUAL(run_rank0(&b, &out, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "get failed on rank 0: rank 1's key pmigate.probe.1: "
                                       "not found"));
    free(out);
    free(err);
}

static void test_attribute_failure_still_exchanges(void)
{
    fake_t b;
    char *out, *err;

    fake_job(&b, 2);
    b.fail_step = "attributes";
    CU_ASSERT_EQUAL(run_rank0(&b, &out, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "attributes failed on rank 0: scripted attributes failure"));
    CU_ASSERT_EQUAL(b.aborted, 0);
    free(out);
    free(err);
}

static void test_fatal_steps_abort_the_job(void)
{
    fake_t b;
    char *out, *err;

    fake_job(&b, 2);
    b.fail_step = "fence";
    CU_ASSERT_EQUAL(run_rank0(&b, &out, &err), 1);
    CU_ASSERT_STRING_EQUAL(out, "");
    CU_ASSERT_STRING_EQUAL(err, "probe: PMI-1 (hydra via PMI_FD, job kvs_9_0, 1 node, 2 local, "
                                "universe 2) rank 0 of 2: fence failed: scripted fence failure\n");
    CU_ASSERT_EQUAL(b.aborted, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(b.abort_msg, "fence failed"));
    free(out);
    free(err);
    /* without init there is nothing to abort through */
    fake_job(&b, 2);
    b.fail_step = "init";
    CU_ASSERT_EQUAL(run_rank0(&b, &out, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "init failed: scripted init failure"));
    CU_ASSERT_EQUAL(b.aborted, 0);
    free(out);
    free(err);
}

static void test_finalize_failure_is_reported(void)
{
    fake_t b;
    char *out, *err;

    fake_job(&b, 2);
    b.fail_step = "finalize";
    CU_ASSERT_EQUAL(run_rank0(&b, &out, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "finalize failed on rank 0: scripted finalize failure"));
    free(out);
    free(err);
}

static void test_describe_leaves_out_what_is_unknown(void)
{
    pg_probe_env_t env = { PG_PROBE_PMIX, false, "Open MPI mpirun", "PMIX_SERVER_URI" };
    pg_probe_facts_t f = { .rank = 0, .size = 2, .universe = -1, .nnodes = 2, .local_size = -1 };
    char buf[256];

    snprintf(f.client, sizeof(f.client), "OpenPMIx 4.2.2");
    pg_probe_describe(&env, &f, buf, sizeof(buf));
    CU_ASSERT_STRING_EQUAL(buf, "(Open MPI mpirun via PMIX_SERVER_URI, OpenPMIx 4.2.2, 2 nodes)");
}

static const pg_cunit_test_t env_tests[] = {
    { "hydra's PMI_FD: PMI-1, or what is forced", test_detect_hydra_is_pmi1 },
    { "srun's PMI_FD: PMI-2", test_detect_srun_pmi_fd_is_pmi2 },
    { "a PMIx server, and pmigate: PMIx", test_detect_pmix_server_and_pmigate },
    { "no PMI, or not the one forced: refused", test_detect_refuses_what_is_not_there },
    { "options", test_parse_options },
    { "PMI_process_mapping: nodes, local size, the node's first rank", test_mapping_facts },
    { NULL, NULL },
};

static const pg_cunit_test_t run_tests[] = {
    { "every rank ok: one line, the slowest rank's times", test_all_ok_reports_the_slowest_rank },
    { "another rank's failure: its step, rank and reason", test_another_ranks_failure_is_named },
    { "each rank checks every value it gets", test_own_get_checks_the_values },
    { "failed attributes are reported, the exchange goes on",
      test_attribute_failure_still_exchanges },
    { "init, put, commit, fence failures stop and abort", test_fatal_steps_abort_the_job },
    { "finalize failure on rank 0", test_finalize_failure_is_reported },
    { "the launcher facts leave out what is unknown", test_describe_leaves_out_what_is_unknown },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "probe: environment and options", env_tests, NULL, NULL },
    { "probe: steps and report (scripted backend)", run_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}

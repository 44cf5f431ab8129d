/*
 * Unit tests for a rank's environment (gateway/job/pg_env.c): the variables
 * MPICH and Slurm's libpmi2 need (docs/wire-protocol.md, "The rank's
 * environment"), the inherited
 * variables of other launchers that must not leak into a rank, and the
 * precedence of --genv, --env and the PMI variables.
 */
#include <string.h>

#include "gateway/job/pg_env.h"
#include "gateway/job/pg_env_pmix.h"
#include "tests/pg_cunit.h"

static void test_rank_variables_are_set(void)
{
    char *base[] = { "HOME=/home/u", "PATH=/bin", NULL };
    pg_env_t *env = pg_env_new(base);
    pg_rank_env_t r = { .pmi_fd = 7, .rank = 3, .size = 8, .local_rank = 3, .local_size = 8,
                        .jobid = "kvs_42_0", .port = "/tmp/pmigate.x/pmi" };

    CU_ASSERT_PTR_NOT_NULL_FATAL(env);
    CU_ASSERT_EQUAL(pg_env_set_rank(env, &r), 0);
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "PMI_FD"), "7");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "PMI_RANK"), "3");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "PMI_SIZE"), "8");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "PMI_JOBID"), "kvs_42_0");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "MPI_LOCALNRANKS"), "8");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "MPI_LOCALRANKID"), "3");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "PMIGATE_PMI_PORT"), "/tmp/pmigate.x/pmi");
    /* pmigate's own client libraries turn their extensions on with it */
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "PMIGATE_PMI_EXT"), "1");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "HOME"), "/home/u");
    /* PMIx variables would make MPICH distrust PMI_FD */
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMIX_NAMESPACE"));
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMI_ID"));
    pg_env_free(env);
}

static void test_other_launchers_variables_are_dropped(void)
{
    char *base[] = { "PMI_FD=3", "PMI_ID=5", "PMI_PORT=h:1", "PMIX_NAMESPACE=x", "PMIX_RANK=1",
                     "PMIX_SERVER_URI41=foo", "HYDI_CONTROL_FD=9", "PMIGATE_PMI_PORT=/old",
                     "PMI_DEBUG=1", "PMIX_MCA_x=y", "KEEP=me", "NOEQUALS", NULL };
    pg_env_t *env = pg_env_new(base);

    CU_ASSERT_PTR_NOT_NULL_FATAL(env);
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMI_FD"));
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMI_ID"));
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMI_PORT"));
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMIX_NAMESPACE"));
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMIX_RANK"));
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMIX_SERVER_URI41"));
    CU_ASSERT_PTR_NULL(pg_env_get(env, "HYDI_CONTROL_FD"));
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMIGATE_PMI_PORT"));
    /* user settings, not identities, stay */
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "PMI_DEBUG"), "1");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "PMIX_MCA_x"), "y");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "KEEP"), "me");
    CU_ASSERT_EQUAL(pg_env_count(env), 3);
    pg_env_free(env);
}

static void test_user_env_overrides_inherited_but_not_pmi(void)
{
    char *base[] = { "A=old", NULL };
    pg_env_t *env = pg_env_new(base);
    pg_rank_env_t r = { .pmi_fd = 5, .rank = 0, .size = 1, .local_rank = 0, .local_size = 1,
                        .jobid = "kvs_1_0" };

    CU_ASSERT_EQUAL(pg_env_put(env, "A=new"), 0);     /* --genv */
    CU_ASSERT_EQUAL(pg_env_put(env, "A=segment"), 0); /* --env, applied after */
    CU_ASSERT_EQUAL(pg_env_put(env, "PMI_RANK=99"), 0);
    CU_ASSERT_EQUAL(pg_env_set_rank(env, &r), 0);
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "A"), "segment");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "PMI_RANK"), "0");
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMIGATE_PMI_PORT")); /* no listener, no variable */
    /* A, 6 PMI/MPI variables, PMIGATE_PMI_EXT, OMPI_MCA_pmix and _schizo */
    CU_ASSERT_EQUAL(pg_env_count(env), 10);
    pg_env_free(env);
}

static void test_array_is_exec_ready(void)
{
    char *base[] = { "X=1", NULL };
    pg_env_t *env = pg_env_new(base);
    char **arr;
    size_t n = 0;

    pg_env_set(env, "Y", "a=b");
    arr = pg_env_array(env);
    while (arr[n] != NULL)
        n++;
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_STRING_EQUAL(arr[1], "Y=a=b"); /* '=' in a value survives */
    pg_env_free(env);
}

static void test_bad_keys_are_refused(void)
{
    pg_env_t *env = pg_env_new(NULL);

    CU_ASSERT_PTR_NOT_NULL_FATAL(env);
    CU_ASSERT_EQUAL(pg_env_put(env, "=x"), -1);
    CU_ASSERT_EQUAL(pg_env_put(env, "NOEQUALS"), -1);
    CU_ASSERT_EQUAL(pg_env_set(env, "", "x"), -1);
    CU_ASSERT_EQUAL(pg_env_set(env, "A=B", "x"), -1);
    CU_ASSERT_EQUAL(pg_env_count(env), 0);
    pg_env_free(env);
}

static void test_clone_is_independent(void)
{
    char *base[] = { "X=1", NULL };
    pg_env_t *env = pg_env_new(base);
    pg_env_t *copy = pg_env_clone(env);

    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    pg_env_set(copy, "X", "2");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "X"), "1");
    CU_ASSERT_STRING_EQUAL(pg_env_get(copy, "X"), "2");
    pg_env_free(env);
    pg_env_free(copy);
}

/* An Open MPI 4.1 binary reaches pmigate through its PMIx component and
 * pmigate's libpmix.so.2, with nothing typed by the user. */
static void test_open_mpi_ranks_find_libpmix_and_their_component(void)
{
    char *base[] = { "LD_LIBRARY_PATH=/opt/x/lib", NULL };
    pg_env_t *env = pg_env_new(base);
    pg_rank_env_t r = { .pmi_fd = 5, .rank = 0, .size = 2, .local_rank = 0, .local_size = 2,
                        .jobid = "kvs_1_0", .libpmix_dir = "/opt/pmigate/lib",
                        .job_dir = "/tmp/pmigate.Ab12Cd" };

    CU_ASSERT_PTR_NOT_NULL_FATAL(env);
    CU_ASSERT_EQUAL(pg_env_set_rank(env, &r), 0);
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "LD_LIBRARY_PATH"), "/opt/pmigate/lib:/opt/x/lib");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "OMPI_MCA_pmix"), "ext3x");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "OMPI_MCA_schizo"), "^orte");
    /* Open MPI's session tree goes into the job's directory, removed with it */
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "OMPI_MCA_orte_tmpdir_base"), "/tmp/pmigate.Ab12Cd");
    /* the segment's env serves rank after rank: no second copy of the dir */
    r.rank = 1;
    CU_ASSERT_EQUAL(pg_env_set_rank(env, &r), 0);
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "LD_LIBRARY_PATH"), "/opt/pmigate/lib:/opt/x/lib");
    /* still no PMIx variable for MPICH to misread */
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMIX_SERVER_URI41"));
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMIX_ID"));
    pg_env_free(env);
}

static void test_user_ompi_settings_win_and_system_dirs_stay_out(void)
{
    pg_env_t *env = pg_env_new(NULL);
    pg_rank_env_t r = { .pmi_fd = 5, .rank = 0, .size = 1, .local_rank = 0, .local_size = 1,
                        .jobid = "kvs_1_0", .libpmix_dir = "/usr/lib/x86_64-linux-gnu",
                        .job_dir = "/tmp/pmigate.Ab12Cd" };

    CU_ASSERT_PTR_NOT_NULL_FATAL(env);
    CU_ASSERT_EQUAL(pg_env_put(env, "OMPI_MCA_pmix=isolated"), 0); /* --genv */
    CU_ASSERT_EQUAL(pg_env_put(env, "OMPI_MCA_orte_tmpdir_base=/scratch"), 0);
    CU_ASSERT_EQUAL(pg_env_set_rank(env, &r), 0);
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "OMPI_MCA_pmix"), "isolated");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "OMPI_MCA_orte_tmpdir_base"), "/scratch");
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "OMPI_MCA_schizo"), "^orte");
    /* the loader searches it anyway; prepending would reorder the user's path */
    CU_ASSERT_PTR_NULL(pg_env_get(env, "LD_LIBRARY_PATH"));
    pg_env_free(env);
}

/* A pmigate started by Open MPI's mpirun (a proxy) inherits the identity of
 * an mpirun rank; an Open MPI rank below it must not take it. */
static void test_mpirun_rank_identity_is_dropped(void)
{
    char *base[] = { "OMPI_MCA_orte_local_daemon_uri=1.0;tcp://h:1", "OMPI_MCA_orte_hnp_uri=x",
                     "OMPI_MCA_ess=^singleton", "OMPI_MCA_pmix=^s1,s2,cray,isolated",
                     "OMPI_COMM_WORLD_RANK=0", "PMIX_ID=1.0", "OMPI_MCA_ess_base_vpid=0",
                     "PMIX_DSTORE_21_BASE_PATH=/tmp/x", "OMPI_MCA_btl=self,vader", NULL };
    pg_env_t *env = pg_env_new(base);

    CU_ASSERT_PTR_NOT_NULL_FATAL(env);
    CU_ASSERT_PTR_NULL(pg_env_get(env, "OMPI_MCA_orte_local_daemon_uri"));
    CU_ASSERT_PTR_NULL(pg_env_get(env, "OMPI_MCA_pmix"));
    CU_ASSERT_PTR_NULL(pg_env_get(env, "PMIX_ID"));
    CU_ASSERT_PTR_NULL(pg_env_get(env, "OMPI_COMM_WORLD_RANK"));
    /* a user's own MCA choice stays */
    CU_ASSERT_STRING_EQUAL(pg_env_get(env, "OMPI_MCA_btl"), "self,vader");
    CU_ASSERT_EQUAL(pg_env_count(env), 1);
    pg_env_free(env);
}

static const pg_cunit_test_t env_tests[] = {
    { "PMI_FD, PMI_RANK, PMI_SIZE, PMI_JOBID, MPI_LOCAL* are set", test_rank_variables_are_set },
    { "identities left by other launchers are dropped", test_other_launchers_variables_are_dropped },
    { "--genv < --env < PMI variables", test_user_env_overrides_inherited_but_not_pmi },
    { "the array is NULL-terminated K=V for execve", test_array_is_exec_ready },
    { "empty keys and keys with '=' are refused", test_bad_keys_are_refused },
    { "a clone is independent", test_clone_is_independent },
    { "Open MPI ranks find pmigate's libpmix and their PMIx component",
      test_open_mpi_ranks_find_libpmix_and_their_component },
    { "the user's OMPI_MCA_* win; loader dirs stay off LD_LIBRARY_PATH",
      test_user_ompi_settings_win_and_system_dirs_stay_out },
    { "the identity mpirun gives its ranks is dropped", test_mpirun_rank_identity_is_dropped },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "rank environment", env_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}

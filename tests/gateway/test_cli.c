/*
 * Unit tests for the `pmigate run` command line (gateway/util/pg_cli.c): the
 * mpiexec habits users type (-n/-np, MPMD segments after ':', per-segment
 * --env) and the usage errors that must stop pmigate before it forks.
 */
#include <string.h>

#include "gateway/util/pg_cli.h"
#include "tests/pg_cunit.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int parse(int argc, char **argv, pg_run_opts_t *o, char *err)
{
    return pg_cli_parse_run(argc, argv, o, err, 256);
}

static void test_single_segment_with_np(void)
{
    char *argv[] = { "-np", "4", "./a.out", "x", "-n", "y" };
    pg_run_opts_t o;
    char err[256];

    CU_ASSERT_EQUAL_FATAL(parse(ARGC(argv), argv, &o, err), 0);
    CU_ASSERT_EQUAL(o.nsegments, 1);
    CU_ASSERT_EQUAL(o.nprocs, 4);
    CU_ASSERT_EQUAL(o.segments[0].argc, 4); /* options after the program are its own */
    CU_ASSERT_STRING_EQUAL(o.segments[0].argv[0], "./a.out");
    CU_ASSERT_STRING_EQUAL(o.segments[0].argv[2], "-n");
    CU_ASSERT_PTR_NULL(o.segments[0].argv[4]);
    pg_run_opts_free(&o);
}

static void test_default_is_one_rank_unbound(void)
{
    char *argv[] = { "hostname" };
    pg_run_opts_t o;
    char err[256];

    CU_ASSERT_EQUAL_FATAL(parse(ARGC(argv), argv, &o, err), 0);
    CU_ASSERT_EQUAL(o.nprocs, 1);
    CU_ASSERT_EQUAL(o.bind, PG_BIND_NONE);
    CU_ASSERT_EQUAL(o.sched, PG_SCHED_NORMAL);
    CU_ASSERT_EQUAL(o.timeout, 0.0);
    CU_ASSERT_EQUAL(o.heartbeat, 0);
    CU_ASSERT_FALSE(o.strict); /* a silent rank only warns */
    pg_run_opts_free(&o);
}

static void test_mpmd_segments_have_own_counts_and_env(void)
{
    char *argv[] = { "--tag-output", "-n", "2", "--env", "A=1", "prog1", "p1arg", ":",
                     "-np=3", "--env=B=2", "prog2", ":", "prog3" };
    pg_run_opts_t o;
    char err[256];

    CU_ASSERT_EQUAL_FATAL(parse(ARGC(argv), argv, &o, err), 0);
    CU_ASSERT_EQUAL_FATAL(o.nsegments, 3);
    CU_ASSERT_EQUAL(o.nprocs, 6);
    CU_ASSERT_EQUAL(o.segments[0].nprocs, 2);
    CU_ASSERT_EQUAL(o.segments[1].nprocs, 3);
    CU_ASSERT_EQUAL(o.segments[2].nprocs, 1);
    CU_ASSERT_EQUAL(o.segments[0].argc, 2);
    CU_ASSERT_STRING_EQUAL(o.segments[1].argv[0], "prog2");
    CU_ASSERT_EQUAL_FATAL(o.segments[0].nenv, 1);
    CU_ASSERT_STRING_EQUAL(o.segments[0].env[0], "A=1");
    CU_ASSERT_EQUAL_FATAL(o.segments[1].nenv, 1);
    CU_ASSERT_STRING_EQUAL(o.segments[1].env[0], "B=2");
    CU_ASSERT_EQUAL(o.segments[2].nenv, 0);
    CU_ASSERT_TRUE(o.tag_output);
    pg_run_opts_free(&o);
}

static void test_global_options(void)
{
    char *argv[] = { "--ppn", "2", "-bind-to", "socket", "--timeout=1.5", "--verbose",
                     "--sched=batch", "--genv", "G=x", "--strict", "--heartbeat", "30",
                     "-n", "2", "prog" };
    pg_run_opts_t o;
    char err[256];

    CU_ASSERT_EQUAL_FATAL(parse(ARGC(argv), argv, &o, err), 0);
    CU_ASSERT_EQUAL(o.ppn, 2);
    CU_ASSERT_EQUAL(o.bind, PG_BIND_SOCKET);
    CU_ASSERT_EQUAL(o.sched, PG_SCHED_BATCH);
    CU_ASSERT_DOUBLE_EQUAL(o.timeout, 1.5, 1e-9);
    CU_ASSERT_EQUAL(o.heartbeat, 30);
    CU_ASSERT_TRUE(o.verbose);
    CU_ASSERT_TRUE(o.strict);
    CU_ASSERT_EQUAL_FATAL(o.ngenv, 1);
    CU_ASSERT_STRING_EQUAL(o.genv[0], "G=x");
    pg_run_opts_free(&o);
}

static void test_double_dash_ends_options(void)
{
    char *argv[] = { "-n", "2", "--", "-weird-program-name" };
    pg_run_opts_t o;
    char err[256];

    CU_ASSERT_EQUAL_FATAL(parse(ARGC(argv), argv, &o, err), 0);
    CU_ASSERT_STRING_EQUAL(o.segments[0].argv[0], "-weird-program-name");
    pg_run_opts_free(&o);
}

static void test_help_launches_nothing(void)
{
    char *argv[] = { "--help" };
    pg_run_opts_t o;
    char err[256];

    CU_ASSERT_EQUAL(parse(ARGC(argv), argv, &o, err), 0);
    CU_ASSERT_TRUE(o.help);
    pg_run_opts_free(&o);
}

/* Each case must fail with a message containing `needle`. */
static void expect_error(int argc, char **argv, const char *needle)
{
    pg_run_opts_t o;
    char err[256];

    CU_ASSERT_EQUAL(parse(argc, argv, &o, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, needle));
    pg_run_opts_free(&o);
}

static void test_usage_errors_are_explained(void)
{
    char *no_prog[] = { "-n", "2" };
    char *bad_n[] = { "-n", "two", "prog" };
    char *zero_n[] = { "-n", "0", "prog" };
    char *neg_n[] = { "-n", "-3", "prog" };
    char *missing_n[] = { "-n" };
    char *bad_bind[] = { "--bind-to", "numa", "prog" };
    char *bad_env[] = { "--env", "NOEQUALS", "prog" };
    char *bad_sched[] = { "--sched", "fifo", "prog" };
    char *bad_timeout[] = { "--timeout", "soon", "prog" };
    char *bad_heartbeat[] = { "--heartbeat", "0.5", "prog" };
    char *zero_heartbeat[] = { "--heartbeat=0", "prog" };
    char *unknown[] = { "--frobnicate", "prog" };
    char *empty_seg[] = { "prog", ":", ":", "prog2" };
    char *trailing_colon[] = { "prog", ":" };
    char *huge_n[] = { "-n", "99999999999", "prog" };

    expect_error(0, NULL, "missing program");
    expect_error(ARGC(no_prog), no_prog, "missing program");
    expect_error(ARGC(bad_n), bad_n, "positive number of ranks");
    expect_error(ARGC(zero_n), zero_n, "positive number of ranks");
    expect_error(ARGC(neg_n), neg_n, "positive number of ranks");
    expect_error(ARGC(missing_n), missing_n, "positive number of ranks");
    expect_error(ARGC(bad_bind), bad_bind, "core, socket or none");
    expect_error(ARGC(bad_env), bad_env, "K=V");
    expect_error(ARGC(bad_sched), bad_sched, "normal or batch, got 'fifo'");
    expect_error(ARGC(bad_timeout), bad_timeout, "seconds");
    expect_error(ARGC(bad_heartbeat), bad_heartbeat, "whole number of seconds, got '0.5'");
    expect_error(ARGC(zero_heartbeat), zero_heartbeat, "positive whole number of seconds");
    expect_error(ARGC(unknown), unknown, "unknown option '--frobnicate'");
    expect_error(ARGC(empty_seg), empty_seg, "missing program after ':'");
    expect_error(ARGC(trailing_colon), trailing_colon, "after the last ':'");
    expect_error(ARGC(huge_n), huge_n, "positive number of ranks");
}

static void test_bind_words(void)
{
    pg_bind_t b;

    CU_ASSERT_EQUAL(pg_bind_parse("core", &b), 0);
    CU_ASSERT_EQUAL(b, PG_BIND_CORE);
    CU_ASSERT_EQUAL(pg_bind_parse("package", &b), 0);
    CU_ASSERT_EQUAL(b, PG_BIND_SOCKET);
    CU_ASSERT_EQUAL(pg_bind_parse("none", &b), 0);
    CU_ASSERT_EQUAL(b, PG_BIND_NONE);
    CU_ASSERT_EQUAL(pg_bind_parse("Core", &b), -1);
    CU_ASSERT_STRING_EQUAL(pg_bind_name(PG_BIND_SOCKET), "socket");
}

static void test_sched_words(void)
{
    pg_sched_t p;

    CU_ASSERT_EQUAL(pg_sched_parse("batch", &p), 0);
    CU_ASSERT_EQUAL(p, PG_SCHED_BATCH);
    CU_ASSERT_EQUAL(pg_sched_parse("normal", &p), 0);
    CU_ASSERT_EQUAL(p, PG_SCHED_NORMAL);
    CU_ASSERT_EQUAL(pg_sched_parse("other", &p), 0); /* the kernel's name, SCHED_OTHER */
    CU_ASSERT_EQUAL(p, PG_SCHED_NORMAL);
    CU_ASSERT_EQUAL(pg_sched_parse("idle", &p), -1);
    CU_ASSERT_STRING_EQUAL(pg_sched_name(PG_SCHED_BATCH), "batch");
    CU_ASSERT_STRING_EQUAL(pg_sched_name(PG_SCHED_NORMAL), "normal");
}

static const pg_cunit_test_t cli_tests[] = {
    { "-np N and program arguments that look like options", test_single_segment_with_np },
    { "default: one rank, no binding, no timeout", test_default_is_one_rank_unbound },
    { "MPMD segments keep their own -n and --env", test_mpmd_segments_have_own_counts_and_env },
    { "global options (--ppn, --bind-to, --timeout, --sched, --genv)", test_global_options },
    { "-- ends the options", test_double_dash_ends_options },
    { "--help launches nothing", test_help_launches_nothing },
    { "usage errors say what is wrong", test_usage_errors_are_explained },
    { "--bind-to words", test_bind_words },
    { "--sched words", test_sched_words },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "pmigate run command line", cli_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}

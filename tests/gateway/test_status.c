/*
 * Unit tests for the exit status of `pmigate run` (gateway/util/pg_status.c):
 * the first failure decides, signals become 128+N, abort codes are taken
 * mod 256, and ranks killed during teardown change nothing.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#include "gateway/util/pg_status.h"
#include "tests/pg_cunit.h"

/* Builds wait statuses the way the kernel encodes them. */
static int exited(int code)
{
    return (code & 0xff) << 8;
}

static int signaled(int sig)
{
    return sig & 0x7f;
}

static void test_wait_status_conversion(void)
{
    CU_ASSERT_EQUAL(pg_status_of_wait(exited(0)), 0);
    CU_ASSERT_EQUAL(pg_status_of_wait(exited(3)), 3);
    CU_ASSERT_EQUAL(pg_status_of_wait(exited(255)), 255);
    CU_ASSERT_EQUAL(pg_status_of_wait(signaled(SIGKILL)), 137);
    CU_ASSERT_EQUAL(pg_status_of_wait(signaled(SIGSEGV)), 128 + SIGSEGV);
}

static void test_all_zero_is_zero(void)
{
    pg_verdict_t v;

    pg_verdict_init(&v);
    CU_ASSERT_EQUAL(pg_verdict_rank_exit(&v, 0, 0), 0);
    CU_ASSERT_EQUAL(pg_verdict_rank_exit(&v, 1, 0), 0);
    CU_ASSERT_FALSE(pg_verdict_failed(&v));
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 0);
}

static void test_first_nonzero_wins(void)
{
    pg_verdict_t v;

    pg_verdict_init(&v);
    pg_verdict_rank_exit(&v, 0, 0);
    CU_ASSERT_EQUAL(pg_verdict_rank_exit(&v, 2, 3), 1);
    CU_ASSERT_EQUAL(pg_verdict_rank_exit(&v, 1, 137), 0); /* killed by the teardown */
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 3);
    CU_ASSERT_EQUAL(v.rank, 2);
}

static void test_abort_code_wins_over_later_exits(void)
{
    pg_verdict_t v;

    pg_verdict_init(&v);
    CU_ASSERT_EQUAL(pg_verdict_abort(&v, 1, 7), 1);
    pg_verdict_rank_exit(&v, 1, 255); /* the aborting client exits -1 itself */
    pg_verdict_rank_exit(&v, 0, 143);
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 7);
    CU_ASSERT_EQUAL(v.cause, PG_CAUSE_ABORT);
}

static void test_abort_codes_are_eight_bits(void)
{
    pg_verdict_t v;

    pg_verdict_init(&v);
    pg_verdict_abort(&v, 0, -1);
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 255);
    pg_verdict_init(&v);
    pg_verdict_abort(&v, 0, 256 + 5);
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 5);
}

/* An aborted job never exits 0, whatever code the rank gave. */
static void test_abort_never_exits_zero(void)
{
    static const int codes[] = { 0, 256, 512, -256 };
    pg_verdict_t v;

    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        pg_verdict_init(&v);
        CU_ASSERT_EQUAL(pg_verdict_abort(&v, 0, codes[i]), 1);
        CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 1);
        CU_ASSERT(pg_verdict_failed(&v));
    }
}

static void test_earlier_failure_beats_abort(void)
{
    pg_verdict_t v;

    pg_verdict_init(&v);
    pg_verdict_rank_exit(&v, 3, 139);
    CU_ASSERT_EQUAL(pg_verdict_abort(&v, 0, 7), 0);
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 139);
}

static void test_lost_rank_takes_its_own_status(void)
{
    pg_verdict_t v;

    pg_verdict_init(&v);
    CU_ASSERT_EQUAL(pg_verdict_rank_lost(&v, 2, 9), 1);
    CU_ASSERT_TRUE(pg_verdict_failed(&v));
    pg_verdict_rank_exit(&v, 0, 143); /* another rank killed by the teardown */
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 9);
}

static void test_lost_rank_exiting_zero_still_fails(void)
{
    pg_verdict_t v;

    pg_verdict_init(&v);
    pg_verdict_rank_lost(&v, 1, 0);
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 1);
    pg_verdict_rank_exit(&v, 1, 143); /* then killed by the teardown: still 1 */
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 1);
}

static void test_timeout_and_signal_codes(void)
{
    pg_verdict_t v;

    pg_verdict_init(&v);
    CU_ASSERT_EQUAL(pg_verdict_timeout(&v), 1);
    pg_verdict_rank_exit(&v, 0, 143);
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), PG_EXIT_TIMEOUT);
    pg_verdict_init(&v);
    CU_ASSERT_EQUAL(pg_verdict_signal(&v, SIGTERM), 1);
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 128 + SIGTERM);
    /* a watched rank that stalled (--heartbeat, a PMIx monitor): as a timeout */
    pg_verdict_init(&v);
    CU_ASSERT_EQUAL(pg_verdict_stalled(&v, 2), 1);
    CU_ASSERT_EQUAL(v.rank, 2);
    CU_ASSERT_EQUAL(pg_verdict_stalled(&v, 3), 0); /* the first stall decides */
    pg_verdict_rank_exit(&v, 2, 143);
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), PG_EXIT_TIMEOUT);
}

static void test_launch_failures_use_shell_codes(void)
{
    pg_verdict_t v;

    pg_verdict_init(&v);
    pg_verdict_launch_failed(&v, 0, ENOENT);
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 127);
    pg_verdict_init(&v);
    pg_verdict_launch_failed(&v, 0, EACCES);
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 126);
    pg_verdict_init(&v);
    pg_verdict_launch_failed(&v, 0, EAGAIN);
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), PG_EXIT_INTERNAL);
}

/* --strict: a silent rank fails a job that otherwise succeeded with its own
 * code, and never hides an earlier failure. */
static void test_silent_rank_under_strict(void)
{
    pg_verdict_t v;

    pg_verdict_init(&v);
    CU_ASSERT_EQUAL(pg_verdict_silent(&v, 1), 1);
    CU_ASSERT_TRUE(pg_verdict_failed(&v));
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), PG_EXIT_SILENT);
    CU_ASSERT_EQUAL(v.rank, 1);
    pg_verdict_init(&v);
    pg_verdict_rank_exit(&v, 0, 3);
    CU_ASSERT_EQUAL(pg_verdict_silent(&v, -1), 0);
    CU_ASSERT_EQUAL(pg_verdict_exit_code(&v), 3);
}

/* The watcher hears of the first failure once, after it is recorded (a
 * verdict it then asks about is decided), and a later watcher of a failed
 * verdict at once. */
typedef struct heard {
    int calls;
    pg_verdict_cause_t cause;
    int code, failed_then;
} heard_t;

static void on_failure(void *ctx, const pg_verdict_t *v)
{
    heard_t *h = ctx;

    h->calls++;
    h->cause = v->cause;
    h->code = v->code;
    h->failed_then = pg_verdict_failed(v);
}

static void test_watch_hears_the_first_failure(void)
{
    pg_verdict_t v;
    heard_t h = { 0 }, late = { 0 };

    pg_verdict_init(&v);
    pg_verdict_watch(&v, on_failure, &h);
    pg_verdict_rank_exit(&v, 0, 0);
    CU_ASSERT_EQUAL(h.calls, 0);
    pg_verdict_abort(&v, 3, 7);
    pg_verdict_timeout(&v);
    CU_ASSERT_EQUAL(h.calls, 1);
    CU_ASSERT_EQUAL(h.cause, PG_CAUSE_ABORT);
    CU_ASSERT_EQUAL(h.code, 7);
    CU_ASSERT_TRUE(h.failed_then);
    pg_verdict_watch(&v, on_failure, &late);
    CU_ASSERT_EQUAL(late.calls, 1);
    CU_ASSERT_EQUAL(late.code, 7);
}

static const pg_cunit_test_t status_tests[] = {
    { "wait status: exit code, or 128+signal", test_wait_status_conversion },
    { "every rank exits 0: status 0", test_all_zero_is_zero },
    { "the first non-zero rank status wins", test_first_nonzero_wins },
    { "a PMI abort's code wins over exits that follow it", test_abort_code_wins_over_later_exits },
    { "abort codes are taken mod 256", test_abort_codes_are_eight_bits },
    { "an abort with code 0 or 256 exits 1, never 0", test_abort_never_exits_zero },
    { "a failure before the abort stands", test_earlier_failure_beats_abort },
    { "a rank lost before finalize gives its own status", test_lost_rank_takes_its_own_status },
    { "a lost rank that exits 0 or is killed by the teardown gives 1", test_lost_rank_exiting_zero_still_fails },
    { "--timeout is 124, a signal to pmigate is 128+N", test_timeout_and_signal_codes },
    { "launch failures: 127 not found, 126 not executable", test_launch_failures_use_shell_codes },
    { "--strict: a silent rank exits 125 unless a failure came first", test_silent_rank_under_strict },
    { "a watcher hears of the first failure, once", test_watch_hears_the_first_failure },
    { NULL, NULL },
};

static const pg_cunit_suite_t suites[] = {
    { "exit status rules", status_tests, NULL, NULL },
    { NULL, NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
    (void)argc;
    return pg_cunit_run(argv[0], suites);
}

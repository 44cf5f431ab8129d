/*
 * test_handlers: the PMI-1 and PMI-2 server handlers in scripted
 * conversations (hh_harness.h): every case of the table (hh_cases.c) once
 * per dialect it names, as a CUnit test "pmi1: ..." or "pmi2: ...", and
 * the two conversations that loop over many keys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/handlers/hh_cases.h"

enum { MAX_RUNS = 128 };

/* One CUnit test: a case in one dialect.  CUnit's test functions take no
 * argument, so the one function finds its run by the test's name. */
typedef struct run {
    char name[160];
    const hh_case_t *c;
    unsigned dialect;
} run_t;

static run_t runs[MAX_RUNS];
static int nruns;

static void run_current(void)
{
    const char *name = CU_get_current_test()->pName;

    for (int i = 0; i < nruns; i++)
        if (strcmp(runs[i].name, name) == 0) {
            hh_case_run(runs[i].c, runs[i].dialect);
            return;
        }
    CU_FAIL("a test without its case");
}

/* Every rank's key after the fence, with and without the srcid hint (4
 * ranks on 2 nodes: rank 3 asks with srcid=-1). */
static void test_pmi2_every_ranks_key_after_the_fence(void)
{
    const hh_case_t shape = { "every rank's key after the fence", H2, 4, 2, HH_READY, NULL };
    hh_t *h = hh_case_job(&shape, H2);
    char req[128], reply[128];
    hh_row_t row = { H2, 0, req, reply };
    int ok = h != NULL;

    for (int c = 0; ok && c < 4; c++) {
        snprintf(req, sizeof(req), "cmd=kvs-put;key=card%d;value=val%d;", c, c);
        snprintf(reply, sizeof(reply), "cmd=kvs-put-response;rc=0;");
        ok = hh_row_run(h, H2, &(hh_row_t){ H2, c, req, reply }, shape.name);
    }
    for (int c = 0; ok && c < 4; c++)
        hh_send2(h, c, "cmd=kvs-fence;");
    for (int c = 0; ok && c < 4; c++)
        ok = hh_row_run(h, H2, &(hh_row_t){ H2, c, NULL, "cmd=kvs-fence-response;rc=0;" }, shape.name);
    for (int n = 0; ok && n < 16; n++) {
        row.conn = n / 4;
        snprintf(req, sizeof(req), "cmd=kvs-get;jobid=$KVS;srcid=%d;key=card%d;",
                 row.conn == 3 ? -1 : n % 4, n % 4);
        snprintf(reply, sizeof(reply), "cmd=kvs-get-response;rc=0;found=TRUE;value=val%d;", n % 4);
        ok = hh_row_run(h, H2, &row, shape.name);
    }
    hh_free(h);
}

/* Asked for, the barrier brings every other rank's pairs in keyval_cache
 * lines: many small pairs test the 64-token limit, big ones the
 * 1023-byte line limit. */
static void test_pmi1_keyval_cache_lines_respect_line_and_token_limits(void)
{
    hh_t *h = hh_new(2, 1);
    char key[32], value[700];
    int seen = 0, big = 0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    hh_send1(h, 0, "cmd=init pmi_version=1 pmi_subversion=1 pmigate_keyval_cache=yes\n");
    EXPECT(h, 0, hh_reply, "response_to_init");
    hh_send1(h, 1, "cmd=init pmi_version=1 pmi_subversion=1\n");
    EXPECT(h, 1, hh_reply, "response_to_init");
    memset(value, 'A', 600);
    value[600] = '\0';
    for (int i = 0; i < 103; i++) {
        char line[800];

        snprintf(key, sizeof(key), i < 100 ? "k%d" : "big%d", i < 100 ? i : i - 100);
        snprintf(line, sizeof(line), "cmd=put kvsname=%s key=%s value=%s\n", hh_kvsname(h), key,
                 i < 100 ? "v" : value);
        hh_send1(h, 1, line);
        EXPECT(h, 1, hh_reply, "put_result");
        CU_ASSERT_STRING_EQUAL(hh_get(hh_reply, "rc"), "0");
    }
    hh_send1(h, 0, "cmd=barrier_in\n");
    hh_send1(h, 1, "cmd=barrier_in\n");
    EXPECT(h, 1, hh_reply, "barrier_out");
    for (;;) {
        CU_ASSERT_FATAL(hh_recv(h, 0, hh_reply));
        CU_ASSERT(hh_reply->len <= 1023);
        if (strcmp(hh_cmd(hh_reply), "barrier_out") == 0)
            break;
        CU_ASSERT_STRING_EQUAL(hh_cmd(hh_reply), "keyval_cache");
        CU_ASSERT(hh_reply->msg.ntokens + 1 <= 64);
        for (unsigned t = 0; t < hh_reply->msg.ntokens; t++) {
            seen++;
            big += hh_reply->msg.tokens[t].val.len == 600;
        }
    }
    CU_ASSERT_EQUAL(seen, 103);
    CU_ASSERT_EQUAL(big, 3);
    hh_free(h);
}

static const pg_cunit_test_t loop_tests[] = {
    { "pmi1: keyval_cache: <=1023 bytes, <=64 tokens a line",
      test_pmi1_keyval_cache_lines_respect_line_and_token_limits },
    { "pmi2: every rank's key after the fence (srcid hint)", test_pmi2_every_ranks_key_after_the_fence },
    { NULL, NULL },
};

/* The table's runs of one dialect as CUnit tests (NULL-terminated). */
static pg_cunit_test_t *dialect_tests(unsigned dialect)
{
    pg_cunit_test_t *tests = calloc(MAX_RUNS, sizeof(*tests));
    int n = 0;

    for (int t = 0; tests != NULL && hh_case_tables[t] != NULL; t++)
        for (const hh_case_t *c = hh_case_tables[t]; c->name != NULL; c++) {
            run_t *r = &runs[nruns];

            if ((c->dialects & dialect) == 0 || nruns >= MAX_RUNS || n + 1 >= MAX_RUNS)
                continue;
            snprintf(r->name, sizeof(r->name), "pmi%u: %s", dialect, c->name);
            r->c = c;
            r->dialect = dialect;
            tests[n++] = (pg_cunit_test_t){ r->name, run_current };
            nruns++;
        }
    return tests;
}

int main(int argc, char **argv)
{
    pg_cunit_test_t *pmi1 = dialect_tests(H1), *pmi2 = dialect_tests(H2);
    const pg_cunit_suite_t suites[] = {
        { "pmi1 conversations", pmi1, hh_suite_init, hh_suite_cleanup },
        { "pmi2 conversations", pmi2, hh_suite_init, hh_suite_cleanup },
        { "conversations over many keys", loop_tests, hh_suite_init, hh_suite_cleanup },
        { NULL, NULL, NULL, NULL },
    };
    int rc = pmi1 && pmi2 ? pg_cunit_run(argv[0], suites) : 1;

    (void)argc;
    free(pmi1);
    free(pmi2);
    return rc;
}

/* The shared CUnit main: see pg_cunit.h for why it exists. */
#include "tests/pg_cunit.h"

#include <CUnit/Basic.h>
#include <stdio.h>

static int register_suite(const pg_cunit_suite_t *s)
{
    CU_pSuite suite = CU_add_suite(s->name, s->init, s->cleanup);
    if (suite == NULL)
        return -1;
    for (const pg_cunit_test_t *t = s->tests; t->name != NULL; t++)
        if (CU_add_test(suite, t->name, t->fn) == NULL)
            return -1;
    return 0;
}

int pg_cunit_run(const char *program, const pg_cunit_suite_t *suites)
{
    int failed = 1;

    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "%s: cannot initialise CUnit: %s\n", program, CU_get_error_msg());
        return 1;
    }
    for (const pg_cunit_suite_t *s = suites; s->name != NULL; s++) {
        if (register_suite(s) != 0) {
            fprintf(stderr, "%s: cannot register suite %s: %s\n", program, s->name,
                    CU_get_error_msg());
            goto out;
        }
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    if (CU_basic_run_tests() != CUE_SUCCESS) {
        fprintf(stderr, "%s: CUnit failed: %s\n", program, CU_get_error_msg());
        goto out;
    }
    failed = CU_get_number_of_failures() != 0 || CU_get_number_of_tests_failed() != 0;
out:
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

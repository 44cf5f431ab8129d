/*
 * pg_cunit: the one main() every CUnit binary of pmigate shares.
 *
 * Each test file lists its suites in a NULL-terminated table and calls
 * pg_cunit_run() from main(); the runner prints CUnit's summary (./dev test
 * shows it) and returns 0 or 1, never a failure count that automake could
 * misread as 77 (skip) or 99 (hard error).
 */
#ifndef PG_CUNIT_H
#define PG_CUNIT_H

#include <CUnit/CUnit.h>

typedef struct pg_cunit_test {
    const char *name;
    CU_TestFunc fn;
} pg_cunit_test_t;

typedef struct pg_cunit_suite {
    const char *name;
    const pg_cunit_test_t *tests; /* terminated by { NULL, NULL } */
    CU_InitializeFunc init;       /* may be NULL */
    CU_CleanupFunc cleanup;       /* may be NULL */
} pg_cunit_suite_t;

/* Registers every suite, runs them, prints the summary.
 * Returns the process exit status: 0 when all passed, 1 otherwise. */
int pg_cunit_run(const char *program, const pg_cunit_suite_t *suites);

#endif

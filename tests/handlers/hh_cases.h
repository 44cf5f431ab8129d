/*
 * hh_cases: the table of the handlers' conversations (hh_cases.c), in
 * lists by topic, NULL-terminated; each list ends with a case of no name.
 */
#ifndef HH_CASES_H
#define HH_CASES_H

#include "tests/handlers/hh_table.h"

extern const hh_case_t *const hh_case_tables[];

#endif

/*
 * cl_pmix: what the PMIx programs of the cluster tests (pmix_names,
 * pmix_events, pmix_groups) share, so each says only what it tests:
 * CHECK, which names the program (CL_PROG, defined before the include)
 * and the rank, then exits 1; PMIx_Init with the job's size; a
 * microsecond clock for the timings ./dev bench reads; a barrier of the
 * whole job.  Included once per
 * program.
 */
#ifndef CL_PMIX_H
#define CL_PMIX_H

#include <pmix.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int rank = -1; /* this process's, once PMIx_Init told it */

static void cl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void cl_fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s rank %d: ", CL_PROG, rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond))                                                           \
            cl_fail(__VA_ARGS__);                                              \
    } while (0)

static inline long long now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* PMIx_Init as *me (rank set for CHECK); the job's size. */
static inline int cl_init(pmix_proc_t *me)
{
    pmix_proc_t wild;
    pmix_value_t *got;
    int size;

    CHECK(PMIx_Init(me, NULL, 0) == PMIX_SUCCESS, "PMIx_Init");
    rank = (int)me->rank;
    PMIX_LOAD_PROCID(&wild, me->nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &got) == PMIX_SUCCESS, "job size");
    size = (int)got->data.uint32;
    PMIX_VALUE_RELEASE(got);
    return size;
}

/* A barrier of the whole job, collecting data as PMI barriers do. */
static inline void barrier(void)
{
    pmix_info_t collect;
    bool yes = true;

    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIx_Fence(NULL, 0, &collect, 1) == PMIX_SUCCESS, "fence");
    PMIX_INFO_DESTRUCT(&collect);
}

#endif

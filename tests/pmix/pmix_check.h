/*
 * pmix_check: what the PMIx client test programs run under `pmigate run`
 * (pmix_api, pmix_groups, pmix_conform) share: the process's own name, the
 * failure count that becomes the exit status, one line per check, the two
 * calls every scenario uses, and the wait for a callback (a waiter and the
 * op and info callbacks that post to it).  Included once per program.
 *
 *     PASS <check> (rank R): <what was seen>
 *     FAIL <check> (rank R): <what was seen>
 */
#ifndef PMIX_CHECK_H
#define PMIX_CHECK_H

#include <pmix.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static pmix_proc_t me;
static int failures;

static inline void report(int ok, const char *check, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline void report(int ok, const char *check, const char *fmt, ...)
{
    char what[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    failures += !ok;
    printf("%s %s (rank %u): %s\n", ok ? "PASS" : "FAIL", check, me.rank, what);
    fflush(stdout);
}

/* Rank r of this process's namespace. */
static inline pmix_proc_t proc_of(pmix_rank_t r)
{
    pmix_proc_t p;

    PMIX_LOAD_PROCID(&p, me.nspace, r);
    return p;
}

static inline void fence_all(void)
{
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);

    if (rc != PMIX_SUCCESS)
        report(0, "fence", "%s", PMIx_Error_string(rc));
}

/* Waits up to `secs` seconds for *done, which a callback sets under `m`
 * and signals on `c`; returns it (0: the callback never came, a hang). */
static inline int wait_done(pthread_mutex_t *m, pthread_cond_t *c, const int *done, int secs)
{
    struct timespec until;
    int d;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += secs;
    pthread_mutex_lock(m);
    while (!*done && pthread_cond_timedwait(c, m, &until) == 0)
        ;
    d = *done;
    pthread_mutex_unlock(m);
    return d;
}

/* A callback waited for with a bound: what it said, on which thread. */
typedef struct waiter {
    pthread_mutex_t m;
    pthread_cond_t c;
    int done;
    pmix_status_t status;
    pthread_t thread;
} waiter_t;

static inline void waiter_init(waiter_t *w)
{
    pthread_mutex_init(&w->m, NULL);
    pthread_cond_init(&w->c, NULL);
    w->done = 0;
    w->status = PMIX_ERROR;
}

static inline void waiter_post(waiter_t *w, pmix_status_t status)
{
    pthread_mutex_lock(&w->m);
    w->status = status;
    w->thread = pthread_self();
    w->done++;
    pthread_cond_signal(&w->c);
    pthread_mutex_unlock(&w->m);
}

/* 1 when the callback ran within `secs` seconds (a hang is a failure) */
static inline int waiter_wait(waiter_t *w, int secs)
{
    return wait_done(&w->m, &w->c, &w->done, secs);
}

static inline void op_cb(pmix_status_t status, void *cbdata)
{
    waiter_post(cbdata, status);
}

static inline void info_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void)info, (void)ninfo;
    if (release_fn != NULL)
        release_fn(release_cbdata);
    waiter_post(cbdata, status);
}

#endif

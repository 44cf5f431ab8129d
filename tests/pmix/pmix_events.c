/*
 * pmix_events: a PMIx program that checks events, queries and logging as
 * the Standard describes them, through libpmix and a real gateway.
 *
 *   pmix_events api    (-n 4) registration callbacks, notify between ranks
 *                      (namespace and custom ranges), handler order and
 *                      chaining, deregistration, bad arguments, queries
 *                      checked against the job, PMIx_Log to pmigate's
 *                      stdout, stderr and syslog
 *   pmix_events abort  (-n 4) rank 3 calls PMIx_Abort; the others' handlers
 *                      must see PMIX_ERR_PROC_ABORTED from rank 3
 *   pmix_events kill   (-n 4) rank 3 dies (SIGKILL) before finalize; the
 *                      others must see PMIX_ERR_PROC_TERM_WO_SYNC from it
 *   pmix_events abort_sigterm, kill_sigterm: the same, but SIGTERM (the
 *                      gateway's teardown) keeps its default action
 *   pmix_events watch  (-n 3, then a PMI-1 or PMI-2 rank 3 that aborts:
 *                      tests/pmix/pmi_aborter.c) the PMIx ranks must see
 *                      PMIX_ERR_PROC_ABORTED from rank 3
 *   pmix_events spawn_end (-n 2) rank 0 spawns /bin/sh jobs that exit 0 and
 *                      3; with PMIX_NOTIFY_COMPLETION every rank hears
 *                      PMIX_EVENT_JOB_END with the job's status and nspace
 *
 * Prints "PASS <check> (...)" / "FAIL <check>: ..." lines (rank-prefixed)
 * and "EVENT ..." / "JOBEND ..." lines for tests/pmix/pmix_events.sh to
 * count.  Every wait is bounded, so a missing event is a FAIL line, never
 * a hang.  Uses nothing but <pmix.h>.
 */
#include <pmix.h>

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { WAIT_SECONDS = 20 };

#define CODE_HELLO  (-3101) /* user event codes: below PMIX_EXTERNAL_ERR_BASE (-3000) */
#define CODE_CUSTOM (-3102)
#define CODE_CHAIN  (-3103)
#define CODE_AFTER_DEREG (-3104)

static pmix_proc_t me;
static int failures;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

static void report(int ok, const char *check, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void report(int ok, const char *check, const char *fmt, ...)
{
    char what[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (!ok)
        failures++;
    printf("%s %s (rank %u)%s%s\n", ok ? "PASS" : "FAIL", check, me.rank, ok ? " " : ": ", what);
    fflush(stdout);
}

/* Waits until *flag is set (by a callback); false after WAIT_SECONDS. */
static int wait_flag(volatile int *flag)
{
    struct timespec until;
    int ok;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_SECONDS;
    pthread_mutex_lock(&lock);
    while (!*flag)
        if (pthread_cond_timedwait(&cond, &lock, &until) != 0)
            break;
    ok = *flag;
    pthread_mutex_unlock(&lock);
    return ok;
}

static void set_flag(volatile int *flag)
{
    pthread_mutex_lock(&lock);
    *flag = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void fence(void)
{
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);

    if (rc != PMIX_SUCCESS)
        report(0, "fence", "%s", PMIx_Error_string(rc));
}

/* ---- what a handler saw ---------------------------------------------------- */

typedef struct seen {
    volatile int count;
    pmix_status_t status;
    pmix_proc_t source;
    char payload[64];
    pmix_proc_t affected;
    int have_affected;
    int exit_code;
    char text[128];
} seen_t;

static void seen_record(seen_t *s, pmix_status_t status, const pmix_proc_t *source,
                        const pmix_info_t info[], size_t ninfo)
{
    pthread_mutex_lock(&lock);
    s->status = status;
    if (source != NULL)
        s->source = *source;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], "pg.payload") && info[i].value.type == PMIX_STRING)
            snprintf(s->payload, sizeof(s->payload), "%s", info[i].value.data.string);
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
                 info[i].value.type == PMIX_PROC) {
            s->affected = *info[i].value.data.proc;
            s->have_affected = 1;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT)
            s->exit_code = info[i].value.data.integer;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_TEXT_MESSAGE) &&
                 info[i].value.type == PMIX_STRING)
            snprintf(s->text, sizeof(s->text), "%s", info[i].value.data.string);
    }
    s->count++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

/* Waits for the handler's first call. */
static int seen_wait(seen_t *s)
{
    struct timespec until;
    int ok;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_SECONDS;
    pthread_mutex_lock(&lock);
    while (s->count == 0)
        if (pthread_cond_timedwait(&cond, &lock, &until) != 0)
            break;
    ok = s->count > 0;
    pthread_mutex_unlock(&lock);
    return ok;
}

static seen_t seen_hello, seen_custom, seen_after_dereg, seen_default, seen_lost;

/* One handler per record; each passes the event on (PMIX_SUCCESS) so later
 * handlers still run. */
#define RECORDING_HANDLER(name, rec)                                                         \
    static void name(size_t id, pmix_status_t status, const pmix_proc_t *source,              \
                     pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults, \
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)               \
    {                                                                                         \
        (void)id;                                                                             \
        (void)results;                                                                        \
        (void)nresults;                                                                       \
        seen_record(&(rec), status, source, info, ninfo);                                    \
        if (cbfunc != NULL)                                                                   \
            cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);                                \
    }

RECORDING_HANDLER(on_hello, seen_hello)
RECORDING_HANDLER(on_custom, seen_custom)
RECORDING_HANDLER(on_after_dereg, seen_after_dereg)
RECORDING_HANDLER(on_default, seen_default)
RECORDING_HANDLER(on_lost, seen_lost)

/* ---- registration --------------------------------------------------------- */

typedef struct reg {
    volatile int done;
    pmix_status_t status;
    size_t id;
} reg_t;

static void reg_cb(pmix_status_t status, size_t refid, void *cbdata)
{
    reg_t *r = cbdata;

    r->status = status;
    r->id = refid;
    set_flag(&r->done);
}

/* Registers through the callback form and waits for its callback. */
static size_t register_wait(const char *check, pmix_status_t *codes, size_t ncodes,
                            pmix_info_t *info, size_t ninfo, pmix_notification_fn_t fn)
{
    reg_t r = { 0, PMIX_ERROR, 0 };
    pmix_status_t rc = PMIx_Register_event_handler(codes, ncodes, info, ninfo, fn, reg_cb, &r);

    if (rc != PMIX_SUCCESS) {
        report(0, check, "register returned %s", PMIx_Error_string(rc));
        return 0;
    }
    if (!wait_flag(&r.done)) {
        report(0, check, "registration callback never came");
        return 0;
    }
    report(r.status == PMIX_SUCCESS, check, "callback status %s, id %zu",
           PMIx_Error_string(r.status), r.id);
    return r.id;
}

/* ---- chaining -------------------------------------------------------------- */

static char order[16];
static volatile int chain_done;
static int chain_saw_result;

static void order_add(char c)
{
    size_t n = strlen(order);

    if (n + 1 < sizeof(order))
        order[n] = c;
}

static void result_released(pmix_status_t status, void *cbdata)
{
    (void)status;
    PMIX_INFO_FREE(cbdata, 1);
}

/* Prepended: runs first, passes a result on. */
static void chain_b(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    pmix_info_t *mine;

    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    order_add('B');
    PMIX_INFO_CREATE(mine, 1);
    PMIX_INFO_LOAD(&mine[0], "pg.from_b", "b-was-here", PMIX_STRING);
    cbfunc(PMIX_SUCCESS, mine, 1, result_released, mine, cbdata);
}

/* Appended: must see B's result; ends the chain. */
static void chain_a(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)status, (void)source, (void)info, (void)ninfo;
    order_add('A');
    for (size_t i = 0; i < nresults; i++)
        if (PMIX_CHECK_KEY(&results[i], "pg.from_b") && results[i].value.type == PMIX_STRING &&
            strcmp(results[i].value.data.string, "b-was-here") == 0)
            chain_saw_result = 1;
    cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    set_flag(&chain_done);
}

/* Registered LAST: must never run, A completed the event. */
static void chain_c(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    order_add('C');
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void check_chain(void)
{
    pmix_status_t code = CODE_CHAIN;
    pmix_info_t info[2];
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_NAME, "A", PMIX_STRING);
    register_wait("register_a", &code, 1, info, 1, chain_a);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_LAST, NULL, PMIX_BOOL);
    register_wait("register_last", &code, 1, info, 1, chain_c);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_PREPEND, NULL, PMIX_BOOL);
    register_wait("register_prepend", &code, 1, info, 1, chain_b);
    PMIX_INFO_DESTRUCT(&info[0]);
    rc = PMIx_Notify_event(CODE_CHAIN, NULL, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL);
    report(rc == PMIX_SUCCESS, "notify_proc_local", "%s", PMIx_Error_string(rc));
    if (!wait_flag(&chain_done)) {
        report(0, "chain_order", "the chain never reached its last handler (order %s)", order);
        return;
    }
    usleep(200 * 1000); /* C would run right after A's completion, if wrongly */
    report(strcmp(order, "BA") == 0, "chain_order", "expected BA (prepend first, last never "
                                                    "after ACTION_COMPLETE), got %s", order);
    report(chain_saw_result, "chain_results", "the second handler %s the first one's result",
           chain_saw_result ? "saw" : "did not see");
}

/* ---- notify between ranks ------------------------------------------------ */

static void check_notify_namespace(void)
{
    pmix_info_t info[1];
    pmix_status_t rc;

    fence(); /* every rank has registered */
    if (me.rank == 0) {
        PMIX_INFO_LOAD(&info[0], "pg.payload", "hello-from-0", PMIX_STRING);
        rc = PMIx_Notify_event(CODE_HELLO, NULL, PMIX_RANGE_NAMESPACE, info, 1, NULL, NULL);
        PMIX_INFO_DESTRUCT(&info[0]);
        report(rc == PMIX_SUCCESS, "notify_namespace", "%s", PMIx_Error_string(rc));
    }
    if (!seen_wait(&seen_hello)) {
        report(0, "notify_reaches_peer", "no CODE_HELLO event in %d s", WAIT_SECONDS);
        return;
    }
    report(seen_hello.status == CODE_HELLO && seen_hello.source.rank == 0 &&
               PMIX_CHECK_NSPACE(seen_hello.source.nspace, me.nspace) &&
               strcmp(seen_hello.payload, "hello-from-0") == 0,
           "notify_reaches_peer", "status %d source %s:%u payload '%s'", seen_hello.status,
           seen_hello.source.nspace, seen_hello.source.rank, seen_hello.payload);
}

static void check_notify_custom(void)
{
    pmix_proc_t target;
    pmix_data_array_t darray;
    pmix_info_t info[1];
    pmix_status_t rc;

    fence();
    if (me.rank == 1) {
        PMIX_LOAD_PROCID(&target, me.nspace, 2);
        darray.type = PMIX_PROC;
        darray.size = 1;
        darray.array = &target;
        PMIX_INFO_LOAD(&info[0], PMIX_EVENT_CUSTOM_RANGE, &darray, PMIX_DATA_ARRAY);
        rc = PMIx_Notify_event(CODE_CUSTOM, NULL, PMIX_RANGE_CUSTOM, info, 1, NULL, NULL);
        PMIX_INFO_DESTRUCT(&info[0]);
        report(rc == PMIX_SUCCESS, "notify_custom", "%s", PMIx_Error_string(rc));
    }
    if (me.rank == 2) {
        int ok = seen_wait(&seen_custom);
        report(ok && seen_custom.source.rank == 1, "custom_range_target_gets_it",
               "%s, source rank %u", ok ? "got it" : "nothing", seen_custom.source.rank);
    }
    fence(); /* a wrongly sent event reaches its handler before this returns */
    if (me.rank != 2)
        report(seen_custom.count == 0, "custom_range_others_do_not",
               "%d CODE_CUSTOM events seen", seen_custom.count);
}

static volatile int dereg_done;

static void dereg_cb(pmix_status_t status, void *cbdata)
{
    *(pmix_status_t *)cbdata = status;
    set_flag(&dereg_done);
}

static void check_deregister(size_t id)
{
    pmix_status_t rc, cbstatus = PMIX_ERROR;

    if (me.rank == 3) {
        rc = PMIx_Deregister_event_handler(id, dereg_cb, &cbstatus);
        if (rc == PMIX_SUCCESS)
            (void)wait_flag(&dereg_done);
        report(rc == PMIX_SUCCESS && dereg_done && cbstatus == PMIX_SUCCESS,
               "deregister_callback", "returned %s, callback %s", PMIx_Error_string(rc),
               PMIx_Error_string(cbstatus));
    }
    fence();
    if (me.rank == 0) {
        rc = PMIx_Notify_event(CODE_AFTER_DEREG, NULL, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
        report(rc == PMIX_SUCCESS, "notify_after_deregister", "%s", PMIx_Error_string(rc));
    }
    if (me.rank == 1 || me.rank == 2)
        report(seen_wait(&seen_after_dereg), "registered_peer_gets_it", "count %d",
               seen_after_dereg.count);
    fence();
    if (me.rank == 3)
        report(seen_after_dereg.count == 0, "deregistered_handler_silent", "%d calls",
               seen_after_dereg.count);
}

static void check_bad_input(void)
{
    pmix_status_t code = CODE_HELLO, rc;
    pmix_query_t q;

    rc = PMIx_Deregister_event_handler(987654, NULL, NULL);
    report(rc == PMIX_ERR_BAD_PARAM, "deregister_unknown_id", "%s", PMIx_Error_string(rc));
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, NULL, NULL, NULL);
    report(rc == PMIX_ERR_BAD_PARAM, "register_null_handler", "%s", PMIx_Error_string(rc));
    rc = PMIx_Notify_event(CODE_HELLO, NULL, PMIX_RANGE_CUSTOM, NULL, 0, NULL, NULL);
    report(rc == PMIX_ERR_BAD_PARAM, "notify_custom_without_targets", "%s",
           PMIx_Error_string(rc));
    rc = PMIx_Notify_event(CODE_HELLO, NULL, (pmix_data_range_t)99, NULL, 0, NULL, NULL);
    report(rc == PMIX_ERR_BAD_PARAM, "notify_bad_range", "%s", PMIx_Error_string(rc));
    rc = PMIx_Query_info(NULL, 0, NULL, NULL);
    report(rc == PMIX_ERR_BAD_PARAM, "query_null", "%s", PMIx_Error_string(rc));
    PMIX_QUERY_CONSTRUCT(&q);
    rc = PMIx_Query_info_nb(&q, 1, NULL, NULL);
    report(rc == PMIX_ERR_BAD_PARAM, "query_nb_no_keys_no_callback", "%s",
           PMIx_Error_string(rc));
    rc = PMIx_Log(NULL, 0, NULL, 0);
    report(rc == PMIX_ERR_BAD_PARAM, "log_nothing", "%s", PMIx_Error_string(rc));
}

/* ---- queries ---------------------------------------------------------------- */

static const pmix_info_t *find(const pmix_info_t *info, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (PMIX_CHECK_KEY(&info[i], key))
            return &info[i];
    return NULL;
}

/* One query of `keys`, qualified by my nspace when `qualify`. */
static pmix_status_t query(char **keys, int qualify, pmix_info_t **res, size_t *nres)
{
    pmix_query_t *q;
    pmix_status_t rc;

    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_COPY(q->keys, keys);
    if (qualify) {
        PMIX_QUERY_QUALIFIERS_CREATE(q, 1);
        PMIX_INFO_LOAD(&q->qualifiers[0], PMIX_NSPACE, me.nspace, PMIX_STRING);
    }
    rc = PMIx_Query_info(q, 1, res, nres);
    PMIX_QUERY_FREE(q, 1);
    return rc;
}

static void check_proc_table(const char *key, const pmix_info_t *res, size_t nres,
                             const char *host)
{
    const pmix_info_t *t = find(res, nres, key);
    const pmix_proc_info_t *rows;
    size_t n, good = 0;

    if (t == NULL || t->value.type != PMIX_DATA_ARRAY || t->value.data.darray == NULL ||
        t->value.data.darray->type != PMIX_PROC_INFO) {
        report(0, key, "no pmix_proc_info_t array in the answer");
        return;
    }
    rows = t->value.data.darray->array;
    n = t->value.data.darray->size;
    for (size_t i = 0; i < n; i++) {
        const char *exe = rows[i].executable_name;
        int mine = rows[i].proc.rank == me.rank;

        if (rows[i].proc.rank == i && PMIX_CHECK_NSPACE(rows[i].proc.nspace, me.nspace) &&
            rows[i].hostname != NULL && host != NULL && strcmp(rows[i].hostname, host) == 0 &&
            exe != NULL && strstr(exe, "pmix_events") != NULL && rows[i].pid > 0 &&
            (!mine || (rows[i].pid == getpid() && rows[i].state == PMIX_PROC_STATE_CONNECTED)))
            good++;
        else
            report(0, key, "row %zu: rank %u host %s exe %s pid %d state %d", i,
                   rows[i].proc.rank, rows[i].hostname ? rows[i].hostname : "(null)",
                   exe ? exe : "(null)", (int)rows[i].pid, (int)rows[i].state);
    }
    report(n == 4 && good == 4, key, "%zu rows, %zu as the job is", n, good);
}

static void check_queries(void)
{
    char *ns_keys[] = { PMIX_QUERY_NAMESPACES, PMIX_JOB_SIZE, PMIX_QUERY_PROC_TABLE,
                        PMIX_QUERY_LOCAL_PROC_TABLE, PMIX_QUERY_SPAWN_SUPPORT,
                        PMIX_QUERY_NUM_PSETS, PMIX_LOCAL_PEERS, NULL };
    char *unknown[] = { "pg.no.such.query", NULL };
    char *mixed[] = { PMIX_JOB_SIZE, "pg.no.such.query", NULL };
    pmix_info_t *res = NULL;
    pmix_value_t *host = NULL;
    const pmix_info_t *x;
    size_t nres = 0;
    pmix_status_t rc;

    (void)PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &host);
    rc = query(ns_keys, 1, &res, &nres);
    report(rc == PMIX_SUCCESS && nres == 7, "query_status", "%s, %zu results",
           PMIx_Error_string(rc), nres);
    x = find(res, nres, PMIX_QUERY_NAMESPACES);
    report(x != NULL && x->value.type == PMIX_STRING && strstr(x->value.data.string, me.nspace),
           "query_namespaces", "'%s'", x != NULL && x->value.type == PMIX_STRING
                                           ? x->value.data.string : "(none)");
    x = find(res, nres, PMIX_JOB_SIZE);
    report(x != NULL && x->value.type == PMIX_UINT32 && x->value.data.uint32 == 4,
           "query_job_size", "%u", x != NULL ? x->value.data.uint32 : 0);
    check_proc_table(PMIX_QUERY_PROC_TABLE, res, nres, host ? host->data.string : NULL);
    check_proc_table(PMIX_QUERY_LOCAL_PROC_TABLE, res, nres, host ? host->data.string : NULL);
    /* pmigate run spawns: the attributes it honours are listed */
    x = find(res, nres, PMIX_QUERY_SPAWN_SUPPORT);
    report(x != NULL && x->value.type == PMIX_STRING && strstr(x->value.data.string, PMIX_WDIR) &&
               strstr(x->value.data.string, PMIX_SET_ENVAR) &&
               strstr(x->value.data.string, PMIX_NOTIFY_COMPLETION),
           "query_spawn_support", "'%s'",
           x != NULL && x->value.type == PMIX_STRING ? x->value.data.string : "missing");
    x = find(res, nres, PMIX_LOCAL_PEERS);
    report(x != NULL && x->value.type == PMIX_STRING &&
               strcmp(x->value.data.string, "0,1,2,3") == 0,
           "query_local_peers", "'%s'", x != NULL && x->value.type == PMIX_STRING
                                            ? x->value.data.string : "(none)");
    PMIX_INFO_FREE(res, nres);
    if (host != NULL)
        PMIX_VALUE_RELEASE(host);

    rc = query(unknown, 0, &res, &nres);
    report(rc == PMIX_ERR_NOT_FOUND && nres == 0, "query_unknown_key", "%s, %zu results",
           PMIx_Error_string(rc), nres);
    PMIX_INFO_FREE(res, nres);
    rc = query(mixed, 0, &res, &nres);
    report(rc == PMIX_ERR_PARTIAL_SUCCESS && nres == 1 && find(res, nres, PMIX_JOB_SIZE),
           "query_partial_success", "%s, %zu results", PMIx_Error_string(rc), nres);
    PMIX_INFO_FREE(res, nres);
}

static volatile int query_nb_done;
static size_t query_nb_n;
static pmix_status_t query_nb_status = PMIX_ERROR;

static void query_nb_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                        pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void)cbdata;
    query_nb_status = status;
    query_nb_n = find(info, ninfo, PMIX_QUERY_NAMESPACES) != NULL ? ninfo : 0;
    if (release_fn != NULL)
        release_fn(release_cbdata);
    set_flag(&query_nb_done);
}

static void check_query_nb(void)
{
    pmix_query_t *q;
    pmix_status_t rc;

    PMIX_QUERY_CREATE(q, 1);
    (void)PMIx_Argv_append_nosize(&q->keys, PMIX_QUERY_NAMESPACES);
    rc = PMIx_Query_info_nb(q, 1, query_nb_cb, NULL);
    if (rc == PMIX_SUCCESS)
        (void)wait_flag(&query_nb_done);
    report(rc == PMIX_SUCCESS && query_nb_done && query_nb_status == PMIX_SUCCESS &&
               query_nb_n == 1,
           "query_nb_callback", "returned %s, callback %s with %zu results",
           PMIx_Error_string(rc), PMIx_Error_string(query_nb_status), query_nb_n);
    PMIX_QUERY_FREE(q, 1);
}

/* ---- log ------------------------------------------------------------------- */

static volatile int log_nb_done;
static pmix_status_t log_nb_status = PMIX_ERROR;

static void log_cb(pmix_status_t status, void *cbdata)
{
    (void)cbdata;
    log_nb_status = status;
    set_flag(&log_nb_done);
}

static pmix_status_t log_one(const char *channel, const char *text, const pmix_info_t *dirs,
                             size_t ndirs)
{
    pmix_info_t data;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&data, channel, text, PMIX_STRING);
    rc = PMIx_Log(&data, 1, dirs, ndirs);
    PMIX_INFO_DESTRUCT(&data);
    return rc;
}

/* stderr gets "hello from log R" three times (alone, beside an unserved
 * channel, and as the one channel PMIX_LOG_ONCE picks); stdout gets "to
 * stdout from log R" once (ONCE skipped it) and one stamped line; a line
 * with a newline stays one escaped line. */
static void check_log(void)
{
    char text[64], out[64], stamped[64];
    pmix_info_t data[2], dirs[1];
    pmix_status_t rc;

    snprintf(text, sizeof(text), "hello from log %u", me.rank);
    snprintf(out, sizeof(out), "to stdout from log %u", me.rank);
    snprintf(stamped, sizeof(stamped), "stamped from log %u", me.rank);
    rc = log_one(PMIX_LOG_STDERR, text, NULL, 0);
    report(rc == PMIX_SUCCESS, "log_stderr", "%s", PMIx_Error_string(rc));
    rc = log_one(PMIX_LOG_STDOUT, out, NULL, 0);
    report(rc == PMIX_SUCCESS, "log_stdout", "%s", PMIx_Error_string(rc));
    rc = log_one(PMIX_LOG_STDOUT, "two\nlines", NULL, 0);
    report(rc == PMIX_SUCCESS, "log_stdout_escaped", "%s", PMIx_Error_string(rc));
    PMIX_INFO_LOAD(&dirs[0], PMIX_LOG_GENERATE_TIMESTAMP, NULL, PMIX_BOOL);
    rc = log_one(PMIX_LOG_STDOUT, stamped, dirs, 1);
    report(rc == PMIX_SUCCESS, "log_stdout_stamped", "%s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&dirs[0]);
    rc = log_one(PMIX_LOG_SYSLOG, "pmix_events to syslog", NULL, 0);
    report(rc == PMIX_SUCCESS, "log_syslog", "%s", PMIx_Error_string(rc));
    rc = log_one(PMIX_LOG_EMAIL, "to nobody", NULL, 0);
    report(rc == PMIX_ERR_NOT_SUPPORTED, "log_email_not_served", "%s", PMIx_Error_string(rc));
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDERR, text, PMIX_STRING);
    PMIX_INFO_LOAD(&data[1], PMIX_LOG_EMAIL, "to nobody", PMIX_STRING);
    rc = PMIx_Log(data, 2, NULL, 0);
    report(rc == PMIX_ERR_PARTIAL_SUCCESS, "log_partial", "%s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&data[1]);
    PMIX_INFO_LOAD(&data[1], PMIX_LOG_STDOUT, out, PMIX_STRING);
    PMIX_INFO_LOAD(&dirs[0], PMIX_LOG_ONCE, NULL, PMIX_BOOL);
    rc = PMIx_Log_nb(data, 2, dirs, 1, log_cb, NULL);
    if (rc == PMIX_SUCCESS)
        (void)wait_flag(&log_nb_done);
    report(rc == PMIX_SUCCESS && log_nb_done && log_nb_status == PMIX_SUCCESS,
           "log_nb_once", "returned %s, callback %s", PMIx_Error_string(rc),
           PMIx_Error_string(log_nb_status));
    PMIX_INFO_DESTRUCT(&data[0]);
    PMIX_INFO_DESTRUCT(&data[1]);
    PMIX_INFO_DESTRUCT(&dirs[0]);
}

/* ---- modes ------------------------------------------------------------------ */

static int mode_api(void)
{
    pmix_status_t hello = CODE_HELLO, custom = CODE_CUSTOM, after = CODE_AFTER_DEREG;
    pmix_status_t lost = PMIX_ERR_LOST_CONNECTION, rc;
    size_t dereg_id;

    register_wait("register_callback", &hello, 1, NULL, 0, on_hello);
    register_wait("register_custom", &custom, 1, NULL, 0, on_custom);
    dereg_id = register_wait("register_to_drop", &after, 1, NULL, 0, on_after_dereg);
    rc = PMIx_Register_event_handler(&lost, 1, NULL, 0, on_lost, NULL, NULL);
    report(rc > 0, "register_blocking_returns_id", "%d", rc);
    check_bad_input();
    if (me.rank == 0)
        check_chain();
    check_notify_namespace();
    check_notify_custom();
    check_deregister(dereg_id);
    check_queries();
    check_query_nb();
    check_log();
    fence();
    rc = PMIx_Finalize(NULL, 0);
    report(rc == PMIX_SUCCESS && seen_lost.count == 0, "finalize_is_no_lost_connection",
           "%s, %d lost-connection events", PMIx_Error_string(rc), seen_lost.count);
    return failures;
}

/* Ranks 0-2 wait for the event about rank 3 and say what they saw. */
static int watch_rank3(pmix_status_t want)
{
    if (me.rank == 3)
        return 0;
    if (!seen_wait(&seen_default)) {
        report(0, "peer_event", "no event about rank 3 in %d s", WAIT_SECONDS);
        return 1;
    }
    printf("EVENT rank %u got %s source %u affected %d:%u exit %d text '%s'\n", me.rank,
           PMIx_Error_string(seen_default.status), seen_default.source.rank,
           seen_default.have_affected, seen_default.affected.rank, seen_default.exit_code,
           seen_default.text);
    fflush(stdout);
    report(seen_default.status == want && seen_default.source.rank == 3 &&
               seen_default.have_affected && seen_default.affected.rank == 3,
           "peer_event", "%s from rank %u", PMIx_Error_string(seen_default.status),
           seen_default.source.rank);
    return failures;
}

/* keep_sigterm: the gateway's SIGTERM keeps its default action, as in
 * most programs; the gateway must leave the handlers time to run. */
static int mode_peer_dies(int by_abort, int keep_sigterm)
{
    if (!keep_sigterm)
        signal(SIGTERM, SIG_IGN);
    register_wait("register_default", NULL, 0, NULL, 0, on_default);
    fence();
    if (me.rank == 3) {
        if (by_abort)
            PMIx_Abort(7, "rank 3 gives up", NULL, 0);
        else
            raise(SIGKILL);
        sleep(WAIT_SECONDS); /* the gateway ends the job */
        return 1;
    }
    return watch_rank3(by_abort ? PMIX_ERR_PROC_ABORTED : PMIX_ERR_PROC_TERM_WO_SYNC);
}

/* ---- a spawned job's end ------------------------------------------------------ */

typedef struct job_end {
    char nspace[PMIX_MAX_NSLEN + 1];
    pmix_status_t status;
    int affected_wildcard; /* PMIX_EVENT_AFFECTED_PROC is the job (rank WILDCARD) */
    int stamped;           /* PMIX_EVENT_TIMESTAMP present */
    int exit_code;         /* the first failed process's, -1: none given */
    int failed_rank;       /* its PMIX_PROCID rank, -1: none given */
} job_end_t;

static job_end_t ends[8];
static volatile int nends;

static void on_job_end(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    job_end_t e = { "", PMIX_ERROR, 0, 0, -1, -1 };

    (void)id, (void)source, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_value_t *v = &info[i].value;

        if (PMIX_CHECK_KEY(&info[i], PMIX_NSPACE) && v->type == PMIX_STRING)
            snprintf(e.nspace, sizeof(e.nspace), "%s", v->data.string);
        else if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_TERM_STATUS) && v->type == PMIX_STATUS)
            e.status = v->data.status;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && v->type == PMIX_PROC)
            e.affected_wildcard = v->data.proc->rank == PMIX_RANK_WILDCARD &&
                                  PMIX_CHECK_NSPACE(v->data.proc->nspace, e.nspace[0] ? e.nspace
                                                                : v->data.proc->nspace);
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_TIMESTAMP) && v->type == PMIX_TIME)
            e.stamped = v->data.time > 0;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && v->type == PMIX_INT)
            e.exit_code = v->data.integer;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_PROCID) && v->type == PMIX_PROC)
            e.failed_rank = (int)v->data.proc->rank;
    }
    pthread_mutex_lock(&lock);
    if (status == PMIX_EVENT_JOB_END && nends < (int)(sizeof(ends) / sizeof(ends[0])))
        ends[nends++] = e;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* The recorded end of job `nspace`, waiting for it up to `seconds`. */
static const job_end_t *wait_end(const char *nspace, int seconds)
{
    struct timespec until;
    const job_end_t *found = NULL;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(&lock);
    for (;;) {
        for (int i = 0; i < nends && found == NULL; i++)
            if (strcmp(ends[i].nspace, nspace) == 0)
                found = &ends[i];
        if (found != NULL || pthread_cond_timedwait(&cond, &lock, &until) != 0)
            break;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

/* Spawns one /bin/sh that exits with `code`; notify: with
 * PMIX_NOTIFY_COMPLETION in the job info. */
static pmix_status_t spawn_sh(int code, int notify, pmix_nspace_t ns)
{
    char script[32], *argv[] = { "sh", "-c", script, NULL };
    pmix_app_t app;
    pmix_info_t jinfo;
    pmix_status_t rc;

    snprintf(script, sizeof(script), "exit %d", code);
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = "/bin/sh";
    app.argv = argv;
    app.maxprocs = 1;
    PMIX_INFO_LOAD(&jinfo, PMIX_NOTIFY_COMPLETION, NULL, PMIX_BOOL);
    rc = PMIx_Spawn(notify ? &jinfo : NULL, notify ? 1 : 0, &app, 1, ns);
    PMIX_INFO_DESTRUCT(&jinfo);
    return rc;
}

static void print_end(const job_end_t *e)
{
    printf("JOBEND rank %u nspace %s status %d affected-job %d stamped %d exit %d failed %d\n",
           me.rank, e->nspace, e->status, e->affected_wildcard, e->stamped, e->exit_code,
           e->failed_rank);
    fflush(stdout);
}

/* Rank 0 spawns a job that exits 0 without asking to be told (no event
 * may come for it), one that exits 0 with PMIX_NOTIFY_COMPLETION (status
 * 0), then one that exits 3 (status 3, the failed process named; the job
 * then ends with 3).  Every rank of this job hears of the two it asked
 * for; SIGTERM (the teardown after the failure) is ignored meanwhile. */
static int mode_spawn_end(void)
{
    pmix_status_t code = PMIX_EVENT_JOB_END, rc;
    pmix_nspace_t quiet, ok, bad;
    const job_end_t *e;

    signal(SIGTERM, SIG_IGN);
    register_wait("register_job_end", &code, 1, NULL, 0, on_job_end);
    fence();
    if (me.rank != 0) {
        struct timespec until;

        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += WAIT_SECONDS;
        pthread_mutex_lock(&lock);
        while (nends < 2 && pthread_cond_timedwait(&cond, &lock, &until) == 0)
            ;
        pthread_mutex_unlock(&lock);
        for (int i = 0; i < nends; i++)
            print_end(&ends[i]);
        report(nends == 2, "peer_hears_both_ends", "%d JOB_END events", nends);
        return failures;
    }
    rc = spawn_sh(0, 0, quiet);
    report(rc == PMIX_SUCCESS, "spawn_quiet", "%s", PMIx_Error_string(rc));
    rc = spawn_sh(0, 1, ok);
    report(rc == PMIX_SUCCESS, "spawn_ok", "%s", PMIx_Error_string(rc));
    e = rc == PMIX_SUCCESS ? wait_end(ok, WAIT_SECONDS) : NULL;
    report(e != NULL && e->status == 0, "end_of_ok_job", "%s", e ? "seen" : "never came");
    if (e != NULL)
        print_end(e);
    rc = spawn_sh(3, 1, bad);
    report(rc == PMIX_SUCCESS, "spawn_bad", "%s", PMIx_Error_string(rc));
    e = rc == PMIX_SUCCESS ? wait_end(bad, WAIT_SECONDS) : NULL;
    report(e != NULL && e->status == 3, "end_of_bad_job", "%s", e ? "seen" : "never came");
    if (e != NULL)
        print_end(e);
    /* the quiet job ended before the ok one was even spawned */
    report(quiet[0] != '\0' && wait_end(quiet, 0) == NULL, "no_end_unasked", "%d events", nends);
    return failures;
}

/* Ranks 0-2 of a mixed job whose rank 3 (PMI-1 or PMI-2) aborts it.  The
 * fence collects data, as the PMI-1 barrier and the PMI-2 fence do (one
 * job, one kind of fence). */
static int mode_watch(void)
{
    pmix_info_t collect;
    pmix_status_t rc;

    signal(SIGTERM, SIG_IGN);
    register_wait("register_default", NULL, 0, NULL, 0, on_default);
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (rc != PMIX_SUCCESS)
        report(0, "fence", "%s", PMIx_Error_string(rc));
    return watch_rank3(PMIX_ERR_PROC_ABORTED);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "api";
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);

    if (rc != PMIX_SUCCESS) {
        printf("FAIL init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (strcmp(mode, "abort") == 0 || strcmp(mode, "abort_sigterm") == 0)
        return mode_peer_dies(1, strcmp(mode, "abort_sigterm") == 0);
    if (strcmp(mode, "kill") == 0 || strcmp(mode, "kill_sigterm") == 0)
        return mode_peer_dies(0, strcmp(mode, "kill_sigterm") == 0);
    if (strcmp(mode, "watch") == 0)
        return mode_watch();
    if (strcmp(mode, "spawn_end") == 0)
        return mode_spawn_end();
    return mode_api();
}

/*
 * pmix_conform: the calls OpenPMIx's own example programs make, the way
 * they make them, through the real libpmix and gateway
 * (tests/pmix/pmix_conform.sh).  Written for pmigate (the examples are not
 * ours to copy); each scenario is a call that once failed under pmigate:
 *
 *   abi      -- before PMIx_Init: the ABI-version query; after it, the same
 *               keys mixed with one the gateway answers (cause 3)
 * and at 4 ranks:
 *   print    -- printing query results the way the examples do (cause 1)
 *   deregister -- deregistering a handler never registered, with a
 *               callback (cause 2)
 *   invite   -- an invite whose leader lists itself, the joiners released
 *               by PMIX_GROUP_CONSTRUCT_COMPLETE, a fence over the group's
 *               name (cause 4)
 *   group-info -- what members share at construct (PMIX_GROUP_INFO,
 *               PMIX_GROUP_LOCAL_CID) read back by PMIx_Get after the group
 *               is gone (cause 5)
 *   groups-query -- the groups queries (cause 8)
 *   checkpoint -- preemptible and checkpoint declarations, queried, and a
 *               checkpoint delivered as each rank asked, a signal or an
 *               event (cause 6)
 *   watches  -- heartbeat and file watches that alert the job (cause 7)
 *   log      -- PMIx_Log of a long text and of one ending in a newline
 *               (cause 8, checked by the script)
 *   monitor-kill  -- rank 1 asks to be watched and stops beating: the job
 *               is killed (the script checks), rank 0 hears the alert first
 *   file-kill     -- the same with a file rank 1 stops writing
 *   listen   -- a PMIx rank of a mixed job that waits for the
 *               PMIX_MONITOR_HEARTBEAT_ALERT about another rank (--heartbeat)
 *
 * One line per check: "PASS <check> (rank R): ..." or "FAIL <check> ...".
 * Exit status: the number of failed checks on this rank.
 */
#include <pmix.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/pmix/pmix_check.h"

/* ---- events this rank heard ------------------------------------------------ */

enum { MAX_HEARD = 16 };

typedef struct heard {
    pmix_status_t code;
    pmix_rank_t source, affected;
    char group[PMIX_MAX_NSLEN + 1], id[64], file[256], ckpt[64];
} heard_t;

static pthread_mutex_t heard_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t heard_cond = PTHREAD_COND_INITIALIZER;
static heard_t heard[MAX_HEARD];
static int nheard;

static void copy_string(char *dst, size_t cap, const pmix_info_t *i)
{
    if (i->value.type == PMIX_STRING && i->value.data.string != NULL)
        snprintf(dst, cap, "%s", i->value.data.string);
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    heard_t h = { .code = status, .source = source != NULL ? source->rank : PMIX_RANK_UNDEF,
                  .affected = PMIX_RANK_UNDEF };

    (void)id, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID))
            copy_string(h.group, sizeof(h.group), &info[i]);
        else if (PMIX_CHECK_KEY(&info[i], PMIX_MONITOR_ID))
            copy_string(h.id, sizeof(h.id), &info[i]);
        else if (PMIX_CHECK_KEY(&info[i], PMIX_MONITOR_FILE))
            copy_string(h.file, sizeof(h.file), &info[i]);
        else if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_CTRL_CHECKPOINT))
            copy_string(h.ckpt, sizeof(h.ckpt), &info[i]);
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
                 info[i].value.type == PMIX_PROC && info[i].value.data.proc != NULL)
            h.affected = info[i].value.data.proc->rank;
    }
    pthread_mutex_lock(&heard_lock);
    if (nheard < MAX_HEARD)
        heard[nheard++] = h;
    pthread_cond_broadcast(&heard_cond);
    pthread_mutex_unlock(&heard_lock);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Waits up to `secs` for an event `code` (the first after index *from);
 * copies it to *out and returns 1, or 0 after the wait. */
static int wait_event(pmix_status_t code, int secs, int *from, heard_t *out)
{
    struct timespec until;
    int found = 0;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += secs;
    pthread_mutex_lock(&heard_lock);
    for (;;) {
        for (int i = *from; i < nheard && !found; i++)
            if (heard[i].code == code) {
                *out = heard[i];
                *from = i + 1;
                found = 1;
            }
        if (found || pthread_cond_timedwait(&heard_cond, &heard_lock, &until) != 0)
            break;
    }
    pthread_mutex_unlock(&heard_lock);
    return found;
}

static int events_seen(void)
{
    int n;

    pthread_mutex_lock(&heard_lock);
    n = nheard;
    pthread_mutex_unlock(&heard_lock);
    return n;
}

/* Events `code` about `affected` heard since index `from`. */
static int count_heard(pmix_status_t code, pmix_rank_t affected, int from)
{
    int n = 0;

    pthread_mutex_lock(&heard_lock);
    for (int i = from; i < nheard; i++)
        n += heard[i].code == code && heard[i].affected == affected;
    pthread_mutex_unlock(&heard_lock);
    return n;
}

static void register_for(pmix_status_t *codes, size_t ncodes, const char *check)
{
    pmix_status_t rc = PMIx_Register_event_handler(codes, ncodes, NULL, 0, on_event, NULL, NULL);

    if (rc < 0)
        report(0, check, "registration: %s", PMIx_Error_string(rc));
}

/* ---- cause 3: the ABI level, before and after init ------------------------- */

static void check_abi_query(void)
{
    pmix_query_t *q;
    pmix_info_t *res = NULL;
    size_t n = 0;
    pmix_status_t rc;

    PMIX_QUERY_CREATE(q, 2);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_STABLE_ABI_VERSION);
    PMIX_ARGV_APPEND(rc, q[1].keys, PMIX_QUERY_PROVISIONAL_ABI_VERSION);
    rc = PMIx_Query_info(q, 2, &res, &n);
    report(rc == PMIX_SUCCESS && n == 2 && res[0].value.type == PMIX_STRING &&
               strcmp(res[0].key, PMIX_QUERY_STABLE_ABI_VERSION) == 0 &&
               strcmp(res[0].value.data.string, "0.0") == 0 &&
               strcmp(res[1].key, PMIX_QUERY_PROVISIONAL_ABI_VERSION) == 0,
           "abi_query_before_init", "%s, %zu results", PMIx_Error_string(rc), n);
    PMIX_INFO_FREE(res, n);
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        report(0, "init", "%s", PMIx_Error_string(rc));
        exit(1);
    }
    PMIX_ARGV_APPEND(rc, q[1].keys, PMIX_QUERY_NAMESPACES);
    rc = PMIx_Query_info(q, 2, &res, &n);
    report(rc == PMIX_SUCCESS && n == 3, "abi_query_with_gateway_keys", "%s, %zu results",
           PMIx_Error_string(rc), n);
    PMIX_INFO_FREE(res, n);
    PMIX_QUERY_FREE(q, 2);
}

/* ---- cause 1: printing query results as the examples do --------------------- */

typedef struct printed {
    waiter_t w;
    int ok;
    size_t n; /* results printed */
} printed_t;

static void print_results_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                             pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    printed_t *p = cbdata;
    char *out;

    p->ok = 1;
    for (size_t i = 0; i < ninfo; i++) {
        /* hello.c's call: the value's address with the value's type */
        out = NULL;
        p->ok &= PMIx_Data_print(&out, NULL, &info[i].value, info[i].value.type) ==
                 PMIX_SUCCESS;
        free(out);
        /* the string itself, as OpenPMIx takes it */
        if (info[i].value.type == PMIX_STRING) {
            out = NULL;
            p->ok &= PMIx_Data_print(&out, "> ", info[i].value.data.string, PMIX_STRING) ==
                         PMIX_SUCCESS &&
                     out != NULL && strncmp(out, "> PMIX_STRING: \"", 16) == 0;
            free(out);
        }
    }
    p->n = ninfo;
    if (release_fn != NULL)
        release_fn(release_cbdata);
    waiter_post(&p->w, status);
}

static void check_print_query_results(void)
{
    pmix_query_t q;
    printed_t p;
    pmix_status_t rc;

    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_NUM_PSETS);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_PSET_NAMES);
    waiter_init(&p.w);
    p.ok = 0;
    p.n = 0;
    rc = PMIx_Query_info_nb(&q, 1, print_results_cb, &p);
    report(rc == PMIX_SUCCESS && waiter_wait(&p.w, 10) && p.ok && p.n == 2,
           "print_query_results", "%s, %zu results printed %s", PMIx_Error_string(rc), p.n,
           p.ok ? "fine" : "with an error");
    PMIX_QUERY_DESTRUCT(&q);
}

/* ---- cause 2: deregistering what was never registered ----------------------- */

static void check_deregister_unknown(void)
{
    waiter_t w;
    pmix_status_t rc;

    waiter_init(&w);
    rc = PMIx_Deregister_event_handler(4711, op_cb, &w);
    report(rc == PMIX_SUCCESS && waiter_wait(&w, 10) &&
               w.status == PMIX_ERR_BAD_PARAM,
           "deregister_unknown_calls_back", "%s, callback %s", PMIx_Error_string(rc),
           w.done ? PMIx_Error_string(w.status) : "never ran");
}

/* ---- cause 4: an invite whose leader lists itself ------------------------- */

static void join_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void)status, (void)info, (void)ninfo, (void)cbdata;
    if (release_fn != NULL)
        release_fn(release_cbdata);
}

/* The invitees accept from inside the handler, with the non-blocking join,
 * as OpenPMIx's asyncgroup does. */
static void on_invited(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    const char *grp = NULL;

    (void)id, (void)status, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID) && info[i].value.type == PMIX_STRING)
            grp = info[i].value.data.string;
    if (grp != NULL)
        (void)PMIx_Group_join_nb(grp, source, PMIX_GROUP_ACCEPT, NULL, 0, join_cb, NULL);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void check_invite_listing_leader(int size)
{
    pmix_status_t invited = PMIX_GROUP_INVITED, complete = PMIX_GROUP_CONSTRUCT_COMPLETE, rc;
    pmix_proc_t group;
    heard_t h;
    int from = events_seen();

    (void)PMIx_Register_event_handler(&invited, 1, NULL, 0, on_invited, NULL, NULL);
    register_for(&complete, 1, "invite_listing_leader");
    fence_all();
    if (me.rank == 0) {
        pmix_proc_t *all;
        pmix_info_t *results = NULL;
        size_t nresults = 0;

        PMIX_PROC_CREATE(all, (size_t)size);
        for (int r = 0; r < size; r++)
            PMIX_PROC_LOAD(&all[r], me.nspace, (pmix_rank_t)r);
        rc = PMIx_Group_invite("conform-inv", all, (size_t)size, NULL, 0, &results, &nresults);
        report(rc == PMIX_SUCCESS, "invite_listing_leader", "%s", PMIx_Error_string(rc));
        PMIX_INFO_FREE(results, nresults);
        PMIX_PROC_FREE(all, (size_t)size);
    } else {
        int got = wait_event(PMIX_GROUP_CONSTRUCT_COMPLETE, 20, &from, &h);
        report(got && h.source == 0 && strcmp(h.group, "conform-inv") == 0,
               "construct_complete_releases_joiner", "%s",
               got ? h.group : "no PMIX_GROUP_CONSTRUCT_COMPLETE within 20 s");
    }
    PMIX_LOAD_PROCID(&group, "conform-inv", PMIX_RANK_WILDCARD);
    rc = PMIx_Fence(&group, 1, NULL, 0);
    report(rc == PMIX_SUCCESS, "fence_over_group_name", "%s", PMIx_Error_string(rc));
    rc = PMIx_Group_destruct("conform-inv", NULL, 0);
    report(rc == PMIX_SUCCESS, "invited_group_destructs", "%s", PMIx_Error_string(rc));
}

/* ---- cause 5: what members share at construct -------------------------------- */

static pmix_status_t get_shared(pmix_rank_t r, const char *key, size_t cid, bool qualified,
                                pmix_value_t **v)
{
    pmix_proc_t p = proc_of(r);
    pmix_info_t q;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&q, PMIX_GROUP_CONTEXT_ID, &cid, PMIX_SIZE);
    PMIX_INFO_SET_QUALIFIER(&q);
    rc = PMIx_Get(&p, key, qualified ? &q : NULL, qualified ? 1 : 0, v);
    PMIX_INFO_DESTRUCT(&q);
    return rc;
}

static void check_group_info(int size)
{
    size_t lcid = 1000 + me.rank, cid = 0, nresults = 0;
    pmix_info_t dirs[3], *shared, *results = NULL;
    pmix_data_array_t da;
    pmix_proc_t all;
    char note[16];
    size_t ndirs = 0, nshared = 0;
    pmix_status_t rc;
    int ok = 1;

    snprintf(note, sizeof(note), "r%u", me.rank);
    PMIX_INFO_CREATE(shared, 2);
    PMIX_INFO_LOAD(&shared[nshared++], "conform.note", note, PMIX_STRING);
    /* even ranks give their local cid inside PMIX_GROUP_INFO (OpenPMIx's
     * group_lcl_cid), odd ranks as a directive of its own (the Standard) */
    if (me.rank % 2 == 0)
        PMIX_INFO_LOAD(&shared[nshared++], PMIX_GROUP_LOCAL_CID, &lcid, PMIX_SIZE);
    else
        PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_GROUP_LOCAL_CID, &lcid, PMIX_SIZE);
    da = (pmix_data_array_t){ PMIX_INFO, nshared, shared };
    PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_GROUP_INFO, &da, PMIX_DATA_ARRAY);
    PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Group_construct("conform-info", &all, 1, dirs, ndirs, &results, &nresults);
    if (rc == PMIX_SUCCESS && nresults > 0)
        PMIX_VALUE_GET_NUMBER(rc, &results[0].value, cid, size_t);
    report(rc == PMIX_SUCCESS && cid != 0, "construct_with_group_info", "%s, cid %zu",
           PMIx_Error_string(rc), cid);
    PMIX_INFO_FREE(results, nresults);
    for (size_t i = 0; i < ndirs; i++)
        PMIX_INFO_DESTRUCT(&dirs[i]);
    PMIX_INFO_FREE(shared, nshared);
    (void)PMIx_Group_destruct("conform-info", NULL, 0);
    /* after the group is gone, as group_lcl_cid reads them */
    for (int r = 0; r < size; r++) {
        pmix_value_t *v = NULL;
        char want[16];

        rc = get_shared((pmix_rank_t)r, PMIX_GROUP_LOCAL_CID, cid, true, &v);
        ok &= rc == PMIX_SUCCESS && v->type == PMIX_SIZE && v->data.size == 1000u + (size_t)r;
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
        v = NULL;
        rc = get_shared((pmix_rank_t)r, PMIX_GROUP_LOCAL_CID, cid, false, &v);
        ok &= rc == PMIX_SUCCESS && v->data.size == 1000u + (size_t)r;
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
        v = NULL;
        snprintf(want, sizeof(want), "r%d", r);
        rc = get_shared((pmix_rank_t)r, "conform.note", cid, true, &v);
        ok &= rc == PMIX_SUCCESS && v->type == PMIX_STRING && strcmp(v->data.string, want) == 0;
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
    }
    report(ok, "group_info_shared_with_members", "each member's local cid and note %s",
           ok ? "read back" : "missing or wrong");
    {
        pmix_value_t *v = NULL;
        rc = get_shared(0, PMIX_GROUP_LOCAL_CID, cid + 1000, true, &v);
        report(rc == PMIX_ERR_NOT_FOUND, "group_info_of_other_cid_not_found", "%s",
               PMIx_Error_string(rc));
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
    }
}

/* ---- cause 8: the groups queries ------------------------------------------- */

static size_t query_size(const char *key, const char *grp, pmix_status_t *rc_out,
                         char *names, size_t cap)
{
    pmix_query_t q;
    pmix_info_t *res = NULL;
    size_t n = 0, got = 0;
    pmix_status_t rc;

    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, key);
    if (grp != NULL) {
        PMIX_INFO_CREATE(q.qualifiers, 1);
        q.nqual = 1;
        PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_GROUP_ID, grp, PMIX_STRING);
    }
    rc = PMIx_Query_info(&q, 1, &res, &n);
    if (rc == PMIX_SUCCESS && n == 1) {
        if (res[0].value.type == PMIX_SIZE)
            got = res[0].value.data.size;
        else if (res[0].value.type == PMIX_DATA_ARRAY && res[0].value.data.darray != NULL) {
            pmix_data_array_t *da = res[0].value.data.darray;
            got = da->size;
            for (size_t i = 0; names != NULL && da->type == PMIX_STRING && i < da->size; i++)
                snprintf(names + strlen(names), cap - strlen(names), "%s,",
                         ((char **)da->array)[i]);
        }
    }
    *rc_out = rc;
    PMIX_INFO_FREE(res, n);
    PMIX_QUERY_DESTRUCT(&q);
    return got;
}

static void check_groups_query(void)
{
    pmix_proc_t all;
    char names[256] = "";
    pmix_status_t rc, rc2;
    size_t n;

    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Group_construct("conform-q", &all, 1, NULL, 0, NULL, NULL);
    if (rc != PMIX_SUCCESS)
        report(0, "groups_query", "construct: %s", PMIx_Error_string(rc));
    if (me.rank == 0) {
        n = query_size(PMIX_QUERY_NUM_GROUPS, NULL, &rc, NULL, 0);
        report(rc == PMIX_SUCCESS && n == 1, "query_num_groups", "%s, %zu",
               PMIx_Error_string(rc), n);
        n = query_size(PMIX_QUERY_GROUP_NAMES, NULL, &rc, names, sizeof(names));
        report(rc == PMIX_SUCCESS && n == 1 && strcmp(names, "conform-q,") == 0,
               "query_group_names", "%s, %s", PMIx_Error_string(rc), names);
        n = query_size(PMIX_QUERY_GROUP_MEMBERSHIP, "conform-q", &rc, NULL, 0);
        (void)query_size(PMIX_QUERY_GROUP_MEMBERSHIP, "no-such", &rc2, NULL, 0);
        report(rc == PMIX_SUCCESS && n == 1 && rc2 == PMIX_ERR_NOT_FOUND,
               "query_group_membership", "%s, %zu members (wildcard entry); unknown: %s",
               PMIx_Error_string(rc), n, PMIx_Error_string(rc2));
    }
    fence_all();
    (void)PMIx_Group_destruct("conform-q", NULL, 0);
    if (me.rank == 0) {
        n = query_size(PMIX_QUERY_NUM_GROUPS, NULL, &rc, NULL, 0);
        report(rc == PMIX_SUCCESS && n == 0, "query_num_groups_after_destruct", "%s, %zu",
               PMIx_Error_string(rc), n);
    }
}

/* ---- cause 6: preemptible, checkpoint methods, a checkpoint ------------------ */

static volatile sig_atomic_t got_usr2;

static void on_usr2(int signo)
{
    (void)signo;
    got_usr2 = 1;
}

/* Even ranks checkpoint on SIGUSR2, odd ones on the checkpoint event. */
static void declare_checkpoint(void)
{
    pmix_info_t decl[2], method;
    pmix_data_array_t da;
    bool yes = true;
    int sig = SIGUSR2;
    pmix_status_t ev = PMIX_JCTRL_CHECKPOINT, rc;
    waiter_t w;

    if (me.rank % 2 == 0)
        PMIX_INFO_LOAD(&method, PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &sig, PMIX_INT);
    else
        PMIX_INFO_LOAD(&method, PMIX_JOB_CTRL_CHECKPOINT_EVENT, &ev, PMIX_STATUS);
    da = (pmix_data_array_t){ PMIX_INFO, 1, &method };
    PMIX_INFO_LOAD(&decl[0], PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&decl[1], PMIX_JOB_CTRL_CHECKPOINT_METHOD, &da, PMIX_DATA_ARRAY);
    waiter_init(&w);
    /* as jctrl.c: no targets (a declaration is about the caller) */
    rc = PMIx_Job_control_nb(NULL, 0, decl, 2, info_cb, &w);
    report(rc == PMIX_SUCCESS && waiter_wait(&w, 10) && w.status == PMIX_SUCCESS,
           "declare_preemptible_and_checkpoint", "%s, callback %s", PMIx_Error_string(rc),
           w.done ? PMIx_Error_string(w.status) : "never ran");
    PMIX_INFO_DESTRUCT(&decl[0]);
    PMIX_INFO_DESTRUCT(&decl[1]);
    PMIX_INFO_DESTRUCT(&method);
}

/* A query about rank r (or the job, r = WILDCARD): the one result. */
static pmix_status_t query_about(const char *key, pmix_rank_t r, pmix_info_t **res, size_t *n)
{
    pmix_query_t q;
    pmix_status_t rc;

    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, key);
    PMIX_INFO_CREATE(q.qualifiers, 2);
    q.nqual = 2;
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, me.nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&q.qualifiers[1], PMIX_RANK, &r, PMIX_PROC_RANK);
    rc = PMIx_Query_info(&q, 1, res, n);
    PMIX_QUERY_DESTRUCT(&q);
    return rc;
}

static void check_declarations_queryable(void)
{
    pmix_info_t *res = NULL;
    size_t n = 0;
    pmix_status_t rc = query_about(PMIX_JOB_CTRL_PREEMPTIBLE, PMIX_RANK_WILDCARD, &res, &n);
    int ok;

    report(rc == PMIX_SUCCESS && n == 1 && res[0].value.type == PMIX_BOOL &&
               res[0].value.data.flag,
           "query_job_preemptible", "%s", PMIx_Error_string(rc));
    PMIX_INFO_FREE(res, n);
    rc = query_about(PMIX_JOB_CTRL_CHECKPOINT_METHOD, 1, &res, &n);
    ok = rc == PMIX_SUCCESS && n == 1 && res[0].value.type == PMIX_DATA_ARRAY &&
         res[0].value.data.darray->size == 1 &&
         PMIX_CHECK_KEY(&((pmix_info_t *)res[0].value.data.darray->array)[0],
                        PMIX_JOB_CTRL_CHECKPOINT_EVENT);
    PMIX_INFO_FREE(res, n);
    rc = query_about(PMIX_JOB_CTRL_CHECKPOINT_METHOD, 2, &res, &n);
    ok &= rc == PMIX_SUCCESS && n == 1 &&
          ((pmix_info_t *)res[0].value.data.darray->array)[0].value.data.integer == SIGUSR2;
    PMIX_INFO_FREE(res, n);
    report(ok, "query_checkpoint_methods", "rank 1 by event, rank 2 by SIGUSR2 %s",
           ok ? "recorded" : "not as declared");
}

static void check_checkpoint(void)
{
    pmix_status_t ckpt = PMIX_JCTRL_CHECKPOINT, rc;
    heard_t h;
    int from = events_seen();

    if (me.rank % 2 == 0)
        signal(SIGUSR2, on_usr2);
    else
        register_for(&ckpt, 1, "checkpoint");
    declare_checkpoint();
    fence_all(); /* every rank declared and listens */
    if (me.rank == 0) {
        pmix_info_t dir;
        pmix_proc_t all;

        check_declarations_queryable();
        PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
        PMIX_INFO_LOAD(&dir, PMIX_JOB_CTRL_CHECKPOINT, "ckpt-1", PMIX_STRING);
        rc = PMIx_Job_control(&all, 1, &dir, 1, NULL, NULL);
        report(rc == PMIX_SUCCESS, "checkpoint_request", "%s", PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&dir);
    }
    if (me.rank % 2 == 0) {
        for (int i = 0; i < 2000 && !got_usr2; i++)
            usleep(10000);
        report(got_usr2, "checkpoint_by_signal", "%s",
               got_usr2 ? "SIGUSR2 arrived" : "no SIGUSR2 within 20 s");
    } else {
        int got = wait_event(PMIX_JCTRL_CHECKPOINT, 20, &from, &h);
        report(got && strcmp(h.ckpt, "ckpt-1") == 0 && h.affected == me.rank,
               "checkpoint_by_event", "%s", got ? h.ckpt : "no event within 20 s");
    }
    fence_all();
}

/* ---- cause 7: watches that alert (the job goes on: PMIX_MONITOR_APP_CONTROL) -- */

static pmix_status_t monitor(const char *what, const char *file, const char *id,
                             uint32_t period, uint32_t drops, bool app_control)
{
    pmix_info_t mon, dirs[5];
    size_t n = 0;
    bool yes = true;
    pmix_status_t rc;

    if (file != NULL) {
        PMIX_INFO_LOAD(&mon, PMIX_MONITOR_FILE, file, PMIX_STRING);
        PMIX_INFO_LOAD(&dirs[n++], PMIX_MONITOR_FILE_SIZE, &yes, PMIX_BOOL);
        PMIX_INFO_LOAD(&dirs[n++], PMIX_MONITOR_FILE_CHECK_TIME, &period, PMIX_UINT32);
        PMIX_INFO_LOAD(&dirs[n++], PMIX_MONITOR_FILE_DROPS, &drops, PMIX_UINT32);
    } else {
        PMIX_INFO_LOAD(&mon, what, NULL, PMIX_POINTER); /* as jctrl.c */
        PMIX_INFO_LOAD(&dirs[n++], PMIX_MONITOR_HEARTBEAT_TIME, &period, PMIX_UINT32);
        PMIX_INFO_LOAD(&dirs[n++], PMIX_MONITOR_HEARTBEAT_DROPS, &drops, PMIX_UINT32);
    }
    PMIX_INFO_LOAD(&dirs[n++], PMIX_MONITOR_ID, id, PMIX_STRING);
    if (app_control)
        PMIX_INFO_LOAD(&dirs[n++], PMIX_MONITOR_APP_CONTROL, &yes, PMIX_BOOL);
    rc = PMIx_Process_monitor(&mon, PMIX_SUCCESS, dirs, n, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        PMIX_INFO_DESTRUCT(&dirs[i]);
    PMIX_INFO_DESTRUCT(&mon);
    return rc;
}

static pmix_status_t cancel(const char *id)
{
    pmix_info_t mon;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_CANCEL, id, PMIX_STRING);
    rc = PMIx_Process_monitor(&mon, PMIX_SUCCESS, NULL, 0, NULL, NULL);
    PMIX_INFO_DESTRUCT(&mon);
    return rc;
}

static void grow(const char *path)
{
    FILE *f = fopen(path, "a");

    if (f != NULL) {
        fputs("step\n", f);
        fclose(f);
    }
}

static void check_watches(const char *dir)
{
    pmix_status_t codes[2] = { PMIX_MONITOR_HEARTBEAT_ALERT, PMIX_MONITOR_FILE_ALERT }, rc;
    char path[512];
    heard_t h;
    int from, got;

    register_for(codes, 2, "watches");
    snprintf(path, sizeof(path), "%s/progress.%u", dir, me.rank);
    fence_all();
    from = events_seen();
    if (me.rank == 3) {
        /* periods of 2 s, one miss allowed: a loaded machine's stalls of
         * this process stay far below what would alert */
        rc = monitor(PMIX_MONITOR_HEARTBEAT, NULL, "beats", 2, 1, true);
        report(rc == PMIX_SUCCESS, "monitor_heartbeat_accepted", "%s", PMIx_Error_string(rc));
        for (int i = 0; i < 15; i++) { /* 4.5 s of beats: alive */
            PMIx_Heartbeat();
            usleep(300000);
        }
        report(count_heard(PMIX_MONITOR_HEARTBEAT_ALERT, 3, from) == 0,
               "beating_rank_not_alerted", "%d alerts",
               count_heard(PMIX_MONITOR_HEARTBEAT_ALERT, 3, from));
        got = wait_event(PMIX_MONITOR_HEARTBEAT_ALERT, 20, &from, &h); /* silence */
        report(got && h.affected == 3 && strcmp(h.id, "beats") == 0, "heartbeat_alert_to_self",
               "%s", got ? h.id : "no alert within 20 s");
        report(cancel("beats") == PMIX_SUCCESS && cancel("beats") == PMIX_ERR_NOT_FOUND,
               "monitor_cancel", "cancelled once, then not found");
    }
    if (me.rank == 2) {
        grow(path);
        rc = monitor(NULL, path, "file", 2, 1, true);
        report(rc == PMIX_SUCCESS, "monitor_file_accepted", "%s", PMIx_Error_string(rc));
        for (int i = 0; i < 10; i++) { /* grows for 5 s */
            grow(path);
            usleep(500000);
        }
        report(count_heard(PMIX_MONITOR_FILE_ALERT, 2, from) == 0, "growing_file_not_alerted",
               "%d alerts", count_heard(PMIX_MONITOR_FILE_ALERT, 2, from));
        got = wait_event(PMIX_MONITOR_FILE_ALERT, 20, &from, &h);
        report(got && h.affected == 2 && strcmp(h.file, path) == 0, "file_alert_names_file",
               "%s", got ? h.file : "no alert within 20 s");
        (void)cancel(NULL);
    }
    if (me.rank == 0) { /* the job hears of both */
        int hb = wait_event(PMIX_MONITOR_HEARTBEAT_ALERT, 30, &from, &h) && h.affected == 3;
        from = 0;
        int fl = wait_event(PMIX_MONITOR_FILE_ALERT, 30, &from, &h) && h.affected == 2;
        report(hb && fl, "job_hears_alerts", "heartbeat %s, file %s", hb ? "yes" : "no",
               fl ? "yes" : "no");
    }
    fence_all();
}

/* ---- cause 8: long log texts --------------------------------------------- */

static void check_log(void)
{
    enum { BIG = 2 * 1024 * 1024 };
    char *text = malloc(BIG + 8);
    pmix_info_t data;
    pmix_status_t rc;

    if (me.rank != 0 || text == NULL) {
        free(text);
        return;
    }
    memset(text, 'x', BIG);
    strcpy(text + BIG, "END\n");
    PMIX_INFO_LOAD(&data, PMIX_LOG_STDERR, text, PMIX_STRING);
    rc = PMIx_Log(&data, 1, NULL, 0);
    report(rc == PMIX_SUCCESS, "log_long_text", "%s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&data);
    PMIX_INFO_LOAD(&data, PMIX_LOG_STDERR, "ends with a newline\n", PMIX_STRING);
    rc = PMIx_Log(&data, 1, NULL, 0);
    report(rc == PMIX_SUCCESS, "log_trailing_newline", "%s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&data);
    free(text);
}

/* ---- the job killed by its watch ------------------------------------------ */

static void stall_under_watch(const char *file)
{
    pmix_status_t codes[2] = { PMIX_MONITOR_HEARTBEAT_ALERT, PMIX_MONITOR_FILE_ALERT }, rc;
    heard_t h;
    int from = 0;

    register_for(codes, 2, "kill");
    fence_all();
    if (me.rank == 1) {
        grow(file);
        rc = file != NULL ? monitor(NULL, file, "kill-me", 1, 0, false)
                          : monitor(PMIX_MONITOR_HEARTBEAT, NULL, "kill-me", 1, 0, false);
        report(rc == PMIX_SUCCESS, "monitor_accepted", "%s", PMIx_Error_string(rc));
        sleep(60); /* silent: the gateway kills the job */
        report(0, "job_killed", "still running after 60 s");
        return;
    }
    rc = wait_event(file != NULL ? PMIX_MONITOR_FILE_ALERT : PMIX_MONITOR_HEARTBEAT_ALERT, 30,
                    &from, &h);
    report(rc && h.affected == 1, "heard_alert_before_kill", "%s",
           rc ? "from rank 1" : "nothing within 30 s");
    sleep(60);
}

/* --heartbeat in a mixed job: the other ranks (PMI-1, PMI-2) are watched by
 * the gateway; this one hears the alert about rank `watched`. */
static void listen_for_alert(pmix_rank_t watched)
{
    pmix_status_t code = PMIX_MONITOR_HEARTBEAT_ALERT, rc;
    heard_t h;
    int from = 0, got = 0;

    pmix_info_t collect;
    bool yes = true;

    register_for(&code, 1, "listen");
    /* the PMI-1 barrier and the PMI-2 fence collect data: so must this one */
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if ((rc = PMIx_Fence(NULL, 0, &collect, 1)) != PMIX_SUCCESS)
        report(0, "fence", "%s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&collect);
    for (int i = 0; i < 300 && !(got = wait_event(code, 0, &from, &h)); i++) {
        printf("rank %u is alive\n", me.rank); /* output: life for --heartbeat */
        fflush(stdout);
        usleep(100000);
    }
    report(got && h.affected == watched, "heard_heartbeat_alert", "%s",
           got ? "about the silent rank" : "nothing within 30 s");
    sleep(60);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    pmix_status_t rc;
    int size;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "listen") == 0)
        printf("starting\n"); /* output is life for --heartbeat, before a slow init too */
    if (strcmp(mode, "abi") == 0) {
        check_abi_query();
        return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? failures : failures + 1;
    }
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    {
        pmix_value_t *v = NULL;
        pmix_proc_t job = proc_of(PMIX_RANK_WILDCARD);
        rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v);
        size = rc == PMIX_SUCCESS ? (int)v->data.uint32 : 0;
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
    }
    if (strcmp(mode, "monitor-kill") == 0)
        stall_under_watch(NULL);
    else if (strcmp(mode, "file-kill") == 0)
        stall_under_watch(argc > 2 ? argv[2] : "/nonexistent");
    else if (strcmp(mode, "listen") == 0)
        listen_for_alert(argc > 2 ? (pmix_rank_t)atoi(argv[2]) : 1);
    else if (size < 4)
        report(0, "size", "the scenarios want 4 ranks, got %d", size);
    else if (strcmp(mode, "print") == 0)
        check_print_query_results();
    else if (strcmp(mode, "deregister") == 0)
        check_deregister_unknown();
    else if (strcmp(mode, "invite") == 0)
        check_invite_listing_leader(size);
    else if (strcmp(mode, "group-info") == 0)
        check_group_info(size);
    else if (strcmp(mode, "groups-query") == 0)
        check_groups_query();
    else if (strcmp(mode, "checkpoint") == 0)
        check_checkpoint();
    else if (strcmp(mode, "watches") == 0)
        check_watches(argc > 2 ? argv[2] : "/tmp");
    else if (strcmp(mode, "log") == 0)
        check_log();
    else
        report(0, "mode", "no scenario %s", mode);
    fence_all();
    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS)
        report(0, "finalize", "%s", PMIx_Error_string(rc));
    return failures;
}

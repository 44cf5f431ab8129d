/*
 * pmix_groups: groups built by invitation -- PMIx_Group_invite / _join /
 * _leave -- through the real libpmix and gateway (tests/pmix/pmix_groups.sh).
 * Every rank registers for the group events; what a rank hears is what a
 * user's handler would see (the code, the source, PMIX_GROUP_ID).
 *
 * "all" (4 ranks): rank 0 invites 1 and 2 (asking for a context id); 1
 * accepts, 2 declines, 3 is not invited.  The leader hears the accept and
 * the decline and its invite completes with PMIX_ERR_PARTIAL_SUCCESS, the
 * members {0,1} and a context id that rank 1's join also gets; 0 and 1
 * fence and exchange data over the group's members; bad joins and leaves
 * are refused with a clear status; rank 1 leaves and rank 0 (only) hears
 * PMIX_GROUP_LEFT; the group's destruct then involves rank 0 alone; an
 * invite nobody answers ends with PMIX_ERR_TIMEOUT under PMIX_TIMEOUT.
 * "invitee-gone" (3 ranks): rank 2 finalizes instead of answering; the
 * leader hears PMIX_GROUP_INVITE_FAILED from it and its invite, like rank
 * 1's accepted join, fails with PMIX_GROUP_INVITE_FAILED instead of hanging.
 *
 * One line per check: "PASS <check> (rank R): ..." or "FAIL <check> ...".
 * Exit status: the number of failed checks on this rank.
 */
#include <pmix.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/pmix/pmix_check.h"

/* ---- what this rank heard -------------------------------------------------- */

enum { MAX_HEARD = 32 };

typedef struct heard {
    pmix_status_t code;
    pmix_rank_t source;
    char group[PMIX_MAX_NSLEN + 1];
} heard_t;

static pthread_mutex_t heard_lock = PTHREAD_MUTEX_INITIALIZER;
static heard_t heard[MAX_HEARD];
static int nheard;

static void on_group_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                           pmix_info_t info[], size_t ninfo, pmix_info_t results[],
                           size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                           void *cbdata)
{
    heard_t h = { status, source != NULL ? source->rank : PMIX_RANK_UNDEF, "" };

    (void)id, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID) && info[i].value.type == PMIX_STRING)
            snprintf(h.group, sizeof(h.group), "%s", info[i].value.data.string);
    pthread_mutex_lock(&heard_lock);
    if (nheard < MAX_HEARD)
        heard[nheard++] = h;
    pthread_mutex_unlock(&heard_lock);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* How many times this rank heard `code` about `group` from `source`. */
static int heard_count(pmix_status_t code, const char *group, pmix_rank_t source)
{
    int n = 0;

    pthread_mutex_lock(&heard_lock);
    for (int i = 0; i < nheard; i++)
        n += heard[i].code == code && heard[i].source == source &&
             strcmp(heard[i].group, group) == 0;
    pthread_mutex_unlock(&heard_lock);
    return n;
}

/* Waits (up to `secs`) until it heard that; 1 when it did. */
static int wait_heard(pmix_status_t code, const char *group, pmix_rank_t source, int secs)
{
    for (int i = 0; i < secs * 100; i++) {
        if (heard_count(code, group, source) > 0)
            return 1;
        usleep(10000);
    }
    return 0;
}

static void register_group_events(void)
{
    pmix_status_t codes[] = { PMIX_GROUP_INVITED, PMIX_GROUP_INVITE_ACCEPTED,
                              PMIX_GROUP_INVITE_DECLINED, PMIX_GROUP_INVITE_FAILED,
                              PMIX_GROUP_LEFT };
    pmix_status_t rc = PMIx_Register_event_handler(codes, sizeof(codes) / sizeof(codes[0]), NULL,
                                                   0, on_group_event, NULL, NULL);

    if (rc <= 0)
        report(0, "register_group_events", "%s", PMIx_Error_string(rc));
}

/* ---- results -------------------------------------------------------------- */

/* The context id and the member ranks (as a bit set) in results[]. */
typedef struct group_view {
    size_t cid;
    unsigned members; /* bit r: rank r of this job */
    size_t nmembers;
} group_view_t;

static group_view_t view_of(const pmix_info_t *results, size_t n)
{
    group_view_t v = { 0, 0, 0 };

    for (size_t i = 0; results != NULL && i < n; i++) {
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID)) {
            pmix_status_t rc;
            PMIX_VALUE_GET_NUMBER(rc, &results[i].value, v.cid, size_t);
            (void)rc;
        } else if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_MEMBERSHIP) &&
                   results[i].value.type == PMIX_DATA_ARRAY &&
                   results[i].value.data.darray != NULL &&
                   results[i].value.data.darray->type == PMIX_PROC) {
            const pmix_proc_t *p = results[i].value.data.darray->array;
            v.nmembers = results[i].value.data.darray->size;
            for (size_t k = 0; k < v.nmembers; k++)
                if (PMIX_CHECK_NSPACE(p[k].nspace, me.nspace) && p[k].rank < 32)
                    v.members |= 1u << p[k].rank;
        }
    }
    return v;
}

/* A non-blocking invite's callback, waited for with a bound. */
typedef struct invited {
    pthread_mutex_t m;
    pthread_cond_t c;
    int done;
    pmix_status_t status;
    group_view_t view;
} invited_t;

static void invite_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    invited_t *w = cbdata;

    pthread_mutex_lock(&w->m);
    w->status = status;
    w->view = view_of(info, ninfo);
    w->done = 1;
    pthread_cond_signal(&w->c);
    pthread_mutex_unlock(&w->m);
    if (release_fn != NULL)
        release_fn(release_cbdata);
}

static int invited_wait(invited_t *w, int secs)
{
    return wait_done(&w->m, &w->c, &w->done, secs);
}

/* ---- "all" ------------------------------------------------------------------ */

/* Rank 0 invites 1 and 2 without blocking; returns the view it got. */
static group_view_t lead_invite(void)
{
    pmix_proc_t invitees[2] = { proc_of(1), proc_of(2) };
    invited_t w = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, PMIX_ERROR,
                    { 0, 0, 0 } };
    pmix_info_t dir;

    PMIX_INFO_LOAD(&dir, PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    pmix_status_t rc = PMIx_Group_invite_nb("inv", invitees, 2, &dir, 1, invite_cb, &w);
    PMIX_INFO_DESTRUCT(&dir);
    int done = rc == PMIX_SUCCESS && invited_wait(&w, 60);
    report(done && w.status == PMIX_ERR_PARTIAL_SUCCESS && w.view.members == 0x3 &&
               w.view.nmembers == 2 && w.view.cid != 0,
           "invite_completes_with_accepters", "rc %s, callback %s, members 0x%x (%zu), cid %zu",
           PMIx_Error_string(rc), done ? PMIx_Error_string(w.status) : "never ran",
           w.view.members, w.view.nmembers, w.view.cid);
    /* the answers arrived as events (sent before the completion; the
     * handlers may still be running on the progress thread) */
    (void)wait_heard(PMIX_GROUP_INVITE_ACCEPTED, "inv", 1, 10);
    (void)wait_heard(PMIX_GROUP_INVITE_DECLINED, "inv", 2, 10);
    report(heard_count(PMIX_GROUP_INVITE_ACCEPTED, "inv", 1) == 1 &&
               heard_count(PMIX_GROUP_INVITE_DECLINED, "inv", 2) == 1,
           "leader_hears_accept_and_decline", "accepted %d, declined %d",
           heard_count(PMIX_GROUP_INVITE_ACCEPTED, "inv", 1),
           heard_count(PMIX_GROUP_INVITE_DECLINED, "inv", 2));
    rc = PMIx_Group_invite("inv", invitees, 2, NULL, 0, NULL, NULL);
    report(rc == PMIX_ERR_EXISTS, "invite_existing_name_refused", "rc %s", PMIx_Error_string(rc));
    return w.view;
}

/* Ranks 1 and 2 answer the invitation they heard of. */
static group_view_t answer_invite(void)
{
    pmix_proc_t leader = proc_of(0);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    int got = wait_heard(PMIX_GROUP_INVITED, "inv", 0, 30);
    group_view_t v = { 0, 0, 0 };

    report(got, "invitee_hears_invitation", "%s",
           got ? "PMIX_GROUP_INVITED from rank 0, group inv" : "nothing within 30 s");
    if (!got)
        return v;
    pmix_group_opt_t opt = me.rank == 1 ? PMIX_GROUP_ACCEPT : PMIX_GROUP_DECLINE;
    pmix_status_t rc = PMIx_Group_join("inv", &leader, opt, NULL, 0, &results, &nresults);
    v = view_of(results, nresults);
    if (me.rank == 1)
        report(rc == PMIX_SUCCESS && v.members == 0x3 && v.cid != 0, "accepter_joins_group",
               "rc %s, members 0x%x, cid %zu", PMIx_Error_string(rc), v.members, v.cid);
    else
        report(rc == PMIX_SUCCESS && nresults == 0, "decliner_answered_at_once",
               "rc %s, %zu results", PMIx_Error_string(rc), nresults);
    PMIX_INFO_FREE(results, nresults);
    return v;
}

/* The members fence over themselves and see each other's data, and both
 * hold the same context id. */
static void members_exchange(size_t cid)
{
    pmix_proc_t pair[2] = { proc_of(0), proc_of(1) };
    pmix_value_t val, *got = NULL;
    size_t theirs = 0;
    pmix_status_t rc;

    PMIX_VALUE_LOAD(&val, &cid, PMIX_SIZE);
    rc = PMIx_Put(PMIX_GLOBAL, "grp.cid", &val);
    PMIX_VALUE_DESTRUCT(&val);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Fence(pair, 2, NULL, 0);
    pmix_proc_t peer = proc_of(1 - me.rank);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Get(&peer, "grp.cid", NULL, 0, &got);
    if (rc == PMIX_SUCCESS)
        PMIX_VALUE_GET_NUMBER(rc, got, theirs, size_t);
    PMIX_VALUE_RELEASE(got);
    report(rc == PMIX_SUCCESS && cid != 0 && theirs == cid, "members_fence_and_share_cid",
           "rc %s, mine %zu, peer's %zu", PMIx_Error_string(rc), cid, theirs);
}

static void bad_requests(void)
{
    pmix_proc_t leader = proc_of(0), self = me;
    pmix_status_t rc;

    if (me.rank == 1) {
        rc = PMIx_Group_join("inv", &leader, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
        report(rc == PMIX_ERR_EXISTS, "duplicate_join_refused", "rc %s", PMIx_Error_string(rc));
        rc = PMIx_Group_invite("mine", &self, 1, NULL, 0, NULL, NULL);
        report(rc == PMIX_ERR_BAD_PARAM, "invite_self_refused", "rc %s", PMIx_Error_string(rc));
    }
    if (me.rank == 2) {
        rc = PMIx_Group_join("inv", &leader, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
        report(rc == PMIX_ERR_NOT_FOUND, "join_after_decline_refused", "rc %s",
               PMIx_Error_string(rc));
    }
    if (me.rank == 3) {
        rc = PMIx_Group_join("inv", &leader, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
        report(rc == PMIX_ERR_NOT_FOUND, "join_without_invite_refused", "rc %s",
               PMIx_Error_string(rc));
        rc = PMIx_Group_join("nosuch", NULL, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
        report(rc == PMIX_ERR_NOT_FOUND, "join_unknown_group_refused", "rc %s",
               PMIx_Error_string(rc));
        rc = PMIx_Group_leave("inv", NULL, 0);
        report(rc == PMIX_ERR_BAD_PARAM, "nonmember_leave_refused", "rc %s",
               PMIx_Error_string(rc));
        rc = PMIx_Group_leave("nosuch", NULL, 0);
        report(rc == PMIX_ERR_NOT_FOUND, "leave_unknown_group_refused", "rc %s",
               PMIx_Error_string(rc));
        rc = PMIx_Group_join("inv", &leader, (pmix_group_opt_t)7, NULL, 0, NULL, NULL);
        report(rc == PMIX_ERR_BAD_PARAM, "join_bad_option_refused", "rc %s",
               PMIx_Error_string(rc));
        report(heard_count(PMIX_GROUP_INVITED, "inv", 0) == 0, "uninvited_hears_nothing",
               "%d invitations", heard_count(PMIX_GROUP_INVITED, "inv", 0));
    }
}

/* Rank 1 leaves: rank 0 hears it, nobody else does; the destruct then
 * involves rank 0 alone. */
static void leave_group(void)
{
    pmix_status_t rc;

    if (me.rank == 1) {
        rc = PMIx_Group_leave("inv", NULL, 0);
        report(rc == PMIX_SUCCESS, "member_leaves", "rc %s", PMIx_Error_string(rc));
        rc = PMIx_Group_leave("inv", NULL, 0);
        report(rc == PMIX_ERR_BAD_PARAM, "leave_twice_refused", "rc %s", PMIx_Error_string(rc));
    }
    if (me.rank == 0) {
        int got = wait_heard(PMIX_GROUP_LEFT, "inv", 1, 30);
        report(got, "member_hears_left", "%s",
               got ? "PMIX_GROUP_LEFT from rank 1, group inv" : "nothing within 30 s");
    }
    fence_all(); /* rank 1 is done leaving */
    if (me.rank == 0) {
        /* rank 1 is out of the group: this destruct waits for nobody */
        rc = PMIx_Group_destruct("inv", NULL, 0);
        report(rc == PMIX_SUCCESS, "destruct_after_leave_spans_the_rest", "rc %s",
               PMIx_Error_string(rc));
    }
    fence_all();
    if (me.rank >= 2)
        report(heard_count(PMIX_GROUP_LEFT, "inv", 1) == 0, "nonmembers_not_told_of_leave",
               "%d events", heard_count(PMIX_GROUP_LEFT, "inv", 1));
}

/* Rank 0 invites rank 3, which never answers: PMIX_TIMEOUT ends it. */
static void invite_times_out(void)
{
    if (me.rank == 0) {
        pmix_proc_t three = proc_of(3);
        pmix_info_t dir;
        int secs = 2;
        PMIX_INFO_LOAD(&dir, PMIX_TIMEOUT, &secs, PMIX_INT);
        pmix_status_t rc = PMIx_Group_invite("late", &three, 1, &dir, 1, NULL, NULL);
        PMIX_INFO_DESTRUCT(&dir);
        report(rc == PMIX_ERR_TIMEOUT, "unanswered_invite_times_out", "rc %s",
               PMIx_Error_string(rc));
    }
    fence_all();
    if (me.rank == 3) {
        pmix_proc_t leader = proc_of(0);
        pmix_status_t rc = PMIx_Group_join("late", &leader, PMIX_GROUP_ACCEPT, NULL, 0, NULL,
                                           NULL);
        report(heard_count(PMIX_GROUP_INVITED, "late", 0) == 1 && rc == PMIX_ERR_NOT_FOUND,
               "join_after_timeout_refused", "invited %d, rc %s",
               heard_count(PMIX_GROUP_INVITED, "late", 0), PMIx_Error_string(rc));
    }
}

static void run_all(void)
{
    group_view_t v = { 0, 0, 0 };

    register_group_events();
    fence_all(); /* every handler is in place before the invitation */
    if (me.rank == 0)
        v = lead_invite();
    else if (me.rank <= 2)
        v = answer_invite();
    if (me.rank <= 1)
        members_exchange(v.cid);
    fence_all();
    bad_requests();
    fence_all();
    leave_group();
    invite_times_out();
}

/* ---- "invitee-gone" ---------------------------------------------------------- */

/* Rank 2 goes only once rank 1 has answered (rank 1 commits a key after
 * sending its answer; rank 2 polls for it without being held, since a
 * held get would wait on rank 1 while rank 1 waits on rank 2), so the
 * invite fails for the reason under test, not because rank 1 came late. */
static void gone_after_rank1_answered(void)
{
    pmix_proc_t one = proc_of(1);
    pmix_info_t dirs[2];
    pmix_status_t rc = PMIX_ERR_NOT_FOUND;

    PMIX_INFO_LOAD(&dirs[0], PMIX_IMMEDIATE, NULL, PMIX_BOOL);
    PMIX_INFO_LOAD(&dirs[1], PMIX_GET_REFRESH_CACHE, NULL, PMIX_BOOL);
    for (int i = 0; i < 3000 && rc != PMIX_SUCCESS; i++) {
        pmix_value_t *got = NULL;
        rc = PMIx_Get(&one, "grp.answered", dirs, 2, &got);
        PMIX_VALUE_RELEASE(got);
        if (rc != PMIX_SUCCESS)
            usleep(10000);
    }
    PMIX_INFO_DESTRUCT(&dirs[0]);
    PMIX_INFO_DESTRUCT(&dirs[1]);
    if (rc != PMIX_SUCCESS)
        report(0, "rank1_answered", "rc %s after 30 s", PMIx_Error_string(rc));
}

static void accept_then_tell(void)
{
    pmix_proc_t leader = proc_of(0);
    invited_t w = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, PMIX_ERROR,
                    { 0, 0, 0 } };
    pmix_value_t val;
    int yes = 1;
    pmix_status_t rc = PMIx_Group_join_nb("gone", &leader, PMIX_GROUP_ACCEPT, NULL, 0,
                                          invite_cb, &w);

    PMIX_VALUE_LOAD(&val, &yes, PMIX_INT);
    (void)PMIx_Put(PMIX_GLOBAL, "grp.answered", &val);
    PMIX_VALUE_DESTRUCT(&val);
    (void)PMIx_Commit();
    int done = rc == PMIX_SUCCESS && invited_wait(&w, 60);
    report(done && w.status == PMIX_GROUP_INVITE_FAILED, "accepter_fails_when_invitee_gone",
           "rc %s, callback %s", PMIx_Error_string(rc),
           done ? PMIx_Error_string(w.status) : "never ran");
}

static void run_invitee_gone(void)
{
    pmix_proc_t invitees[2] = { proc_of(1), proc_of(2) };
    pmix_status_t rc;

    register_group_events();
    fence_all();
    if (me.rank == 0) {
        rc = PMIx_Group_invite("gone", invitees, 2, NULL, 0, NULL, NULL);
        report(rc == PMIX_GROUP_INVITE_FAILED, "invite_fails_when_invitee_gone", "rc %s",
               PMIx_Error_string(rc));
        int got = wait_heard(PMIX_GROUP_INVITE_FAILED, "gone", 2, 10);
        report(got, "leader_hears_invite_failed", "%s",
               got ? "PMIX_GROUP_INVITE_FAILED from rank 2" : "nothing within 10 s");
    } else if (!wait_heard(PMIX_GROUP_INVITED, "gone", 0, 30)) {
        report(0, "invitee_hears_invitation", "nothing within 30 s");
    } else if (me.rank == 1) {
        accept_then_tell();
    } else {
        gone_after_rank1_answered(); /* then finalizes without answering */
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (rc != PMIX_SUCCESS) {
        printf("FAIL init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (strcmp(mode, "invitee-gone") == 0)
        run_invitee_gone();
    else
        run_all();
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS && strcmp(mode, "all") == 0)
        report(0, "finalize", "%s", PMIx_Error_string(rc));
    return failures;
}

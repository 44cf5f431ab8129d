/*
 * pmix_groups: PMIx groups whose members run on several nodes, as one job
 * sees them (pmigate's libpmix; tests/cluster/proxy_group.sh runs it with
 * 6 ranks over 3 separate hosts, 2 per host).
 *   1. ranks 0, 3 and 5 construct group "xg" with
 *      PMIX_GROUP_ASSIGN_CONTEXT_ID, each sharing "grp.note" = "r<rank>"
 *      (PMIX_GROUP_INFO): each prints the context id it got, and reads
 *      every member's note with the id as qualifier; at the same time
 *      ranks 1 and 4 construct "yg" without asking for an id (none comes
 *      back) and destruct it, and rank 2 alone constructs "zg" with an id
 *      (which no other group may have: the ids are the job's);
 *   2. rank 5 leaves "xg": ranks 0 and 3 hear PMIX_GROUP_LEFT from it and
 *      destruct the group between the two of them; rank 5's destruct of a
 *      group it left is refused;
 *   3. ranks 0, 3 and 5 construct "xg" again: a new id, again the same
 *      for all three, and destruct it;
 *   4. rank 0 invites ranks 3 and 5 to group "ig" (PMIx_Group_invite):
 *      both hear PMIX_GROUP_INVITED from it, rank 3 accepts and rank 5
 *      declines (PMIx_Group_join); rank 0 hears both answers and completes
 *      with PMIX_ERR_PARTIAL_SUCCESS, a group of ranks 0 and 3 under one
 *      id (rank 3's join gets the same, and rank 3 hears
 *      PMIX_GROUP_CONSTRUCT_COMPLETE from rank 0); the two fence over the
 *      group's name (PMIx_Fence of "ig", PMIX_RANK_WILDCARD) and destruct
 *      it;
 *   5. rank 1 constructs "tg" with rank 4 (another host), which does not
 *      join, under a PMIX_TIMEOUT of 2 s: PMIX_ERR_TIMEOUT; then both
 *      construct it (a timed-out attempt leaves nothing behind).
 * Prints "pmix_groups rank R on HOST: ..." lines the script compares
 * (the ids), and "pmix_groups rank R: ok", or names the broken rule and
 * exits 1.
 */
#define CL_PROG "pmix_groups"
#include "tests/cluster/cl_pmix.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { WAIT_S = 30 };

static pmix_proc_t me;
static char host[64];

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int left;            /* PMIX_GROUP_LEFT heard */
    pmix_rank_t left_from;
    int invited, accepted, declined, complete; /* the invite's events heard */
    pmix_rank_t invited_by, accepted_by, declined_by, complete_by;
} heard = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                    pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    pthread_mutex_lock(&heard.lock);
    if (status == PMIX_GROUP_LEFT) {
        heard.left++;
        heard.left_from = source->rank;
    } else if (status == PMIX_GROUP_INVITED) {
        heard.invited++;
        heard.invited_by = source->rank;
    } else if (status == PMIX_GROUP_INVITE_ACCEPTED) {
        heard.accepted++;
        heard.accepted_by = source->rank;
    } else if (status == PMIX_GROUP_INVITE_DECLINED) {
        heard.declined++;
        heard.declined_by = source->rank;
    } else if (status == PMIX_GROUP_CONSTRUCT_COMPLETE) {
        heard.complete++;
        heard.complete_by = source->rank;
    }
    pthread_cond_broadcast(&heard.cond);
    pthread_mutex_unlock(&heard.lock);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Waits until *count is at least 1 (WAIT_S at most); its value. */
static int wait_heard(const int *count)
{
    struct timespec until;
    int got;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_S;
    pthread_mutex_lock(&heard.lock);
    while (*count == 0 && pthread_cond_timedwait(&heard.cond, &heard.lock, &until) == 0)
        ;
    got = *count;
    pthread_mutex_unlock(&heard.lock);
    return got;
}

static pmix_proc_t proc_of(pmix_rank_t r)
{
    pmix_proc_t p;

    PMIX_LOAD_PROCID(&p, me.nspace, r);
    return p;
}

/* Constructs `grp` over ranks[n]; with `want_id` asks for a context id and
 * returns it (0: none came back).  Shares "grp.note" = "r<rank>". */
static size_t construct(const char *grp, const pmix_rank_t *ranks, size_t n, bool want_id)
{
    pmix_proc_t procs[8];
    pmix_info_t dirs[2], note, *results = NULL;
    pmix_data_array_t da;
    size_t ndirs = 0, nresults = 0, cid = 0;
    char text[16];
    pmix_status_t rc;

    for (size_t i = 0; i < n; i++)
        procs[i] = proc_of(ranks[i]);
    snprintf(text, sizeof(text), "r%u", (unsigned)me.rank);
    PMIX_INFO_LOAD(&note, "grp.note", text, PMIX_STRING);
    da = (pmix_data_array_t){ PMIX_INFO, 1, &note };
    PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_GROUP_INFO, &da, PMIX_DATA_ARRAY);
    if (want_id)
        PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    rc = PMIx_Group_construct(grp, procs, n, dirs, ndirs, &results, &nresults);
    CHECK(rc == PMIX_SUCCESS, "construct %s: %s", grp, PMIx_Error_string(rc));
    for (size_t i = 0; i < nresults; i++)
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID))
            PMIX_VALUE_GET_NUMBER(rc, &results[i].value, cid, size_t);
    CHECK(!want_id || cid != 0, "construct %s: no context id", grp);
    CHECK(want_id || cid == 0, "construct %s: a context id nobody asked for", grp);
    PMIX_INFO_FREE(results, nresults);
    for (size_t i = 0; i < ndirs; i++)
        PMIX_INFO_DESTRUCT(&dirs[i]);
    PMIX_INFO_DESTRUCT(&note);
    return cid;
}

/* Every member's note, read with the group's context id as qualifier. */
static void check_notes(const pmix_rank_t *ranks, size_t n, size_t cid)
{
    for (size_t i = 0; i < n; i++) {
        pmix_proc_t p = proc_of(ranks[i]);
        pmix_info_t q;
        pmix_value_t *v = NULL;
        char want[16];
        pmix_status_t rc;

        PMIX_INFO_LOAD(&q, PMIX_GROUP_CONTEXT_ID, &cid, PMIX_SIZE);
        PMIX_INFO_SET_QUALIFIER(&q);
        rc = PMIx_Get(&p, "grp.note", &q, 1, &v);
        snprintf(want, sizeof(want), "r%u", (unsigned)ranks[i]);
        CHECK(rc == PMIX_SUCCESS && v->type == PMIX_STRING && strcmp(v->data.string, want) == 0,
              "rank %u's note in the group: %s", (unsigned)ranks[i], PMIx_Error_string(rc));
        PMIX_VALUE_RELEASE(v);
        PMIX_INFO_DESTRUCT(&q);
    }
}

/* The context id in results, 0 when none. */
static size_t cid_of(const pmix_info_t *results, size_t n)
{
    size_t cid = 0;
    pmix_status_t rc;

    for (size_t i = 0; i < n; i++)
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID))
            PMIX_VALUE_GET_NUMBER(rc, &results[i].value, cid, size_t);
    (void)rc;
    return cid;
}

/* The members fence over the group's name (its members, wherever they
 * run), then destruct it. */
static void fence_group(const char *grp)
{
    pmix_proc_t all;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&all, grp, PMIX_RANK_WILDCARD);
    rc = PMIx_Fence(&all, 1, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "fence over group %s: %s", grp, PMIx_Error_string(rc));
    rc = PMIx_Group_destruct(grp, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "destruct %s: %s", grp, PMIx_Error_string(rc));
    printf("pmix_groups rank %u on %s: fenced over %s, destructed\n", (unsigned)me.rank, host, grp);
}

/* Rank 0 invites ranks 3 and 5: 3 accepts, 5 declines. */
static void lead_invite(void)
{
    pmix_proc_t invitees[2] = { proc_of(3), proc_of(5) };
    pmix_info_t dir, *results = NULL;
    size_t nresults = 0, cid;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&dir, PMIX_GROUP_ASSIGN_CONTEXT_ID, NULL, PMIX_BOOL);
    rc = PMIx_Group_invite("ig", invitees, 2, &dir, 1, &results, &nresults);
    cid = cid_of(results, nresults);
    CHECK(rc == PMIX_ERR_PARTIAL_SUCCESS && cid != 0, "invite: %s, cid %zu (want partial success)",
          PMIx_Error_string(rc), cid);
    PMIX_INFO_FREE(results, nresults);
    PMIX_INFO_DESTRUCT(&dir);
    CHECK(wait_heard(&heard.accepted) == 1 && heard.accepted_by == 3 &&
              wait_heard(&heard.declined) == 1 && heard.declined_by == 5,
          "the answers: accepted %d (by %u), declined %d (by %u)", heard.accepted,
          (unsigned)heard.accepted_by, heard.declined, (unsigned)heard.declined_by);
    printf("pmix_groups rank %u on %s: ig cid=%zu\n", (unsigned)me.rank, host, cid);
    fence_group("ig");
}

/* Ranks 3 and 5 answer rank 0's invitation. */
static void answer_invite(bool accept)
{
    pmix_proc_t leader = proc_of(0);
    pmix_info_t *results = NULL;
    size_t nresults = 0, cid;
    pmix_status_t rc;

    CHECK(wait_heard(&heard.invited) == 1 && heard.invited_by == 0,
          "PMIX_GROUP_INVITED from rank 0: heard %d times", heard.invited);
    rc = PMIx_Group_join("ig", &leader, accept ? PMIX_GROUP_ACCEPT : PMIX_GROUP_DECLINE, NULL, 0,
                         &results, &nresults);
    cid = cid_of(results, nresults);
    PMIX_INFO_FREE(results, nresults);
    CHECK(rc == PMIX_SUCCESS && (accept ? cid != 0 : cid == 0), "join ig (%s): %s, cid %zu",
          accept ? "accept" : "decline", PMIx_Error_string(rc), cid);
    if (!accept)
        return;
    CHECK(wait_heard(&heard.complete) == 1 && heard.complete_by == 0,
          "PMIX_GROUP_CONSTRUCT_COMPLETE from rank 0: heard %d times", heard.complete);
    printf("pmix_groups rank %u on %s: ig cid=%zu\n", (unsigned)me.rank, host, cid);
    fence_group("ig");
}

static bool among(pmix_rank_t r, const pmix_rank_t *ranks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ranks[i] == r)
            return true;
    return false;
}

int main(void)
{
    static const pmix_rank_t xg[] = { 0, 3, 5 }, yg[] = { 1, 4 }, zg[] = { 2 };
    pmix_status_t codes[] = { PMIX_GROUP_LEFT, PMIX_GROUP_INVITED, PMIX_GROUP_INVITE_ACCEPTED,
                              PMIX_GROUP_INVITE_DECLINED, PMIX_GROUP_CONSTRUCT_COMPLETE };
    pmix_status_t rc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    gethostname(host, sizeof(host) - 1);
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "PMIx_Init");
    rank = (int)me.rank;
    CHECK(PMIx_Register_event_handler(codes, 5, NULL, 0, on_event, NULL, NULL) > 0,
          "register the handler");
    barrier();

    /* 1. three groups at once */
    if (among(me.rank, xg, 3)) {
        size_t cid = construct("xg", xg, 3, true);
        printf("pmix_groups rank %u on %s: xg cid=%zu\n", (unsigned)me.rank, host, cid);
        check_notes(xg, 3, cid);
    } else if (among(me.rank, yg, 2)) {
        size_t cid = construct("yg", yg, 2, false);
        printf("pmix_groups rank %u on %s: yg cid=%zu\n", (unsigned)me.rank, host, cid);
        rc = PMIx_Group_destruct("yg", NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "destruct yg: %s", PMIx_Error_string(rc));
    } else if (among(me.rank, zg, 1)) {
        size_t cid = construct("zg", zg, 1, true);
        printf("pmix_groups rank %u on %s: zg cid=%zu\n", (unsigned)me.rank, host, cid);
        rc = PMIx_Group_destruct("zg", NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "destruct zg: %s", PMIx_Error_string(rc));
    }
    barrier();

    /* 2. rank 5 leaves; the two others destruct */
    if (me.rank == 5) {
        rc = PMIx_Group_leave("xg", NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "leave xg: %s", PMIx_Error_string(rc));
    } else if (among(me.rank, xg, 3)) {
        CHECK(wait_heard(&heard.left) == 1 && heard.left_from == 5,
              "PMIX_GROUP_LEFT from rank 5: heard %d times (last from %u)", heard.left,
              (unsigned)heard.left_from);
        rc = PMIx_Group_destruct("xg", NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "destruct xg after rank 5 left: %s", PMIx_Error_string(rc));
        printf("pmix_groups rank %u on %s: left heard, destructed\n", (unsigned)me.rank, host);
    }
    barrier();
    if (me.rank == 5) {
        rc = PMIx_Group_destruct("xg", NULL, 0);
        CHECK(rc != PMIX_SUCCESS, "destruct of a group rank 5 left succeeded");
    }

    /* 3. again: a new id */
    if (among(me.rank, xg, 3)) {
        size_t cid = construct("xg", xg, 3, true);
        printf("pmix_groups rank %u on %s: xg again cid=%zu\n", (unsigned)me.rank, host, cid);
        rc = PMIx_Group_destruct("xg", NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "destruct xg again: %s", PMIx_Error_string(rc));
    }
    barrier();

    /* 4. by invitation */
    if (me.rank == 0)
        lead_invite();
    else if (me.rank == 3 || me.rank == 5)
        answer_invite(me.rank == 3);
    barrier();

    /* 5. a member that never comes */
    if (me.rank == 1) {
        pmix_proc_t pair[2] = { proc_of(1), proc_of(4) };
        pmix_info_t timeout;
        int secs = 2;

        PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &secs, PMIX_INT);
        rc = PMIx_Group_construct("tg", pair, 2, &timeout, 1, NULL, NULL);
        CHECK(rc == PMIX_ERR_TIMEOUT, "construct tg without rank 4: %s (want a timeout)",
              PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&timeout);
        printf("pmix_groups rank %u on %s: tg timed out\n", (unsigned)me.rank, host);
    }
    barrier();
    if (me.rank == 1 || me.rank == 4) {
        static const pmix_rank_t tg[] = { 1, 4 };
        size_t cid = construct("tg", tg, 2, true);
        printf("pmix_groups rank %u on %s: tg cid=%zu\n", (unsigned)me.rank, host, cid);
        rc = PMIx_Group_destruct("tg", NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "destruct tg: %s", PMIx_Error_string(rc));
    }
    barrier();
    printf("pmix_groups rank %u: ok\n", (unsigned)me.rank);
    CHECK(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "PMIx_Finalize");
    return 0;
}

/*
 * pg_group.c: process groups -- PMIx_Group_construct and _destruct as
 * collectives of the engine.
 *
 * Why it exists: a group is a named set of processes that every member
 * agrees on at once; that is a fence over the members (pg_fence.c does the
 * matching, counting, lost-member and timeout rules), tagged with the
 * group's name so it never meets a plain fence of the same processes.
 * This file keeps the registry on top: which groups exist, their members,
 * and the context id each construction hands out (one number per group,
 * the same for every member, so members can name the group cheaply).
 *
 * A group is PENDING from the first construct join until the collective
 * ends: success makes it ACTIVE with a fresh context id, failure forgets it.
 * Groups span the processes one engine serves: a member served elsewhere
 * is refused (PMIX_ERR_NOT_SUPPORTED) rather than left to hang.
 */
#include "pmix/engine/pg_engine_int.h"

#include <stdlib.h>
#include <utlist.h>

enum { PG_GROUP_NAME_MAX = PMIX_MAX_NSLEN };

typedef enum { GROUP_PENDING, GROUP_ACTIVE } group_state_t;

typedef struct pg_group {
    struct pg_group *prev, *next;
    char *name;
    pg_proc_t *members;     /* sorted; nspace strings owned */
    size_t nmembers;
    group_state_t state;
    bool destructing;
    uint64_t cid;
} pg_group_t;

/* One join waiting for its collective. */
typedef struct group_join {
    pg_engine_t *e;
    char *name;
    bool destruct;
    pg_group_cb_t cb;
    void *cbdata;
} group_join_t;

static int member_cmp(const void *a, const void *b)
{
    const pg_proc_t *x = a, *y = b;
    int c = strcmp(x->nspace, y->nspace);
    if (c != 0)
        return c;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static pg_group_t *group_find(pg_engine_t *e, const char *name)
{
    pg_group_t *g;
    DL_FOREACH(e->groups, g)
        if (strcmp(g->name, name) == 0)
            return g;
    return NULL;
}

static void group_free(pg_engine_t *e, pg_group_t *g)
{
    for (size_t i = 0; i < g->nmembers; i++)
        pg_mem_strfree(e, (char *)g->members[i].nspace);
    pg_mem_free(e, g->members, g->nmembers * sizeof(*g->members));
    pg_mem_strfree(e, g->name);
    pg_mem_free(e, g, sizeof(*g));
}

static void group_remove(pg_engine_t *e, pg_group_t *g)
{
    DL_DELETE(e->groups, g);
    group_free(e, g);
}

/* A sorted copy of the member list, empty nspaces resolved to proc's. */
static pg_group_t *group_new(pg_engine_t *e, const char *name, const pg_proc_t *proc,
                             const pg_proc_t *members, size_t n)
{
    pg_group_t *g = pg_mem_alloc(e, sizeof(*g));
    if (g == NULL)
        return NULL;
    memset(g, 0, sizeof(*g));
    g->name = pg_mem_strdup(e, name);
    g->members = pg_mem_alloc(e, n * sizeof(*g->members));
    if (g->name == NULL || g->members == NULL) {
        pg_mem_strfree(e, g->name);
        pg_mem_free(e, g->members, n * sizeof(*g->members));
        pg_mem_free(e, g, sizeof(*g));
        return NULL;
    }
    memset(g->members, 0, n * sizeof(*g->members));
    g->nmembers = n;
    for (size_t i = 0; i < n; i++) {
        const char *ns = members[i].nspace;
        g->members[i].nspace = pg_mem_strdup(e, ns == NULL || ns[0] == '\0' ? proc->nspace : ns);
        g->members[i].rank = members[i].rank;
        if (g->members[i].nspace == NULL) {
            group_free(e, g);
            return NULL;
        }
    }
    qsort(g->members, n, sizeof(*g->members), member_cmp);
    return g;
}

/* Is proc one of g's members (by rank or by a wildcard entry)? */
static bool is_member(const pg_group_t *g, const pg_proc_t *proc)
{
    for (size_t i = 0; i < g->nmembers; i++)
        if (strcmp(g->members[i].nspace, proc->nspace) == 0 &&
            (g->members[i].rank == proc->rank || g->members[i].rank == PMIX_RANK_WILDCARD))
            return true;
    return false;
}

static bool same_members(const pg_group_t *a, const pg_group_t *b)
{
    if (a->nmembers != b->nmembers)
        return false;
    for (size_t i = 0; i < a->nmembers; i++)
        if (member_cmp(&a->members[i], &b->members[i]) != 0)
            return false;
    return true;
}

/* Every rank the member list names is served by this engine. */
static pmix_status_t members_local(pg_engine_t *e, const pg_group_t *g)
{
    for (size_t i = 0; i < g->nmembers; i++) {
        const pg_ns_t *job = pg_ns_find(e, g->members[i].nspace);
        pmix_rank_t r = g->members[i].rank;
        if (job == NULL || (r != PMIX_RANK_WILDCARD && r >= job->size))
            return PMIX_ERR_BAD_PARAM;
        uint32_t first = r == PMIX_RANK_WILDCARD ? 0 : r;
        uint32_t end = r == PMIX_RANK_WILDCARD ? job->size : r + 1;
        for (uint32_t k = first; k < end; k++)
            if (!job->node_served[job->rank_node[k]])
                return PMIX_ERR_NOT_SUPPORTED;
    }
    return PMIX_SUCCESS;
}

static void join_free(group_join_t *j)
{
    free(j->name);
    free(j);
}

/* The collective ended for one joiner. Every joiner of one collective is
 * called in the same flush, so the first one settles the registry and the
 * others read what it left. */
static void join_done(pmix_status_t status, const pg_fence_keys_t *keys, void *cbdata)
{
    group_join_t *j = cbdata;
    pg_group_t *g = group_find(j->e, j->name);
    uint64_t cid = 0;

    (void)keys;
    if (j->destruct) {
        if (g != NULL && status == PMIX_SUCCESS)
            group_remove(j->e, g);
        else if (g != NULL)
            g->destructing = false;
    } else if (g != NULL && status == PMIX_SUCCESS) {
        if (g->state == GROUP_PENDING) {
            g->state = GROUP_ACTIVE;
            g->cid = ++j->e->next_cid;
        }
        cid = g->cid;
    } else if (g != NULL && g->state == GROUP_PENDING) {
        group_remove(j->e, g);
    }
    j->cb(status, cid, j->cbdata);
    join_free(j);
}

static group_join_t *join_new(pg_engine_t *e, const char *name, bool destruct, pg_group_cb_t cb,
                              void *cbdata)
{
    group_join_t *j = calloc(1, sizeof(*j));
    if (j == NULL || (j->name = strdup(name)) == NULL) {
        free(j);
        return NULL;
    }
    j->e = e;
    j->destruct = destruct;
    j->cb = cb;
    j->cbdata = cbdata;
    return j;
}

/* Joins the tagged collective "<op>:<name>" over g's members. */
static pmix_status_t group_join(pg_engine_t *e, const pg_proc_t *proc, pg_group_t *g,
                                bool destruct, pg_time_t timeout, pg_time_t now,
                                pg_group_cb_t cb, void *cbdata)
{
    size_t taglen = strlen(g->name) + 3;
    char *tag = malloc(taglen);
    group_join_t *j = join_new(e, g->name, destruct, cb, cbdata);
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if (tag != NULL && j != NULL) {
        snprintf(tag, taglen, "%c:%s", destruct ? 'd' : 'c', g->name);
        rc = pg_fence_join_tagged(e, proc, g->members, g->nmembers, tag, 0, timeout, now,
                                  join_done, j);
    }
    free(tag);
    if (rc != PMIX_SUCCESS && j != NULL)
        join_free(j);
    return rc;
}

static bool name_ok(const char *name)
{
    return name != NULL && name[0] != '\0' && strlen(name) <= PG_GROUP_NAME_MAX;
}

pmix_status_t pg_group_construct(pg_engine_t *e, const pg_proc_t *proc, const char *name,
                                 const pg_proc_t *members, size_t nmembers, pg_time_t timeout,
                                 pg_time_t now, pg_group_cb_t cb, void *cbdata)
{
    pmix_status_t rc;

    if (e == NULL || proc == NULL || cb == NULL || !name_ok(name) || members == NULL ||
        nmembers == 0)
        return PMIX_ERR_BAD_PARAM;
    if (pg_ns_of(e, proc, &rc) == NULL)
        return rc;
    pg_group_t *want = group_new(e, name, proc, members, nmembers);
    if (want == NULL)
        return PMIX_ERR_NOMEM;
    pg_group_t *g = group_find(e, name);
    bool created = g == NULL;
    if (!is_member(want, proc))
        rc = PMIX_ERR_BAD_PARAM; /* a non-member learns nothing about the group */
    else if (g != NULL && g->state == GROUP_ACTIVE)
        rc = PMIX_ERR_EXISTS;
    else if (g != NULL && !same_members(g, want))
        rc = PMIX_ERR_BAD_PARAM;
    else
        rc = members_local(e, want);
    if (rc != PMIX_SUCCESS || !created) {
        group_free(e, want);
    } else {
        g = want;
        g->state = GROUP_PENDING;
        DL_APPEND(e->groups, g);
    }
    if (rc == PMIX_SUCCESS)
        rc = group_join(e, proc, g, false, timeout, now, cb, cbdata);
    /* a refused first join leaves no pending group behind; a completed one
     * has already settled it (inline completion) */
    if (rc != PMIX_SUCCESS && created && (g = group_find(e, name)) != NULL &&
        g->state == GROUP_PENDING)
        group_remove(e, g);
    return rc;
}

pmix_status_t pg_group_destruct(pg_engine_t *e, const pg_proc_t *proc, const char *name,
                                pg_time_t timeout, pg_time_t now, pg_group_cb_t cb,
                                void *cbdata)
{
    pmix_status_t rc;

    if (e == NULL || proc == NULL || cb == NULL || !name_ok(name))
        return PMIX_ERR_BAD_PARAM;
    if (pg_ns_of(e, proc, &rc) == NULL)
        return rc;
    pg_group_t *g = group_find(e, name);
    if (g == NULL || g->state != GROUP_ACTIVE)
        return PMIX_ERR_NOT_FOUND;
    rc = group_join(e, proc, g, true, timeout, now, cb, cbdata);
    if (rc == PMIX_SUCCESS && (g = group_find(e, name)) != NULL)
        g->destructing = true;
    return rc;
}

const pg_proc_t *pg_group_members(pg_engine_t *e, const char *name, size_t *nmembers)
{
    pg_group_t *g = name != NULL ? group_find(e, name) : NULL;

    if (g == NULL || g->state != GROUP_ACTIVE)
        return NULL;
    *nmembers = g->nmembers;
    return g->members;
}

/* A job ends: groups with members in it go (their collectives have
 * already failed with PMIX_ERR_JOB_TERMINATED in pg_fence_drop_job). */
void pg_groups_drop_job(pg_engine_t *e, pg_ns_t *job)
{
    pg_group_t *g, *tmp;
    DL_FOREACH_SAFE(e->groups, g, tmp) {
        bool uses = false;
        for (size_t i = 0; i < g->nmembers; i++)
            uses |= strcmp(g->members[i].nspace, job->nspace) == 0;
        if (uses)
            group_remove(e, g);
    }
}

void pg_groups_free_all(pg_engine_t *e)
{
    pg_group_t *g, *tmp;
    DL_FOREACH_SAFE(e->groups, g, tmp)
        group_remove(e, g);
}

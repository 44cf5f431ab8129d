/*
 * pg_group_int: what the two files of the engine's process groups share
 * (pg_group.c: the groups and their collectives; pg_group_xnode.c: the
 * part the host settles when members are served elsewhere).  Not for
 * anyone else.
 */
#ifndef PG_GROUP_INT_H
#define PG_GROUP_INT_H

#include "engine/pg_engine_int.h"

enum { PG_GROUP_NAME_MAX = PMIX_MAX_NSLEN };

typedef enum { GROUP_PENDING, GROUP_INVITING, GROUP_ACTIVE } group_state_t;

/* An invitee's answer (INVITING groups). */
enum { ANSWER_NONE = 0, ANSWER_ACCEPT, ANSWER_DECLINE };

/* What one member shared at construction (PMIX_GROUP_INFO). */
typedef struct group_share {
    pg_proc_t proc; /* nspace owned */
    void *data;
    size_t size;
} group_share_t;

typedef struct pg_group {
    struct pg_group *prev, *next;
    char *name;
    pg_proc_t *members;     /* sorted; nspace strings owned.  INVITING: everyone invited */
    size_t nmembers;
    group_state_t state;
    bool destructing;
    bool partial;           /* made by an invite that someone declined */
    uint64_t cid;
    uint8_t *answers;       /* INVITING: [nmembers] ANSWER_* (the leader's: ACCEPT) */
    size_t leader;          /* INVITING: the leader's index in members */
    group_share_t *shares;  /* construct: what the members shared, in join order */
    size_t nshares;
} pg_group_t;

pg_group_t *pg_group_find(pg_engine_t *e, const char *name);
/* Is proc one of g's members (by rank or by a wildcard entry)? */
bool pg_group_is_member(const pg_group_t *g, const pg_proc_t *proc);
/* g's member list index of exactly proc (no wildcard), or SIZE_MAX. */
size_t pg_group_member_at(const pg_group_t *g, const pg_proc_t *proc);
/* Adds what proc shared (nothing when data is empty or proc shared
 * already; *added says whether it did). */
pmix_status_t pg_group_share_add(pg_engine_t *e, pg_group_t *g, const pg_proc_t *proc,
                                 const void *data, size_t size, bool *added);
/* Does this engine serve p? */
bool pg_group_proc_served(pg_engine_t *e, const pg_proc_t *p);

#endif

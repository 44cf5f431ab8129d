/*
 * pg_engine_int.h: the engine's private data structures, shared by the
 * engine's .c files only (nothing outside engine/ includes this).
 *
 * Layout in one paragraph: the engine owns jobs (hashed by nspace: the job
 * struct IS the interned namespace) and interned hostnames.  A job owns one
 * slot per distinct key (the interned key), and each slot holds the values
 * posted under that key by every rank -- so the slot is also the index
 * "key -> posting ranks" that makes RANK_UNDEF gets O(1).  A value is one
 * allocation (pg_kv: header + bytes + NUL).  A staged value sits in front of
 * the published one it will replace (kv->older).  Held requests wait on the
 * slot (or node attribute, or name) they need, are listed engine-wide for
 * deadlines and hang detection, and end up on a completion queue that runs
 * callbacks after the engine's state is consistent again.
 */
#ifndef PG_ENGINE_INT_H
#define PG_ENGINE_INT_H

#include <uthash.h>

#include "engine/pg_engine.h"

/* ---- values ---- */

#define PG_KV_STAGED 0x1u /* put but not committed: only the owner may see it */
#define PG_KV_HIDDEN 0x2u /* PMI-2: not even the owner sees it until commit */
#define PG_KV_LOGGED 0x4u /* already in the job's epoch log */

typedef struct pg_kv {
    struct pg_kv *older;   /* published value a staged one will replace */
    pmix_rank_t rank;      /* poster */
    uint32_t epoch;        /* the poster's `collected` when it was published */
    uint32_t size;
    pmix_data_type_t type;
    uint8_t scope;
    uint8_t flags;         /* PG_KV_* */
    char data[];           /* size bytes + NUL */
} pg_kv_t;

/* ---- keys ---- */

#define PG_SLOT_DENSE_AT 8 /* more posters than this: rank-indexed array */

typedef struct pg_slot {
    UT_hash_handle hh;
    struct pg_req *waiters; /* held gets for this key (utlist DL on wprev/wnext) */
    pg_kv_t **cells;        /* small: [count] scanned; dense: [job size] by rank */
    uint32_t count;         /* posters */
    uint32_t cap;           /* allocated cells; UINT32_MAX once dense */
    char key[];
} pg_slot_t;

typedef struct pg_nattr { /* PMI-2 node attribute, per (job, node) */
    UT_hash_handle hh;
    struct pg_req *waiters;
    pg_kv_t *kv;            /* NULL until posted */
    char key[];
} pg_nattr_t;

/* ---- processes and jobs ---- */

#define PG_NOT_EXITED INT32_MIN /* exits[] of a process still running */
typedef enum { PG_PROC_NEW = 0, PG_PROC_CONNECTED, PG_PROC_FINALIZED, PG_PROC_LOST } pg_proc_state_t;

typedef struct pg_procst {
    uint8_t state;          /* pg_proc_state_t */
    bool able;              /* scratch for hang detection */
    uint16_t nfences;       /* fences joined and not completed */
    uint32_t nheld;         /* held requests that block this process */
    uint32_t fences_done;   /* completed fences (PG_GET_NOWAIT_AFTER_FENCE) */
    uint32_t collected;     /* fences whose data went to the host: what it
                               published since is the next one's (pg_fence.c) */
    uint32_t nstaged, capstaged;
    pg_slot_t **staged;     /* slots holding a staged value of this process */
} pg_procst_t;

typedef struct pg_host {   /* interned hostname: node identity across jobs */
    UT_hash_handle hh;
    uint32_t refs;
    char name[];
} pg_host_t;

typedef struct pg_logent {
    pg_slot_t *slot;
    pmix_rank_t rank;
} pg_logent_t;

/* A namespace: one job as the engine keeps it (its own name, so it is
 * never taken for the launcher's own pg_job_t). */
typedef struct pg_ns {
    UT_hash_handle hh;
    struct pg_engine *engine;
    uint32_t refs;          /* the engine's + queued fence results' */
    bool dead;              /* deregistered, waiting for refs to drop */
    uint32_t size, univ_size, nnodes, napps;
    bool spawned;
    bool stop_in_init;      /* PMIX_DEBUG_STOP_IN_INIT: stop_rank */
    pmix_rank_t stop_rank;
    bool tool;      /* a tool's namespace (pg_ns_layout_t.tool) */
    bool has_parent;        /* parent holds PMIX_PARENT_ID */
    pmix_proc_t parent;
    pg_host_t **nodes;      /* [nnodes] */
    uint32_t *rank_node;    /* [size] */
    uint16_t *local_rank, *node_rank; /* [size] */
    uint32_t *appnum;       /* [size] */
    uint32_t *node_nlocal;  /* [nnodes] ranks of this job per node */
    char **node_peers;      /* [nnodes] "r0,r1,..." */
    bool *node_served;      /* [nnodes] */
    char **cpuset, **locality; /* [size] entries may be NULL; arrays may be NULL */
    char *anl_map, *node_list, *proc_map, *univ_str;
    char *dead_str;         /* PMI_dead_processes, rebuilt on demand */
    pg_procst_t *procs;     /* [size] */
    uint32_t nable;         /* hang detection scratch: able ranks */
    uint32_t *node_able;    /* [nnodes] the same per node */
    pg_slot_t *slots;       /* key -> posters */
    pg_nattr_t **nattrs;    /* [nnodes] hash heads */
    int32_t *pids;          /* [size] pg_proc_set_exec, allocated at its first call */
    pg_jobctl_t *jobctl;    /* [size] pg_jobctl_set, allocated at its first call */
    char **exes;            /* [size] the same */
    int32_t *exits;         /* [size] pg_proc_set_exit's codes, PG_NOT_EXITED until
                             * then; allocated at its first call */
    pg_logent_t *log;       /* keys committed since the last whole-job fence */
    size_t nlog, caplog;
    char nspace[];
} pg_ns_t;

/* ---- requests ---- */

/* PG_REQ_NAME: a publish or unpublish the host answers (the name hooks) */
typedef enum { PG_REQ_GET, PG_REQ_NODE_GET, PG_REQ_LOOKUP, PG_REQ_FENCE, PG_REQ_NAME } pg_req_kind_t;

struct pg_fence;

typedef struct pg_req {
    struct pg_req *prev, *next;   /* engine held list, or completion queue */
    struct pg_req *wprev, *wnext; /* waiters of a slot / nattr / lookup list */
    pg_req_kind_t kind;
    bool held;                    /* on the engine held list */
    bool blocks;                  /* counts in the requester's nheld */
    pg_ns_t *job;                /* requester's job (referenced) */
    pmix_rank_t rank;             /* requester */
    pg_ns_t *tjob;               /* target job */
    pmix_rank_t target;
    unsigned flags;
    pmix_scope_t scope;
    pg_slot_t *slot;              /* PG_REQ_GET */
    pg_nattr_t *nattr;            /* PG_REQ_NODE_GET */
    uint32_t node;                /* PG_REQ_NODE_GET */
    char *key;                    /* PG_REQ_LOOKUP: owned copy */
    struct pg_fence *fence;       /* PG_REQ_FENCE */
    uint64_t dmodex_id;           /* != 0 while the host fetches */
    uint64_t name_id;             /* != 0 while the host answers a name hook */
    pg_time_t deadline;           /* PG_TIME_NEVER = none */
    pg_time_t since;              /* `now` when it was held (pg_engine_view) */
    union {
        pg_get_cb_t get;
        pg_lookup_cb_t lookup;
        pg_fence_cb_t fence;
        pg_name_cb_t name;
    } cb;
    void *cbdata;
    /* result, filled at completion */
    pmix_status_t status;
    pg_kv_t *value;               /* owned copy */
    pmix_rank_t poster;
    pg_proc_t publisher;
    char *publisher_ns;           /* owned */
    struct pg_fence_keys *keys;   /* referenced */
} pg_req_t;

/* ---- fences ---- */

typedef struct pg_fence {
    UT_hash_handle hh;            /* engine->fences by signature */
    char *sig;                    /* hash key */
    size_t siglen;
    uint64_t id;                  /* current instance, 0 when idle */
    uint64_t seq;                 /* instances so far, but those failed before the host saw them */
    pg_ns_t **pjob;              /* [nparts] participant jobs (referenced) */
    pmix_rank_t *prank;           /* [nparts] rank or WILDCARD */
    size_t nparts;
    size_t *offset;               /* [nparts] first member index of each entry */
    size_t nmembers, nlocal, njoined;
    uint8_t *joined;              /* [nmembers] */
    bool collect, mismatch, host_pending, whole_job;
    bool tagged;                  /* a group collective (pg_group.c) */
    pg_time_t deadline;
    pg_time_t started;            /* `now` of the running instance's first join */
    pg_req_t *joiners;            /* utlist DL on wprev/wnext */
} pg_fence_t;

struct pg_fence_keys {
    pg_ns_t *job;
    pg_logent_t *ents;
    size_t n;
    uint32_t refs;
};

/* ---- names ---- */

typedef struct pg_name {
    UT_hash_handle hh;
    pg_ns_t *job;                /* publisher's job */
    pmix_rank_t rank;
    pg_kv_t *kv;
    char key[];
} pg_name_t;

/* ---- the engine ---- */

/* ---- event subscriptions ---- */

typedef struct pg_sub {
    struct pg_sub *prev, *next;
    uint64_t id;
    pg_ns_t *job;                 /* referenced */
    pmix_rank_t rank;
    pg_event_cb_t cb;             /* NULL: unsubscribed while a notify runs */
    void *cbdata;
} pg_sub_t;

struct pg_engine {
    pg_host_ops_t ops;
    void *host_ctx;
    pg_ns_t *jobs;
    pg_host_t *hosts;
    pg_fence_t *fences;
    pg_name_t *names;
    struct pg_group *groups;      /* pg_group.c (utlist DL) */
    uint64_t next_cid;            /* last group context id handed out */
    pg_req_t *held;               /* all held requests (utlist DL) */
    pg_req_t *lookups;            /* held lookups (wprev/wnext) */
    pg_req_t *done;               /* completion queue (utlist DL) */
    pg_sub_t *subs;               /* event subscriptions (utlist DL) */
    unsigned notifying;           /* pg_event_notify depth: unsubscribe defers frees */
    size_t subs_ended;            /* ended subscriptions not freed yet */
    bool flushing;
    bool hang_dirty;
    uint64_t next_id;
    size_t mem;                   /* counted bytes */
};

/* ---- internal functions (one owner file each) ---- */

/* pg_engine.c: accounting, completion queue, held requests */
#define PG_MALLOC_OVERHEAD 16 /* allocator overhead the accounting assumes per allocation */
void *pg_mem_alloc(pg_engine_t *e, size_t size);
void pg_mem_free(pg_engine_t *e, void *p, size_t size);
char *pg_mem_strdup(pg_engine_t *e, const char *s);
void pg_mem_strfree(pg_engine_t *e, char *s);
pg_kv_t *pg_kv_new(pg_engine_t *e, pmix_rank_t rank, pmix_scope_t scope, const pg_value_t *v);
void pg_kv_free(pg_engine_t *e, pg_kv_t *kv);
pg_value_t pg_kv_value(const pg_kv_t *kv);
pg_req_t *pg_req_new(pg_engine_t *e, pg_req_kind_t kind, pg_ns_t *job, pmix_rank_t rank);
void pg_req_hold(pg_engine_t *e, pg_req_t *r, pg_time_t now, pg_time_t timeout);
pg_time_t pg_deadline_of(pg_time_t now, pg_time_t timeout);
void pg_req_complete(pg_engine_t *e, pg_req_t *r, pmix_status_t status, const pg_kv_t *value);
void pg_engine_flush(pg_engine_t *e);
void pg_ns_ref(pg_ns_t *job);
void pg_ns_unref(pg_ns_t *job);

/* pg_ns.c */
pg_ns_t *pg_ns_find(pg_engine_t *e, const char *nspace);
pg_ns_t *pg_ns_of(pg_engine_t *e, const pg_proc_t *proc, pmix_status_t *rc);
pmix_status_t pg_reserved_get(const pg_get_req_t *req, pg_ns_t *rjob, pg_ns_t *tjob,
                              pg_get_cb_t cb, void *cbdata);
void pg_ns_destroy(pg_ns_t *job);
char *pg_anl_map(const uint32_t *rank_node, uint32_t size);
uint32_t pg_ns_node_of(const pg_ns_t *tjob, const pg_ns_t *rjob, pmix_rank_t rrank);

/* pg_store.c */
pg_slot_t *pg_slot_get(pg_ns_t *job, const char *key, bool create);
pg_kv_t **pg_slot_cell(pg_slot_t *slot, pmix_rank_t rank);
uint32_t pg_slot_ncells(const pg_ns_t *job, const pg_slot_t *slot);
bool pg_key_valid(const char *key);
bool pg_scope_reaches(const pg_ns_t *pjob, pmix_rank_t poster, uint8_t scope,
                      const pg_host_t *host);
void pg_store_free_job(pg_engine_t *e, pg_ns_t *job);
void pg_get_retry(pg_engine_t *e, pg_req_t *r);
pg_kv_t *pg_kv_published(pg_kv_t *head);
pmix_status_t pg_store_set_published(pg_ns_t *job, const char *key, pmix_rank_t rank,
                                     pmix_scope_t scope, const pg_value_t *v);

/* pg_modex.c: the blob committed data travels in between engines */
typedef bool (*pg_modex_want_t)(void *ctx, const pg_kv_t *kv);
pmix_status_t pg_modex_build(pg_ns_t *job, pg_modex_want_t want, void *ctx,
                             void **blob, size_t *size);
pmix_status_t pg_modex_ingest(pg_engine_t *e, const void *data, size_t size);

/* pg_fence.c */
void pg_fence_proc_gone(pg_engine_t *e);
void pg_fence_drop_job(pg_engine_t *e, pg_ns_t *job);
void pg_fence_expire(pg_engine_t *e, pg_time_t now);
pg_time_t pg_fence_next_deadline(const pg_engine_t *e);
void pg_fence_keys_unref(pg_engine_t *e, struct pg_fence_keys *k);
size_t pg_fence_mem(const pg_engine_t *e);
bool pg_fence_can_complete(const pg_fence_t *f);
/* A group collective's tag ("c:<group>"...), NULL for a plain fence. */
const char *pg_fence_tag(const pg_fence_t *f);
/* The fence whose instance `id` waits for the host, or NULL. */
pg_fence_t *pg_fence_host_pending(pg_engine_t *e, uint64_t id);
/* pg_fence_join whose signature also carries `tag` (NULL = a plain fence):
 * joins with another tag, or none, never meet.  A tagged collective is
 * completed locally (its caller checks every member is served here) and
 * never closes the job's key epoch. */
pmix_status_t pg_fence_join_tagged(pg_engine_t *e, const pg_proc_t *proc, const pg_proc_t *procs,
                                   size_t nprocs, const char *tag, unsigned flags,
                                   pg_time_t timeout, pg_time_t now, pg_fence_cb_t cb,
                                   void *cbdata);

/* pg_group.c */
/* procs[] with every {group name, WILDCARD} entry replaced by the group's
 * members (borrowed nspaces; *out freed by the caller), or *out NULL when
 * none names a group.  PMIX_ERR_BAD_PARAM: a group named with a rank. */
pmix_status_t pg_group_expand(pg_engine_t *e, const pg_proc_t *procs, size_t n, pg_proc_t **out,
                              size_t *nout);
void pg_groups_drop_job(pg_engine_t *e, pg_ns_t *job);
/* Hands a group collective to the host's group hook, with what the
 * members shared when it is a construct. */
void pg_group_to_host(pg_engine_t *e, pg_host_group_t *hg);
void pg_groups_free_all(pg_engine_t *e);

/* pg_hang.c */
void pg_hang_check(pg_engine_t *e);

/* pg_event.c */
void pg_event_raise_lost(pg_engine_t *e, pg_ns_t *job, pmix_rank_t rank);
void pg_event_drop_job(pg_engine_t *e, pg_ns_t *job);
void pg_event_free_exec(pg_engine_t *e, pg_ns_t *job);

/* pg_jobctl.c */
void pg_jobctl_free(pg_engine_t *e, pg_ns_t *job);

/* pg_nameserv.c */
void pg_names_drop_job(pg_engine_t *e, pg_ns_t *job);
void pg_names_free_all(pg_engine_t *e);

#endif

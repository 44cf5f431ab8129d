/*
 * pg_engine.h: the PMIx-style scoped store and modex engine every protocol
 * handler (PMI-1, PMI-2, PMIx) of pmigate talks to.
 *
 * Why it exists: one set of rules (PMIx scopes, realms, retrieval order,
 * fences, held gets, name service) serves all three dialects, so a job whose
 * ranks speak different protocols shares one namespace and one key space.
 *
 * Shape: a plain C library with no I/O, no threads and no clock.  Requests
 * go in with a completion callback + cbdata; the answer comes out through
 * that callback, at once or later ("split-phase").  Everything that needs
 * the outside world goes through pg_host_ops_t; time is passed in by the
 * caller (`now`, monotonic nanoseconds) and the caller arms one timer at
 * pg_engine_next_deadline() and calls pg_engine_expire() when it fires.
 *
 * Callback rules (they hold for every *_cb_t below):
 *  - every callback is called exactly once per accepted request, including
 *    when the request fails, times out, its job is deregistered or the
 *    engine is freed (then with PMIX_ERR_JOB_TERMINATED);
 *  - a callback may be called before the function that started the request
 *    returns ("inline completion");
 *  - a callback may call back into the engine; nested completions are run
 *    after the callback returns, never recursively;
 *  - pointers handed to a callback (values, key strings) are borrowed: valid
 *    only until the callback returns.  Copy what you keep.
 *
 * Status codes are PMIx statuses (pmix_common.h); the PMI handlers translate
 * them to rc=/found= on the wire.
 *
 * Ownership: every pointer argument is borrowed for the duration of the call
 * unless stated otherwise; the engine copies what it keeps (key strings,
 * values, layouts, participant lists).
 */
#ifndef PG_ENGINE_H
#define PG_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmix_common.h"

typedef struct pg_engine pg_engine_t; /* opaque */

/* ------------------------------------------------------------------ */
/* Small value types                                                   */
/* ------------------------------------------------------------------ */

/* A process: a namespace (= PMI-1 kvsname = PMI-2 jobid) and a rank.
 * Unlike pmix_proc_t it does not embed a 256-byte buffer, so it is cheap to
 * pass on the hot path.  `nspace` is borrowed. */
typedef struct pg_proc {
    const char *nspace;
    pmix_rank_t rank;
} pg_proc_t;

/* A type-tagged value as the store keeps it: `type` is a PMIx data type and
 * `data`/`size` its bytes.  Conventions, so the engine never depends on the
 * pack layout:
 *  - PMIX_STRING: the characters, `size` = strlen; the store keeps a NUL at
 *    data[size] so a returned string can be used as a C string directly
 *    (the PMI hot path is a pointer return, no copy);
 *  - PMIX_BYTE_OBJECT: the raw bytes;
 *  - fixed-size scalars (bool, int/uint 8-64, size, pid, float, double,
 *    pmix_rank_t as PMIX_PROC_RANK, status): native host representation;
 *  - anything else (proc, info, data array, ...): the bytes pg_pack produced
 *    for it; the PMIx handler unpacks them again.
 * When the engine hands a value out, `data` is borrowed (see above). */
typedef struct pg_value {
    pmix_data_type_t type;
    size_t size;
    const void *data;
} pg_value_t;

/* Convenience constructors for callers (no allocation: the value points at
 * the argument, which must outlive the use of the pg_value_t). */
pg_value_t pg_value_string(const char *s);
pg_value_t pg_value_bytes(pmix_data_type_t type, const void *data, size_t size);

/* Deadlines and `now` are monotonic nanoseconds chosen by the caller. */
typedef uint64_t pg_time_t;
#define PG_TIME_NEVER UINT64_MAX

/* ------------------------------------------------------------------ */
/* Host operations (filled in by the gateway)                          */
/* ------------------------------------------------------------------ */

/* What the engine tells the host when the local part of a fence is done. */
typedef struct pg_host_fence {
    uint64_t id;                     /* pass back to pg_fence_host_done() */
    uint64_t seq;                    /* per-signature sequence number, 1, 2, ...:
                                        remote contributions are matched on
                                        (signature, seq), never on arrival order */
    const pg_proc_t *participants;   /* sorted signature; WILDCARD = whole nspace */
    size_t nparticipants;
    bool collect;                    /* PMIX_COLLECT_DATA */
    const void *data;                /* local participants' committed REMOTE and
                                        GLOBAL data (pg_modex blob), NULL if !collect */
    size_t size;
} pg_host_fence_t;

struct pg_event;
typedef struct pg_event pg_event_t; /* below, "Events" */

/* A direct-modex request (pg_host_ops_t.dmodex). */
typedef struct pg_host_dmodex {
    uint64_t id;                     /* pass back to pg_dmodex_host_done() */
    pg_proc_t requester;             /* who asks */
    pg_proc_t target;                /* whose data */
    const char *key;                 /* the key the requester waits for */
    bool blocks;                     /* the requester waits in it (not a
                                        PMIx_Get_nb): the serving engine's
                                        hang detection weighs it */
} pg_host_dmodex_t;

/* A group collective for the host (pg_host_ops_t.group). */
typedef struct pg_host_group {
    uint64_t id;                     /* pass back to pg_group_host_done() */
    const char *tag;                 /* "c:<group>" construct, "d:<group>" destruct,
                                        "i:<group>" invite */
    size_t nmembers;                 /* processes in it, every server's */
    size_t nlocal;                   /* of them, served by this engine */
    const void *shares;              /* construct: what this engine's members
                                        shared (PMIX_GROUP_INFO); invite: their
                                        answers.  An opaque blob; NULL when
                                        nothing */
    size_t size;
} pg_host_group_t;

typedef struct pg_host_ops {
    /* The distributed part of a fence.  Called exactly once per fence, after
     * every local participant joined.  The host completes it (possibly
     * inline) with pg_fence_host_done(engine, f->id, status, blob, size),
     * where blob is the concatenation of every server's contribution (a
     * single-node host passes f->data back, or NULL).  `f` and its arrays are
     * borrowed for the call.  NULL hook: the engine completes the fence
     * locally (single-node host). */
    void (*fence)(void *host_ctx, const pg_host_fence_t *f);

    /* A member's PMIX_TIMEOUT passed while fence `id` is at the host: true
     * when the host takes it back (forgets this server's part; the members
     * get PMIX_ERR_TIMEOUT and the next fence of the same participants
     * takes the same seq, to meet the other servers' instance), false when
     * it cannot (the fence then runs to the host's end, untimed; the
     * host may still end it with PMIX_ERR_TIMEOUT, pg_fence_host_done).  Called
     * while the engine completes requests: it must not call into the
     * engine.  NULL: the host times its fences. */
    bool (*fence_cancel)(void *host_ctx, uint64_t id);

    /* Direct modex: fetch the committed data of a process this engine does
     * not serve.  The host completes it with pg_dmodex_host_done(engine,
     * d->id, status, blob, size), blob = pg_proc_modex() of the target on
     * the serving engine.  `d->key` is the key the requester waits for
     * (PMIX_REQUIRED_KEY).  NULL hook: such gets end with PMIX_ERR_NOT_FOUND
     * (the Standard's rule for hosts without direct modex). */
    void (*dmodex)(void *host_ctx, const pg_host_dmodex_t *d);

    /* A direct-modex request ended here before the host answered it (its
     * timeout, the key brought by a fence, its job's end): the host may
     * stop fetching.  Called while the engine completes requests: it must
     * not call into the engine.  NULL: not needed. */
    void (*dmodex_cancel)(void *host_ctx, uint64_t id);

    /* Name service across servers (`pmigate proxy`): the names live at the
     * host, which answers every call with pg_name_host_done(engine, id,
     * ...), inline or later.  NULL publish hook: this engine's names are
     * all there are (then every name hook is ignored); with it, every one
     * must be set.
     * publish: PMIX_SUCCESS, PMIX_ERR_DUPLICATE_KEY (published anywhere).
     * unpublish: PMIX_SUCCESS, PMIX_ERR_NOT_FOUND, PMIX_ERR_NO_PERMISSIONS
     * (another job's name).
     * lookup: PMIX_SUCCESS with the value and its publisher; without
     * `wait` PMIX_ERR_NOT_FOUND for a name not published; with `wait` the
     * host answers once the name is published, and never otherwise.
     * lookup_cancel: the engine no longer waits for lookup `id` (it timed
     * out, or its job ended); a later answer for it is ignored.
     * names_drop: job `nspace` ended on this server: the names its
     * processes here published go. */
    void (*publish)(void *host_ctx, uint64_t id, const pg_proc_t *publisher, const char *key,
                    const pg_value_t *value);
    void (*unpublish)(void *host_ctx, uint64_t id, const pg_proc_t *publisher, const char *key);
    void (*lookup)(void *host_ctx, uint64_t id, const pg_proc_t *requester, const char *key,
                   bool wait);
    void (*lookup_cancel)(void *host_ctx, uint64_t id);
    void (*names_drop)(void *host_ctx, const char *nspace);

    /* Events across servers (`pmigate proxy`): an event raised here whose
     * range reaches past this server (NAMESPACE, UNDEF, SESSION, GLOBAL,
     * CUSTOM), from a process this engine serves or from no process (the
     * host's own, rank UNDEF or WILDCARD), after this engine delivered it.
     * The host carries it to the other servers, which deliver it with
     * pg_event_deliver.  `ev` is borrowed for the call.  NULL: not needed. */
    void (*event)(void *host_ctx, const pg_event_t *ev);

    /* `proc`'s commit just changed what was visible (called inside
     * pg_commit, before any held get it satisfies completes; and when data
     * of a process served elsewhere arrives: a fence's or a dmodex's).  A host that
     * keeps a copy of committed data (the gateway's node segment) learns
     * here that the copy is behind for `proc`.  A commit of keys only
     * `proc` posted and had not published calls nothing: no copy holds
     * them, and their readers must ask anyway.  NULL: not needed. */
    void (*commit)(void *host_ctx, const pg_proc_t *proc);

    /* A fence can never complete: members that had not joined will not
     * (finalized, lost, or gone without ever connecting: pg_proc_finalize
     * of a process that never connected).  `gone` lists them, borrowed for
     * the call; the fence's joiners are failed with PMIX_ERR_LOST_CONNECTION
     * (their completions run after the hook).  NULL: not needed. */
    void (*fence_doomed)(void *host_ctx, const pg_proc_t *gone, size_t ngone);

    /* Groups across servers (`pmigate proxy`): with this hook a group may
     * have members served elsewhere, and every construct and destruct is
     * settled by the host -- which also hands out the context ids, so one
     * id names a group on every server.  group: this engine's members of
     * collective `g` all joined (borrowed for the call); the host answers
     * with pg_group_host_done once every server's members did.
     * group_left: `proc`, served here, left group `name`; the other
     * servers apply it with pg_group_member_left.
     * group_invite: `leader`, served here, invites members[] (the leader
     * among them) to group `name`; the other servers record the
     * invitation with pg_group_invited before their invitees hear
     * PMIX_GROUP_INVITED.
     * group_cancel: the engine gave collective `id` up before the host
     * answered (its PMIX_TIMEOUT): the host forgets this server's part (a
     * member joining again starts afresh).  Called while the engine
     * completes requests: it must not call into the engine.
     * A collective is named by its tag alone: a group has one construct,
     * destruct or invite running at a time.  NULL group hook: groups span
     * this engine (then the other group hooks are ignored). */
    void (*group)(void *host_ctx, const pg_host_group_t *g);
    void (*group_left)(void *host_ctx, const pg_proc_t *proc, const char *name);
    void (*group_invite)(void *host_ctx, const char *name, const pg_proc_t *leader,
                         const pg_proc_t *members, size_t nmembers);
    void (*group_cancel)(void *host_ctx, uint64_t id);
} pg_host_ops_t;

/* ------------------------------------------------------------------ */
/* Engine                                                               */
/* ------------------------------------------------------------------ */

/* Returns NULL on allocation failure.  `ops` is copied; `host_ctx` is
 * passed back untouched to every hook (owned by the caller). */
pg_engine_t *pg_engine_new(const pg_host_ops_t *ops, void *host_ctx);

/* Completes every outstanding request with PMIX_ERR_JOB_TERMINATED, then
 * frees everything.  NULL is ignored. */
void pg_engine_free(pg_engine_t *engine);

/* Earliest deadline of any held request, or PG_TIME_NEVER. */
pg_time_t pg_engine_next_deadline(const pg_engine_t *engine);

/* Completes every held request whose deadline is <= now with
 * PMIX_ERR_TIMEOUT.  Returns how many expired. */
size_t pg_engine_expire(pg_engine_t *engine, pg_time_t now);

/* Memory the engine holds (its own allocations, counted as requested size
 * plus 16 bytes of allocator overhead each, plus hash-table overhead).
 * Used by the memory-budget test and the benchmark. */
size_t pg_engine_memory(const pg_engine_t *engine);

/* ------------------------------------------------------------------ */
/* Namespaces (jobs)                                                    */
/* ------------------------------------------------------------------ */

/* The layout the host knows when it launches a job.  Arrays indexed by rank
 * have `size` entries; arrays indexed by node have `nnodes` entries.  All
 * pointers are borrowed: pg_ns_register copies them. */
typedef struct pg_ns_layout {
    uint32_t size;                /* ranks in the job (PMIX_JOB_SIZE) */
    uint32_t univ_size;           /* PMIX_UNIV_SIZE; 0 = same as size */
    uint32_t nnodes;
    const char *const *hostnames; /* [nnodes], node id = index */
    const uint32_t *rank_node;    /* [size] node id of each rank */
    const uint16_t *local_rank;   /* [size] NULL = computed (order on the node) */
    const uint16_t *node_rank;    /* [size] NULL = same as local_rank */
    const uint32_t *appnum;       /* [size] NULL = all 0 */
    uint32_t napps;               /* 0 = 1 + max appnum */
    const char *const *cpuset;    /* [size] "hwloc:0-3" or NULL entries/array */
    const char *const *locality;  /* [size] PMIX_LOCALITY_STRING or NULL */
    const bool *node_served;      /* [nnodes] does THIS engine serve the node's
                                     processes?  NULL = all nodes are served
                                     (single-node gateway simulating nodes) */
    bool spawned;                 /* PMIX_SPAWNED */
    /* PMIX_DEBUG_STOP_IN_INIT: the host holds rank stop_rank (WILDCARD:
     * every rank) in init for a debugger; a job-level key a tool reads */
    bool stop_in_init;
    pmix_rank_t stop_rank;
    /* the namespace of a tool attached to the gateway (PMIx_tool_init), a
     * process of its own that runs no job: it hears events and asks, but
     * pg_ns_foreach does not list it among the jobs */
    bool tool;
    /* PMIX_PARENT_ID of a spawned job: the process that spawned it (its
     * nspace, NULL = none, and rank).  Absent otherwise: a get answers
     * PMIX_ERR_NOT_FOUND, which is how MPI learns it was not spawned. */
    const char *parent_nspace;
    pmix_rank_t parent_rank;
} pg_ns_layout_t;

/* Registers a job.  Derives every reserved key (session/job/app/node/process
 * realms) and the PMI job attributes from the layout.  Returns
 * PMIX_ERR_BAD_PARAM for an inconsistent layout (node id out of range, empty
 * or over-long nspace), PMIX_ERR_EXISTS if the nspace is taken,
 * PMIX_ERR_NOMEM. */
pmix_status_t pg_ns_register(pg_engine_t *engine, const char *nspace,
                              const pg_ns_layout_t *layout);

/* Ends a job: completes every held request, fence and lookup made by or
 * waiting on the job with PMIX_ERR_JOB_TERMINATED first (no dangling
 * callbacks), removes the job's name-service entries, frees its store.
 * PMIX_ERR_NOT_FOUND for an unknown nspace. */
pmix_status_t pg_ns_deregister(pg_engine_t *engine, const char *nspace);

/* The ANL process map ("(vector,(start,nnodes,ppn),...)",
 * docs/wire-protocol.md, "PMI_process_mapping") of a layout: rank_node[size] gives each rank's node id.  Emits the
 * shortest block list that decodes (with MPICH's wrap-around rule) to the
 * layout; "" when that exceeds 1024 bytes.  Returns a malloc'd string the
 * caller frees, NULL on allocation failure. */
char *pg_anl_map(const uint32_t *rank_node, uint32_t size);

/* PMI job attributes (PMI-2 info-getjobattr, PMI-1 get of PMI_* keys):
 * "PMI_process_mapping" (the ANL vector, "" when longer than 1024 bytes),
 * "universeSize" (decimal), "PMI_dead_processes" (comma list of lost ranks,
 * "" when none).  On success *out is a PMIX_STRING owned by the engine, valid
 * until the next engine call.  PMIX_ERR_NOT_FOUND for other names. */
pmix_status_t pg_ns_attr(pg_engine_t *engine, const char *nspace, const char *name,
                          pg_value_t *out);

/* Is `name` one of the attributes pg_ns_attr answers?  A PMI get of such a
 * key is answered from the job layout, never from the KVS (so a copy of the
 * KVS, like the gateway's shared-memory segment, must not answer it). */
bool pg_ns_attr_known(const char *name);

/* ------------------------------------------------------------------ */
/* Processes                                                            */
/* ------------------------------------------------------------------ */

/* Life cycle of a served process.  A process that has not connected yet is
 * assumed to be starting: it may still post data (hang detection counts it
 * as running).  finalize: it will post nothing more (also for a process
 * that ended without ever connecting: the fences it is a member of fail).  lost: it died or its
 * connection broke before finalize: every request it made completes with
 * PMIX_ERR_LOST_CONNECTION, every fence it takes part in (and has not joined)
 * fails with PMIX_ERR_LOST_CONNECTION, and its rank is listed in
 * "PMI_dead_processes".  All three return PMIX_ERR_NOT_FOUND for an unknown
 * nspace and PMIX_ERR_BAD_PARAM for a rank out of range. */
pmix_status_t pg_proc_connect(pg_engine_t *engine, const pg_proc_t *proc);
pmix_status_t pg_proc_finalize(pg_engine_t *engine, const pg_proc_t *proc);
pmix_status_t pg_proc_lost(pg_engine_t *engine, const pg_proc_t *proc);

/* ------------------------------------------------------------------ */
/* Data: put / commit                                                   */
/* ------------------------------------------------------------------ */

/* pg_put flags. */
#define PG_PUT_HIDDEN 0x1u /* PMI-2 kvs-put: invisible to everyone, the owner
                              included, until pg_commit (the gateway commits at
                              kvs-fence).  Without it the owner reads its own
                              staged value at once (PMIx, PMI-1). */

/* Stages `key` = `value` for `proc` with the given scope (PMIX_LOCAL,
 * PMIX_REMOTE, PMIX_GLOBAL, PMIX_INTERNAL).  A later put of the same key by
 * the same process overwrites it; the value is copied.
 * Errors: PMIX_ERR_BAD_PARAM for a reserved key ("pmix" prefix), an empty or
 * over-long key (> PMIX_MAX_KEYLEN), or a key already posted by this process
 * in a different scope; PMIX_ERR_NOT_SUPPORTED for another scope value;
 * PMIX_ERR_NOT_FOUND for an unknown process. */
pmix_status_t pg_put(pg_engine_t *engine, const pg_proc_t *proc, pmix_scope_t scope,
                     const char *key, const pg_value_t *value, unsigned flags);

/* Publishes everything `proc` staged: from now on readers in scope find it,
 * held gets waiting for it complete.  INTERNAL values stay private. */
pmix_status_t pg_commit(pg_engine_t *engine, const pg_proc_t *proc);

/* PMI-2 info-putnodeattr: a per-(job, node) key space shared by the processes
 * of one node, visible at once, no commit; later puts overwrite. */
pmix_status_t pg_node_put(pg_engine_t *engine, const pg_proc_t *proc, const char *key,
                          const pg_value_t *value);

/* ------------------------------------------------------------------ */
/* Data: get                                                            */
/* ------------------------------------------------------------------ */

/* pg_get_req_t.flags */
#define PG_GET_IMMEDIATE    0x01u /* PMIX_IMMEDIATE: answer from what is there, never hold */
#define PG_GET_RANK_HINT    0x02u /* PMI-2 srcid: look at target.rank first, then
                                     search the namespace as for RANK_UNDEF */
#define PG_GET_NOWAIT_AFTER_FENCE 0x04u /* PMI-2 kvs-get: once the requester has
                                     completed a fence, a missing key is
                                     PMIX_ERR_NOT_FOUND at once */
#define PG_GET_NODE_ATTR    0x08u /* PMI-2 info-getnodeattr: the requester's node
                                     key space (pg_node_put); holds unless IMMEDIATE */
#define PG_GET_REFRESH      0x10u /* PMIX_GET_REFRESH_CACHE: the client library
                                     asks the server again; for the engine it
                                     means "do not answer from a dmodex cache" */
#define PG_GET_NONBLOCKING  0x20u /* PMIx_Get_nb: the requester keeps running
                                     while this is held, so hang detection does
                                     not count it as blocked by it */

/* Realm qualifiers for reserved keys (PMIX_*_INFO attributes). */
typedef enum pg_realm {
    PG_REALM_DEFAULT = 0, /* the key's own realm (docs/engine.md, "Model") */
    PG_REALM_SESSION,
    PG_REALM_JOB,
    PG_REALM_APP,
    PG_REALM_NODE,
    PG_REALM_PROC
} pg_realm_t;

typedef struct pg_get_req {
    pg_proc_t requester;   /* who asks (their node decides LOCAL/REMOTE scope) */
    pg_proc_t target;      /* nspace NULL or "" = requester's; rank: a rank,
                              PMIX_RANK_UNDEF (globally unique key, PMI-1 get)
                              or PMIX_RANK_WILDCARD (job realm) */
    const char *key;
    unsigned flags;        /* PG_GET_* */
    pmix_scope_t scope;    /* PMIX_DATA_SCOPE restriction, PMIX_SCOPE_UNDEF = none */
    pg_time_t timeout;     /* PMIX_TIMEOUT in ns, 0 = none */
    pg_realm_t realm;      /* reserved keys only */
    uint32_t appnum;       /* with PG_REALM_APP; UINT32_MAX = target's app */
    uint32_t nodeid;       /* with PG_REALM_NODE; UINT32_MAX = target's node */
} pg_get_req_t;

/* Initialises *req to: no flags, no scope, no timeout, default realm. */
void pg_get_req_init(pg_get_req_t *req, const pg_proc_t *requester,
                     const pg_proc_t *target, const char *key);

/* status: PMIX_SUCCESS with value, or PMIX_ERR_NOT_FOUND,
 * PMIX_ERR_EXISTS_OUTSIDE_SCOPE, PMIX_ERR_TIMEOUT, PMIX_ERR_BAD_PARAM,
 * PMIX_ERR_LOST_CONNECTION, PMIX_ERR_JOB_TERMINATED (value NULL).
 * `poster` is the rank that posted the value (useful after RANK_UNDEF). */
typedef void (*pg_get_cb_t)(pmix_status_t status, const pg_value_t *value,
                            pmix_rank_t poster, void *cbdata);

/* Retrieval order for non-reserved keys (the Standard's, server side):
 *  1. found in a scope that contains the requester -> value;
 *  2. exists in a scope that excludes it -> PMIX_ERR_EXISTS_OUTSIDE_SCOPE;
 *  3. PG_GET_IMMEDIATE -> PMIX_ERR_NOT_FOUND;
 *  4. rank PMIX_RANK_UNDEF -> hold until some rank commits it, or timeout
 *     (PMIX_ERR_TIMEOUT);
 *  5. served target -> hold until the target commits it, or timeout;
 *  6. unserved target -> host dmodex, or PMIX_ERR_NOT_FOUND without one.
 * A held request that can no longer be satisfied (hang detection: every
 * process that could post the key is finalized, lost, or itself blocked in a
 * held request or fence that only it could release) ends with
 * PMIX_ERR_NOT_FOUND.  A get may be made for a requester this engine does
 * not serve (the host's, for another server's direct-modex request): it
 * is judged the same way, and while a blocking one is held its requester
 * counts as blocked here, so a fence it is a member of cannot complete
 * (its target waiting in such a fence, uncommitted, ends the get:
 * NOT_FOUND, as on one server).  A process always reads back its own
 * values, even before commit (unless PG_PUT_HIDDEN).  Reserved keys ("pmix*") are
 * answered from the job layout and never block (missing -> NOT_FOUND).
 *
 * Returns PMIX_SUCCESS when the callback already ran, PMIX_OPERATION_IN_PROGRESS
 * when the request was held (callback later -- or already, when hang
 * detection ended it at once).  The callback runs exactly once either way,
 * also for errors.  `now` is read only to set the deadline of a held
 * request, so a PG_GET_IMMEDIATE get (never held) may pass 0. */
pmix_status_t pg_get(pg_engine_t *engine, const pg_get_req_t *req, pg_time_t now,
                     pg_get_cb_t cb, void *cbdata);

/* Ends the held get started with (cb, cbdata) with `status` (its callback
 * runs): the host's way to drop a get it made for a process it does not
 * serve (a direct-modex request from another node, cancelled there).
 * PMIX_ERR_NOT_FOUND when no such get is held. */
pmix_status_t pg_get_cancel(pg_engine_t *engine, pg_get_cb_t cb, void *cbdata,
                            pmix_status_t status);

/* ------------------------------------------------------------------ */
/* Fences                                                               */
/* ------------------------------------------------------------------ */

/* pg_fence_join flags */
#define PG_FENCE_COLLECT 0x1u /* PMIX_COLLECT_DATA */

/* Keys committed in the epoch a fence closes: walk them with
 * pg_fence_keys_next() inside the fence callback (PMI-1's keyval_cache). */
typedef struct pg_fence_keys pg_fence_keys_t;

/* Advances *cursor (start at 0); returns false at the end.  *key and *value
 * are borrowed (valid during the fence callback).  Each (rank, key) appears
 * once with its latest value; INTERNAL values never appear. */
bool pg_fence_keys_next(const pg_fence_keys_t *keys, size_t *cursor, pmix_rank_t *rank,
                        const char **key, pg_value_t *value);

/* status: PMIX_SUCCESS, PMIX_ERR_INVALID_ARG (participants disagreed on
 * COLLECT_DATA), PMIX_ERR_LOST_CONNECTION (a participant was lost or
 * finalized before joining), PMIX_ERR_TIMEOUT, PMIX_ERR_JOB_TERMINATED, or
 * the host's status.  `keys` is non-NULL only on success of a whole-namespace
 * fence (the epoch it closes); NULL otherwise. */
typedef void (*pg_fence_cb_t)(pmix_status_t status, const pg_fence_keys_t *keys,
                              void *cbdata);

/* `proc` joins the fence over `participants` (NULL/0 = {proc's nspace,
 * WILDCARD}).  The sorted participant list is the signature: joins with the
 * same signature meet in one fence, different signatures run concurrently;
 * WILDCARD does not match an explicit list of every rank.  Joining commits
 * nothing by itself (PMI barriers call pg_commit first).  When every served
 * participant has joined, the host's fence hook runs once; its completion
 * fans out to every joiner.  `timeout` (ns, 0 = none) bounds the wait for the
 * local participants.  Errors returned at once (callback NOT called):
 * PMIX_ERR_BAD_PARAM (proc not a participant, unknown participant nspace,
 * rank out of range), PMIX_ERR_EXISTS (proc already joined this signature's
 * current fence: a duplicate contribution is never counted for the next one),
 * PMIX_ERR_NOT_FOUND (unknown proc). */
pmix_status_t pg_fence_join(pg_engine_t *engine, const pg_proc_t *proc,
                            const pg_proc_t *participants, size_t nparticipants,
                            unsigned flags, pg_time_t timeout, pg_time_t now,
                            pg_fence_cb_t cb, void *cbdata);

/* The host finished the distributed part of fence `id`.  `data` holds the
 * collected modex blobs (ingested when the fence collects).  A stale or
 * duplicate id is ignored and returns PMIX_ERR_NOT_FOUND.  Status
 * PMIX_ERR_TIMEOUT says the host settled the instance as timed out on
 * every server (a member's PMIX_TIMEOUT, decided in one place after
 * fence_cancel said false): the members get it and, as after a cancel,
 * the next fence of the same participants takes the same seq. */
pmix_status_t pg_fence_host_done(pg_engine_t *engine, uint64_t id, pmix_status_t status,
                                 const void *data, size_t size);

/* ------------------------------------------------------------------ */
/* Process groups (PMIx_Group_construct / _destruct / _invite / ...)   */
/* ------------------------------------------------------------------ */

/* status: PMIX_SUCCESS, PMIX_ERR_LOST_CONNECTION (a member was lost or
 * finalized before joining), PMIX_ERR_TIMEOUT, PMIX_ERR_JOB_TERMINATED.
 * context_id: the group's context id (construct; identical for every
 * member, unique in the engine, never 0), 0 otherwise. */
typedef void (*pg_group_cb_t)(pmix_status_t status, uint64_t context_id, void *cbdata);

/* `proc` joins the construction of group `name` over `members` (ranks or
 * WILDCARD; proc must be one of them).  The group exists once every member
 * joined with the same member set; the callback then runs on each joiner.
 * `share` (`size` bytes the engine never reads, NULL/0: none) is what proc
 * gives the other members (PMIX_GROUP_INFO): copied, and listed by
 * pg_group_shared_next while the group exists.
 * Errors returned at once (callback NOT called): PMIX_ERR_BAD_PARAM (empty
 * or over-long name, no members, proc not a member, another member set
 * than the joins before), PMIX_ERR_EXISTS (the group exists, or proc
 * already joined), PMIX_ERR_NOT_SUPPORTED (a member this engine does not
 * serve, and no host group hook), PMIX_ERR_NOT_FOUND (unknown proc). */
pmix_status_t pg_group_construct(pg_engine_t *engine, const pg_proc_t *proc, const char *name,
                                 const pg_proc_t *members, size_t nmembers, const void *share,
                                 size_t size, pg_time_t timeout, pg_time_t now, pg_group_cb_t cb,
                                 void *cbdata);

/* What the members of group `name` shared at its construction, one member
 * per call in the order they joined (members that shared nothing are
 * skipped): start *cursor at 0; false at the end or when there is no such
 * (fully constructed) group.  Borrowed until the next engine call. */
bool pg_group_shared_next(pg_engine_t *engine, const char *name, size_t *cursor, pg_proc_t *proc,
                          const void **data, size_t *size);

/* The names of the groups that exist (fully constructed), one per call:
 * start *cursor at 0; NULL at the end.  Borrowed until the next engine
 * call. */
const char *pg_group_next(pg_engine_t *engine, size_t *cursor);

/* `proc` joins the destruction of group `name`: a collective over its
 * members; the group is gone once all joined.  PMIX_ERR_NOT_FOUND (no such
 * group), PMIX_ERR_BAD_PARAM (proc not a member), as above otherwise. */
pmix_status_t pg_group_destruct(pg_engine_t *engine, const pg_proc_t *proc, const char *name,
                                pg_time_t timeout, pg_time_t now, pg_group_cb_t cb,
                                void *cbdata);

/* The members of an existing group (borrowed until the next engine call),
 * or NULL when there is no such (fully constructed) group. */
const pg_proc_t *pg_group_members(pg_engine_t *engine, const char *name, size_t *nmembers);

/* PMIx_Group_invite: `leader` invites `invitees` (explicit ranks; the
 * leader, if listed, is not invited) to form group `name`.  Each invitee
 * gets PMIX_GROUP_INVITED (source the leader, the event's `group` the
 * name) and answers with pg_group_join.  The callback runs on the leader
 * once every invitee has answered: PMIX_SUCCESS (all accepted) or
 * PMIX_ERR_PARTIAL_SUCCESS (some declined), with the context id of the
 * group now ACTIVE over the leader and the accepters (pg_group_members
 * names them), who also get PMIX_GROUP_CONSTRUCT_COMPLETE (source the
 * leader, PMIX_GROUP_ID, PMIX_GROUP_CONTEXT_ID); or
 * PMIX_GROUP_INVITE_FAILED (an invitee went away before answering; the
 * leader got PMIX_GROUP_INVITE_FAILED from it), PMIX_ERR_TIMEOUT,
 * PMIX_ERR_JOB_TERMINATED -- and then no group.  Errors returned at once
 * (callback NOT called): PMIX_ERR_BAD_PARAM (bad name, nobody but the
 * leader, a wildcard, someone named twice), PMIX_ERR_EXISTS
 * (the name is taken), PMIX_ERR_NOT_SUPPORTED (an invitee served
 * elsewhere, and no host group hook), PMIX_ERR_NOT_FOUND (unknown
 * leader).  With the hook, invitees may be served anywhere: the host
 * hears of the invitation (group_invite) and settles it (group). */
pmix_status_t pg_group_invite(pg_engine_t *engine, const pg_proc_t *leader, const char *name,
                              const pg_proc_t *invitees, size_t ninvitees, pg_time_t timeout,
                              pg_time_t now, pg_group_cb_t cb, void *cbdata);

/* PMIx_Group_join: invitee `proc` answers the invitation to `name` from
 * `leader` (NULL: whoever invited).  The leader gets
 * PMIX_GROUP_INVITE_ACCEPTED or _DECLINED (source proc) first.  A decline
 * is answered at once with PMIX_SUCCESS; an accept when the invite
 * completes, with the leader's statuses above (PMIX_SUCCESS and the
 * context id when the group is made).  Errors returned at once:
 * PMIX_ERR_NOT_FOUND (no invitation under that name), PMIX_ERR_BAD_PARAM
 * (proc not invited, or another leader), PMIX_ERR_EXISTS (proc answered
 * already, or is a member already). */
pmix_status_t pg_group_join(pg_engine_t *engine, const pg_proc_t *proc, const char *name,
                            const pg_proc_t *leader, bool accept, pg_time_t timeout,
                            pg_time_t now, pg_group_cb_t cb, void *cbdata);

/* PMIx_Group_leave: member `proc` leaves group `name` at once; the
 * remaining members get PMIX_GROUP_LEFT (source proc) and later
 * collectives (destruct) span them only; the last member's leave ends the
 * group.  PMIX_ERR_NOT_FOUND (no such group), PMIX_ERR_BAD_PARAM (proc is
 * not a member), PMIX_ERR_RESOURCE_BUSY (a destruct of the group runs). */
pmix_status_t pg_group_leave(pg_engine_t *engine, const pg_proc_t *proc, const char *name);

/* The host settles group collective `id` (pg_host_ops_t.group): status as
 * pg_group_cb_t's; `cid` (non-zero) is the context id of the group a
 * construct makes; `shares` the concatenation of every engine's
 * pg_host_group_t.shares (NULL/0: none), which this engine's members then
 * read too (a malformed blob fails the construct here with
 * PMIX_ERR_BAD_PARAM).  PMIX_ERR_NOT_FOUND for an unknown or settled id. */
pmix_status_t pg_group_host_done(pg_engine_t *engine, uint64_t id, pmix_status_t status,
                                 uint64_t cid, const void *shares, size_t size);

/* `proc`, served by another engine, left group `name` there (its engine
 * raised PMIX_GROUP_LEFT): the member list here follows, without a second
 * event.  Errors as pg_group_leave. */
pmix_status_t pg_group_member_left(pg_engine_t *engine, const pg_proc_t *proc, const char *name);

/* `leader`, served by another engine, invited members[] (the leader among
 * them) to group `name` there: this engine's invitees may answer
 * (pg_group_join); nothing is raised here (the leader's engine raised
 * PMIX_GROUP_INVITED).  An engine that serves none of them keeps nothing.
 * PMIX_ERR_EXISTS (the name is taken here), as pg_group_invite else. */
pmix_status_t pg_group_invited(pg_engine_t *engine, const char *name, const pg_proc_t *leader,
                               const pg_proc_t *members, size_t nmembers);

/* ------------------------------------------------------------------ */
/* Snapshots of committed data (the host's per-node shared segment)    */
/* ------------------------------------------------------------------ */

/* Called once per visible (key, rank).  `key` and `value` are borrowed:
 * valid until the visitor returns, and only while the engine is not called.
 * Returning anything but PMIX_SUCCESS stops the walk with that status. */
typedef pmix_status_t (*pg_visible_fn)(void *arg, const char *key, pmix_rank_t rank,
                                       const pg_value_t *value);

/* Walks the committed values of job `nspace` that every process of node
 * `nodeid` may read: GLOBAL ones, LOCAL ones posted on that node, REMOTE
 * ones posted on another node; never INTERNAL ones and never staged (not
 * yet committed) values.  A poster also reads its own LOCAL/REMOTE/INTERNAL
 * values and staged ones; those are not per-node facts and are left out.
 * Each (key, rank) appears once, in no particular order.
 * Returns PMIX_SUCCESS, PMIX_ERR_NOT_FOUND (unknown nspace),
 * PMIX_ERR_BAD_PARAM (nodeid out of range, NULL visitor) or the visitor's
 * status. */
pmix_status_t pg_ns_foreach_visible(pg_engine_t *engine, const char *nspace, uint32_t nodeid,
                                     pg_visible_fn visitor, void *arg);

/* ------------------------------------------------------------------ */
/* Direct modex (multi-server hosts)                                   */
/* ------------------------------------------------------------------ */

/* Serialises the committed REMOTE and GLOBAL data of a served `proc` into a
 * malloc'd blob the caller frees.  This is what the host sends back for a
 * dmodex request and what a fence collects. */
pmix_status_t pg_proc_modex(pg_engine_t *engine, const pg_proc_t *proc, void **blob,
                            size_t *size);

/* Ingests blobs the host collected from other servers (pg_proc_modex or
 * fence contributions) without completing anything: a multi-node host
 * ingests a fence's remote data first, writes its node's key segment, and
 * only then completes the fence with pg_fence_host_done(..., NULL, 0).
 * PMIX_ERR_UNPACK_FAILURE for a malformed blob. */
pmix_status_t pg_modex_host_ingest(pg_engine_t *engine, const void *data, size_t size);

/* The host answered dmodex request `id`: ingests the blob (data of unserved
 * processes), then re-runs the waiting get.  Stale ids: PMIX_ERR_NOT_FOUND.
 * A malformed blob completes the get with PMIX_ERR_UNPACK_FAILURE. */
pmix_status_t pg_dmodex_host_done(pg_engine_t *engine, uint64_t id, pmix_status_t status,
                                  const void *data, size_t size);

/* ------------------------------------------------------------------ */
/* Name service (one range: the whole gateway)                          */
/* ------------------------------------------------------------------ */

/* The answer to a publish or an unpublish: PMIX_SUCCESS or the reason. */
typedef void (*pg_name_cb_t)(pmix_status_t status, void *cbdata);

/* Publishes `key`: the callback gets PMIX_SUCCESS, PMIX_ERR_DUPLICATE_KEY
 * if `key` is already published (nothing changes), PMIX_ERR_BAD_PARAM for
 * an empty key or no value, PMIX_ERR_NOT_FOUND for an unknown publisher,
 * PMIX_ERR_JOB_TERMINATED when the publisher's job ends first.  The entry
 * lives until unpublished or the publisher's job ends.  Return value and
 * callback rules as pg_get (PMIX_ERR_BAD_PARAM without a callback, which
 * is then not called). */
pmix_status_t pg_publish(pg_engine_t *engine, const pg_proc_t *publisher, const char *key,
                         const pg_value_t *value, pg_name_cb_t cb, void *cbdata);

/* Unpublishes `key`: PMIX_SUCCESS, PMIX_ERR_NOT_FOUND if not published,
 * PMIX_ERR_NO_PERMISSIONS if published by a different job.  Rules as
 * pg_publish. */
pmix_status_t pg_unpublish(pg_engine_t *engine, const pg_proc_t *publisher, const char *key,
                           pg_name_cb_t cb, void *cbdata);

/* status PMIX_SUCCESS (value + publisher), PMIX_ERR_NOT_FOUND,
 * PMIX_ERR_TIMEOUT, PMIX_ERR_JOB_TERMINATED. */
typedef void (*pg_lookup_cb_t)(pmix_status_t status, const pg_value_t *value,
                               const pg_proc_t *publisher, void *cbdata);

/* Looks `key` up.  wait=false: answers at once (or, with the name hooks,
 * when the host answers).  wait=true (PMIX_WAIT): holds until published
 * -- here, or for the name hooks anywhere: the host's answer wakes it --
 * or until `timeout` (ns, 0 = none) passes.  Return value and callback
 * rules as pg_get. */
pmix_status_t pg_lookup(pg_engine_t *engine, const pg_proc_t *requester, const char *key,
                        bool wait, pg_time_t timeout, pg_time_t now, pg_lookup_cb_t cb,
                        void *cbdata);

/* The host's answer to name-hook call `id` (publish and unpublish: the
 * status; lookup: PMIX_SUCCESS with `value` and `publisher`, borrowed, or
 * the failure).  PMIX_ERR_NOT_FOUND for an id nobody waits for (it timed
 * out or its job ended), PMIX_SUCCESS otherwise. */
pmix_status_t pg_name_host_done(pg_engine_t *engine, uint64_t id, pmix_status_t status,
                                const pg_value_t *value, const pg_proc_t *publisher);
/* ------------------------------------------------------------------ */
/* Events (PMIx_Notify_event, and the ones the engine raises)         */
/* ------------------------------------------------------------------ */

/* One typed detail of an event raised without a PMIx packing (by the
 * engine, a PMI-1/PMI-2 handler or the host): an abort's exit code and
 * message, a job's end status...  The value is typed as the store keeps
 * values (pg_value_t); the PMIx handler turns each into one info. */
typedef struct pg_event_detail {
    const char *key;
    pg_value_t value;
} pg_event_detail_t;

/* One event as subscribers see it.  `source` is reported as given;
 * `origin` is the process that raised it: it is never delivered to, and
 * LOCAL/NAMESPACE ranges are measured from it.  `info`/`info_size` are bytes the
 * engine never reads (the PMIx handler's packed pmix_info_t array); NULL
 * for the events raised without one, whose info is the source (as
 * PMIX_EVENT_AFFECTED_PROC) and `details`.
 * `targets` is read for PMIX_RANGE_CUSTOM only (rank WILDCARD = the whole
 * nspace).  Everything is borrowed for the call. */
struct pg_event {
    pmix_status_t status;
    pg_proc_t source;
    pg_proc_t origin;
    pmix_data_range_t range;
    const pg_proc_t *targets;
    size_t ntargets;
    const void *info;
    size_t info_size;
    const pg_event_detail_t *details; /* [ndetails], read when info is NULL */
    size_t ndetails;
};

/* Called once per delivered event, inline, inside pg_event_notify or the
 * engine call that raised it (pg_proc_lost).  It may call
 * pg_event_unsubscribe (any subscription) but no other engine function. */
typedef void (*pg_event_cb_t)(const pg_event_t *ev, void *cbdata);

/* `proc` (a served process) wants the events whose range includes it.
 * *id identifies the subscription (never 0).  A subscription ends with
 * pg_event_unsubscribe or with its job; its callback is not called then.
 * PMIX_ERR_NOT_FOUND / PMIX_ERR_BAD_PARAM for an unknown process. */
pmix_status_t pg_event_subscribe(pg_engine_t *engine, const pg_proc_t *proc, pg_event_cb_t cb,
                                 void *cbdata, uint64_t *id);
/* PMIX_ERR_NOT_FOUND for an id that is not (or no longer) subscribed. */
pmix_status_t pg_event_unsubscribe(pg_engine_t *engine, uint64_t id);

/* Delivers `ev` to every subscriber in its range, the origin excepted (a
 * client delivers to its own handlers itself): PMIX_RANGE_PROC_LOCAL
 * reaches no one here, LOCAL the processes on the origin's node,
 * NAMESPACE (and UNDEF) the origin's job, SESSION and GLOBAL every job of
 * this engine, CUSTOM the listed targets, RM no process.  An event the host
 * raises (origin rank UNDEF) in range LOCAL reaches every process of this
 * engine's node.  *delivered (may be NULL) counts the callbacks made.
 * With the event hook, an event that reaches past this server then goes
 * to the host (see pg_host_ops_t.event).  PMIX_ERR_BAD_PARAM for an
 * unknown range value or a CUSTOM range without targets. */
pmix_status_t pg_event_notify(pg_engine_t *engine, const pg_event_t *ev, size_t *delivered);

/* An event raised on another server, which the host carried here:
 * delivered as pg_event_notify does, but never handed back to the host.
 * Its origin need not be a process of this engine. */
pmix_status_t pg_event_deliver(pg_engine_t *engine, const pg_event_t *ev, size_t *delivered);

/* pg_proc_lost raises PMIX_ERR_PROC_TERM_WO_SYNC (the Standard's "process
 * terminated without calling PMIx_Finalize"), range NAMESPACE, source the
 * lost process, no info. */

/* ------------------------------------------------------------------ */
/* Process table (PMIx_Query_info)                                    */
/* ------------------------------------------------------------------ */

/* What the host knows about how it started a process (copied). */
pmix_status_t pg_proc_set_exec(pg_engine_t *engine, const pg_proc_t *proc, int32_t pid,
                               const char *executable);

/* The process exited with `exit_code` (the host reaped it): the table
 * says PMIX_PROC_STATE_TERMINATED (0) or PMIX_PROC_STATE_TERM_NON_ZERO,
 * and the code. */
pmix_status_t pg_proc_set_exit(pg_engine_t *engine, const pg_proc_t *proc, int32_t exit_code);

/* One row of the process table.  Strings are borrowed (valid until the
 * next engine call); executable NULL and pid 0 when the host never said. */
typedef struct pg_proc_desc {
    const char *hostname;
    const char *executable;
    int32_t pid;
    uint32_t nodeid;
    pmix_proc_state_t state; /* PMIX_PROC_STATE_* of pmix_common.h */
    int32_t exit_code;       /* pg_proc_set_exit's, 0 while it runs */
} pg_proc_desc_t;

pmix_status_t pg_proc_describe(pg_engine_t *engine, const pg_proc_t *proc, pg_proc_desc_t *out);

/* ------------------------------------------------------------------ */
/* Job-control declarations (PMIx_Job_control)                         */
/* ------------------------------------------------------------------ */

/* What a process declared about itself: PMIX_JOB_CTRL_PREEMPTIBLE, and its
 * checkpoint methods (PMIX_JOB_CTRL_CHECKPOINT_METHOD: a signal, an event
 * code; 0 = none). */
typedef struct pg_jobctl {
    bool preemptible;
    int ckpt_signal;
    pmix_status_t ckpt_event;
} pg_jobctl_t;

/* Records proc's declarations (replacing what it declared before). */
pmix_status_t pg_jobctl_set(pg_engine_t *engine, const pg_proc_t *proc, const pg_jobctl_t *decl);
/* What proc declared (all zero: nothing). */
pmix_status_t pg_jobctl_get(pg_engine_t *engine, const pg_proc_t *proc, pg_jobctl_t *out);
/* A process of job `nspace` declared the job preemptible. */
bool pg_jobctl_preemptible(pg_engine_t *engine, const char *nspace);

/* Calls fn for every registered job namespace (in no particular order),
 * tools' namespaces (pg_ns_layout_t.tool) excepted. */
void pg_ns_foreach(pg_engine_t *engine, void (*fn)(void *arg, const char *nspace), void *arg);

/* ------------------------------------------------------------------ */
/* Read-only view: what the engine waits for (`pmigate status`)       */
/* ------------------------------------------------------------------ */

/* A fence that some member has joined and that has not completed.  Every
 * pointer is borrowed for the callback. */
typedef struct pg_fence_view {
    uint64_t seq;                    /* which fence of its participant set: 1, 2, ... */
    const pg_proc_t *participants;   /* sorted signature; WILDCARD = a whole nspace */
    size_t nparticipants;
    bool whole_job;                  /* the participants are one whole nspace */
    bool group;                      /* a group collective (construct, invite...) */
    bool collect;                    /* PMIX_COLLECT_DATA */
    size_t nmembers;                 /* processes in the fence, every node's */
    size_t nlocal;                   /* of them, served by this engine */
    size_t njoined;                  /* local members that joined */
    bool host_pending;               /* every local member joined: the host's
                                        (the other nodes') part is running */
    pg_time_t started;               /* `now` of the first join */
    const pg_proc_t *missing;        /* the local members that have not joined */
    size_t nmissing;
} pg_fence_view_t;

/* A held request.  Strings are borrowed for the callback. */
typedef enum pg_wait_kind {
    PG_WAIT_GET = 0,   /* a get of a key nobody committed yet */
    PG_WAIT_NODE_ATTR, /* a PMI-2 node attribute nobody put yet */
    PG_WAIT_LOOKUP,    /* a name-service lookup with PMIX_WAIT */
} pg_wait_kind_t;

typedef struct pg_wait_view {
    pg_wait_kind_t kind;
    pg_proc_t requester;
    pg_proc_t target;  /* PG_WAIT_GET: whose key (rank may be PMIX_RANK_UNDEF) */
    const char *key;   /* the key, the attribute or the service name */
    pg_time_t since;   /* `now` when it was held */
} pg_wait_view_t;

/* Calls fn for each fence in progress, then wait_fn for each held get,
 * node-attribute get and lookup (either fn may be NULL), in no particular
 * order.  Changes nothing.  PMIX_ERR_NOMEM when a missing-member list
 * could not be built (the callbacks made so far stand). */
pmix_status_t pg_engine_view(pg_engine_t *engine,
                             void (*fence_fn)(void *arg, const pg_fence_view_t *f),
                             void (*wait_fn)(void *arg, const pg_wait_view_t *w), void *arg);

#endif

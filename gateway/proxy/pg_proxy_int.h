/*
 * pg_proxy_int: what the files of `pmigate proxy` share (pg_proxy.c:
 * start-up; pg_proxy_end.c: how the job ends across nodes;
 * pg_proxy_names.c: the name service; pg_proxy_events.c: events;
 * pg_proxy_status.c: `pmigate status` of the whole job; pg_proxy_fence.c:
 * fences across nodes; pg_proxy_modex.c: direct modex across nodes;
 * pg_proxy_dyn.c, pg_proxy_spawn*.c: dynamic jobs across nodes;
 * pg_proxy_group.c: groups across nodes).  Not for anyone else.
 */
#ifndef PG_PROXY_INT_H
#define PG_PROXY_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gateway/proxy/pg_hostpmix.h"
#include "gateway/proxy/pg_jobend.h"
#include "gateway/job/pg_job.h"
#include "gateway/run/pg_run.h"
#include "gateway/mesh/pg_mesh.h"
#include "gateway/mesh/pg_mesh_msg.h"
#include "gateway/util/pg_parent.h"
#include "engine/pg_engine.h"

struct event;
typedef struct proxy_dyn proxy_dyn_t;
typedef struct proxy_spawn proxy_spawn_t;
typedef struct xfence xfence_t;
typedef struct dmodex_out dmodex_out_t;
typedef struct dmodex_in dmodex_in_t;

typedef struct proxy {
    pg_hostpmix_t *host;
    int nnodes, nodeid;
    int *counts;           /* [nnodes] */
    char **hostnames;      /* [nnodes] */
    char kvsname[64];
    char **env;            /* the ranks' base environment (NULL-terminated) */
    struct event_base *base;
    /* fences across nodes (pg_proxy_fence.c) */
    xfence_t *xfences;       /* running, or announced by another node */
    unsigned fences;         /* cross-node fences started so far */
    uint64_t started_at;     /* pg_clock_now() at the proxy's start */
    uint64_t timeout_at;     /* started_at + --timeout; 0: no --timeout */
    double timeout;          /* --timeout, for the message */
    bool say_times;          /* --verbose or PMIGATE_PROXY_TIMES: one line per fence */
    /* direct modex across nodes (pg_proxy_modex.c) */
    dmodex_out_t *gets_out;  /* this node's gets, waiting for another node */
    dmodex_in_t *gets_in;    /* other nodes' gets, held here */
    struct event *gets_retry; /* gets that came before the node's engine */
    bool ran;                /* the node's run is over */
    char *trace_path;      /* --trace FILE as FILE.<node>, owned */
    /* several nodes: the mesh and the job's one end (NULL with one node) */
    pg_mesh_t *mesh;
    pg_jobend_t *jobend;
    char **mesh_cards;     /* [nnodes] from the start-up allgather, owned */
    struct proxy_names *names; /* the job's names (held at node 0) */
    struct proxy_status *status; /* `pmigate status` answers gathering the nodes' reports */
    struct pg_proxy_group *group; /* groups' collectives (settled at node 0) */
    /* the host runtime: the parent process and OpenPMIx's connection */
    pid_t parent;
    char parent_name[32];
    pg_parent_t *parent_watch;
    bool host_lost;
    /* the node's run while it runs (pg_run_dispatch), else NULL */
    pg_run_t *run;
    bool applying;         /* this proxy is ending its job itself: not a new failure */
    struct event *end_ev;  /* applies the job's end from the loop */
    int end_code;          /* the job's end to apply: status, origin, text */
    int end_origin;
    char end_text[PG_JOBEND_TEXT_MAX];
    /* dynamic jobs across nodes */
    proxy_dyn_t *dyn;
    proxy_spawn_t *spawn;
} proxy_t;

/* pg_proxy_fence.c: the root job's cross-node fence hook and the engine's
 * fence_cancel hook (a fence over a subset timed out); the mesh's frames
 * of fence data (before the mesh comes up); freeing what is left.
 * pg_proxy_node_of: the node of a global rank, -1 out of range. */
void pg_proxy_on_xfence(void *ctx, const pg_job_engine_xfence_t *f);
bool pg_proxy_fence_cancel(void *ctx, uint64_t id);
int pg_proxy_fence_setup(proxy_t *p);
void pg_proxy_fence_free(proxy_t *p);
int pg_proxy_node_of(const proxy_t *p, uint32_t rank);

/* pg_proxy_modex.c: the engine's direct-modex hooks (their ctx is the
 * proxy); the mesh's frames of gets (before the mesh comes up); freeing. */
extern const struct pg_host_ops proxy_modex_ops;
int pg_proxy_modex_setup(proxy_t *p);
void pg_proxy_modex_free(proxy_t *p);

/* pg_proxy_end.c: set up the node's part in the job's end (before the
 * mesh comes up, like every reader of the mesh's frames: a node up first
 * may already fail), and hear of the node's own first failure (the
 * verdict's watch, pg_job_node_t.failed).  0 or -1.  pg_proxy_end_decided:
 * the job's end is known (maybe before this node's run began);
 * pg_proxy_end_apply_soon: the loop's next turn ends the run with it. */
int pg_proxy_end_setup(proxy_t *p);
void pg_proxy_end_free(proxy_t *p);
void pg_proxy_on_verdict(void *ctx, const pg_verdict_t *v);
bool pg_proxy_end_decided(const proxy_t *p);
void pg_proxy_end_apply_soon(proxy_t *p);

/* pg_proxy_names.c: the job's names at node 0, through the mesh (set up
 * before the mesh comes up; nothing with one node).  The engine's name hooks
 * (pg_host_ops_t), called with the proxy. */
int pg_proxy_names_setup(proxy_t *p);
void pg_proxy_names_free(proxy_t *p);
void pg_proxy_name_publish(void *ctx, uint64_t id, const pg_proc_t *publisher, const char *key,
                        const pg_value_t *value);
void pg_proxy_name_unpublish(void *ctx, uint64_t id, const pg_proc_t *publisher, const char *key);
void pg_proxy_name_lookup(void *ctx, uint64_t id, const pg_proc_t *requester, const char *key,
                       bool wait);
void pg_proxy_name_cancel(void *ctx, uint64_t id);
void pg_proxy_names_drop(void *ctx, const char *nspace);

/* pg_proxy_events.c: events to and from the other nodes; the engine's
 * event hook, called with the proxy. */
int pg_proxy_events_setup(proxy_t *p);
void pg_proxy_event(void *ctx, const pg_event_t *ev);

/* The host runtime is gone, or the node's job cannot go on: ends the
 * node's ranks and reports the failure (code, one line) to the job. */
void pg_proxy_fail(proxy_t *p, int code, const char *text);

/* After the node's job is over with `status`: the status to exit with,
 * once the job's end is known across nodes (pg_jobend_finish; a signal
 * pmigate got is a failure like any other, the other nodes hear of it). */
int pg_proxy_end_finish(proxy_t *p, int status);

/* pg_proxy_status.c: every node's status endpoint shows the whole job
 * (set up before the mesh comes up; attached to the run once it exists). */
int pg_proxy_status_setup(proxy_t *p);
void pg_proxy_status_attach(proxy_t *p);
void pg_proxy_status_free(proxy_t *p);
/* pg_proxy_dyn.c: the dynamic jobs' messages.  A handler of a message
 * type of the PG_MESH_DYN_FIRST block, from node `src` (this node's own
 * messages come too, from the loop); the body is borrowed for the call. */
typedef void (*proxy_msg_fn)(proxy_t *p, int src, const void *body, size_t len);
int pg_proxy_dyn_setup(proxy_t *p);
void pg_proxy_dyn_free(proxy_t *p);
int pg_proxy_dyn_on(proxy_t *p, unsigned type, proxy_msg_fn fn);
/* b's body to node `dst`, this one included (queued for the loop's next
 * turn), or to every node with PG_MESH_ALL (this one too).  0, or -1 when
 * it cannot go (b failed, dst unreachable). */
int pg_proxy_dyn_send(proxy_t *p, uint32_t dst, unsigned type, const pg_mesh_wr_t *b);
/* The node's run exists: the messages that came before it are handled. */
void pg_proxy_dyn_run_started(proxy_t *p);

/* pg_proxy_group.c: groups across nodes, settled at node 0 (set up
 * before the mesh comes up, after pg_proxy_dyn.c; 0 or -1).  The engine's
 * group hooks (pg_host_ops_t), called with the proxy. */
int pg_proxy_group_setup(proxy_t *p);
void pg_proxy_group_free(proxy_t *p);
void pg_proxy_group(void *ctx, const pg_host_group_t *g);
void pg_proxy_group_left(void *ctx, const pg_proc_t *proc, const char *name);
void pg_proxy_group_invite(void *ctx, const char *name, const pg_proc_t *leader,
                        const pg_proc_t *members, size_t nmembers);
void pg_proxy_group_cancel(void *ctx, uint64_t id);

/* pg_proxy_spawn.c: spawn across nodes.  Set up before the mesh comes
 * up, after pg_proxy_dyn.c (0 or -1); the node's ranks are all gone (pending spawns fail, node 0
 * places nothing more here); freed with the proxy. */
int pg_proxy_spawn_setup(proxy_t *p, const pg_run_opts_t *opts);
void pg_proxy_spawn_run_ended(proxy_t *p);
void pg_proxy_spawn_free(proxy_t *p);
/* The node hooks (pg_job_node_t.spawn, .ended), ctx the proxy. */
void pg_proxy_spawn_request(void *ctx, pg_job_t *parent, int rank, const pg_spawn_req_t *req,
                         const unsigned char *on_nodes, pg_spawn_done_fn done, void *cbdata);
void pg_proxy_spawn_ended(void *ctx, pg_job_t *job, int failed_rank, int failed_code);
/* pg_job_node_t.may_end, ctx the proxy: the node's ranks are all gone;
 * true once node 0 retired the node (it places nothing more here). */
bool pg_proxy_spawn_may_end(void *ctx);
/* pg_proxy_spawn_fence.c: the node of `rank` of the spawned job `nspace`
 * as this node knows it (started here or elsewhere), -1: unknown (for
 * direct modex, pg_proxy_modex.c). */
int pg_proxy_spawn_node_of(const proxy_t *p, const char *nspace, uint32_t rank);

#endif

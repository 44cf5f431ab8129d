/*
 * pg_job_tool: the tools attached to a run.  See pg_job_tool.h.
 *
 * Each tool is its connection's owner (pg_conn_owner_ops_t), not the root
 * job: the job's ops speak of ranks, and a tool is none of them.  It sits
 * below pg_job_conn.c (whose `tool` op hands a connection over) and
 * pg_job.c (which tells of a job's end), and calls only the port (to take
 * the connection off its waiting list), pg_job_engine (the event) and
 * the engine.
 */
#include "gateway/job/pg_job_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/pg_engine.h"
#include "gateway/job/pg_job_engine.h"
#include "gateway/job/pg_job_int.h"
#include "gateway/job/pg_port.h"

typedef struct tool {
    pg_job_tools_t *tools;
    pg_conn_t *conn;        /* owned */
    pg_peer_job_t peer_job; /* what the PMIx handler reads: the tool's namespace */
    char nspace[96];
    int spoke;              /* it sent a request: not dropped for a newcomer */
} tool_t;

struct pg_job_tools {
    pg_job_t *root;
    pg_engine_t *engine;
    tool_t *slot[PG_JOB_TOOLS_MAX]; /* NULL: free; the oldest first */
    unsigned next;                  /* the next tool's number */
    pg_conn_owner_ops_t ops;
};

/* ---- a tool's connection: its owner's ops ---- */

static void tool_free(tool_t *t)
{
    pg_job_tools_t *tools = t->tools;

    for (int i = 0; i < PG_JOB_TOOLS_MAX; i++)
        if (tools->slot[i] == t) {
            memmove(&tools->slot[i], &tools->slot[i + 1],
                    (size_t)(PG_JOB_TOOLS_MAX - i - 1) * sizeof(tools->slot[0]));
            tools->slot[PG_JOB_TOOLS_MAX - 1] = NULL;
            break;
        }
    pg_conn_free(t->conn); /* the handler's session, subscription and all */
    (void)pg_ns_deregister(tools->engine, t->nspace);
    free(t);
}

static void tool_closed(void *owner, pg_conn_t *conn, const char *reason)
{
    tool_t *t = owner;

    (void)conn;
    if (reason != NULL)
        pg_job_log(t->tools->root, "tool %s %s", t->nspace, reason);
    tool_free(t);
}

/* Bytes after the preamble: a request is coming (the connection's
 * `served` would not tell, it follows the preamble too). */
static void tool_heard(void *owner, pg_conn_t *conn)
{
    tool_t *t = owner;

    (void)conn;
    t->spoke = 1;
}

static void tool_log_write(void *owner, pg_conn_t *conn, const char *line)
{
    tool_t *t = owner;

    (void)conn;
    pg_job_log(t->tools->root, "tool %s: %s", t->nspace, line);
}

/* PMIX_DEBUGGER_RELEASE from the tool: the run's jobs it names go on. */
static void tool_debugger_release(void *owner, pg_conn_t *conn, const char *nspace)
{
    tool_t *t = owner;

    (void)conn;
    pg_job_ctx_release_init(t->tools->root->ctx, nspace);
}

/* ---- the record ---- */

pg_job_tools_t *pg_job_tools_new(pg_job_t *root)
{
    pg_job_tools_t *tools = calloc(1, sizeof(*tools));

    if (tools == NULL)
        return NULL;
    tools->root = root;
    tools->ops = (pg_conn_owner_ops_t){
        .closed = tool_closed, .heard = tool_heard, .log_write = tool_log_write,
        .debugger_release = tool_debugger_release,
    };
    return tools;
}

void pg_job_tools_free(pg_job_tools_t *tools)
{
    if (tools == NULL)
        return;
    while (tools->slot[0] != NULL)
        tool_free(tools->slot[0]);
    free(tools);
}

/* The tool's namespace in the run's engine: one process on this node. */
static int tool_register(pg_job_tools_t *tools, tool_t *t)
{
    const char *host = tools->root->ctx->hostname;
    const char *hostnames[1] = { host != NULL ? host : "localhost" };
    uint32_t rank_node[1] = { 0 };
    pg_ns_layout_t layout = { .size = 1, .nnodes = 1, .hostnames = hostnames,
                              .rank_node = rank_node, .tool = true };
    pg_proc_t self = { t->nspace, 0 };

    if (pg_ns_register(tools->engine, t->nspace, &layout) != PMIX_SUCCESS)
        return -1;
    (void)pg_proc_connect(tools->engine, &self);
    return 0;
}

/* A place for one more tool: a free slot, or the oldest silent tool's. */
static int tools_room(pg_job_tools_t *tools)
{
    if (tools->slot[PG_JOB_TOOLS_MAX - 1] == NULL)
        return 0;
    for (int i = 0; i < PG_JOB_TOOLS_MAX; i++)
        if (!tools->slot[i]->spoke) {
            pg_job_log(tools->root, "tool %s said nothing: dropped for a newcomer",
                       tools->slot[i]->nspace);
            tool_free(tools->slot[i]);
            return 0;
        }
    return -1;
}

int pg_job_tools_take(pg_job_tools_t *tools, pg_conn_t *conn, const char **why)
{
    pg_job_t *root = tools->root;
    tool_t *t;
    int i;

    tools->engine = root->peer_job.engine;
    if (tools->engine == NULL) {
        *why = "the job has no namespace yet";
        return -1;
    }
    if (tools_room(tools) != 0) {
        *why = "as many tools as may attach at once are attached, and each has spoken";
        return -1;
    }
    if ((t = calloc(1, sizeof(*t))) == NULL) {
        *why = "out of memory";
        return -1;
    }
    t->tools = tools;
    t->conn = conn;
    snprintf(t->nspace, sizeof(t->nspace), "%s.tool.%u", root->kvsname, tools->next++);
    if (tool_register(tools, t) != 0) {
        free(t);
        *why = "its namespace could not be made";
        return -1;
    }
    t->peer_job = (pg_peer_job_t){ .kvsname = t->nspace, .size = 1, .universe_size = 1,
                                   .engine = tools->engine, .server_nspace = root->kvsname,
                                   .server_uri = root->ctx->port_path };
    for (i = 0; tools->slot[i] != NULL; i++)
        ;
    tools->slot[i] = t;
    /* the tool owns it now: no longer a connection waiting to name a rank */
    pg_port_forget(root->port, conn);
    pg_conn_rehome(conn, &t->peer_job, 0, &tools->ops, t);
    return 0;
}

void pg_job_tools_job_end(pg_job_tools_t *tools, pg_job_t *job, int failed_rank,
                          int failed_code)
{
    pg_job_engine_end_t end = { .failed_rank = failed_rank, .failed_code = failed_code };

    if (tools == NULL || job->je == NULL)
        return;
    if (failed_rank >= 0)
        end.status = failed_code != 0 ? failed_code : PMIX_ERR_JOB_TERM_WO_SYNC;
    for (int i = 0; i < PG_JOB_TOOLS_MAX && tools->slot[i] != NULL; i++) {
        end.notify_nspace = tools->slot[i]->nspace;
        (void)pg_job_engine_job_end(job->je, &end);
    }
}

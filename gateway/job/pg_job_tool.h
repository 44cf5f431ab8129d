/*
 * pg_job_tool: the tools attached to a run (PMIx_tool_init: a debugger, a
 * job lister; docs/pmix-transport.md, "Tools").  A tool connects to the
 * PMI_PORT socket like a rank (so the listener's SO_PEERCRED check and the
 * port's admission -- a hello deadline, the oldest silent stranger dropped
 * past the limit -- guard it the same way) and says in its preamble that
 * it is a tool.  It then leaves the port for this record: the tool gets a
 * namespace of its own, "<root job's kvsname>.tool.<n>", rank 0,
 * registered in the run's engine as a one-process tool namespace, so it
 * asks queries and gets like any PMIx process and hears events; the jobs'
 * ends reach it as PMIX_EVENT_JOB_END.
 *
 * At most PG_JOB_TOOLS_MAX tools are attached at once.  When they are all
 * there, a newcomer takes the place of the oldest one that has not sent a
 * request yet (connections of the user that only say the preamble cannot
 * keep a debugger out); when every one has spoken, the newcomer is refused.
 *
 * Ownership: pg_job_tools_t owns its tools' connections and namespaces
 * (taken back by pg_job_tools_free, before the engine goes).
 */
#ifndef PG_JOB_TOOL_H
#define PG_JOB_TOOL_H

#include "gateway/io/pg_conn.h"
#include "gateway/job/pg_job.h"

enum { PG_JOB_TOOLS_MAX = 8 };

typedef struct pg_job_tools pg_job_tools_t;

/* The tools of the run whose root job is `root` (borrowed: its engine,
 * loop, log and PMI_PORT path).  NULL when out of memory. */
pg_job_tools_t *pg_job_tools_new(pg_job_t *root);
void pg_job_tools_free(pg_job_tools_t *tools);

/* `conn`, a PMI_PORT connection of the root job that said it is a tool's,
 * becomes a tool (pg_conn_rehome).  0, or -1 with *why. */
int pg_job_tools_take(pg_job_tools_t *tools, pg_conn_t *conn, const char **why);

/* Job `job` is over here (its last rank reaped): PMIX_EVENT_JOB_END from
 * it to every tool (the job's status, and its first failed rank with its
 * exit code, -1: none). */
void pg_job_tools_job_end(pg_job_tools_t *tools, pg_job_t *job, int failed_rank,
                          int failed_code);

#endif

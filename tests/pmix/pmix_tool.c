/*
 * pmix_tool: a tool written against <pmix_tool.h> that attaches to a
 * running `pmigate run` (tests/pmix/pmix_tool.sh).  One line per check
 * (pmix_check.h's PASS / FAIL); the exit status is the failures.
 *
 *   pmix_tool attach PID|0 NPROCS RELEASE PROGRAM
 *       PMIx_tool_init (PMIX_SERVER_PIDINFO PID, or no directive with 0),
 *       then what a debugger asks: its identity, the job's namespace, size,
 *       process table (live pids of PROGRAM), state; then it registers for
 *       the job's end, creates the file RELEASE (the ranks wait for it) and
 *       waits for PMIX_EVENT_JOB_END; PMIx_tool_finalize.
 *   pmix_tool flood SOCKET N
 *       N connections to the job's socket (PMIX_SERVER_URI), half of them
 *       silent strangers, half tools that send their preamble and nothing
 *       more, all kept open; then a tool attaches there all the same and
 *       lists the namespaces ("FLOOD <n> connected, attach <status>").
 *   pmix_tool hold PID NPROCS PROGRAM OUTPUT MARK [NSPACE]
 *       A debugger of a job started held in init (pmigate run
 *       --stop-in-init, or NSPACE spawned with PMIX_DEBUG_STOP_IN_INIT):
 *       the job's PMIX_DEBUG_STOP_IN_INIT key says its ranks wait, its
 *       process table lists NPROCS live ranks of PROGRAM while the file
 *       OUTPUT (the job's output) has no line with MARK (no rank passed
 *       init), then PMIX_DEBUGGER_RELEASE to the job, and its end.
 *   pmix_tool node SIZE NLOCAL RELEASE PROGRAM
 *       A tool on one node of a job over several (`pmigate proxy`): the
 *       job's namespace and SIZE; its local process table: NLOCAL live
 *       ranks of PROGRAM on this host, in a row ("LOCAL RANKS a-b"); its
 *       whole process table as the proxy has it ("TABLE ..."); then the
 *       job's end once RELEASE exists (the ranks wait for it).
 *   pmix_tool release
 *       Attaches to the job on this node and sends it PMIX_DEBUGGER_RELEASE.
 *   pmix_tool rank
 *       A rank: PMIx_Init, "RANK <r> PAST INIT", PMIx_Finalize.
 *   pmix_tool spawner N
 *       A rank that spawns N `pmix_tool rank` held in init
 *       (PMIX_DEBUG_STOP_IN_INIT) and prints "SPAWNED <nspace>".
 *   pmix_tool init [NSPACE]
 *       PMIx_tool_init (PMIX_SERVER_NSPACE NSPACE when given); prints
 *       "TOOL <tool nspace> <rank> SERVER <job nspace>" or "INIT <status>".
 */
#include <pmix_tool.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "pmix_check.h"
#include "wire/pg_pmix_frame.h"

static const char *job_ns; /* the job's namespace, as the tool learned it */

/* ---- the job's end, heard by the handler ---- */

static pthread_mutex_t end_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t end_cond = PTHREAD_COND_INITIALIZER;
static int ended;
static pmix_proc_t end_source;
static pmix_status_t end_status = -1;

static void on_job_end(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id;
    (void)status;
    (void)results;
    (void)nresults;
    pthread_mutex_lock(&end_lock);
    end_source = *source;
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_TERM_STATUS))
            end_status = info[i].value.data.status;
    ended = 1;
    pthread_cond_signal(&end_cond);
    pthread_mutex_unlock(&end_lock);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* ---- one query, blocking ---- */

static pmix_status_t query1(const char *key, const char *nspace, pmix_info_t **out, size_t *nout)
{
    pmix_query_t q;
    pmix_status_t rc;

    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, key);
    if (nspace != NULL) {
        PMIX_QUERY_QUALIFIERS_CREATE(&q, 1);
        PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, nspace, PMIX_STRING);
    }
    rc = PMIx_Query_info(&q, 1, out, nout);
    PMIX_QUERY_DESTRUCT(&q);
    return rc;
}

static void check_identity(void)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    pmix_status_t rc;

    report(me.nspace[0] != '\0' && me.rank == 0, "tool_identity", "%s:%u", me.nspace, me.rank);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wild, PMIX_SERVER_NSPACE, NULL, 0, &v);
    report(rc == PMIX_SUCCESS && v != NULL && v->type == PMIX_STRING &&
               strcmp(v->data.string, me.nspace) != 0,
           "server_nspace", "%s: %s", PMIx_Error_string(rc),
           rc == PMIX_SUCCESS && v->type == PMIX_STRING ? v->data.string : "-");
    if (rc == PMIX_SUCCESS && v->type == PMIX_STRING)
        job_ns = strdup(v->data.string);
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
}

/* The answer to a query whose one result is a comma-separated list, in
 * list[cap] ("" when the query failed or answered something else); its
 * status. */
static pmix_status_t query_list(const char *key, char *list, size_t cap)
{
    pmix_info_t *out = NULL;
    size_t n = 0;
    pmix_status_t rc = query1(key, NULL, &out, &n);

    snprintf(list, cap, "%s",
             rc == PMIX_SUCCESS && n == 1 && out[0].value.type == PMIX_STRING
                 ? out[0].value.data.string
                 : "");
    if (out != NULL)
        PMIX_INFO_FREE(out, n);
    return rc;
}

/* PMIX_QUERY_NAMESPACES lists the job, not the tool. */
static void check_namespaces(void)
{
    char list[4096];
    pmix_status_t rc = query_list(PMIX_QUERY_NAMESPACES, list, sizeof(list));

    report(job_ns != NULL && strstr(list, job_ns) != NULL && strstr(list, ".tool.") == NULL,
           "namespaces", "%s: '%s'", PMIx_Error_string(rc), list);
}

static void check_size(long nprocs)
{
    pmix_info_t *out = NULL;
    pmix_value_t *v = NULL;
    pmix_proc_t wild;
    size_t n = 0;
    pmix_status_t rc = query1(PMIX_JOB_SIZE, job_ns, &out, &n);

    report(rc == PMIX_SUCCESS && n == 1 && out[0].value.data.uint32 == nprocs, "query_job_size",
           "%s: %u", PMIx_Error_string(rc), n == 1 ? out[0].value.data.uint32 : 0);
    if (out != NULL)
        PMIX_INFO_FREE(out, n);
    PMIX_LOAD_PROCID(&wild, job_ns, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    report(rc == PMIX_SUCCESS && v->data.uint32 == nprocs, "get_job_size", "%s: %u",
           PMIx_Error_string(rc), rc == PMIX_SUCCESS ? v->data.uint32 : 0);
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
}

/* Every rank's row: in order, a live pid running `program` on this host. */
static int rows_ok(const pmix_proc_info_t *rows, size_t n, long nprocs, const char *program,
                   char *why, size_t len)
{
    char host[256] = "";

    (void)gethostname(host, sizeof(host) - 1);
    if ((long)n != nprocs)
        return snprintf(why, len, "%zu rows", n), 0;
    for (size_t r = 0; r < n; r++) {
        const pmix_proc_info_t *p = &rows[r];
        const char *exe = p->executable_name != NULL ? p->executable_name : "";
        const char *base = strrchr(exe, '/') != NULL ? strrchr(exe, '/') + 1 : exe;

        snprintf(why, len, "rank %zu: %s:%u pid %d exe %s host %s state %d", r, p->proc.nspace,
                 p->proc.rank, (int)p->pid, exe, p->hostname ? p->hostname : "-", p->state);
        if (strcmp(p->proc.nspace, job_ns) != 0 || p->proc.rank != r || p->pid <= 0 ||
            kill(p->pid, 0) != 0 || strcmp(base, program) != 0 || p->hostname == NULL ||
            strcmp(p->hostname, host) != 0 ||
            (p->state != PMIX_PROC_STATE_RUNNING && p->state != PMIX_PROC_STATE_CONNECTED))
            return 0;
    }
    return 1;
}

static void check_proc_table(const char *key, long nprocs, const char *program)
{
    pmix_info_t *out = NULL;
    size_t n = 0;
    char why[512] = "";
    pmix_status_t rc = query1(key, job_ns, &out, &n);
    int ok = rc == PMIX_SUCCESS && n == 1 && out[0].value.type == PMIX_DATA_ARRAY &&
             rows_ok(out[0].value.data.darray->array, out[0].value.data.darray->size, nprocs,
                     program, why, sizeof(why));

    report(ok, key, "%s: %s", PMIx_Error_string(rc), why);
    if (out != NULL)
        PMIX_INFO_FREE(out, n);
}

static void check_job_status(void)
{
    pmix_info_t *out = NULL;
    size_t n = 0;
    pmix_status_t rc = query1(PMIX_QUERY_JOB_STATUS, job_ns, &out, &n);

    report(rc == PMIX_SUCCESS && n == 1 && out[0].value.type == PMIX_STATUS &&
               out[0].value.data.status == PMIX_SUCCESS,
           "job_status", "%s: %d", PMIx_Error_string(rc), n == 1 ? out[0].value.data.status : -1);
    if (out != NULL)
        PMIX_INFO_FREE(out, n);
}

/* PMIX_QUERY_NAMESPACE_INFO: an entry for the job, with its command. */
static void check_namespace_info(const char *program)
{
    pmix_info_t *out = NULL, *entries, *fields;
    size_t n = 0;
    int found = 0;
    pmix_status_t rc = query1(PMIX_QUERY_NAMESPACE_INFO, NULL, &out, &n);

    if (rc == PMIX_SUCCESS && n == 1 && out[0].value.type == PMIX_DATA_ARRAY) {
        entries = out[0].value.data.darray->array;
        for (size_t i = 0; i < out[0].value.data.darray->size; i++) {
            fields = entries[i].value.data.darray->array;
            if (entries[i].value.data.darray->size == 2 &&
                strcmp(fields[0].value.data.string, job_ns) == 0 &&
                strstr(fields[1].value.data.string, program) != NULL)
                found = 1;
        }
    }
    report(found, "namespace_info", "%s", PMIx_Error_string(rc));
    if (out != NULL)
        PMIX_INFO_FREE(out, n);
}

/* The ranks wait for RELEASE; the job's end must reach the tool. */
static void check_job_end(const char *release)
{
    pmix_status_t code = PMIX_EVENT_JOB_END;
    pmix_status_t rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_job_end, NULL, NULL);
    int fd, heard;

    report(rc >= 0, "register_job_end", "%s", rc < 0 ? PMIx_Error_string(rc) : "ok");
    fd = open(release, O_WRONLY | O_CREAT, 0600);
    if (fd >= 0)
        close(fd);
    heard = wait_done(&end_lock, &end_cond, &ended, 20);
    report(heard && strcmp(end_source.nspace, job_ns) == 0 && end_status == 0, "job_end_event",
           "heard %d from %s status %d", heard, end_source.nspace, end_status);
}

static int attach(int argc, char **argv)
{
    pmix_info_t info;
    pid_t pid = argc > 2 ? (pid_t)atol(argv[2]) : 0;
    long nprocs = argc > 3 ? atol(argv[3]) : 0;
    pmix_status_t rc;

    if (argc < 6)
        return fprintf(stderr, "usage: pmix_tool attach PID NPROCS RELEASE PROGRAM\n"), 2;
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    rc = PMIx_tool_init(&me, pid != 0 ? &info : NULL, pid != 0 ? 1 : 0);
    report(rc == PMIX_SUCCESS, "tool_init", "%s", PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS)
        return 1;
    check_identity();
    if (job_ns != NULL) {
        check_namespaces();
        check_size(nprocs);
        check_proc_table(PMIX_QUERY_PROC_TABLE, nprocs, argv[5]);
        check_proc_table(PMIX_QUERY_LOCAL_PROC_TABLE, nprocs, argv[5]);
        check_job_status();
        check_namespace_info(argv[5]);
        check_job_end(argv[4]);
    }
    rc = PMIx_tool_finalize();
    report(rc == PMIX_SUCCESS, "tool_finalize", "%s", PMIx_Error_string(rc));
    return failures;
}

/* The job's PMIX_DEBUG_STOP_IN_INIT: every rank waits (WILDCARD). */
static void check_stop_key(void)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&wild, job_ns, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wild, PMIX_DEBUG_STOP_IN_INIT, NULL, 0, &v);
    report(rc == PMIX_SUCCESS && v != NULL && v->type == PMIX_PROC_RANK &&
               v->data.rank == PMIX_RANK_WILDCARD,
           "stop_in_init_key", "%s: type %d", PMIx_Error_string(rc),
           rc == PMIX_SUCCESS ? v->type : -1);
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
}

/* PMIX_QUERY_DEBUG_SUPPORT names PMIX_DEBUG_STOP_IN_INIT, as a debugger
 * that launches through a tool checks before asking for it. */
static void check_debug_support(void)
{
    char list[4096];
    pmix_status_t rc = query_list(PMIX_QUERY_DEBUG_SUPPORT, list, sizeof(list));

    report(strstr(list, PMIX_DEBUG_STOP_IN_INIT) != NULL, "debug_support", "%s: '%s'",
           PMIx_Error_string(rc), list);
}

/* Does the file hold a line with `mark` (a rank that passed init)? */
static int output_has(const char *path, const char *mark)
{
    char line[1024];
    FILE *f = fopen(path, "r");
    int found = 0;

    while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL)
        found = strstr(line, mark) != NULL;
    if (f != NULL)
        fclose(f);
    return found;
}

/* The process table, until every rank is there (they start while the
 * tool attaches); 1 when it listed them all. */
static int wait_table(long nprocs, const char *program, char *why, size_t len)
{
    for (int tries = 0; tries < 200; tries++) {
        pmix_info_t *out = NULL;
        size_t n = 0;
        pmix_status_t rc = query1(PMIX_QUERY_PROC_TABLE, job_ns, &out, &n);
        int ok = rc == PMIX_SUCCESS && n == 1 && out[0].value.type == PMIX_DATA_ARRAY &&
                 rows_ok(out[0].value.data.darray->array, out[0].value.data.darray->size,
                         nprocs, program, why, len);

        if (out != NULL)
            PMIX_INFO_FREE(out, n);
        if (ok)
            return 1;
        usleep(50000);
    }
    return 0;
}

static void release_job(void)
{
    pmix_info_t info;
    pmix_proc_t job;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&job, job_ns, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info, PMIX_EVENT_CUSTOM_RANGE, &job, PMIX_PROC);
    rc = PMIx_Notify_event(PMIX_DEBUGGER_RELEASE, &me, PMIX_RANGE_CUSTOM, &info, 1, NULL, NULL);
    report(rc == PMIX_SUCCESS, "debugger_release", "%s", PMIx_Error_string(rc));
}

static int hold(int argc, char **argv)
{
    pmix_info_t info;
    pid_t pid = argc > 2 ? (pid_t)atol(argv[2]) : 0;
    long nprocs = argc > 3 ? atol(argv[3]) : 0;
    pmix_status_t code = PMIX_EVENT_JOB_END, rc;
    char why[512] = "";
    int listed, heard;

    if (argc < 7)
        return fprintf(stderr, "usage: pmix_tool hold PID NPROCS PROGRAM OUTPUT MARK [NSPACE]\n"), 2;
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    rc = PMIx_tool_init(&me, &info, 1);
    report(rc == PMIX_SUCCESS, "tool_init", "%s", PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS)
        return 1;
    check_identity();
    if (argc > 7)
        job_ns = argv[7];
    if (job_ns == NULL)
        return PMIx_tool_finalize(), 1;
    check_stop_key();
    check_debug_support();
    listed = wait_table(nprocs, argv[4], why, sizeof(why));
    sleep(1); /* a rank that was not held prints meanwhile */
    report(listed && !output_has(argv[5], argv[6]), "held_in_init", "table %d (%s), '%s' %s",
           listed, why, argv[6], output_has(argv[5], argv[6]) ? "printed" : "not printed");
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_job_end, NULL, NULL);
    report(rc >= 0, "register_job_end", "%s", rc < 0 ? PMIx_Error_string(rc) : "ok");
    release_job();
    heard = wait_done(&end_lock, &end_cond, &ended, 30);
    report(heard && strcmp(end_source.nspace, job_ns) == 0 && end_status == 0, "job_end_event",
           "heard %d from %s status %d", heard, end_source.nspace, end_status);
    rc = PMIx_tool_finalize();
    report(rc == PMIX_SUCCESS, "tool_finalize", "%s", PMIx_Error_string(rc));
    return failures;
}

/* This node's rows: NLOCAL live ranks of `program` on this host, in a row. */
static int local_rows_ok(const pmix_proc_info_t *rows, size_t n, long nlocal,
                         const char *program, char *why, size_t len)
{
    char host[256] = "";

    (void)gethostname(host, sizeof(host) - 1);
    if ((long)n != nlocal || n == 0)
        return snprintf(why, len, "%zu rows", n), 0;
    for (size_t r = 0; r < n; r++) {
        const pmix_proc_info_t *p = &rows[r];
        const char *exe = p->executable_name != NULL ? p->executable_name : "";
        const char *base = strrchr(exe, '/') != NULL ? strrchr(exe, '/') + 1 : exe;

        snprintf(why, len, "ranks %u-%u, row %zu: rank %u pid %d exe %s host %s", rows[0].proc.rank,
                 rows[n - 1].proc.rank, r, p->proc.rank, (int)p->pid, exe,
                 p->hostname ? p->hostname : "-");
        if (strcmp(p->proc.nspace, job_ns) != 0 || p->proc.rank != rows[0].proc.rank + r ||
            p->pid <= 0 || kill(p->pid, 0) != 0 || strcmp(base, program) != 0 ||
            p->hostname == NULL || strcmp(p->hostname, host) != 0)
            return 0;
    }
    printf("LOCAL RANKS %u-%u\n", rows[0].proc.rank, rows[n - 1].proc.rank);
    return 1;
}

static void check_local_table(long nlocal, const char *program)
{
    pmix_info_t *out = NULL;
    size_t n = 0;
    char why[512] = "";
    pmix_status_t rc = query1(PMIX_QUERY_LOCAL_PROC_TABLE, job_ns, &out, &n);
    int ok = rc == PMIX_SUCCESS && n == 1 && out[0].value.type == PMIX_DATA_ARRAY &&
             local_rows_ok(out[0].value.data.darray->array, out[0].value.data.darray->size,
                           nlocal, program, why, sizeof(why));

    report(ok, "local_proc_table", "%s: %s", PMIx_Error_string(rc), why);
    if (out != NULL)
        PMIX_INFO_FREE(out, n);
}

/* The whole table as this node's proxy has it: one line per row. */
static void print_table(void)
{
    pmix_info_t *out = NULL;
    size_t n = 0;
    pmix_status_t rc = query1(PMIX_QUERY_PROC_TABLE, job_ns, &out, &n);
    const pmix_proc_info_t *rows = NULL;
    size_t nrows = 0;

    if (rc == PMIX_SUCCESS && n == 1 && out[0].value.type == PMIX_DATA_ARRAY) {
        rows = out[0].value.data.darray->array;
        nrows = out[0].value.data.darray->size;
    }
    printf("TABLE %s %zu rows\n", PMIx_Error_string(rc), nrows);
    for (size_t r = 0; r < nrows; r++)
        printf("TABLE rank %u host %s pid %d state %d\n", rows[r].proc.rank,
               rows[r].hostname ? rows[r].hostname : "-", (int)rows[r].pid, rows[r].state);
    if (out != NULL)
        PMIX_INFO_FREE(out, n);
}

static int node_tool(int argc, char **argv)
{
    pmix_status_t rc;

    if (argc < 6)
        return fprintf(stderr, "usage: pmix_tool node SIZE NLOCAL RELEASE PROGRAM\n"), 2;
    rc = PMIx_tool_init(&me, NULL, 0);
    report(rc == PMIX_SUCCESS, "tool_init", "%s", PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS)
        return 1;
    check_identity();
    if (job_ns != NULL) {
        check_namespaces();
        check_size(atol(argv[2]));
        check_local_table(atol(argv[3]), argv[5]);
        print_table();
        check_job_end(argv[4]);
    }
    rc = PMIx_tool_finalize();
    report(rc == PMIX_SUCCESS, "tool_finalize", "%s", PMIx_Error_string(rc));
    return failures;
}

static int release_only(void)
{
    pmix_status_t rc = PMIx_tool_init(&me, NULL, 0);

    report(rc == PMIX_SUCCESS, "tool_init", "%s", PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS)
        return 1;
    check_identity();
    if (job_ns != NULL)
        release_job();
    rc = PMIx_tool_finalize();
    report(rc == PMIX_SUCCESS, "tool_finalize", "%s", PMIx_Error_string(rc));
    return failures;
}

static int rank_main(void)
{
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);

    if (rc != PMIX_SUCCESS)
        return fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc)), 1;
    printf("RANK %u PAST INIT\n", me.rank);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}

static int spawner(int argc, char **argv)
{
    char self[4096], ns[PMIX_MAX_NSLEN + 1];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    pmix_app_t app;
    pmix_info_t info;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);

    if (rc != PMIX_SUCCESS || len <= 0 || argc < 3)
        return fprintf(stderr, "spawner: %s\n", PMIx_Error_string(rc)), 1;
    self[len] = '\0';
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(self);
    PMIX_ARGV_APPEND(rc, app.argv, self);
    PMIX_ARGV_APPEND(rc, app.argv, "rank");
    app.maxprocs = atoi(argv[2]);
    PMIX_INFO_LOAD(&info, PMIX_DEBUG_STOP_IN_INIT, NULL, PMIX_BOOL); /* as debugger.c */
    rc = PMIx_Spawn(&info, 1, &app, 1, ns);
    printf("SPAWNED %s %s\n", rc == PMIX_SUCCESS ? ns : "-", PMIx_Error_string(rc));
    PMIX_APP_DESTRUCT(&app);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS && rc == PMIX_SUCCESS ? 0 : 1;
}

static int init_only(int argc, char **argv)
{
    pmix_info_t info;
    pmix_status_t rc;

    if (argc > 2)
        PMIX_INFO_LOAD(&info, PMIX_SERVER_NSPACE, argv[2], PMIX_STRING);
    rc = PMIx_tool_init(&me, argc > 2 ? &info : NULL, argc > 2 ? 1 : 0);
    if (rc != PMIX_SUCCESS) {
        printf("INIT %s\n", PMIx_Error_string(rc));
        return 1;
    }
    check_identity();
    printf("TOOL %s %u SERVER %s\n", me.nspace, me.rank, job_ns != NULL ? job_ns : "-");
    return PMIx_tool_finalize() == PMIX_SUCCESS ? 0 : 1;
}

/* One connection to the socket at path, non-blocking (a full backlog
 * does not stop the flood); -1 when refused. */
static int flood_connect(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int flood(int argc, char **argv)
{
    int n = argc > 3 ? atoi(argv[3]) : 0, *fds, connected = 0;
    unsigned char pre[PG_PMIX_PREAMBLE_LEN];
    pmix_info_t info;
    pmix_status_t rc;

    if (argc < 4 || n <= 0 || (fds = calloc((size_t)n, sizeof(*fds))) == NULL)
        return fprintf(stderr, "usage: pmix_tool flood SOCKET N\n"), 2;
    pg_pmix_preamble_encode_flags(pre, PG_PMIX_RANK_FROM_FD, PG_PMIX_FLAG_TOOL);
    for (int i = 0; i < n; i++) {
        fds[i] = flood_connect(argv[2]);
        if (fds[i] >= 0 && i % 2 == 1 && write(fds[i], pre, sizeof(pre)) != (ssize_t)sizeof(pre))
            fds[i] = (close(fds[i]), -1);
        connected += fds[i] >= 0;
    }
    PMIX_INFO_LOAD(&info, PMIX_SERVER_URI, argv[2], PMIX_STRING);
    rc = PMIx_tool_init(&me, &info, 1);
    printf("FLOOD %d connected, attach %s\n", connected, PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS) {
        check_identity();
        check_namespaces();
        (void)PMIx_tool_finalize();
    }
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    return rc == PMIX_SUCCESS ? failures : 1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && strcmp(argv[1], "attach") == 0)
        return attach(argc, argv);
    if (argc > 1 && strcmp(argv[1], "flood") == 0)
        return flood(argc, argv);
    if (argc > 1 && strcmp(argv[1], "init") == 0)
        return init_only(argc, argv);
    if (argc > 1 && strcmp(argv[1], "hold") == 0)
        return hold(argc, argv);
    if (argc > 1 && strcmp(argv[1], "rank") == 0)
        return rank_main();
    if (argc > 1 && strcmp(argv[1], "node") == 0)
        return node_tool(argc, argv);
    if (argc > 1 && strcmp(argv[1], "release") == 0)
        return release_only();
    if (argc > 1 && strcmp(argv[1], "spawner") == 0)
        return spawner(argc, argv);
    fprintf(stderr, "usage: pmix_tool attach PID NPROCS RELEASE PROGRAM | flood SOCKET N | "
                    "init [NSPACE] | hold PID NPROCS PROGRAM OUTPUT MARK [NSPACE] | rank | "
                    "spawner N | node SIZE NLOCAL RELEASE PROGRAM | release\n");
    return 2;
}

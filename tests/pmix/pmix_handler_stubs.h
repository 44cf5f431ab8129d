/*
 * pmix_handler_stubs: the gateway's job and connection, cut down to what
 * the PMIx server handler (pmix/server/pg_pmix_server.c) sees of them
 * through gateway/pg_job.h and gateway/pg_conn.h, so the handler can run
 * in a real engine without a socket or an event loop.  Shared by the
 * handler's regression tests (tests/pmix/test_pmix_transport.c) and its
 * fuzzer (tests/fuzz/fuzz_pmix.c); each defines the two functions whose
 * behaviour it needs to choose: pg_clock_now() (the clock) and
 * pg_conn_send() (what happens to a reply).
 *
 * Definitions, not only declarations: include it in one file per program.
 */
#ifndef PMIX_HANDLER_STUBS_H
#define PMIX_HANDLER_STUBS_H

#include <stdbool.h>

#include "gateway/pg_conn.h"
#include "gateway/pg_job.h"
#include "pmix/engine/pg_engine.h"
#include "wire/pg_clock.h"

struct pg_job {
    char kvsname[32];
    pg_engine_t *engine;
};

struct pg_conn {
    pg_job_t *job;
    int rank;
    void *handler_data;
    bool open;                 /* for the harness: between on_open and on_close */
    bool finalized;            /* the handler said so (pg_conn_set_finalized) */
    pmix_status_t last_status; /* for the harness: of the last reply sent */
    int replies;               /* for the harness: replies sent */
};

const char *pg_job_kvsname(const pg_job_t *job)
{
    return job->kvsname;
}

void pg_job_abort(pg_job_t *job, int rank, int code, const char *msg)
{
    (void)job, (void)rank, (void)code, (void)msg;
}

int pg_conn_rank(const pg_conn_t *conn)
{
    return conn->rank;
}

pg_job_t *pg_conn_job(const pg_conn_t *conn)
{
    return conn->job;
}

pg_engine_t *pg_conn_engine(const pg_conn_t *conn)
{
    return conn->job->engine;
}

void pg_conn_set_handler_data(pg_conn_t *conn, void *data)
{
    conn->handler_data = data;
}

void *pg_conn_handler_data(const pg_conn_t *conn)
{
    return conn->handler_data;
}

void pg_conn_set_finalized(pg_conn_t *conn)
{
    conn->finalized = true;
}

#endif

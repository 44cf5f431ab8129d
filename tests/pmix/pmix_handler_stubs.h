/*
 * pmix_handler_stubs: a fake host for the PMIx server handler
 * (pmix/server/pg_pmix_server.c): the ops table of server/pg_handler.h,
 * with a job in a real engine and no socket or event loop.  Shared by the
 * handler's regression tests (tests/pmix/test_pmix_transport.c) and its
 * fuzzer (tests/fuzz/fuzz_pmix.c); each program sets the clock
 * (host->clock) and may look at every reply (host->on_reply).
 *
 * Definitions, not only declarations: include it in one file per program.
 */
#ifndef PMIX_HANDLER_STUBS_H
#define PMIX_HANDLER_STUBS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/pg_engine.h"
#include "wire/pg_pmix_msg.h"
#include "server/pg_handler.h"
#include "wire/pg_pmix_frame.h"

typedef struct pmix_fake_host pmix_fake_host_t;

/* One rank's connection as the fake host keeps it. */
typedef struct pmix_fake_peer {
    pg_peer_t peer;            /* what the handler sees; first, so a peer is its record */
    pmix_fake_host_t *host;
    bool open;                 /* for the harness: between on_open and on_close */
    bool finalized;            /* the handler said so (peer_finalize) */
    int aborts;                /* job_abort calls */
    int signals;               /* job_signal calls (job control) */
    int last_signo;            /* ... the last one's signal */
    size_t last_nranks;        /* ... and how many ranks it named (0 = all) */
    pmix_status_t last_status; /* of the last reply sent */
    int replies;               /* replies sent */
} pmix_fake_peer_t;

struct pmix_fake_host {
    pg_peer_job_t job;
    char kvsname[32];
    uint64_t clock; /* what clock_now answers */
    char last_log[256]; /* the last line written to the job's log */
    /* Sees every reply (one whole frame) after it is counted; may be NULL. */
    void (*on_reply)(pmix_fake_peer_t *p, const char *bytes, size_t len);
};

static inline pmix_fake_peer_t *pmix_fake_peer_of(pg_peer_t *peer)
{
    return (pmix_fake_peer_t *)peer;
}

/* Counts the reply and keeps its status (the first field after the
 * header of every reply, docs/pmix-transport.md). */
static inline int pmix_fake_reply_send(pg_peer_t *peer, const void *bytes, size_t len)
{
    pmix_fake_peer_t *p = pmix_fake_peer_of(peer);
    pmix_data_buffer_t view;
    uint8_t cmd;
    uint32_t id;

    p->last_status = PMIX_ERR_UNPACK_FAILURE;
    if (len >= PG_PMIX_HEADER_LEN) {
        pg_pmix_msg_view(&view, (const char *)bytes + PG_PMIX_HEADER_LEN, len - PG_PMIX_HEADER_LEN);
        if (pg_pmix_msg_read_header(&view, &cmd, &id) == PMIX_SUCCESS)
            (void)pg_pmix_unpack_one(&view, &p->last_status, PMIX_STATUS);
    }
    p->replies++;
    if (p->host->on_reply != NULL)
        p->host->on_reply(p, bytes, len);
    return 0;
}

static inline void pmix_fake_job_abort(pg_peer_t *peer, int code, const char *msg)
{
    (void)code, (void)msg;
    pmix_fake_peer_of(peer)->aborts++;
}

static inline void pmix_fake_job_signal(pg_peer_t *peer, const int *ranks, size_t nranks,
                                        int signo)
{
    pmix_fake_peer_t *p = pmix_fake_peer_of(peer);

    (void)ranks;
    p->signals++;
    p->last_signo = signo;
    p->last_nranks = nranks;
}

static inline void pmix_fake_peer_finalize(pg_peer_t *peer)
{
    pmix_fake_peer_of(peer)->finalized = true;
}

static inline uint64_t pmix_fake_clock_now(pg_peer_t *peer)
{
    return pmix_fake_peer_of(peer)->host->clock;
}

static inline void pmix_fake_log_write(pg_peer_t *peer, const char *line)
{
    pmix_fake_host_t *host = pmix_fake_peer_of(peer)->host;

    snprintf(host->last_log, sizeof(host->last_log), "%s", line);
}

static const pg_peer_ops_t pmix_fake_ops = {
    .reply_send = pmix_fake_reply_send,
    .job_abort = pmix_fake_job_abort,
    .peer_finalize = pmix_fake_peer_finalize,
    .clock_now = pmix_fake_clock_now,
    .log_write = pmix_fake_log_write,
    .job_signal = pmix_fake_job_signal,
};

/* Job `kvsname` of the fake host, in `engine` (registered by the caller). */
static inline void pmix_fake_host_init(pmix_fake_host_t *host, const char *kvsname, int size,
                                       pg_engine_t *engine)
{
    memset(host, 0, sizeof(*host));
    snprintf(host->kvsname, sizeof(host->kvsname), "%s", kvsname);
    host->job = (pg_peer_job_t){ .kvsname = host->kvsname, .size = size, .universe_size = size,
                                 .engine = engine };
}

/* Rank `rank`'s connection, not opened yet. */
static inline void pmix_fake_peer_init(pmix_fake_peer_t *p, pmix_fake_host_t *host, int rank)
{
    memset(p, 0, sizeof(*p));
    p->peer = (pg_peer_t){ .ops = &pmix_fake_ops, .job = &host->job, .rank = rank };
    p->host = host;
}

#endif

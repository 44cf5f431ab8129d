/*
 * pg_peer_abort: the one way a protocol handler ends the job for a peer
 * that asked to abort (PMI-1 cmd=abort, PMI-2 abort with isworld, PMIx_Abort).
 *
 * Why it exists: a job's ranks may speak different PMI versions (one
 * namespace, one key space), and the PMIx ranks among them must hear of an
 * abort whoever sent it.  So the event is raised here, beside the seam,
 * once for all three handlers: PMIX_ERR_PROC_ABORTED, range NAMESPACE,
 * source and affected process the aborting rank, with its exit code
 * (PMIX_EXIT_CODE) and message (PMIX_EVENT_TEXT_MESSAGE), delivered by the
 * job's engine to every subscribed (PMIx) process of the job but the
 * aborting one.  Only then is the host asked to end the job
 * (ops->job_abort), so the event frames are queued before any teardown.
 *
 * Header-only: every handler links the engine already, and nothing here
 * touches the host's types.
 */
#ifndef PG_PEER_ABORT_H
#define PG_PEER_ABORT_H

#include <string.h>

#include "engine/pg_engine.h"
#include "server/pg_handler.h"

/* Raises the abort event for `peer` (a rank of a job with a store), then
 * ends the job through the host.  msg may be NULL or empty. */
static inline void pg_peer_abort(pg_peer_t *peer, int code, const char *msg)
{
    pg_engine_t *e = peer->job->engine;
    pg_proc_t self = { peer->job->kvsname, (pmix_rank_t)peer->rank };
    pg_event_detail_t details[2] = {
        { PMIX_EXIT_CODE, pg_value_bytes(PMIX_INT, &code, sizeof(code)) },
        { PMIX_EVENT_TEXT_MESSAGE, pg_value_string(msg != NULL ? msg : "") },
    };
    pg_event_t ev = { PMIX_ERR_PROC_ABORTED, self, self, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, 0,
                      details, msg != NULL && msg[0] != '\0' ? 2 : 1 };

    if (e != NULL && peer->rank >= 0 && peer->rank < peer->job->size)
        (void)pg_event_notify(e, &ev, NULL);
    peer->ops->job_abort(peer, code, msg);
}

#endif

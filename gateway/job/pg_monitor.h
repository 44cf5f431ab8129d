/*
 * pg_monitor: the gateway watching one job's ranks for signs of life -- the
 * watches PMIx_Process_monitor asks for (heartbeats, a file that must keep
 * changing) and `pmigate run --heartbeat SECONDS`, which counts any PMI
 * message and any output of a rank as a beat, so a silent PMI-1 or PMI-2
 * rank is caught the same way.
 *
 * Why in the gateway: a file is watched with stat(2) and a beat is traffic
 * on a socket or a pipe, things only the gateway sees; the engine stays
 * without I/O.  Each watch has its own libevent timer.
 *
 * Semantics (docs/user-guide.md, "Watching ranks"): a heartbeat watch
 * checks every period whether a beat came since the last check, a file
 * watch whether the file changed (size, access or modification time, as
 * asked; a file that does not exist yet counts as neither); after more than
 * `drops` misses in a row the owner is told once, and again only after the
 * process showed life.  A --heartbeat watch tells the owner when the rank
 * has been silent for SECONDS.  A rank that finalized or exited is not
 * watched any more.
 *
 * Ownership: the monitor owns its watches and their timers; the owner
 * decides what an alert does (the job's log line, the event, the kill).
 * Everything runs on the gateway's loop thread.
 */
#ifndef PG_MONITOR_H
#define PG_MONITOR_H

#include <stdbool.h>
#include <stdint.h>

#include "server/pg_handler.h"

struct event_base;
typedef struct pg_monitor pg_monitor_t;

/* A watch ran out (borrowed for the call). */
typedef struct pg_monitor_alert {
    int rank;
    const pg_monitor_req_t *req; /* the watch; for --heartbeat one made up:
                                    kind HEARTBEAT, code
                                    PMIX_MONITOR_HEARTBEAT_ALERT, range
                                    NAMESPACE, no id */
    bool option;                 /* the --heartbeat watch */
    uint32_t silent_s;           /* how long the rank showed no life */
} pg_monitor_alert_t;

typedef void (*pg_monitor_alert_fn)(void *owner, const pg_monitor_alert_t *alert);

/* NULL when out of memory. */
pg_monitor_t *pg_monitor_new(struct event_base *base, pg_monitor_alert_fn alert, void *owner);
/* Ends every watch.  NULL is ignored.  Not from inside the alert callback. */
void pg_monitor_free(pg_monitor_t *m);

/* A PMIx_Process_monitor request of `rank` (pg_monitor_req_t, copied):
 * starts a watch, counts a heartbeat, or cancels watches.  Returns a PMIx
 * status (PMIX_SUCCESS, PMIX_ERR_EXISTS: the id is in use by the rank,
 * PMIX_ERR_NOT_FOUND: nothing to cancel, PMIX_ERR_NOMEM). */
int pg_monitor_request(pg_monitor_t *m, int rank, const pg_monitor_req_t *req);

/* --heartbeat: `rank` is watched from now on; silent for `seconds` (no PMI
 * message, no output) it alerts.  0 or -1 (out of memory). */
int pg_monitor_watch_silence(pg_monitor_t *m, int rank, uint32_t seconds);
/* `rank` sent a PMI message or wrote output (counts for --heartbeat). */
void pg_monitor_traffic(pg_monitor_t *m, int rank);

/* `rank` finalized or exited: its watches end. */
void pg_monitor_forget(pg_monitor_t *m, int rank);

#endif

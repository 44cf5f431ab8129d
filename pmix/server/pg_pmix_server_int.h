/*
 * pg_pmix_server_int.h: what the files of the PMIx handler share (internal
 * to pmix/server/; the gateway sees only pg_pmix_server.h).
 *
 * Why it exists: the handler is one file per operation family, as
 * OpenPMIx keeps its server: pg_pmix_server.c (sessions, replies, init,
 * abort, finalize, the dispatch table), pg_pmix_srv_fence.c (commit,
 * fence, get), pg_pmix_srv_nameserv.c (publish, lookup, unpublish),
 * pg_pmix_srv_spawn.c (spawn, connect, disconnect), pg_pmix_srv_group.c
 * (groups, collective and by invitation), pg_pmix_srv_event.c (the
 * subscription and notify), pg_pmix_srv_query.c (query),
 * pg_pmix_srv_log.c (log) and pg_pmix_srv_jobctl.c (job control, process
 * monitoring).  Each family's command functions
 * take the unpacked-so-far request (pg_pmix_in_t) and either reply at once
 * or park a pg_pmix_req_t that the engine's completion answers; this
 * header holds the session and request records they share, the reply
 * helpers and the readers of directives.  Statuses are the engine's,
 * unchanged: the engine speaks PMIx.  Message layouts:
 * docs/pmix-transport.md.
 */
#ifndef PG_PMIX_SERVER_INT_H
#define PG_PMIX_SERVER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

#include "engine/pg_engine.h"
#include "server/pg_handler.h"

typedef struct pg_pmix_req pg_pmix_req_t;

/* Handler data of one connection. */
typedef struct pg_pmix_session {
    pg_peer_t *peer;        /* borrowed; valid until on_close */
    pg_pmix_req_t *pending; /* requests the engine still owes an answer */
    char **published;       /* keys this process published (for Unpublish(NULL)) */
    size_t npublished;
    uint64_t event_sub;     /* engine event subscription, 0 = none */
    bool inited;
} pg_pmix_session_t;

/* A request answered later.  `s` is NULL once the connection has gone. */
struct pg_pmix_req {
    pg_pmix_req_t *prev, *next;
    pg_pmix_session_t *s;
    uint8_t cmd;
    uint32_t id;
    /* lookups: one pg_lookup per key, answered together; publish and
     * unpublish likewise (pdata[i].key, ok[i]: its call succeeded, rc: the
     * first failure) */
    pmix_pdata_t *pdata;
    size_t nkeys, outstanding, found;
    bool timed_out;
    bool *ok;
    pmix_status_t rc;
};

/* The decoded part of a request a command function works on. */
typedef struct pg_pmix_in {
    pg_pmix_session_t *s;
    pg_peer_t *peer;
    uint8_t cmd;
    uint32_t id;
    pmix_data_buffer_t *args; /* positioned after the header */
} pg_pmix_in_t;

/* ---- sessions and pending requests (pg_pmix_server.c) ---- */

/* A request of `in`'s session awaiting the engine; NULL when out of memory. */
pg_pmix_req_t *pg_pmix_req_new(pg_pmix_in_t *in);
/* Unlinks (when its session still lives) and frees; NULL is fine. */
void pg_pmix_req_free(pg_pmix_req_t *r);
/* The session's process as the engine names it. */
pg_proc_t pg_pmix_session_proc(const pg_pmix_session_t *s);

/* ---- replies (pg_pmix_server.c) ---- */

/* Seals and sends a reply begun with pg_pmix_msg_begin_reply, then frees
 * the buffer; the host's reply_send result. */
int pg_pmix_reply_send(pg_peer_t *peer, pmix_data_buffer_t *buf);
/* A reply with nothing after the status. */
int pg_pmix_reply_status(pg_peer_t *peer, uint8_t cmd, uint32_t id, pmix_status_t status);

/* ---- directives and arguments (pg_pmix_server.c) ---- */

bool pg_pmix_info_is(const pmix_info_t *i, const char *key);
/* A boolean directive given as true (any form pg_value_truth accepts). */
bool pg_pmix_info_true(const pmix_info_t *i);
/* PMIX_TIMEOUT's seconds in nanoseconds; 0 (none) when not a positive count. */
pg_time_t pg_pmix_info_timeout(const pmix_info_t *i);
/* procs[] as engine procs (an empty nspace means `own_ns`), borrowing the
 * names; free() the array.  NULL when out of memory. */
pg_proc_t *pg_pmix_procs_to_engine(const pmix_proc_t *procs, size_t n, const char *own_ns);

/* ---- events (pg_pmix_srv_event.c) ---- */

/* The session's process hears the events in its range from now on. */
void pg_pmix_events_subscribe(pg_pmix_session_t *s, pg_engine_t *e, const pg_proc_t *self);
void pg_pmix_events_unsubscribe(pg_pmix_session_t *s);

/* ---- the command functions: PG_HANDLER_OK, _FAIL (a request libpmix
 * would not send) or _CLOSE ---- */

int pg_pmix_serve_commit(pg_pmix_in_t *in);   /* pg_pmix_srv_fence.c */
int pg_pmix_serve_fence(pg_pmix_in_t *in);
int pg_pmix_serve_get(pg_pmix_in_t *in);
int pg_pmix_serve_publish(pg_pmix_in_t *in);  /* pg_pmix_srv_nameserv.c */
int pg_pmix_serve_lookup(pg_pmix_in_t *in);
int pg_pmix_serve_unpublish(pg_pmix_in_t *in);
int pg_pmix_serve_spawn(pg_pmix_in_t *in);    /* pg_pmix_srv_spawn.c */
int pg_pmix_serve_connect(pg_pmix_in_t *in);  /* and disconnect */
int pg_pmix_serve_group_construct(pg_pmix_in_t *in); /* pg_pmix_srv_group.c */
int pg_pmix_serve_group_destruct(pg_pmix_in_t *in);
int pg_pmix_serve_group_invite(pg_pmix_in_t *in);
int pg_pmix_serve_group_join(pg_pmix_in_t *in);
int pg_pmix_serve_group_leave(pg_pmix_in_t *in);
int pg_pmix_serve_notify(pg_pmix_in_t *in);   /* pg_pmix_srv_event.c */
int pg_pmix_serve_query(pg_pmix_in_t *in);    /* pg_pmix_srv_query.c */
int pg_pmix_serve_log(pg_pmix_in_t *in);      /* pg_pmix_srv_log.c */
int pg_pmix_serve_job_control(pg_pmix_in_t *in); /* pg_pmix_srv_jobctl.c */
int pg_pmix_serve_monitor(pg_pmix_in_t *in);

#endif

/*
 * pg_statusd: the status endpoint of a running pmigate, what `pmigate
 * status` talks to (docs/gateway.md, "The status endpoint").  A unix
 * socket "status" in the job's private directory (mode 0700, the socket
 * 0600, pg_tmpdir.h): a client of pmigate's own uid (SO_PEERCRED; another
 * user's is answered one refusal line) sends one request line, "status
 * 1", and gets back a header line "pmigate-status 1 pid=<pid>" and the
 * report (pg_report.h), then the connection closes.  Read-only: the request can
 * ask for nothing else, and the report is built from views that change
 * nothing.  The loop never blocks on a client: the report is written as
 * the client takes it, and a client that sends nothing or takes nothing
 * for PG_STATUSD_IDLE_MS is dropped; at most PG_STATUSD_CLIENTS are
 * served at once, and when they are all there a newcomer takes the place
 * of the oldest one that has not sent its request (peers of the same user
 * that only connect cannot keep the owner's `pmigate status` out).
 *
 * Ownership: pg_statusd_t owns its socket (unlinked by _free), its clients
 * and their buffers; the directory is the caller's.
 */
#ifndef PG_STATUSD_H
#define PG_STATUSD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct event_base;
typedef struct pg_statusd pg_statusd_t;

enum {
    PG_STATUSD_IDLE_MS = 5000,
    PG_STATUSD_CLIENTS = 16,
    PG_STATUSD_BACKLOG = 128, /* connections the kernel queues before accept */
};

#define PG_STATUSD_SOCKET "status"
#define PG_STATUSD_REQUEST "status 1"
#define PG_STATUSD_HEADER "pmigate-status 1"

/* Writes the report (the text after the header line) to out. */
typedef void (*pg_statusd_report_fn)(void *arg, FILE *out);

/* Listens on <dir>/status.  Returns NULL with *err (errno) set. */
pg_statusd_t *pg_statusd_new(struct event_base *base, const char *dir,
                             pg_statusd_report_fn report, void *arg, int *err);
void pg_statusd_free(pg_statusd_t *s);

/* More of the report, gathered elsewhere (`pmigate proxy`: the other
 * nodes').  Once set, every status request, after report(), calls
 * more(arg, ticket) and waits for pg_statusd_more_done with that ticket
 * (inline or later, within PG_STATUSD_IDLE_MS, or the client is dropped);
 * its text goes after the report.  A ticket whose client is gone is
 * ignored. */
typedef void (*pg_statusd_more_fn)(void *arg, uint64_t ticket);
void pg_statusd_set_more(pg_statusd_t *s, pg_statusd_more_fn more, void *arg);
void pg_statusd_more_done(pg_statusd_t *s, uint64_t ticket, const char *text, size_t len);

#endif

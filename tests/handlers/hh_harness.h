/*
 * hh_harness: a scripted-conversation harness for the PMI-1/PMI-2 server
 * handlers.  It is a host of the handlers as the seam (server/pg_handler.h)
 * defines one: a fake ops table records replies, aborts, finalizes and log
 * lines, and every client is a pg_peer_t of one job registered in a real
 * engine.  What a test sends is framed and parsed by the real wire codec
 * and handed to the pmi1/pmi2 handler the first message asks for; nothing
 * of the gateway (sockets, event loop, launcher) is involved.
 *
 * Everything is synchronous: a reply is in its client's inbox when the
 * hh_send that caused it returns (or, for a held request, when the message
 * that releases it was sent), so conversations are deterministic.
 *
 * It also holds what test_pmi1.c and test_pmi2.c share: the reply buffer
 * the tests read into (hh_reply, made by each suite's init) and EXPECT.
 *
 * Ownership: hh_new() returns a harness owning everything; hh_free() closes
 * every connection (held requests complete first) and frees it.
 */
#ifndef HH_HARNESS_H
#define HH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "tests/pg_cunit.h"
#include "wire/pg_wire.h"

enum {
    HH_MAX_RANKS = 16,
    HH_MSG_MAX = 8192,     /* largest reply a test reads */
};

typedef struct hh hh_t;

/* One received message: the raw bytes (NUL-terminated) and their parse. */
typedef struct hh_reply {
    char raw[HH_MSG_MAX + 1];
    size_t len;
    char parsed[HH_MSG_MAX + 1]; /* the copy the tokens point into */
    pg_msg_t msg;
    char vals[8][HH_MSG_MAX + 1]; /* rotating storage for hh_get() */
    int nextval;
} hh_reply_t;

/* Replies are big (they hold whole messages): allocate them. */
hh_reply_t *hh_reply_new(void);
void hh_reply_free(hh_reply_t *r);

/* The reply the tests receive into: hh_suite_init (every suite's init)
 * makes it, hh_suite_cleanup frees it. */
extern hh_reply_t *hh_reply;
int hh_suite_init(void);
int hh_suite_cleanup(void);

/* Receives client c's next message into r; the test stops unless it is a
 * `cmd`. */
#define EXPECT(h, c, r, cmd) CU_ASSERT_FATAL(hh_expect((h), (c), (r), (cmd)))

/* A job of `size` ranks spread over `nnodes` nodes (ranks in blocks), every
 * rank a client whose rank is known, as on PMI_FD.  NULL on failure. */
hh_t *hh_new(int size, int nnodes);
void hh_free(hh_t *h);

/* Did client c's handler tell the host the peer reads the node's key
 * segment (pg_peer_ops_t.segment_reader)? */
bool hh_reads_segment(const hh_t *h, int c);

/* Adds a connection whose rank is not known yet (a PMI_PORT client): the
 * handshake names it.  Returns its client index (>= size), or -1. */
int hh_add_unidentified(hh_t *h);

/* Sends raw bytes from client `c`: every message they complete reaches the
 * handler before this returns. */
void hh_send(hh_t *h, int c, const char *bytes, size_t len);
/* A PMI-1 line (the caller includes the '\n'). */
void hh_send1(hh_t *h, int c, const char *line);
/* A PMI-2 body with a right-aligned (hydra) or left-aligned (Slurm,
 * MPICH 4.0) length field. */
void hh_send2(hh_t *h, int c, const char *body);
void hh_send2_left(hh_t *h, int c, const char *body);

/* Takes the next message the handler sent client c.  Returns 1, or 0 when
 * there is none. */
int hh_recv(hh_t *h, int c, hh_reply_t *r);
/* 1 if the handler sent client c nothing that it has not read. */
int hh_quiet(hh_t *h, int c);
/* 1 once client c's connection is closed (what it had not read is
 * dropped). */
int hh_eof(hh_t *h, int c);

/* The value of `key` in a received message as a C string, or NULL. */
const char *hh_get(hh_reply_t *r, const char *key);
/* The command name of a received message ("put_result"). */
const char *hh_cmd(hh_reply_t *r);
/* The key of the last token ("value" when value= is last). */
const char *hh_last_key(hh_reply_t *r);

/* Receives one message and checks its command; returns 1 if it matched. */
int hh_expect(hh_t *h, int c, hh_reply_t *r, const char *cmd);

/* What the job saw. */
int hh_abort_code(const hh_t *h);   /* -1 if nobody aborted */
/* Gives every client a host that can spawn (the harness's own record of
 * the request, answered at once); hh_spawned() is the last request:
 * "preput K=V" lines, then per command "cmd PROG xN [arg]... k=v...". */
void hh_enable_spawn(hh_t *h);
const char *hh_spawned(const hh_t *h);
int hh_abort_rank(const hh_t *h);
const char *hh_log(const hh_t *h);  /* every line the handlers logged */
/* The reason connection c was closed (NULL while open or after a clean
 * finalize). */
const char *hh_close_reason(const hh_t *h, int c);
int hh_closed(const hh_t *h, int c);
const char *hh_kvsname(const hh_t *h);

/* Subscribes rank `rank` to the job's events in the engine, as the PMIx
 * handler does for a PMIx process of the job (a mixed job); hh_events()
 * is what it heard, one line per event: "STATUS source R key=value...".
 * 0, or -1. */
int hh_watch_events(hh_t *h, int rank);
const char *hh_events(const hh_t *h);

#endif

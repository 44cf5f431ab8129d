/*
 * hh_harness: a scripted-conversation harness for the PMI-1/PMI-2 server
 * handlers.  It runs the real pieces the gateway runs -- a libevent loop,
 * pg_conn connections over socketpairs, the wire codec, the engine with a
 * registered job, and the pmi1/pmi2 handler tables -- and plays the client
 * side of each rank's socket from the test thread.  Only the launcher is
 * replaced: this file defines the pg_job_t the handlers query (kvsname,
 * size, appnum, abort, log), so nothing is forked.
 *
 * The loop runs in the test thread: every receive pumps the event base
 * until the expected bytes arrive or a deadline passes, so conversations are
 * deterministic and valgrind-friendly.
 *
 * Ownership: hh_new() returns a harness owning everything; hh_free() closes
 * every connection (held requests complete first) and frees it.
 */
#ifndef HH_HARNESS_H
#define HH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "wire/pg_wire.h"

enum {
    HH_MAX_RANKS = 16,
    HH_MSG_MAX = 8192,     /* largest reply a test reads */
    HH_WAIT_MS = 2000,     /* how long a test waits for an expected reply */
    HH_QUIET_MS = 150,     /* how long "no reply" is watched for */
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

/* A job of `size` ranks spread over `nnodes` nodes (ranks in blocks), every
 * rank connected over a PMI_FD-style socketpair.  NULL on failure. */
hh_t *hh_new(int size, int nnodes);
void hh_free(hh_t *h);

/* Adds a connection whose rank is not known yet (a PMI_PORT client): the
 * handshake names it.  Returns its client index (>= size), or -1. */
int hh_add_unidentified(hh_t *h);

/* Writes raw bytes to client `c`'s socket. */
void hh_send(hh_t *h, int c, const char *bytes, size_t len);
/* A PMI-1 line (the caller includes the '\n'). */
void hh_send1(hh_t *h, int c, const char *line);
/* A PMI-2 body with a right-aligned (hydra) or left-aligned (Slurm,
 * MPICH 4.0) length field. */
void hh_send2(hh_t *h, int c, const char *body);
void hh_send2_left(hh_t *h, int c, const char *body);

/* Receives the next message of client c.  Returns 1, or 0 on timeout or
 * EOF (hh_eof tells which). */
int hh_recv(hh_t *h, int c, hh_reply_t *r, int timeout_ms);
/* 1 if nothing arrives for client c within ms. */
int hh_quiet(hh_t *h, int c, int ms);
/* 1 once client c's socket reports EOF (pumping up to ms). */
int hh_eof(hh_t *h, int c, int ms);

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
int hh_abort_rank(const hh_t *h);
const char *hh_log(const hh_t *h);  /* everything pg_job_log printed */
/* The reason connection c was closed (NULL while open or after a clean
 * finalize). */
const char *hh_close_reason(const hh_t *h, int c);
int hh_closed(const hh_t *h, int c);
const char *hh_kvsname(const hh_t *h);

#endif

/*
 * hh_table: the handlers' conversations as data.  A conversation is a
 * list of rows (dialect, connection, request, reply); one conversation
 * whose behaviour both dialects share is written once and run once per
 * dialect, each run taking the rows of its dialect and the rows of both.
 *
 * A row's request is sent from its connection as the client sends it: a
 * PMI-1 line as written, a PMI-2 body framed with its length (right-
 * aligned as hydra's clients write it, left-aligned as Slurm's and
 * MPICH 4.0's do), or bytes as written (H2_RAW).  Its reply, when there
 * is one, is the next message the connection receives, compared to the
 * letter (a PMI-2 reply without its length field, which the codec
 * checked), except that '*' stands for any run of characters.
 *
 * A request starting with '@' asks the harness instead of the handler;
 * the reply is then what the harness must say:
 *   @quiet      the connection has nothing unread (reply NULL)
 *   @closed     "clean" once closed after a finalize, else the reason
 *   @abort      "none", or "code=C rank=R" of the first abort
 *   @log        every line the handlers logged
 *   @events     what the PMIx subscribers (@watch) heard
 *   @segment    "yes" if the handler said the peer reads the key segment
 *   @spawned    the last spawn request (hh_spawned())
 *   @watch      subscribes the connection's rank to the job's events
 *   @spawn      gives every client a host that can spawn
 *   @port       adds a connection whose rank its handshake names
 * Before matching, "$KVS" becomes the job's name, "$ABORTED",
 * "$EXIT_CODE" and "$EVTEXT" the PMIx status and keys an abort event
 * carries, and "{N*c}" N times the character c.
 */
#ifndef HH_TABLE_H
#define HH_TABLE_H

#include "tests/handlers/hh_harness.h"

enum {
    H1 = 1,            /* a PMI-1 row */
    H2 = 2,            /* a PMI-2 row, right-aligned length */
    HBOTH = H1 | H2,   /* a row of both dialects */
    H2_LEFT = H2 | 4,  /* a PMI-2 row, left-aligned length */
    H2_RAW = H2 | 8,   /* a row of the PMI-2 run sent as written */
};

typedef struct hh_row {
    unsigned dialect;  /* 0 ends a list */
    int conn;
    const char *request; /* NULL: only receive */
    const char *reply;   /* NULL: nothing received */
} hh_row_t;

/* How a case's job starts: every rank past its handshake (the PMI-1
 * init, or PMI-2's init and fullinit), or nothing sent yet. */
enum { HH_READY, HH_BARE };

typedef struct hh_case {
    const char *name;
    unsigned dialects; /* H1, H2 or HBOTH: one run for each */
    int size, nnodes, start;
    const hh_row_t *rows;
} hh_case_t;

/* Runs one row in `dialect`'s run (rows of the other are skipped).
 * Returns 1 when it held, else 0 after a CUnit failure naming `where`. */
int hh_row_run(hh_t *h, unsigned dialect, const hh_row_t *row, const char *where);

/* Runs rows until one fails; 1 if all held. */
int hh_rows_run(hh_t *h, unsigned dialect, const hh_row_t *rows, const char *where);

/* A job of the case's shape, started as the case says in `dialect`;
 * NULL (after a CUnit failure) when that failed. */
hh_t *hh_case_job(const hh_case_t *c, unsigned dialect);

/* The whole case in one dialect. */
void hh_case_run(const hh_case_t *c, unsigned dialect);

#endif

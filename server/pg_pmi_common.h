/*
 * pg_pmi_common: what the PMI-1 and PMI-2 server handlers share, so the two
 * dialects translate engine results the same way and keep deferred replies
 * safe in the same way.
 *
 *  - One table turns a PMIx status (the engine's error domain) into the wire
 *    error of each dialect: a PMI-1 rc, a PMI-2 rc (PG_PMI2_RC_*, below) and a
 *    message without spaces.  Another does the same for the parser's
 *    "framed but malformed" results (key too long, value too long, ...).
 *  - A session is the handler data of one connection.  Requests that the
 *    engine answers later (held gets, fences, lookups) are pg_pmi_req_t
 *    records linked to their session; when the connection closes the session
 *    detaches them (req->session = NULL) and the engine's completion, which
 *    always comes exactly once, only frees the record.  So no callback ever
 *    touches a freed connection, whatever order the gateway tears things
 *    down in.
 *  - Small helpers: the engine identity of a peer, bounded copies of
 *    wire tokens into C strings, engine values as wire text, job attributes,
 *    and sending an encoded reply.
 *
 * Error domain: functions return 0 / -1 (or a PMIx status where named).
 */
#ifndef PG_PMI_COMMON_H
#define PG_PMI_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/pg_engine.h"
#include "server/pg_handler.h"
#include "wire/pg_enc.h"
#include "wire/pg_wire.h"

/* Room for one encoded reply: PMI-2 values are <= 1024 bytes and every
 * other field is bounded, so one reply always fits. */
enum { PG_PMI_REPLY_MAX = 4096 };

/* The PMI-2 rc= numbers sent on the wire: the PMI2_* codes of the public
 * pmi2/pmi2.h (the same in Slurm and MPICH), repeated here so the helpers
 * both handlers share include neither handler's room;
 * pmi2/pg_pmi2_server.c checks that they agree. */
enum {
    PG_PMI2_RC_FAIL = -1,
    PG_PMI2_RC_ERR_NOMEM = 2,
    PG_PMI2_RC_ERR_INVALID_ARG = 3,
    PG_PMI2_RC_ERR_INVALID_KEY_LENGTH = 5,
    PG_PMI2_RC_ERR_INVALID_VAL_LENGTH = 7,
    PG_PMI2_RC_ERR_INVALID_LENGTH = 8,
    PG_PMI2_RC_ERR_INVALID_NUM_ARGS = 9,
    PG_PMI2_RC_ERR_INVALID_KEYVALP = 12,
    PG_PMI2_RC_ERR_OTHER = 14,
};

/* How an error travels on the wire in each dialect. */
typedef struct pg_pmi_err {
    int pmi1_rc;     /* PMI-1 rc= (hydra's -1, or 1 where hydra uses 1) */
    int pmi2_rc;     /* PMI-2 rc= (a PG_PMI2_RC_* code) */
    const char *msg; /* msg= / errmsg=: words joined by '_' (no spaces) */
} pg_pmi_err_t;

/* The wire error for an engine status (never NULL; unknown statuses map to
 * a generic "internal_error").  PMIX_SUCCESS maps to rc 0. */
const pg_pmi_err_t *pg_pmi_status_err(pmix_status_t status);

/* The wire error for a parser result passed to on_message as parse_rc
 * (key_too_long, value_too_long, malformed_message, ...); never NULL. */
const pg_pmi_err_t *pg_pmi_wire_err(int parse_rc);

/* The wire error for a framed message the parser flagged, and its text for
 * msg=/errmsg= (the parser's reason appended to a syntax error; no spaces,
 * so PMI-1 can carry it).  Never NULL. */
const pg_pmi_err_t *pg_pmi_bad_input(const pg_msg_t *msg, int parse_rc, char *text, size_t size);

/* ---- sessions and deferred requests ---------------------------------- */

typedef struct pg_pmi_session pg_pmi_session_t;
typedef struct pg_pmi_req pg_pmi_req_t;

struct pg_pmi_session {
    pg_peer_t *peer;         /* borrowed; valid until pg_pmi_on_close */
    pg_pmi_req_t *pending;   /* requests the engine has not answered yet */
    bool keyval_cache;       /* PMI-1: the client asked for keyval_cache lines */
    struct pg_pmi_spawn *spawn; /* PMI-1: the mcmd blocks of a spawn so far, or NULL */
    char **connected;        /* PMI-2: jobids job-connect'ed, whose keys kvs-get reads */
    int nconnected;
};

struct pg_pmi_req {
    pg_pmi_req_t *prev, *next;
    pg_pmi_session_t *session; /* NULL once the connection has gone */
    pg_cmd_t cmd;              /* the request this answers */
    bool has_thrid;            /* PMI-2: echo thrid */
    pg_str_t thrid;            /* points into text[] */
    char text[];               /* thrid, NUL */
};

/* The on_open and on_close of both handlers: on_open makes a session the
 * connection's handler data (-1 when out of memory); on_close detaches its
 * pending requests (their completions will only free them) and frees it. */
int pg_pmi_on_open(pg_peer_t *peer);
void pg_pmi_on_close(pg_peer_t *peer);

/* A pending request of session `s` for command `cmd`, copying `thrid`
 * (ptr NULL: none).  NULL when out of memory. */
pg_pmi_req_t *pg_pmi_req_new(pg_pmi_session_t *s, pg_cmd_t cmd, pg_str_t thrid);
/* The peer to answer, or NULL if its connection closed meanwhile. */
pg_peer_t *pg_pmi_req_peer(const pg_pmi_req_t *r);
/* Unlinks and frees.  NULL is ignored. */
void pg_pmi_req_free(pg_pmi_req_t *r);

/* ---- helpers ------------------------------------------------------------ */

/* The engine identity of the peer's process (nspace = the job's kvsname,
 * borrowed from the host's job). */
pg_proc_t pg_pmi_proc(const pg_peer_t *peer);

/* Copies token `s` into buf as a C string.  -1 when absent (ptr NULL), when
 * it does not fit in cap - 1 bytes, or when it contains a NUL byte. */
int pg_pmi_cstr(pg_str_t s, char *buf, size_t cap);

/* The text of an engine value as PMI sends it (strings and byte objects
 * as they are, integers in decimal, written to scratch[cap]).  -1 for a type
 * PMI cannot carry. */
int pg_pmi_value_text(const pg_value_t *v, char *scratch, size_t cap, pg_str_t *out);

/* A reply being encoded: the encoder plus its buffer, on the stack. */
typedef struct pg_pmi_reply {
    pg_enc_t enc;
    char buf[PG_PMI_REPLY_MAX];
} pg_pmi_reply_t;

/* Initialises r and returns its encoder. */
pg_enc_t *pg_pmi_reply_init(pg_pmi_reply_t *r);

/* Answers a command this handler does not serve (unknown name, a response
 * sent as a request, the other protocol's command) in the framing the
 * message came in: "cmd=<name>_result rc=-1 msg=unsupported_command_<name>"
 * for PMI-1, "cmd=<name>-response;rc=-1;errmsg=...;" (thrid echoed) for
 * PMI-2.  The connection stays usable.  0 or -1. */
int pg_pmi_reply_unsupported(pg_peer_t *peer, const pg_msg_t *msg);

/* Sends the complete messages in `e` to the peer (one reply_send).  0 or
 * -1. */
int pg_pmi_send(pg_peer_t *peer, const pg_enc_t *e);

/* Replaces every byte that may not appear in a PMI-1 value or a PMI-2 error
 * text (space, '=', ';', control bytes) with '_', in place. */
void pg_pmi_sanitize(char *text);

#endif

/*
 * pg_pmi_handler: the frame both PMI handlers (pmi1/, pmi2/) are built on,
 * so that what does not depend on the dialect is written once: a table of
 * commands indexed by the command enum, the dispatch of a message to its
 * entry (commands the handler does not serve, messages the parser flagged,
 * a gateway without an engine), refusals in the shape of the command's
 * own reply, and the steps their commands share (a required token, the end
 * of a finalize, the arguments of an abort, a name lookup).
 *
 * What differs, each dialect gives as a pg_pmi_dialect_t: its table and
 * its refusal (PMI-1 "cmd=<reply> rc= msg=", PMI-2 "<reply>;rc=;errmsg=;"
 * with the thrid echoed and the keys its client parses).
 */
#ifndef PG_PMI_HANDLER_H
#define PG_PMI_HANDLER_H

#include <stdbool.h>
#include <stddef.h>

#include "server/pg_pmi_common.h"

typedef int (*pg_pmi_fn_t)(pg_pmi_session_t *s, pg_peer_t *peer, const pg_msg_t *msg);

/* One entry of a dialect's table. */
typedef struct pg_pmi_cmd {
    pg_pmi_fn_t fn;
    pg_cmd_t reply;    /* the response command (for refusals) */
    bool needs_engine; /* refuse when the gateway runs without an engine */
} pg_pmi_cmd_t;

/* Sends a refusal as `reply` with the dialect's rc of `err` and `text`
 * (no spaces); `thrid` (ptr NULL: none) is echoed where the dialect does.
 * 0 or -1. */
typedef int (*pg_pmi_refuse_fn)(pg_peer_t *peer, pg_cmd_t reply, pg_str_t thrid,
                                const pg_pmi_err_t *err, const char *text);

typedef struct pg_pmi_dialect {
    const pg_pmi_cmd_t *cmds; /* [PG_CMD_COUNT]; fn NULL: not served */
    pg_cmd_t abort;           /* served even when the parser flagged it */
    pg_pmi_refuse_fn refuse;
} pg_pmi_dialect_t;

/* The rc of a request refused for its arguments (-1, PMI2_ERR_INVALID_ARG)
 * and of any other refusal (-1, PMI2_ERR_OTHER); the text is the caller's. */
extern const pg_pmi_err_t pg_pmi_err_invalid_arg;
extern const pg_pmi_err_t pg_pmi_err_other;

/* The handler's on_message: the command's entry of d->cmds when the
 * message came in the framing of that command's protocol, else the reply
 * of pg_pmi_reply_unsupported; a message the parser flagged (parse_rc) is
 * refused with the parser's reason, but for an abort; a command that needs
 * the engine is refused when there is none. */
int pg_pmi_dispatch(const pg_pmi_dialect_t *d, pg_peer_t *peer, pg_msg_t *msg, int parse_rc);

/* Refuses with the wire error of engine status `st` (pg_pmi_status_err). */
int pg_pmi_refuse_status(const pg_pmi_dialect_t *d, pg_peer_t *peer, pg_cmd_t reply,
                         pg_str_t thrid, pmix_status_t st);

/* A required token as a C string in buf; -1 (and "missing_or_invalid_<key>"
 * refused as `reply`) when it is missing or unusable. */
int pg_pmi_require(const pg_pmi_dialect_t *d, pg_peer_t *peer, const pg_msg_t *msg,
                   const char *key, char *buf, size_t cap, pg_cmd_t reply);

/* The table entry of commands parsed but not served: "<name>_is_not_
 * supported_yet", refused as the entry's reply. */
int pg_pmi_not_supported(const pg_pmi_dialect_t *d, pg_peer_t *peer, const pg_msg_t *msg);

/* The end of a finalize, once its reply is sent: the host and the engine
 * learn the process is done.  Returns PG_HANDLER_CLOSE. */
int pg_pmi_finalize(pg_peer_t *peer);

/* Longest abort message passed on to the job log. */
enum { PG_PMI_ABORT_MSG_MAX = 1024 };

/* An abort's exit code (exitcode=; 1 when absent or not a number) and its
 * `message` token in text (cut at PG_PMI_ABORT_MSG_MAX bytes; "" when
 * absent or unusable). */
int pg_pmi_abort_args(const pg_msg_t *msg, pg_str_t message, char text[PG_PMI_ABORT_MSG_MAX + 1]);

/* A name lookup of the service named by token `key`, answered through
 * `done` with a pg_pmi_req_t of session s (missing key: refused; out of
 * memory: refused as `reply`).  Returns PG_HANDLER_OK. */
int pg_pmi_lookup(const pg_pmi_dialect_t *d, pg_pmi_session_t *s, pg_peer_t *peer,
                  const pg_msg_t *msg, const char *key, pg_cmd_t reply, pg_lookup_cb_t done);

/* What a lookup's completion says: 0 with the port as a C string in
 * port[cap], 1 for a service not found (or a value PMI cannot carry), -1
 * for another failure (status says which). */
int pg_pmi_lookup_port(pmix_status_t status, const pg_value_t *value, char *port, size_t cap);

#endif

/*
 * pg_parse: turns one framed PMI message into a pg_msg_t (command enum plus
 * key/value tokens pointing into the caller's buffer).  The machines are
 * ragel (pg_pmi1_parser.rl, pg_pmi2_parser.rl); this is their whole API.
 *
 * Every function takes a mutable buffer because PMI-2 ";;" escapes are
 * undone in place; the tokens stay valid while that buffer lives and is not
 * modified.  Results:
 *   PG_WIRE_OK                  parsed; msg->cmd may still be PG_CMD_UNKNOWN
 *                               (a well-formed name the codec does not know)
 *   PG_WIRE_EKEY_TOO_LONG, PG_WIRE_EVAL_TOO_LONG, PG_WIRE_EKVSNAME_TOO_LONG,
 *   PG_WIRE_ETOO_MANY_TOKENS    parsed completely (cmd and tokens are valid:
 *                               answer the right command), but a limit was
 *                               broken; msg->limit_err holds the first one
 *   PG_WIRE_ESYNTAX             malformed; msg->err_reason says why; cmd is
 *                               set when the name was read before the error
 *   PG_WIRE_ENOMEM              the token array could not grow
 *   PG_WIRE_ELINE_TOO_LONG, PG_WIRE_EMCMD_TOO_LONG, PG_WIRE_ELENGTH_TOO_BIG
 *                               input larger than the framer would allow
 * msg must have been set up with pg_msg_init(); it is reset on entry.
 *
 * Tolerated, because real peers send it (docs/wire-protocol.md, "What
 * pmigate tolerates"):
 *   PMI-1  runs of spaces, a trailing space, empty values, '=' inside values,
 *          hydra's found=TRUE after value= in get_result, words without '='
 *          after value= (the value runs on: "value=a b c"), and tokens
 *          without '=' in responses (value {NULL, 0}).
 *   PMI-2  a missing final ';', empty values, ";;" inside a value (undone to
 *          ';'), up to PG_PMI2_JUNK_MAX bytes of junk after the last complete
 *          pair (MPICH 3.3-4.0 simple2pmi's off-by-6 length), and pairs
 *          without '=' in responses.
 */
#ifndef PG_PARSE_H
#define PG_PARSE_H

#include <stddef.h>

#include "wire/pg_frame.h"
#include "wire/pg_wire.h"

/* One PMI-1 line, without its '\n' (a single trailing '\n' is ignored). */
int pg_parse_pmi1(char *line, size_t len, pg_msg_t *msg);

/* One "mcmd=spawn\nkey=value\n...\n" block (the framer's body; a final
 * "endcmd" line is accepted too).  Values run to the end of their line. */
int pg_parse_pmi1_mcmd(char *block, size_t len, pg_msg_t *msg);

/* One PMI-2 body: the <length> bytes after the 6-byte length field. */
int pg_parse_pmi2(char *body, size_t len, pg_msg_t *msg);

/* Parses the message pg_frame_next() found at the start of buf. */
int pg_parse_frame(char *buf, const pg_frame_t *frame, pg_msg_t *msg);

#endif

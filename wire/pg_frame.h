/*
 * pg_frame: cuts a byte stream into PMI messages, the way hydra does it: per
 * message, from its first bytes.  "cmd=" starts a PMI-1 line ending at '\n';
 * "mcmd=" starts a PMI-1 block ending at a line that is exactly "endcmd";
 * anything else must be a PMI-2 6-byte length field (digits padded with
 * blanks on either side) followed by that many body bytes.
 *
 * Stateless: call pg_frame_next() on the bytes buffered so far; it says
 * whether a whole message is there and where it lies, and never reads past
 * `len`.  Bytes may arrive in any pieces.  A framing error means the stream
 * cannot be resynchronised: report it and drop the connection.
 */
#ifndef PG_FRAME_H
#define PG_FRAME_H

#include <stddef.h>

#include "wire/pg_wire.h"

typedef enum pg_frame_kind {
    PG_FRAME_NONE = 0,
    PG_FRAME_PMI1_LINE,  /* body: the line without its '\n' */
    PG_FRAME_PMI1_MCMD,  /* body: "mcmd=..." up to and including the '\n'
                          * before the "endcmd" line (which is not in it) */
    PG_FRAME_PMI2,       /* body: exactly <length> bytes after the field */
} pg_frame_kind_t;

typedef struct pg_frame {
    pg_proto_t proto;      /* PG_PROTO_PMI1 or PG_PROTO_PMI2 */
    pg_frame_kind_t kind;
    size_t body_off;       /* body = buf + body_off ... */
    size_t body_len;       /* ... body_len bytes */
    size_t consumed;       /* bytes of buf the whole message occupies */
} pg_frame_t;

/* Looks for one complete message at the start of buf[0..len).
 * Returns PG_WIRE_OK and fills *out; PG_WIRE_ENEED_MORE when the bytes so
 * far are a valid but incomplete start (*out zeroed); or a framing error:
 * PG_WIRE_EBAD_START, PG_WIRE_EBAD_LENGTH, PG_WIRE_ELENGTH_TOO_BIG,
 * PG_WIRE_ELINE_TOO_LONG, PG_WIRE_EMCMD_TOO_LONG.  Errors are reported as
 * soon as the bytes prove them (a 5000-byte line without '\n' is an error
 * before its end arrives). */
int pg_frame_next(const char *buf, size_t len, pg_frame_t *out);

#endif

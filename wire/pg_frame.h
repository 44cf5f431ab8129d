/*
 * pg_frame: cuts a byte stream into PMI messages, the way hydra does it: per
 * message, from its first bytes.  "cmd=" starts a PMI-1 line ending at '\n';
 * "mcmd=" starts a PMI-1 block ending at a line that is exactly "endcmd";
 * anything else must be a PMI-2 6-byte length field (digits padded with
 * blanks on either side) followed by that many body bytes.
 *
 * Stateless: call pg_frame_next() on the bytes buffered so far; it says
 * whether a whole message is there and where it lies, and never reads past
 * `len`.  Bytes may arrive in any pieces.
 *
 * Over-long messages (a PMI-1 line over PG_PMI1_LINE_MAX, an mcmd block over
 * PG_PMI1_MCMD_MAX, a PMI-2 length over PG_PMI2_BODY_MAX) are framing errors
 * the stream survives: their end is still known (the '\n', the "endcmd"
 * line, the length), so pg_frame_oversized() hands out the message's head to
 * answer it by its command and pg_frame_skip() drops exactly the rest, as it
 * arrives, without buffering it.  Any other framing error means the stream
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
    size_t total;          /* pg_frame_oversized: the whole message's bytes
                            * when its length says (PMI-2), else 0 */
} pg_frame_t;

/* Looks for one complete message at the start of buf[0..len).
 * Returns PG_WIRE_OK and fills *out; PG_WIRE_ENEED_MORE when the bytes so
 * far are a valid but incomplete start (*out zeroed); or a framing error:
 * PG_WIRE_EBAD_START, PG_WIRE_EBAD_LENGTH, PG_WIRE_ELENGTH_TOO_BIG,
 * PG_WIRE_ELINE_TOO_LONG, PG_WIRE_EMCMD_TOO_LONG.  Errors are reported as
 * soon as the bytes prove them (a 5000-byte line without '\n' is an error
 * before its end arrives). */
int pg_frame_next(const char *buf, size_t len, pg_frame_t *out);

/* The head of an over-long message that is kept to answer it: enough for
 * its command name and the tokens that come first (a PMI-2 thrid), and
 * short enough for the parsers to take it as a message of its own. */
enum { PG_FRAME_HEAD_MAX = 4000 };

/* 1 if err (from pg_frame_next) is an over-long message the stream
 * survives, else 0. */
int pg_frame_is_oversized(int err);

/* An over-long message (err from pg_frame_next, pg_frame_is_oversized) at
 * the start of buf[0..len): its head as a frame to parse (body = the first
 * bytes of the message after a PMI-2 length field, at most
 * PG_FRAME_HEAD_MAX; `consumed` is the head with its length field).
 * Returns PG_WIRE_OK, or PG_WIRE_ENEED_MORE until the head is there. */
int pg_frame_oversized(const char *buf, size_t len, int err, pg_frame_t *head);

/* Dropping the rest of an over-long message. */
typedef struct pg_frame_skip {
    pg_frame_kind_t kind;  /* PG_FRAME_NONE: nothing being skipped */
    size_t left;           /* PMI-2: body bytes still to come */
    unsigned matched;      /* PMI-1: bytes of the terminator seen so far */
    size_t skipped;        /* bytes of the message dropped so far, head included */
} pg_frame_skip_t;

/* Starts skipping the message whose head pg_frame_oversized() returned;
 * the caller consumes head->consumed bytes, then calls pg_frame_skip(). */
void pg_frame_skip_start(pg_frame_skip_t *s, const pg_frame_t *head);

/* Drops bytes of the message: returns how many of buf[0..len) belong to
 * it; s->kind is PG_FRAME_NONE once its last byte was dropped. */
size_t pg_frame_skip(pg_frame_skip_t *s, const char *buf, size_t len);

#endif

/*
 * pg_escape: the one byte-escaping rule of pmigate's text files.
 *
 * Why it exists: traces (docs/trace-format.md) and the test captures
 * (tests/captures/) both store wire messages as text, one message a line,
 * so a person can read and grep them and every byte still round-trips.
 * Both readers must agree on the rule, so it lives here once, in libpgwire,
 * which both the gateway and the test tools link.
 *
 * The rule: printable ASCII stays as it is; '\\' '\n' '\r' '\t' become
 * two-character escapes; every other byte, and a space that ends the
 * message (editors drop it), becomes \xHH (lower-case hex; either case is
 * read back).
 *
 * Pure functions on caller-owned buffers: no allocation, no state.
 */
#ifndef PG_ESCAPE_H
#define PG_ESCAPE_H

#include <stddef.h>

/* Bytes needed at most to escape len bytes, the final NUL included. */
size_t pg_escaped_max(size_t len);

/* Escapes in[0..len) into out (pg_escaped_max(len) bytes); returns the
 * length written; out is NUL-terminated. */
size_t pg_escape(const char *in, size_t len, char *out);

/* Undoes pg_escape; out must hold len bytes and may be `in` itself (the
 * output is never longer than the input, so unescaping in place is safe).
 * Returns 0 and sets *outlen, or -1 on a malformed escape (an unknown
 * letter, a short \x, a final lone '\\'). */
int pg_unescape(const char *in, size_t len, char *out, size_t *outlen);

#endif

/*
 * pg_msgbuf: the bodies of the proxies' own mesh messages (dynamic jobs:
 * spawn, groups), written and read field by field in one byte order
 * (pg_be.h), so that a message is never read past its end.
 *
 * Why a writer and a reader rather than structs on the wire: the messages
 * carry strings, arrays and blobs of any length, and a body that comes from
 * another node is read as untrusted bytes -- a short or malformed one sets
 * the reader's `failed` and yields zeros and NULLs, never a crash.
 *
 * Fields: u32, i32 (two's complement in a u32), u64; a string is a u32
 * length (UINT32_MAX: NULL) and its bytes; a blob is a u32 length and its
 * bytes.  The writer grows its buffer (malloc'd, owned; out of memory sets
 * `failed`); the reader borrows the body.
 */
#ifndef PG_MSGBUF_H
#define PG_MSGBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct pg_wbuf {
    unsigned char *data;
    size_t len, cap;
    int failed;
} pg_wbuf_t;

typedef struct pg_rbuf {
    const unsigned char *at;
    size_t left;
    int failed;
} pg_rbuf_t;

void pg_wbuf_u32(pg_wbuf_t *b, uint32_t v);
void pg_wbuf_i32(pg_wbuf_t *b, int32_t v);
void pg_wbuf_u64(pg_wbuf_t *b, uint64_t v);
void pg_wbuf_str(pg_wbuf_t *b, const char *s);
void pg_wbuf_blob(pg_wbuf_t *b, const void *data, size_t len);
/* `len` bytes as they are, no length first (the rest of another body). */
void pg_wbuf_raw(pg_wbuf_t *b, const void *data, size_t len);
/* Frees the buffer; the struct may be used again (empty). */
void pg_wbuf_free(pg_wbuf_t *b);

pg_rbuf_t pg_rbuf(const void *body, size_t len);
uint32_t pg_rbuf_u32(pg_rbuf_t *r);
int32_t pg_rbuf_i32(pg_rbuf_t *r);
uint64_t pg_rbuf_u64(pg_rbuf_t *r);
/* A malloc'd NUL-terminated copy (the caller frees it), or NULL: a NULL
 * string, a string with a NUL inside, or a failed read (then `failed`). */
char *pg_rbuf_str(pg_rbuf_t *r);
/* The blob's bytes, borrowed from the body (*len its length), or NULL
 * with *len 0 when empty or failed. */
const void *pg_rbuf_blob(pg_rbuf_t *r, size_t *len);
/* The rest of the body, borrowed (*len bytes); the reader is then at its end. */
const void *pg_rbuf_rest(pg_rbuf_t *r, size_t *len);
/* A count of items that each take at least `min_size` bytes: larger than
 * what is left cannot be true (fails the reader, returns 0). */
uint32_t pg_rbuf_count(pg_rbuf_t *r, size_t min_size);

#endif

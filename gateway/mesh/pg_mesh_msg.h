/*
 * pg_mesh_msg: the bodies of the mesh's frames, written and read field by
 * field (docs/proxy.md, "The mesh").
 *
 * Why it exists: every feature that crosses nodes (names, events, status,
 * ...) sends a few integers, strings and byte strings per frame; one
 * format for all of them, big-endian as the frame header, keeps the nodes
 * of any byte order reading each other alike and every reader bounded.
 *
 * Format: u8, u32 and u64 are big-endian (an i32 is a u32 in two's
 * complement); a byte string is a u32 length and the bytes; a string is a
 * byte string without its NUL; a string that may be NULL ("nstr") is a
 * string, or the length UINT32_MAX for NULL.  Raw bytes (fixed size, or
 * the rest of the body) have no length of their own: a frame's last field
 * of any length (a text, a chunk of data) runs to the body's end.
 *
 * Why one codec for every frame: the bodies were built three ways (raw
 * offsets, these fields, and a second layer of fields for the dynamic
 * jobs), each with its own bounds checks; here every read is bounded once.
 *
 * A writer grows its buffer as needed; once an allocation failed it keeps
 * failing (`bad`), so a sender checks once before sending.  A reader
 * never reads past the body: a short or malformed body sets `bad` and
 * every later read returns zeros or empty strings, so a handler reads
 * every field and checks once at the end.
 */
#ifndef PG_MESH_MSG_H
#define PG_MESH_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway/mesh/pg_mesh.h"

typedef struct pg_mesh_wr {
    unsigned char *buf; /* owned */
    size_t len, cap;
    bool bad;           /* out of memory */
} pg_mesh_wr_t;

void pg_mesh_wr_init(pg_mesh_wr_t *w);
void pg_mesh_wr_free(pg_mesh_wr_t *w);
void pg_mesh_wr_u8(pg_mesh_wr_t *w, uint8_t v);
void pg_mesh_wr_u32(pg_mesh_wr_t *w, uint32_t v);
void pg_mesh_wr_u64(pg_mesh_wr_t *w, uint64_t v);
void pg_mesh_wr_bytes(pg_mesh_wr_t *w, const void *p, size_t n);
/* NULL is written as "". */
void pg_mesh_wr_str(pg_mesh_wr_t *w, const char *s);
void pg_mesh_wr_i32(pg_mesh_wr_t *w, int32_t v);
/* A string or NULL, of any length. */
void pg_mesh_wr_nstr(pg_mesh_wr_t *w, const char *s);
/* n bytes as they are, without a length (a fixed-size field, or the
 * body's last field). */
void pg_mesh_wr_raw(pg_mesh_wr_t *w, const void *p, size_t n);
/* Sends what was written as one frame (pg_mesh_send) and frees the
 * buffer.  0, or -1 (out of memory, too big, `dst` unreachable). */
int pg_mesh_wr_send(pg_mesh_wr_t *w, pg_mesh_t *m, uint32_t dst, unsigned type);
/* The same over a direct link (pg_mesh_send_direct). */
int pg_mesh_wr_send_direct(pg_mesh_wr_t *w, pg_mesh_t *m, uint32_t dst, unsigned type);

typedef struct pg_mesh_rd {
    const unsigned char *p; /* borrowed: the frame's body */
    size_t left;
    bool bad;               /* ran past the end, or a string that is not one */
} pg_mesh_rd_t;

pg_mesh_rd_t pg_mesh_rd(const void *body, size_t len);
uint8_t pg_mesh_rd_u8(pg_mesh_rd_t *r);
uint32_t pg_mesh_rd_u32(pg_mesh_rd_t *r);
uint64_t pg_mesh_rd_u64(pg_mesh_rd_t *r);
/* The bytes, borrowed from the body (NULL with *n 0 when bad). */
const void *pg_mesh_rd_bytes(pg_mesh_rd_t *r, size_t *n);
/* A string copied into buf[cap] with its NUL; too long for buf, or
 * holding a NUL, is bad (buf then ""). */
const char *pg_mesh_rd_str(pg_mesh_rd_t *r, char *buf, size_t cap);
int32_t pg_mesh_rd_i32(pg_mesh_rd_t *r);
/* A malloc'd NUL-terminated copy (the caller frees it), or NULL: a NULL
 * string, or a bad read (a string with a NUL inside is bad). */
char *pg_mesh_rd_nstr(pg_mesh_rd_t *r);
/* A count of items that each take at least `min_size` bytes: more than
 * what is left could hold is bad (returns 0). */
uint32_t pg_mesh_rd_count(pg_mesh_rd_t *r, size_t min_size);
/* n raw bytes, borrowed from the body (NULL when fewer are left: bad). */
const void *pg_mesh_rd_raw(pg_mesh_rd_t *r, size_t n);
/* The rest of the body, borrowed (*n may be 0); the reader is then done. */
const void *pg_mesh_rd_rest(pg_mesh_rd_t *r, size_t *n);
/* Every byte read, nothing bad: the body was what it should be. */
bool pg_mesh_rd_done(const pg_mesh_rd_t *r);

#endif

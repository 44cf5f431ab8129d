/*
 * pg_mesh_msg: the bodies of the mesh's frames, written and read field by
 * field (docs/proxy.md, "The mesh").
 *
 * Why it exists: every feature that crosses nodes (names, events, status,
 * ...) sends a few integers, strings and byte strings per frame; one
 * format for all of them, big-endian as the frame header, keeps the nodes
 * of any byte order reading each other alike and every reader bounded.
 *
 * Format: u8, u32 and u64 are big-endian; a byte string is a u32 length
 * and the bytes; a string is a byte string without its NUL.
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
/* Sends what was written as one frame (pg_mesh_send) and frees the
 * buffer.  0, or -1 (out of memory, too big, `dst` unreachable). */
int pg_mesh_wr_send(pg_mesh_wr_t *w, pg_mesh_t *m, uint32_t dst, unsigned type);

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
/* Every byte read, nothing bad: the body was what it should be. */
bool pg_mesh_rd_done(const pg_mesh_rd_t *r);

#endif

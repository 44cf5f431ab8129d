/*
 * pg_msgbuf: what the dynamic jobs' messages (spawn across nodes) write
 * and read beyond the mesh's own fields (pg_mesh_msg.h, whose writer and
 * reader they use): signed integers, strings that may be NULL and of any
 * length, and counts of items checked against what is left of the body.
 *
 * Why on top of pg_mesh_msg rather than in it: a spawn request carries
 * the seam's strings as they are -- a value may be NULL, an argument may be
 * long -- so a string is read into memory of its own, not into a buffer of
 * a fixed size, and NULL travels as a length of UINT32_MAX (otherwise the
 * mesh's layout: a u32 length and the bytes).
 */
#ifndef PG_MSGBUF_H
#define PG_MSGBUF_H

#include <stddef.h>
#include <stdint.h>

#include "gateway/mesh/pg_mesh_msg.h"

/* Two's complement in a u32. */
void pg_msgbuf_wr_i32(pg_mesh_wr_t *w, int32_t v);
int32_t pg_msgbuf_rd_i32(pg_mesh_rd_t *r);
/* A string or NULL. */
void pg_msgbuf_wr_nstr(pg_mesh_wr_t *w, const char *s);
/* A malloc'd NUL-terminated copy (the caller frees it), or NULL: a NULL
 * string, or a bad read (a string with a NUL inside is bad). */
char *pg_msgbuf_rd_nstr(pg_mesh_rd_t *r);
/* A count of items that each take at least `min_size` bytes: more than
 * what is left could hold is bad (returns 0). */
uint32_t pg_msgbuf_rd_count(pg_mesh_rd_t *r, size_t min_size);

#endif

/*
 * pg_msgbuf: the dynamic jobs' fields beyond the mesh's.  See pg_msgbuf.h.
 */
#include "gateway/mesh/pg_msgbuf.h"

#include <stdlib.h>
#include <string.h>

enum { NULL_STR = 0xffffffffu };

void pg_msgbuf_wr_i32(pg_mesh_wr_t *w, int32_t v)
{
    pg_mesh_wr_u32(w, (uint32_t)v);
}

int32_t pg_msgbuf_rd_i32(pg_mesh_rd_t *r)
{
    return (int32_t)pg_mesh_rd_u32(r);
}

void pg_msgbuf_wr_nstr(pg_mesh_wr_t *w, const char *s)
{
    if (s == NULL)
        pg_mesh_wr_u32(w, NULL_STR);
    else
        pg_mesh_wr_bytes(w, s, strlen(s));
}

char *pg_msgbuf_rd_nstr(pg_mesh_rd_t *r)
{
    pg_mesh_rd_t peek = *r;
    const char *bytes;
    char *s;
    size_t n;

    if (pg_mesh_rd_u32(&peek) == NULL_STR && !peek.bad) {
        *r = peek;
        return NULL;
    }
    if ((bytes = pg_mesh_rd_bytes(r, &n)) == NULL || memchr(bytes, '\0', n) != NULL) {
        r->bad = true;
        return NULL;
    }
    if ((s = malloc(n + 1)) == NULL) {
        r->bad = true;
        return NULL;
    }
    memcpy(s, bytes, n);
    s[n] = '\0';
    return s;
}

uint32_t pg_msgbuf_rd_count(pg_mesh_rd_t *r, size_t min_size)
{
    uint32_t n = pg_mesh_rd_u32(r);

    if (r->bad || (min_size > 0 && n > r->left / min_size)) {
        r->bad = true;
        return 0;
    }
    return n;
}

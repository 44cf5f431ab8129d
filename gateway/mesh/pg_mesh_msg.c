/*
 * pg_mesh_msg: frame bodies, field by field.  See pg_mesh_msg.h.
 */
#include "gateway/mesh/pg_mesh_msg.h"

#include <stdlib.h>
#include <string.h>

#include "gateway/util/pg_be.h"

enum { NULL_STR = 0xffffffffu }; /* the length that says "NULL" */

void pg_mesh_wr_init(pg_mesh_wr_t *w)
{
    *w = (pg_mesh_wr_t){ NULL, 0, 0, false };
}

void pg_mesh_wr_free(pg_mesh_wr_t *w)
{
    free(w->buf);
    pg_mesh_wr_init(w);
}

/* Room for n more bytes; NULL (and bad) when there is none. */
static unsigned char *wr_room(pg_mesh_wr_t *w, size_t n)
{
    if (w->bad || n > PG_MESH_BODY_MAX || w->len > PG_MESH_BODY_MAX - n) {
        w->bad = true;
        return NULL;
    }
    if (w->len + n > w->cap) {
        size_t cap = w->cap > 0 ? w->cap : 256;
        unsigned char *grown;

        while (cap < w->len + n)
            cap *= 2;
        grown = realloc(w->buf, cap);
        if (grown == NULL) {
            w->bad = true;
            return NULL;
        }
        w->buf = grown;
        w->cap = cap;
    }
    w->len += n;
    return w->buf + w->len - n;
}

void pg_mesh_wr_u8(pg_mesh_wr_t *w, uint8_t v)
{
    unsigned char *p = wr_room(w, 1);

    if (p != NULL)
        *p = v;
}

void pg_mesh_wr_u32(pg_mesh_wr_t *w, uint32_t v)
{
    unsigned char *p = wr_room(w, 4);

    if (p != NULL)
        pg_be32_put(p, v);
}

void pg_mesh_wr_u64(pg_mesh_wr_t *w, uint64_t v)
{
    unsigned char *p = wr_room(w, 8);

    if (p != NULL)
        pg_be64_put(p, v);
}

void pg_mesh_wr_bytes(pg_mesh_wr_t *w, const void *bytes, size_t n)
{
    if (n > UINT32_MAX) {
        w->bad = true;
        return;
    }
    pg_mesh_wr_u32(w, (uint32_t)n);
    pg_mesh_wr_raw(w, bytes, n);
}

void pg_mesh_wr_str(pg_mesh_wr_t *w, const char *s)
{
    pg_mesh_wr_bytes(w, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

void pg_mesh_wr_i32(pg_mesh_wr_t *w, int32_t v)
{
    pg_mesh_wr_u32(w, (uint32_t)v);
}

void pg_mesh_wr_nstr(pg_mesh_wr_t *w, const char *s)
{
    if (s == NULL)
        pg_mesh_wr_u32(w, NULL_STR);
    else
        pg_mesh_wr_bytes(w, s, strlen(s));
}

void pg_mesh_wr_raw(pg_mesh_wr_t *w, const void *bytes, size_t n)
{
    unsigned char *p = wr_room(w, n);

    if (p != NULL && n > 0)
        memcpy(p, bytes, n);
}

int pg_mesh_wr_send(pg_mesh_wr_t *w, pg_mesh_t *m, uint32_t dst, unsigned type)
{
    int rc = w->bad ? -1 : pg_mesh_send(m, dst, type, w->buf, w->len);

    pg_mesh_wr_free(w);
    return rc;
}

int pg_mesh_wr_send_direct(pg_mesh_wr_t *w, pg_mesh_t *m, uint32_t dst, unsigned type)
{
    int rc = w->bad ? -1 : pg_mesh_send_direct(m, dst, type, w->buf, w->len);

    pg_mesh_wr_free(w);
    return rc;
}

pg_mesh_rd_t pg_mesh_rd(const void *body, size_t len)
{
    return (pg_mesh_rd_t){ body, len, false };
}

/* The next n bytes, or NULL (and bad) when there are not so many. */
static const unsigned char *rd_take(pg_mesh_rd_t *r, size_t n)
{
    const unsigned char *p = r->p;

    if (r->bad || n > r->left) {
        r->bad = true;
        return NULL;
    }
    r->p += n;
    r->left -= n;
    return p;
}

uint8_t pg_mesh_rd_u8(pg_mesh_rd_t *r)
{
    const unsigned char *p = rd_take(r, 1);

    return p != NULL ? *p : 0;
}

uint32_t pg_mesh_rd_u32(pg_mesh_rd_t *r)
{
    const unsigned char *p = rd_take(r, 4);

    return p != NULL ? pg_be32_get(p) : 0;
}

uint64_t pg_mesh_rd_u64(pg_mesh_rd_t *r)
{
    const unsigned char *p = rd_take(r, 8);

    return p != NULL ? pg_be64_get(p) : 0;
}

const void *pg_mesh_rd_bytes(pg_mesh_rd_t *r, size_t *n)
{
    uint32_t len = pg_mesh_rd_u32(r);
    const unsigned char *p = rd_take(r, len);

    *n = p != NULL ? len : 0;
    return p;
}

const char *pg_mesh_rd_str(pg_mesh_rd_t *r, char *buf, size_t cap)
{
    size_t n;
    const char *p = pg_mesh_rd_bytes(r, &n);

    if (p == NULL || n >= cap || memchr(p, '\0', n) != NULL) {
        r->bad = true;
        if (cap > 0)
            buf[0] = '\0';
        return buf;
    }
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

int32_t pg_mesh_rd_i32(pg_mesh_rd_t *r)
{
    return (int32_t)pg_mesh_rd_u32(r);
}

char *pg_mesh_rd_nstr(pg_mesh_rd_t *r)
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

uint32_t pg_mesh_rd_count(pg_mesh_rd_t *r, size_t min_size)
{
    uint32_t n = pg_mesh_rd_u32(r);

    if (r->bad || (min_size > 0 && n > r->left / min_size)) {
        r->bad = true;
        return 0;
    }
    return n;
}

const void *pg_mesh_rd_raw(pg_mesh_rd_t *r, size_t n)
{
    return rd_take(r, n);
}

const void *pg_mesh_rd_rest(pg_mesh_rd_t *r, size_t *n)
{
    size_t left = r->bad ? 0 : r->left;
    const void *p = rd_take(r, left);

    *n = p != NULL ? left : 0;
    return p;
}

bool pg_mesh_rd_done(const pg_mesh_rd_t *r)
{
    return !r->bad && r->left == 0;
}

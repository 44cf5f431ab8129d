/*
 * pg_msgbuf: the proxies' message bodies, field by field.  See pg_msgbuf.h.
 */
#include "gateway/pg_msgbuf.h"

#include <stdlib.h>
#include <string.h>

#include "gateway/pg_be.h"

enum { NULL_STR = 0xffffffffu };

/* Room for `more` bytes, or `failed`. */
static unsigned char *wbuf_room(pg_wbuf_t *b, size_t more)
{
    size_t cap = b->cap != 0 ? b->cap : 256;
    unsigned char *grown;

    if (b->failed)
        return NULL;
    if (b->len + more <= b->cap)
        return b->data + b->len;
    while (cap < b->len + more)
        cap *= 2;
    if ((grown = realloc(b->data, cap)) == NULL) {
        b->failed = 1;
        return NULL;
    }
    b->data = grown;
    b->cap = cap;
    return b->data + b->len;
}

void pg_wbuf_u32(pg_wbuf_t *b, uint32_t v)
{
    unsigned char *p = wbuf_room(b, 4);

    if (p == NULL)
        return;
    pg_be32_put(p, v);
    b->len += 4;
}

void pg_wbuf_i32(pg_wbuf_t *b, int32_t v)
{
    pg_wbuf_u32(b, (uint32_t)v);
}

void pg_wbuf_u64(pg_wbuf_t *b, uint64_t v)
{
    unsigned char *p = wbuf_room(b, 8);

    if (p == NULL)
        return;
    pg_be64_put(p, v);
    b->len += 8;
}

void pg_wbuf_blob(pg_wbuf_t *b, const void *data, size_t len)
{
    unsigned char *p;

    if (len >= NULL_STR) {
        b->failed = 1;
        return;
    }
    pg_wbuf_u32(b, (uint32_t)len);
    if (len == 0 || (p = wbuf_room(b, len)) == NULL)
        return;
    memcpy(p, data, len);
    b->len += len;
}

void pg_wbuf_raw(pg_wbuf_t *b, const void *data, size_t len)
{
    unsigned char *p;

    if (len == 0 || (p = wbuf_room(b, len)) == NULL)
        return;
    memcpy(p, data, len);
    b->len += len;
}

void pg_wbuf_str(pg_wbuf_t *b, const char *s)
{
    if (s == NULL)
        pg_wbuf_u32(b, NULL_STR);
    else
        pg_wbuf_blob(b, s, strlen(s));
}

void pg_wbuf_free(pg_wbuf_t *b)
{
    free(b->data);
    *b = (pg_wbuf_t){ 0 };
}

pg_rbuf_t pg_rbuf(const void *body, size_t len)
{
    return (pg_rbuf_t){ body, body != NULL ? len : 0, 0 };
}

/* The next `n` bytes, or NULL with `failed`. */
static const unsigned char *rbuf_take(pg_rbuf_t *r, size_t n)
{
    const unsigned char *p = r->at;

    if (r->failed || n > r->left) {
        r->failed = 1;
        return NULL;
    }
    r->at += n;
    r->left -= n;
    return p;
}

uint32_t pg_rbuf_u32(pg_rbuf_t *r)
{
    const unsigned char *p = rbuf_take(r, 4);

    return p != NULL ? pg_be32_get(p) : 0;
}

int32_t pg_rbuf_i32(pg_rbuf_t *r)
{
    return (int32_t)pg_rbuf_u32(r);
}

uint64_t pg_rbuf_u64(pg_rbuf_t *r)
{
    const unsigned char *p = rbuf_take(r, 8);

    return p != NULL ? pg_be64_get(p) : 0;
}

const void *pg_rbuf_blob(pg_rbuf_t *r, size_t *len)
{
    uint32_t n = pg_rbuf_u32(r);
    const unsigned char *p = r->failed || n == NULL_STR ? NULL : rbuf_take(r, n);

    if (n == NULL_STR)
        r->failed = 1;
    *len = p != NULL ? n : 0;
    return p != NULL && n > 0 ? p : NULL;
}

char *pg_rbuf_str(pg_rbuf_t *r)
{
    uint32_t n;
    const unsigned char *p;
    char *s;

    if (r->failed || r->left < 4)
        return (void)(r->failed = 1), NULL;
    if (pg_be32_get(r->at) == NULL_STR) {
        (void)rbuf_take(r, 4);
        return NULL;
    }
    n = pg_rbuf_u32(r);
    if ((p = rbuf_take(r, n)) == NULL || memchr(p, '\0', n) != NULL)
        return (void)(r->failed = 1), NULL;
    if ((s = malloc((size_t)n + 1)) == NULL)
        return (void)(r->failed = 1), NULL;
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

const void *pg_rbuf_rest(pg_rbuf_t *r, size_t *len)
{
    const unsigned char *p = r->at;

    *len = r->failed ? 0 : r->left;
    r->at += *len;
    r->left -= *len;
    return *len > 0 ? p : NULL;
}

uint32_t pg_rbuf_count(pg_rbuf_t *r, size_t min_size)
{
    uint32_t n = pg_rbuf_u32(r);

    if (r->failed || (min_size > 0 && n > r->left / min_size)) {
        r->failed = 1;
        return 0;
    }
    return n;
}

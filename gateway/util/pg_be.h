/*
 * pg_be: big-endian integers in the gateway's own byte formats (the
 * proxies' mesh frames and messages, the slots and names pmigate proxy
 * keeps in the host's store), so that nodes of any byte order read each
 * other alike.  Header-only: each format is a few fields.
 */
#ifndef PG_BE_H
#define PG_BE_H

#include <stdint.h>

static inline void pg_be32_put(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static inline uint32_t pg_be32_get(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void pg_be64_put(unsigned char *p, uint64_t v)
{
    pg_be32_put(p, (uint32_t)(v >> 32));
    pg_be32_put(p + 4, (uint32_t)v);
}

static inline uint64_t pg_be64_get(const unsigned char *p)
{
    return (uint64_t)pg_be32_get(p) << 32 | pg_be32_get(p + 4);
}

#endif

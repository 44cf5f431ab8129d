/*
 * pg_hash: FNV-1a, the one string hash of the project -- the key
 * segment's slots (pg_shm_format.h) and the proxies' name homes
 * (gateway/proxy/pg_proxy_names.c).
 *
 * Why FNV-1a: a few lines, no table, the same on every node and in every
 * client library that reads the segment; neither use faces an adversary
 * choosing keys to collide beyond what their bounded probing allows.
 */
#ifndef PG_HASH_H
#define PG_HASH_H

#include <stddef.h>
#include <stdint.h>

enum { PG_FNV1A_START = 2166136261u };

/* h, continued over the n bytes at p (start with PG_FNV1A_START). */
static inline uint32_t pg_fnv1a(uint32_t h, const void *p, size_t n)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

#endif

/*
 * pg_sha256: SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the
 * proxies' mesh (pg_mesh.h): the job secret is a hash of every node's
 * random bytes, and a connection proves it knows the secret with an HMAC
 * over fresh nonces, so the secret never crosses the wire.
 *
 * Why a file of our own: pmigate links no crypto library, and these two
 * functions are all the mesh needs.  Not for bulk data (no speed work).
 */
#ifndef PG_SHA256_H
#define PG_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define PG_SHA256_LEN 32

typedef struct pg_sha256 {
    uint32_t h[8];
    uint64_t bytes;          /* hashed so far */
    unsigned char block[64]; /* the partial block */
    size_t fill;
} pg_sha256_t;

void pg_sha256_init(pg_sha256_t *s);
void pg_sha256_update(pg_sha256_t *s, const void *data, size_t len);
void pg_sha256_final(pg_sha256_t *s, unsigned char out[PG_SHA256_LEN]);

/* One-shot hash of data. */
void pg_sha256(const void *data, size_t len, unsigned char out[PG_SHA256_LEN]);

/* HMAC-SHA256 of the n parts (part[i], len[i]) concatenated, under key. */
void pg_hmac_sha256(const void *key, size_t keylen, const void *const *part, const size_t *len,
                    size_t n, unsigned char out[PG_SHA256_LEN]);

/* 1 when a and b (len bytes each) are equal, compared in time that does
 * not depend on where they differ. */
int pg_mem_equal_ct(const void *a, const void *b, size_t len);

#endif

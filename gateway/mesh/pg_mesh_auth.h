/*
 * pg_mesh_auth: the mesh's cryptography, on OpenSSL's libcrypto -- the job
 * secret's hash, the handshake's HMACs, and the MAC every frame of an UP
 * link carries (docs/proxy.md, "Frame authentication").
 *
 * Why a file of its own: the rest of the mesh never names libcrypto, so
 * what the mesh asks of it (SHA-256, HMAC-SHA256, AES-GCM, a constant-time compare)
 * is read here in one place.
 */
#ifndef PG_MESH_AUTH_H
#define PG_MESH_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    PG_MESH_HASH_LEN = 32, /* SHA-256, HMAC-SHA256: the secret, the keys */
    PG_MESH_TAG_LEN = 16,  /* a frame's tag (GMAC) */
};

/* SHA-256 of the n parts (part[i], len[i]) one after the other.  0, or -1
 * when libcrypto fails. */
int pg_mesh_sha256(const void *const *part, const size_t *len, size_t n,
                   unsigned char out[PG_MESH_HASH_LEN]);

/* HMAC-SHA256 under key of the n parts one after the other.  0 or -1. */
int pg_mesh_hmac(const unsigned char *key, size_t keylen, const void *const *part,
                 const size_t *len, size_t n, unsigned char out[PG_MESH_HASH_LEN]);

/* a and b (len bytes each) are equal; how long it takes does not depend
 * on where they differ (CRYPTO_memcmp). */
bool pg_mesh_equal_ct(const void *a, const void *b, size_t len);

/* One direction of a link: its key and the sequence number of its next
 * frame (0 when the link comes up). */
typedef struct pg_mesh_mac pg_mesh_mac_t;

pg_mesh_mac_t *pg_mesh_mac_new(const unsigned char key[PG_MESH_HASH_LEN]);
void pg_mesh_mac_free(pg_mesh_mac_t *mac);

/* The tag of the direction's next frame -- AES-256-GCM's over its header
 * and body as additional data, the IV its sequence number (8 bytes,
 * big-endian, after 4 zeros) -- and the frame counted.  0, or -1 when
 * libcrypto fails (the tag is then zeros). */
int pg_mesh_mac_next(pg_mesh_mac_t *mac, const unsigned char *hdr, size_t hlen,
                     const void *body, size_t len, unsigned char tag[PG_MESH_TAG_LEN]);

#endif

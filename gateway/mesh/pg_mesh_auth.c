/*
 * pg_mesh_auth: the mesh's cryptography on libcrypto.  See pg_mesh_auth.h.
 */
#include "gateway/mesh/pg_mesh_auth.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/util/pg_be.h"

struct pg_mesh_mac {
    EVP_CIPHER_CTX *ctx; /* AES-256-GCM, keyed once; each frame sets its IV */
    uint64_t seq;
};

int pg_mesh_sha256(const void *const *part, const size_t *len, size_t n,
                   unsigned char out[PG_MESH_HASH_LEN])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = -1;

    if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (EVP_DigestUpdate(ctx, part[i], len[i]) != 1)
            goto out;
    if (EVP_DigestFinal_ex(ctx, out, NULL) == 1)
        rc = 0;
out:
    EVP_MD_CTX_free(ctx);
    return rc;
}

/* A context of HMAC-SHA256 keyed with key, or NULL. */
static EVP_MAC_CTX *hmac_keyed(const unsigned char *key, size_t keylen)
{
    EVP_MAC *mac = EVP_MAC_fetch(NULL, OSSL_MAC_NAME_HMAC, NULL);
    EVP_MAC_CTX *ctx = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_end(),
    };

    EVP_MAC_free(mac); /* the context holds its own reference */
    if (ctx != NULL && EVP_MAC_init(ctx, key, keylen, params) != 1) {
        EVP_MAC_CTX_free(ctx);
        ctx = NULL;
    }
    return ctx;
}

/* Feeds the parts to a started context and takes its tag out. */
static int hmac_parts(EVP_MAC_CTX *ctx, const void *const *part, const size_t *len, size_t n,
                      unsigned char out[PG_MESH_HASH_LEN])
{
    size_t outlen = 0;

    for (size_t i = 0; i < n; i++)
        if (len[i] > 0 && EVP_MAC_update(ctx, part[i], len[i]) != 1)
            return -1;
    if (EVP_MAC_final(ctx, out, &outlen, PG_MESH_HASH_LEN) != 1 || outlen != PG_MESH_HASH_LEN)
        return -1;
    return 0;
}

int pg_mesh_hmac(const unsigned char *key, size_t keylen, const void *const *part,
                 const size_t *len, size_t n, unsigned char out[PG_MESH_HASH_LEN])
{
    EVP_MAC_CTX *ctx = hmac_keyed(key, keylen);
    int rc = ctx != NULL ? hmac_parts(ctx, part, len, n, out) : -1;

    EVP_MAC_CTX_free(ctx);
    return rc;
}

bool pg_mesh_equal_ct(const void *a, const void *b, size_t len)
{
    return CRYPTO_memcmp(a, b, len) == 0;
}

/* Why GMAC and not HMAC-SHA256 for the frames: every byte a node sends or
 * passes on is tagged and checked, and in a fence over many nodes that is
 * twice the fence's data on one core; AES-GCM's tag over data it does not
 * encrypt runs at about 5 times HMAC-SHA256's speed here (docs/proxy.md,
 * "Frame authentication").  GCM needs an IV never used twice under a key:
 * each key is one link's one direction, fresh with the link, and the IV is
 * the frame's sequence number in it. */
pg_mesh_mac_t *pg_mesh_mac_new(const unsigned char key[PG_MESH_HASH_LEN])
{
    pg_mesh_mac_t *mac = calloc(1, sizeof(*mac));

    if (mac == NULL)
        return NULL;
    mac->ctx = EVP_CIPHER_CTX_new();
    if (mac->ctx == NULL ||
        EVP_EncryptInit_ex(mac->ctx, EVP_aes_256_gcm(), NULL, key, NULL) != 1 ||
        EVP_CIPHER_CTX_ctrl(mac->ctx, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) != 1) {
        EVP_CIPHER_CTX_free(mac->ctx);
        free(mac);
        return NULL;
    }
    return mac;
}

void pg_mesh_mac_free(pg_mesh_mac_t *mac)
{
    if (mac == NULL)
        return;
    EVP_CIPHER_CTX_free(mac->ctx);
    free(mac);
}

/* The header and the body are GCM's additional data: authenticated, not
 * encrypted (nothing the mesh carries is secret from the hosts' users;
 * what must hold is who wrote it). */
int pg_mesh_mac_next(pg_mesh_mac_t *mac, const unsigned char *hdr, size_t hlen,
                     const void *body, size_t len, unsigned char tag[PG_MESH_TAG_LEN])
{
    unsigned char iv[12] = { 0 }, none[16];
    int n, rc = -1;

    pg_be64_put(iv + 4, mac->seq++);
    if (EVP_EncryptInit_ex(mac->ctx, NULL, NULL, NULL, iv) == 1 && hlen <= INT_MAX &&
        len <= INT_MAX && EVP_EncryptUpdate(mac->ctx, NULL, &n, hdr, (int)hlen) == 1 &&
        (len == 0 || EVP_EncryptUpdate(mac->ctx, NULL, &n, body, (int)len) == 1) &&
        EVP_EncryptFinal_ex(mac->ctx, none, &n) == 1 &&
        EVP_CIPHER_CTX_ctrl(mac->ctx, EVP_CTRL_GCM_GET_TAG, PG_MESH_TAG_LEN, tag) == 1)
        rc = 0;
    if (rc != 0)
        memset(tag, 0, PG_MESH_TAG_LEN);
    return rc;
}

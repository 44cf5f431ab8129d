/*
 * pg_mesh_auth: the mesh's cryptography on libcrypto.  See pg_mesh_auth.h.
 */
#include "gateway/mesh/pg_mesh_auth.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/util/pg_be.h"

struct pg_mesh_mac {
    EVP_MAC_CTX *ctx; /* keyed once; each frame starts it over on the same key */
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

pg_mesh_mac_t *pg_mesh_mac_new(const unsigned char key[PG_MESH_HASH_LEN])
{
    pg_mesh_mac_t *mac = calloc(1, sizeof(*mac));

    if (mac == NULL)
        return NULL;
    mac->ctx = hmac_keyed(key, PG_MESH_HASH_LEN);
    if (mac->ctx == NULL) {
        free(mac);
        return NULL;
    }
    return mac;
}

void pg_mesh_mac_free(pg_mesh_mac_t *mac)
{
    if (mac == NULL)
        return;
    EVP_MAC_CTX_free(mac->ctx);
    free(mac);
}

int pg_mesh_mac_next(pg_mesh_mac_t *mac, const unsigned char *hdr, size_t hlen,
                     const void *body, size_t len, unsigned char tag[PG_MESH_HASH_LEN])
{
    unsigned char seq[8];
    const void *part[3] = { seq, hdr, body };
    size_t plen[3] = { sizeof(seq), hlen, len };
    int rc = -1;

    pg_be64_put(seq, mac->seq++);
    /* a NULL key starts the context over on the key it has: no key
     * schedule per frame */
    if (EVP_MAC_init(mac->ctx, NULL, 0, NULL) == 1)
        rc = hmac_parts(mac->ctx, part, plen, 3, tag);
    if (rc != 0)
        memset(tag, 0, PG_MESH_HASH_LEN);
    return rc;
}

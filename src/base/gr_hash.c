/*
 * gr_hash.c — SHA-256 through OpenSSL EVP, FNV-1/FNV-1a 32 by hand.
 */
#include "gr_hash.h"

#include <string.h>

#include <openssl/evp.h>

char *gr_hash_hex(const void *bytes, size_t n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *b = bytes;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 0xf];
    }
    out[2 * n] = '\0';
    return out;
}

int gr_hash_sha256(const void *data, size_t len, uint8_t out[GR_HASH_SHA256_LEN], gr_err *err)
{
    static const uint8_t empty[1] = {0};
    memset(out, 0, GR_HASH_SHA256_LEN);
    if (!data) {
        if (len != 0)
            return gr_err_set(err, GR_EINVAL, "sha256: data is NULL but length is %zu", len);
        data = empty;
    }
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx)
        return gr_err_set(err, GR_ENOMEM, "sha256: out of memory creating the digest context");
    unsigned int n = 0;
    int ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
             EVP_DigestUpdate(ctx, data, len) == 1 && EVP_DigestFinal_ex(ctx, out, &n) == 1 &&
             n == GR_HASH_SHA256_LEN;
    EVP_MD_CTX_free(ctx);
    if (!ok) {
        memset(out, 0, GR_HASH_SHA256_LEN);
        return gr_err_set(err, GR_EIO, "sha256: OpenSSL digest failed");
    }
    return GR_OK;
}

int gr_hash_sha256_hex(const void *data, size_t len, char out[GR_HASH_SHA256_HEX_MAX], gr_err *err)
{
    uint8_t md[GR_HASH_SHA256_LEN];
    int rc = gr_hash_sha256(data, len, md, err);
    if (rc != GR_OK) {
        out[0] = '\0';
        return rc;
    }
    gr_hash_hex(md, sizeof md, out);
    return GR_OK;
}

int gr_hash_sha256_hex_str(const char *s, char out[GR_HASH_SHA256_HEX_MAX], gr_err *err)
{
    if (!s) {
        out[0] = '\0';
        return gr_err_set(err, GR_EINVAL, "sha256: string is NULL");
    }
    return gr_hash_sha256_hex(s, strlen(s), out, err);
}

uint32_t gr_hash_fnv1a32_update(uint32_t h, const void *data, size_t len)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= GR_HASH_FNV32_PRIME;
    }
    return h;
}

uint32_t gr_hash_fnv1a32(const void *data, size_t len)
{
    return gr_hash_fnv1a32_update(GR_HASH_FNV32_OFFSET, data, len);
}

uint32_t gr_hash_fnv1_32(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t h = GR_HASH_FNV32_OFFSET;
    for (size_t i = 0; i < len; i++) {
        h *= GR_HASH_FNV32_PRIME;
        h ^= p[i];
    }
    return h;
}

char *gr_hash_fnv1a32_hex(const void *data, size_t len, char out[GR_HASH_FNV32_HEX_MAX])
{
    uint32_t h = gr_hash_fnv1a32(data, len);
    uint8_t be[4] = {(uint8_t)(h >> 24), (uint8_t)(h >> 16), (uint8_t)(h >> 8), (uint8_t)h};
    return gr_hash_hex(be, sizeof be, out);
}

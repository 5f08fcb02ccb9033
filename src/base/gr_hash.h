/*
 * gr_hash.h — SHA-256 (OpenSSL EVP) and FNV-1/FNV-1a 32-bit, as used for
 * Kubernetes name truncation with hash suffixes:
 *
 *   preflight ConfigMap names:  hex(sha256(gangID))[:8]
 *   nvcre naming.Truncate:       5 hex chars of FNV-32a(name)
 *
 * Hex output is lower case. gr_hash_fnv1a32_hex() writes 8 digits,
 * zero-padded ("%08x"); note Go's fmt.Sprintf("%x", h.Sum32()) is NOT
 * padded — callers that mirror such Go code use gr_hash_fnv1a32() with
 * snprintf("%x"). Inputs are borrowed; no allocation is kept; thread-safe.
 */
#ifndef GR_HASH_H
#define GR_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "gr_err.h"

#define GR_HASH_SHA256_LEN     32
#define GR_HASH_SHA256_HEX_MAX 65 /* 64 hex digits + NUL */
#define GR_HASH_FNV32_HEX_MAX  9  /* 8 hex digits + NUL */

/* SHA-256 of data[0..len) (data may be NULL when len == 0).
 * GR_OK, or GR_ENOMEM/GR_EIO when OpenSSL fails (out is then zeroed / ""). */
int gr_hash_sha256(const void *data, size_t len, uint8_t out[GR_HASH_SHA256_LEN], gr_err *err);
int gr_hash_sha256_hex(const void *data, size_t len, char out[GR_HASH_SHA256_HEX_MAX], gr_err *err);
/* Convenience for C strings (the NUL is not hashed). */
int gr_hash_sha256_hex_str(const char *s, char out[GR_HASH_SHA256_HEX_MAX], gr_err *err);

/* FNV-1a 32 (Go hash/fnv New32a) and FNV-1 32 (New32). Never fail. */
uint32_t gr_hash_fnv1a32(const void *data, size_t len);
uint32_t gr_hash_fnv1_32(const void *data, size_t len);
/* Continue an FNV-1a hash: h = gr_hash_fnv1a32_update(GR_HASH_FNV32_OFFSET, ...). */
#define GR_HASH_FNV32_OFFSET UINT32_C(2166136261)
#define GR_HASH_FNV32_PRIME  UINT32_C(16777619)
uint32_t gr_hash_fnv1a32_update(uint32_t h, const void *data, size_t len);
/* "%08x" of gr_hash_fnv1a32(); returns out. */
char *gr_hash_fnv1a32_hex(const void *data, size_t len, char out[GR_HASH_FNV32_HEX_MAX]);

/* Lower-case hex of n bytes into out (2n+1 bytes incl. NUL); returns out. */
char *gr_hash_hex(const void *bytes, size_t n, char *out);

#endif

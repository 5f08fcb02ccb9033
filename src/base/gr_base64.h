/*
 * gr_base64.h — the one base64 codec (RFC 4648 §4, the standard alphabet
 * with '=' padding), as Kubernetes uses it for Secret and kubeconfig *-data
 * values, AdmissionReview patches and CEL bytes.
 *
 * Ownership: both functions append to a caller-owned gr_buf, whose `max`
 * caps the output; on any error the buffer is left as it was.
 *
 * Errors: GR_EPARSE for input that is not padded standard base64 (the
 * message names the byte offset and what is wrong), GR_ETOOBIG when the
 * output would pass out->max, GR_EINVAL for a buffer without a cap,
 * GR_ENOMEM.
 */
#ifndef GR_BASE64_H
#define GR_BASE64_H

#include <stddef.h>

#include "gr_buf.h"
#include "gr_err.h"

/* Length of the encoding of n bytes (padded), without a terminator;
 * SIZE_MAX when it does not fit a size_t. */
size_t gr_base64_encoded_len(size_t n);

/* Append the padded standard base64 of in[0..n) to out. One table lookup
 * per 12 input bits (admission patches are the largest input). */
int gr_base64_encode(const void *in, size_t n, gr_buf *out);

/* Append the bytes that in[0..len) encodes to out. ASCII blanks (space,
 * tab, CR, LF) anywhere are ignored; the rest must be groups of four
 * alphabet characters, the last group with one or two '=' as padding.
 * Anything else is GR_EPARSE ("base64: invalid character '%' at byte 7",
 * "base64: data after padding at byte 12", "base64: 3 characters in the
 * last group, want a multiple of 4 (missing '=' padding?)"). */
int gr_base64_decode(const char *in, size_t len, gr_buf *out, gr_err *err);

#endif

/* gr_base64.c — RFC 4648 base64 (see gr_base64.h). */
#include "gr_base64.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

static const char k_alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Every pair of output characters for 12 input bits. */
static char g_pairs[4096][2];
static pthread_once_t g_pairs_once = PTHREAD_ONCE_INIT;

static void pairs_init(void)
{
    for (unsigned i = 0; i < 4096; i++) {
        g_pairs[i][0] = k_alpha[i >> 6];
        g_pairs[i][1] = k_alpha[i & 63];
    }
}

size_t gr_base64_encoded_len(size_t n)
{
    size_t groups = n / 3 + (n % 3 != 0);
    return groups > SIZE_MAX / 4 ? SIZE_MAX : groups * 4;
}

int gr_base64_encode(const void *in, size_t n, gr_buf *out)
{
    size_t need = gr_base64_encoded_len(n);
    if (need == SIZE_MAX)
        return GR_ETOOBIG;
    int rc = gr_buf_reserve(out, need);
    if (rc != GR_OK)
        return rc;
    if (n == 0) {
        out->data[out->len] = '\0';
        return GR_OK;
    }
    pthread_once(&g_pairs_once, pairs_init);
    const unsigned char *p = in;
    char *d = out->data + out->len;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        memcpy(d, g_pairs[v >> 12], 2);
        memcpy(d + 2, g_pairs[v & 0xfff], 2);
        d += 4;
    }
    if (i < n) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0);
        *d++ = k_alpha[v >> 18];
        *d++ = k_alpha[(v >> 12) & 63];
        *d++ = i + 1 < n ? k_alpha[(v >> 6) & 63] : '=';
        *d++ = '=';
    }
    out->len = (size_t)(d - out->data);
    *d = '\0';
    return GR_OK;
}

static int val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int gr_base64_decode(const char *in, size_t len, gr_buf *out, gr_err *err)
{
    size_t start = out->len;
    if (out->max == 0 || start > out->max)
        return gr_err_set(err, GR_EINVAL, "base64: output buffer without a cap");
    /* Room for the most the input can decode to, within the cap. */
    size_t ub = len / 4 * 3 + 3;
    if (ub > out->max - start)
        ub = out->max - start;
    int rc = gr_buf_reserve(out, ub);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "base64: out of memory");
    char *o = out->data + start;
    size_t n = 0, q = 0, pad = 0;
    uint32_t acc = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            if (q < 2) {
                rc = gr_err_set(err, GR_EPARSE, "base64: misplaced '=' at byte %zu", i);
                break;
            }
            pad++;
            acc <<= 6;
            q++;
        } else {
            int v = val(c);
            if (v < 0) {
                if (c >= 0x21 && c < 0x7f)
                    rc = gr_err_set(err, GR_EPARSE, "base64: invalid character '%c' at byte %zu", c,
                                    i);
                else
                    rc =
                        gr_err_set(err, GR_EPARSE, "base64: invalid byte 0x%02x at byte %zu", c, i);
                break;
            }
            if (pad) {
                rc = gr_err_set(err, GR_EPARSE, "base64: data after padding at byte %zu", i);
                break;
            }
            acc = (acc << 6) | (uint32_t)v;
            q++;
        }
        if (q == 4) {
            if (n + 3 - pad > ub) {
                rc = gr_err_set(err, GR_ETOOBIG, "base64: decoded data larger than %zu bytes",
                                out->max);
                break;
            }
            o[n++] = (char)(acc >> 16);
            if (pad < 2)
                o[n++] = (char)(acc >> 8);
            if (pad < 1)
                o[n++] = (char)acc;
            q = 0;
            acc = 0;
            if (pad)
                pad = 3; /* a group after a padded one is an error */
        }
    }
    if (rc == GR_OK && q != 0)
        rc = gr_err_set(err, GR_EPARSE,
                        "base64: %zu characters in the last group, want a multiple of 4 "
                        "(missing '=' padding?)",
                        q);
    if (rc != GR_OK) {
        out->len = start;
        out->data[start] = '\0';
        return rc;
    }
    out->len = start + n;
    out->data[out->len] = '\0';
    return GR_OK;
}

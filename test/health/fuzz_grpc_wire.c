/*
 * fuzz_grpc_wire.c — libFuzzer target for the gRPC response parser
 * (gr_grpc_wire.h): header/trailer lines and the length-prefixed body.
 *
 * Input layout: header lines separated by '\n' up to the first "\n\n"
 * (or the whole input), then the body. The first body byte (if any) picks a
 * chunk size so message boundaries fall at arbitrary places; lines after a
 * second "\n\n" are trailers.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gr_grpc_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void feed_lines(gr_grpc_meta *m, const char *p, size_t n)
{
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t len = nl ? (size_t)(nl - p) : n;
        gr_grpc_meta_line(m, p, len);
        if (!nl)
            break;
        p += len + 1;
        n -= len + 1;
    }
    gr_grpc_meta_line(m, "\r\n", 2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const char *sep = size >= 2 ? memmem(s, size, "\n\n", 2) : NULL;
    size_t head = sep ? (size_t)(sep - s) : size;
    gr_grpc_meta m;
    gr_grpc_reader r;
    gr_err err;
    gr_grpc_meta_init(&m);
    gr_grpc_reader_init(&r, 1024);
    feed_lines(&m, s, head);

    const uint8_t *body = sep ? data + head + 2 : NULL;
    size_t blen = sep ? size - head - 2 : 0;
    const uint8_t *trail = body ? memmem(body, blen, "\n\n", 2) : NULL;
    size_t tlen = 0;
    if (trail) {
        tlen = blen - (size_t)(trail - body) - 2;
        blen = (size_t)(trail - body);
        trail += 2;
    }
    int rc = GR_OK;
    if (blen > 0) {
        size_t chunk = (size_t)(body[0] % 16) + 1;
        body++;
        blen--;
        for (size_t off = 0; off < blen && rc == GR_OK; off += chunk) {
            size_t n = blen - off < chunk ? blen - off : chunk;
            rc = gr_grpc_reader_feed(&r, body + off, n, &err);
        }
    }
    if (rc == GR_OK)
        rc = gr_grpc_reader_finish(&r, &err);
    if (trail)
        feed_lines(&m, (const char *)trail, tlen);

    gr_grpc_status st;
    gr_grpc_resolve(&m, &r, rc, rc == GR_OK ? NULL : err.msg, 1, &st);
    if (st.code < 0 || st.code > GR_GRPC_UNAUTHENTICATED)
        __builtin_trap();
    if (strlen(st.message) >= sizeof st.message)
        __builtin_trap();
    if (r.first.len > 1024)
        __builtin_trap();

    char out[64];
    gr_grpc_percent_decode(s, size, out, sizeof out);
    gr_grpc_reader_free(&r);
    return 0;
}

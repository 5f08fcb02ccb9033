/*
 * gr_grpc_wire.c — gRPC message framing and status parsing (no I/O).
 * See gr_grpc_wire.h.
 */
#include "gr_grpc_wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const code_names[] = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

const char *gr_grpc_code_name(int code)
{
    if (code < 0 || (size_t)code >= sizeof code_names / sizeof code_names[0])
        return "UNKNOWN_CODE";
    return code_names[code];
}

int gr_grpc_frame_encode(gr_buf *out, const void *msg, size_t len, gr_err *err)
{
    if (len > UINT32_MAX)
        return gr_err_set(err, GR_ETOOBIG,
                          "gRPC message of %zu bytes exceeds the 4 GiB frame limit", len);
    uint8_t hdr[5] = {0, (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
                      (uint8_t)len};
    int rc = gr_buf_reserve(out, sizeof hdr + len);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "gRPC request frame of %zu bytes: %s", len,
                          rc == GR_ETOOBIG ? "over the buffer cap" : "out of memory");
    gr_buf_append(out, hdr, sizeof hdr);
    if (len)
        gr_buf_append(out, msg, len);
    return GR_OK;
}

int gr_grpc_timeout_format(int64_t ns, char out[10])
{
    static const struct {
        int64_t div;
        char unit;
    } units[] = {
        {1, 'n'},
        {1000, 'u'},
        {1000000, 'm'},
        {1000000000, 'S'},
        {60LL * 1000000000, 'M'},
        {3600LL * 1000000000, 'H'},
    };
    if (ns <= 0)
        ns = 1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        int64_t v = ns / units[i].div + (ns % units[i].div != 0);
        if (v >= 1 && v <= 99999999) {
            snprintf(out, 10, "%u%c", (unsigned)v, units[i].unit);
            return GR_OK;
        }
    }
    snprintf(out, 10, "99999999H");
    return GR_OK;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

size_t gr_grpc_percent_decode(const char *in, size_t len, char *out, size_t outsz)
{
    size_t o = 0;
    if (outsz == 0)
        return 0;
    for (size_t i = 0; i < len && o + 1 < outsz; i++) {
        if (in[i] == '%' && i + 2 < len && hexval(in[i + 1]) >= 0 && hexval(in[i + 2]) >= 0) {
            out[o++] = (char)(hexval(in[i + 1]) * 16 + hexval(in[i + 2]));
            i += 2;
        } else {
            out[o++] = in[i];
        }
    }
    out[o] = '\0';
    return o;
}

/* --- message stream ----------------------------------------------------- */

void gr_grpc_reader_init(gr_grpc_reader *r, size_t max_msg)
{
    memset(r, 0, sizeof *r);
    r->max_msg = max_msg ? max_msg : GR_GRPC_DEFAULT_MAX_MSG;
    gr_buf_init(&r->first, r->max_msg);
}

void gr_grpc_reader_free(gr_grpc_reader *r)
{
    gr_buf_free(&r->first);
}

int gr_grpc_reader_feed(gr_grpc_reader *r, const void *data, size_t n, gr_err *err)
{
    const uint8_t *p = data;
    while (n > 0) {
        if (!r->in_payload) {
            size_t take = sizeof r->hdr - r->hdr_len;
            if (take > n)
                take = n;
            memcpy(r->hdr + r->hdr_len, p, take);
            r->hdr_len += take;
            p += take;
            n -= take;
            if (r->hdr_len < sizeof r->hdr)
                break;
            if (r->hdr[0] == 1)
                return gr_err_set(err, GR_EPARSE,
                                  "gRPC response message %zu is compressed, but no "
                                  "compression was offered",
                                  r->nmsgs + 1);
            if (r->hdr[0] != 0)
                return gr_err_set(err, GR_EPARSE,
                                  "gRPC response message %zu has an invalid flags byte 0x%02x",
                                  r->nmsgs + 1, r->hdr[0]);
            uint32_t len = (uint32_t)r->hdr[1] << 24 | (uint32_t)r->hdr[2] << 16 |
                           (uint32_t)r->hdr[3] << 8 | (uint32_t)r->hdr[4];
            if (len > r->max_msg)
                return gr_err_set(err, GR_ETOOBIG,
                                  "gRPC response message of %u bytes exceeds the %zu-byte limit",
                                  (unsigned)len, r->max_msg);
            r->need = len;
            r->in_payload = 1;
            r->hdr_len = 0;
        }
        size_t take = r->need < n ? r->need : n;
        if (take) {
            if (r->nmsgs == 0) {
                int rc = gr_buf_append(&r->first, p, take);
                if (rc != GR_OK)
                    return gr_err_set(err, rc, "gRPC response message: %s",
                                      rc == GR_ETOOBIG ? "over the size cap" : "out of memory");
            } else {
                r->skip_len += take;
            }
            p += take;
            n -= take;
            r->need -= (uint32_t)take;
        }
        if (r->need == 0) {
            r->in_payload = 0;
            r->nmsgs++;
        }
    }
    return GR_OK;
}

int gr_grpc_reader_finish(const gr_grpc_reader *r, gr_err *err)
{
    if (r->in_payload || r->hdr_len)
        return gr_err_set(err, GR_EPARSE, "gRPC response ended inside message %zu", r->nmsgs + 1);
    return GR_OK;
}

/* --- headers and trailers ----------------------------------------------- */

void gr_grpc_meta_init(gr_grpc_meta *m)
{
    memset(m, 0, sizeof *m);
}

static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* Parse 1..3 decimal digits ending the string (gRPC codes are 0..16; 99 is the
 * most we accept as "a number" so unknown future codes map to UNKNOWN). */
static int parse_small_int(const char *s, size_t len, int *out)
{
    if (len == 0 || len > 3)
        return -1;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

void gr_grpc_meta_line(gr_grpc_meta *m, const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    if (len == 0) {
        m->blocks++;
        return;
    }
    /* Status line: "HTTP/2 200" or "HTTP/1.1 200 OK". */
    if (len >= 5 && memcmp(line, "HTTP/", 5) == 0) {
        const char *sp = memchr(line, ' ', len);
        if (!sp)
            return;
        size_t rest = len - (size_t)(sp + 1 - line);
        size_t dl = 0;
        while (dl < rest && sp[1 + dl] >= '0' && sp[1 + dl] <= '9')
            dl++;
        int v;
        if (dl == 3 && parse_small_int(sp + 1, dl, &v) == 0)
            m->http_status = v;
        return;
    }
    const char *colon = memchr(line, ':', len);
    if (!colon || colon == line)
        return;
    size_t nlen = (size_t)(colon - line);
    const char *val = colon + 1;
    size_t vlen = len - nlen - 1;
    while (vlen > 0 && is_ows(*val)) {
        val++;
        vlen--;
    }
    while (vlen > 0 && is_ows(val[vlen - 1]))
        vlen--;

    if (nlen == 7 && strncasecmp(line, ":status", 7) == 0) {
        int v;
        if (parse_small_int(val, vlen, &v) == 0)
            m->http_status = v;
    } else if (nlen == 12 && strncasecmp(line, "content-type", 12) == 0) {
        m->content_type_seen = 1;
        static const char grpc[] = "application/grpc";
        size_t gl = sizeof grpc - 1;
        m->content_type_grpc = vlen >= gl && strncasecmp(val, grpc, gl) == 0 &&
                               (vlen == gl || val[gl] == '+' || val[gl] == ';');
    } else if (nlen == 11 && strncasecmp(line, "grpc-status", 11) == 0) {
        int v;
        if (parse_small_int(val, vlen, &v) == 0) {
            m->have_status = 1;
            m->bad_status = 0;
            m->status = v;
        } else {
            m->bad_status = 1;
        }
    } else if (nlen == 12 && strncasecmp(line, "grpc-message", 12) == 0) {
        gr_grpc_percent_decode(val, vlen, m->message, sizeof m->message);
    }
}

static int map_http(int http)
{
    switch (http) {
    case 400:
        return GR_GRPC_INTERNAL;
    case 401:
        return GR_GRPC_UNAUTHENTICATED;
    case 403:
        return GR_GRPC_PERMISSION_DENIED;
    case 404:
        return GR_GRPC_UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
        return GR_GRPC_UNAVAILABLE;
    default:
        return GR_GRPC_UNKNOWN;
    }
}

static void set_status(gr_grpc_status *out, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_status(gr_grpc_status *out, int code, const char *fmt, ...)
{
    va_list ap;
    out->code = code;
    va_start(ap, fmt);
    vsnprintf(out->message, sizeof out->message, fmt, ap);
    va_end(ap);
}

void gr_grpc_resolve(const gr_grpc_meta *m, const gr_grpc_reader *r, int body_rc,
                     const char *body_err, size_t want_msgs, gr_grpc_status *out)
{
    if (m->http_status == 0) {
        set_status(out, GR_GRPC_INTERNAL, "no HTTP response status received");
        return;
    }
    if (m->http_status != 200 && !m->have_status) {
        set_status(out, map_http(m->http_status), "HTTP status %d without grpc-status",
                   m->http_status);
        return;
    }
    if (m->content_type_seen && !m->content_type_grpc) {
        set_status(out, GR_GRPC_UNKNOWN, "response content-type is not application/grpc");
        return;
    }
    if (m->bad_status) {
        set_status(out, GR_GRPC_INTERNAL, "malformed grpc-status in the response");
        return;
    }
    if (!m->have_status) {
        set_status(out, GR_GRPC_INTERNAL, "response ended without grpc-status");
        return;
    }
    if (m->status != GR_GRPC_OK) {
        int code = m->status <= GR_GRPC_UNAUTHENTICATED ? m->status : GR_GRPC_UNKNOWN;
        set_status(out, code, "%s", m->message);
        return;
    }
    if (body_rc != GR_OK) {
        set_status(out, GR_GRPC_INTERNAL, "%s", body_err && *body_err ? body_err : "bad body");
        return;
    }
    if (r->nmsgs != want_msgs) {
        set_status(out, GR_GRPC_INTERNAL, "expected %zu response message(s), got %zu", want_msgs,
                   r->nmsgs);
        return;
    }
    set_status(out, GR_GRPC_OK, "%s", "");
}

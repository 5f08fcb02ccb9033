/*
 * gr_preflight_json.c — a JSON text → json_t parser for the admission hot
 * path. It accepts exactly what json_loadb(JSON_REJECT_DUPLICATES) accepts
 * and builds the same values in the same member order, but scans the bytes
 * in place instead of through jansson's per-character stream (the parse
 * was most of an admission's cost). The differential fuzzer
 * (test/preflight/fuzz_json.c) holds it to jansson's behaviour.
 *
 * Rules mirrored from jansson 2.14: RFC 8259 grammar; the top level must be
 * an object or an array; whitespace is space, \t, \n, \r; strings must be
 * valid UTF-8 without raw control characters, \u0000 is rejected, a high
 * surrogate escape must be followed by a low one; integers must fit a
 * json_int_t, numbers with a fraction or exponent are reals (overflow to
 * infinity is an error); nesting deeper than 2048 is an error; duplicate
 * object keys are an error; nothing but whitespace may follow the value;
 * one NUL byte right after a number or literal is skipped (see
 * skip_ungot_nul).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_buf.h"
#include "gr_preflight_internal.h"

#define MAX_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH */

typedef struct parser {
    const unsigned char *p, *end;
    int depth;
    int rc;        /* GR_EPARSE or GR_ENOMEM once something failed */
    gr_buf strbuf; /* decoded strings that had escapes */
} parser;

static json_t *parse_value(parser *ps);

static json_t *fail(parser *ps, int rc)
{
    if (ps->rc == GR_OK)
        ps->rc = rc;
    return NULL;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
        ps->p++;
}

/* jansson quirk, kept so that both accept the same texts: its lexer reads
 * one byte past a number or a literal and pushes it back, and a pushed-back
 * NUL byte is lost, so "[1\0]" parses as [1] (but "[1\0\0]" does not). */
static void skip_ungot_nul(parser *ps)
{
    if (ps->p < ps->end && *ps->p == 0)
        ps->p++;
}

/* Length of the valid UTF-8 sequence at p (first byte >= 0x80), 0 if
 * invalid: no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    size_t n;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

static int hex4(const unsigned char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

static int put_utf8(gr_buf *b, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12);
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18);
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return gr_buf_append(b, u, n);
}

/* Scan the string whose opening quote is at ps->p. On success *s and *n are
 * the decoded text: in place in the input when it has no escapes, else in
 * ps->strbuf (valid until the next string). */
static int parse_string(parser *ps, const char **s, size_t *n)
{
    const unsigned char *p = ps->p + 1, *end = ps->end;
    const unsigned char *start = p;
    /* fast path: no escapes */
    while (p < end) {
        unsigned c = *p;
        if (c == '"') {
            *s = (const char *)start;
            *n = (size_t)(p - start);
            ps->p = p + 1;
            return GR_OK;
        }
        if (c == '\\')
            break;
        if (c < 0x20)
            return GR_EPARSE;
        if (c < 0x80) {
            p++;
            continue;
        }
        size_t l = utf8_len(p, end);
        if (!l)
            return GR_EPARSE;
        p += l;
    }
    if (p >= end)
        return GR_EPARSE;
    /* slow path: decode into strbuf */
    gr_buf *b = &ps->strbuf;
    gr_buf_reset(b);
    if (gr_buf_append(b, start, (size_t)(p - start)) != GR_OK)
        return GR_ENOMEM;
    while (p < end) {
        unsigned c = *p;
        if (c == '"') {
            *s = gr_buf_cstr(b);
            *n = b->len;
            ps->p = p + 1;
            return GR_OK;
        }
        if (c < 0x20)
            return GR_EPARSE;
        if (c >= 0x80) {
            size_t l = utf8_len(p, end);
            if (!l)
                return GR_EPARSE;
            if (gr_buf_append(b, p, l) != GR_OK)
                return GR_ENOMEM;
            p += l;
            continue;
        }
        if (c != '\\') {
            const unsigned char *q = p;
            while (q < end && *q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\')
                q++;
            if (gr_buf_append(b, p, (size_t)(q - p)) != GR_OK)
                return GR_ENOMEM;
            p = q;
            continue;
        }
        if (end - p < 2)
            return GR_EPARSE;
        char e;
        switch (p[1]) {
        case '"':
            e = '"';
            break;
        case '\\':
            e = '\\';
            break;
        case '/':
            e = '/';
            break;
        case 'b':
            e = '\b';
            break;
        case 'f':
            e = '\f';
            break;
        case 'n':
            e = '\n';
            break;
        case 'r':
            e = '\r';
            break;
        case 't':
            e = '\t';
            break;
        case 'u': {
            unsigned cp;
            if (end - p < 6 || hex4(p + 2, &cp) != 0)
                return GR_EPARSE;
            p += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &lo) != 0 ||
                    lo < 0xDC00 || lo > 0xDFFF)
                    return GR_EPARSE;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            } else if ((cp >= 0xDC00 && cp <= 0xDFFF) || cp == 0) {
                return GR_EPARSE; /* lone low surrogate; \u0000 (no JSON_ALLOW_NUL) */
            }
            if (put_utf8(b, cp) != GR_OK)
                return GR_ENOMEM;
            continue;
        }
        default:
            return GR_EPARSE;
        }
        if (gr_buf_putc(b, e) != GR_OK)
            return GR_ENOMEM;
        p += 2;
    }
    return GR_EPARSE;
}

static json_t *parse_number(parser *ps)
{
    const unsigned char *p = ps->p, *end = ps->end, *start = p;
    bool neg = false, real = false;
    if (*p == '-') {
        neg = true;
        p++;
    }
    if (p >= end || *p < '0' || *p > '9')
        return fail(ps, GR_EPARSE);
    const unsigned char *digits = p;
    if (*p == '0') {
        p++;
        if (p < end && *p >= '0' && *p <= '9')
            return fail(ps, GR_EPARSE); /* leading zero */
    } else {
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    const unsigned char *int_end = p;
    if (p < end && *p == '.') {
        real = true;
        p++;
        if (p >= end || *p < '0' || *p > '9')
            return fail(ps, GR_EPARSE);
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        real = true;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || *p < '0' || *p > '9')
            return fail(ps, GR_EPARSE);
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    ps->p = p;
    skip_ungot_nul(ps);
    if (!real) {
        uint64_t v = 0;
        uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        for (const unsigned char *d = digits; d < int_end; d++) {
            unsigned dig = (unsigned)(*d - '0');
            if (v > (lim - dig) / 10)
                return fail(ps, GR_EPARSE); /* too big integer */
            v = v * 10 + dig;
        }
        json_int_t iv =
            neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(json_int_t)v) : (json_int_t)v;
        json_t *j = json_integer(iv);
        return j ? j : fail(ps, GR_ENOMEM);
    }
    char tmp[128];
    char *buf = tmp;
    size_t len = (size_t)(p - start);
    if (len >= sizeof tmp && !(buf = malloc(len + 1)))
        return fail(ps, GR_ENOMEM);
    memcpy(buf, start, len);
    buf[len] = 0;
    errno = 0;
    double d = strtod(buf, NULL);
    int e = errno;
    if (buf != tmp)
        free(buf);
    if (e == ERANGE && isinf(d))
        return fail(ps, GR_EPARSE); /* real number overflow */
    json_t *j = json_real(d);
    return j ? j : fail(ps, GR_ENOMEM);
}

static json_t *parse_object(parser *ps)
{
    json_t *obj = json_object();
    if (!obj)
        return fail(ps, GR_ENOMEM);
    ps->p++; /* '{' */
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
        return obj;
    }
    for (;;) {
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != '"')
            break;
        const char *k;
        size_t klen;
        int rc = parse_string(ps, &k, &klen);
        if (rc != GR_OK) {
            fail(ps, rc);
            break;
        }
        /* the key may live in strbuf, which the value can overwrite */
        char kbuf[256];
        char *key = NULL;
        if (k == ps->strbuf.data) {
            key = klen < sizeof kbuf ? kbuf : malloc(klen + 1);
            if (!key) {
                fail(ps, GR_ENOMEM);
                break;
            }
            memcpy(key, k, klen);
            key[klen] = 0;
            k = key;
        }
        skip_ws(ps);
        json_t *v = NULL;
        if (ps->p < ps->end && *ps->p == ':') {
            ps->p++;
            skip_ws(ps);
            v = parse_value(ps);
        } else {
            fail(ps, GR_EPARSE);
        }
        size_t before = json_object_size(obj);
        bool ok = v && json_object_setn_new_nocheck(obj, k, klen, v) == 0;
        if (key && key != kbuf)
            free(key);
        if (!ok) {
            if (v)
                fail(ps, GR_ENOMEM);
            break;
        }
        if (json_object_size(obj) == before) {
            fail(ps, GR_EPARSE); /* duplicate key */
            break;
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == '}') {
            ps->p++;
            return obj;
        }
        break;
    }
    json_decref(obj);
    return fail(ps, GR_EPARSE);
}

static json_t *parse_array(parser *ps)
{
    json_t *arr = json_array();
    if (!arr)
        return fail(ps, GR_ENOMEM);
    ps->p++; /* '[' */
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        return arr;
    }
    for (;;) {
        skip_ws(ps);
        json_t *v = parse_value(ps);
        if (!v || json_array_append_new(arr, v) != 0) {
            if (v)
                fail(ps, GR_ENOMEM);
            break;
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == ']') {
            ps->p++;
            return arr;
        }
        break;
    }
    json_decref(arr);
    return fail(ps, GR_EPARSE);
}

static bool lit(parser *ps, const char *word, size_t n)
{
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return false;
    ps->p += n;
    skip_ungot_nul(ps);
    return true;
}

static json_t *parse_value(parser *ps)
{
    if (ps->p >= ps->end)
        return fail(ps, GR_EPARSE);
    /* jansson counts every value, scalars included, towards the depth */
    if (ps->depth + 1 > MAX_DEPTH)
        return fail(ps, GR_EPARSE);
    json_t *v;
    switch (*ps->p) {
    case '{':
    case '[':
        ps->depth++;
        v = *ps->p == '{' ? parse_object(ps) : parse_array(ps);
        ps->depth--;
        return v;
    case '"': {
        const char *s;
        size_t n;
        int rc = parse_string(ps, &s, &n);
        if (rc != GR_OK)
            return fail(ps, rc);
        v = json_stringn_nocheck(s, n);
        return v ? v : fail(ps, GR_ENOMEM);
    }
    case 't':
        return lit(ps, "true", 4) ? json_true() : fail(ps, GR_EPARSE);
    case 'f':
        return lit(ps, "false", 5) ? json_false() : fail(ps, GR_EPARSE);
    case 'n':
        return lit(ps, "null", 4) ? json_null() : fail(ps, GR_EPARSE);
    default:
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
            return parse_number(ps);
        return fail(ps, GR_EPARSE);
    }
}

int gr_pf_json_parse(const char *buf, size_t len, json_t **out)
{
    *out = NULL;
    parser ps = {.p = (const unsigned char *)buf,
                 .end = (const unsigned char *)buf + len,
                 .strbuf = GR_BUF_INIT(GR_PF_TEXT_MAX)};
    skip_ws(&ps);
    json_t *v = NULL;
    if (ps.p < ps.end && (*ps.p == '{' || *ps.p == '['))
        v = parse_value(&ps);
    else
        ps.rc = GR_EPARSE;
    if (v) {
        skip_ws(&ps);
        if (ps.p != ps.end) {
            json_decref(v);
            v = NULL;
            ps.rc = GR_EPARSE;
        }
    }
    gr_buf_free(&ps.strbuf);
    if (!v)
        return ps.rc != GR_OK ? ps.rc : GR_EPARSE;
    *out = v;
    return GR_OK;
}

/*
 * cel_lib.c — CEL extension libraries: cel-go's ext strings (reverse, quote,
 * format), lists (slice, flatten, sort, distinct, reverse, lists.range),
 * sets, math, encoders and optional types, and the Kubernetes libraries
 * kube-apiserver enables for CRD validation rules that need no value type of
 * their own: lists (isSorted, sum, min, max, indexOf, lastIndexOf) and regex
 * (find, findAll). The typed Kubernetes libraries are in cel_k8s.c. Semantics follow cel-go v0.26.0
 * and k8s.io/apiserver v0.36 (Kubernetes 1.36); docs/cel.md lists them.
 *
 * Cost: every function charges the evaluation budget for the work it does
 * (one unit per list element visited or compared, one per 16 bytes scanned
 * or produced), so a call on a large input is bounded like any other node.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <inttypes.h>
#include <stdarg.h>
#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_lib.h"

#define LIB_RE_MATCH_LIMIT 1000000u
#define LIB_RE_DEPTH_LIMIT 10000u

gr_cel_val cel_lib_oom(const cel_node *n)
{
    return cel_err(GR_ENOMEM, n->off, "out of memory");
}

/* A value from a constructor that may have failed with offset 0: re-anchor
 * the error at n. */
gr_cel_val cel_lib_at(const cel_node *n, gr_cel_val v)
{
    if (cel_is_err(&v)) {
        const cel_errv *e = cel_err_of(&v);
        if (!e) /* the static out-of-memory error */
            return v;
        gr_cel_val r = cel_err(e->code, n->off, "%s", e->msg);
        gr_cel_val_release(&v);
        return r;
    }
    return v;
}

gr_cel_val cel_lib_str_from_buf(const cel_node *n, gr_buf *b)
{
    gr_cel_val r = cel_lib_at(n, cel_str_new(GR_CEL_STRING, b->data ? b->data : "", b->len));
    gr_buf_free(b);
    return r;
}

/* A new list taking over items[0..k) (also on failure). */
gr_cel_val cel_lib_list_of(const cel_node *n, gr_cel_val *items, size_t k)
{
    gr_cel_val *dst;
    gr_cel_val r = cel_list_alloc(k, &dst);
    if (cel_is_err(&r)) {
        for (size_t i = 0; i < k; i++)
            gr_cel_val_release(&items[i]);
        return cel_lib_at(n, r);
    }
    if (k)
        memcpy(dst, items, k * sizeof(*dst));
    return r;
}

/* All elements of a list as new references (caller releases and frees). */
gr_cel_val *cel_lib_list_items(const gr_cel_val *l, size_t *n)
{
    *n = cel_list_len(l);
    gr_cel_val *v = malloc((*n ? *n : 1) * sizeof(*v));
    if (!v)
        return NULL;
    for (size_t i = 0; i < *n; i++)
        v[i] = cel_list_at(l, i);
    return v;
}

void cel_lib_items_free(gr_cel_val *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gr_cel_val_release(&v[i]);
    free(v);
}

/* ---- strings ---- */

static gr_cel_val str_reverse(ectx *c, const cel_node *n, const gr_cel_val *s)
{
    size_t l;
    const char *p = cel_sv(s, &l);
    if (cel_charge_bytes(c, l))
        return cel_cost_err(c, n);
    char *d;
    gr_cel_val r = cel_str_alloc(GR_CEL_STRING, l, &d);
    if (cel_is_err(&r))
        return cel_lib_at(n, r);
    size_t i = 0;
    while (i < l) {
        uint32_t cp;
        size_t k = cel_utf8_decode(p + i, l - i, &cp);
        memcpy(d + l - i - k, p + i, k);
        i += k;
    }
    return r;
}

/* Go's strconv.Quote for valid UTF-8 (what cel-go's strings.quote and the
 * format clauses' %q produce): C escapes, other controls as \xHH. */
static int quote_into(gr_buf *b, const char *s, size_t l)
{
    int rc = gr_buf_putc(b, '"');
    for (size_t i = 0; i < l && rc == GR_OK; i++) {
        unsigned char ch = (unsigned char)s[i];
        switch (ch) {
        case '\a':
            rc = gr_buf_puts(b, "\\a");
            break;
        case '\b':
            rc = gr_buf_puts(b, "\\b");
            break;
        case '\f':
            rc = gr_buf_puts(b, "\\f");
            break;
        case '\n':
            rc = gr_buf_puts(b, "\\n");
            break;
        case '\r':
            rc = gr_buf_puts(b, "\\r");
            break;
        case '\t':
            rc = gr_buf_puts(b, "\\t");
            break;
        case '\v':
            rc = gr_buf_puts(b, "\\v");
            break;
        case '\\':
            rc = gr_buf_puts(b, "\\\\");
            break;
        case '"':
            rc = gr_buf_puts(b, "\\\"");
            break;
        default:
            if (ch < 0x20 || ch == 0x7f)
                rc = gr_buf_printf(b, "\\x%02x", ch);
            else
                rc = gr_buf_putc(b, (char)ch);
        }
    }
    if (rc == GR_OK)
        rc = gr_buf_putc(b, '"');
    return rc;
}

/* strings.quote: like quote_into, but cel-go keeps other control
 * characters as they are. */
static gr_cel_val str_quote(ectx *c, const cel_node *n, const gr_cel_val *s)
{
    size_t l;
    const char *p = cel_sv(s, &l);
    if (cel_charge_bytes(c, l * 2))
        return cel_cost_err(c, n);
    gr_buf b = GR_BUF_INIT(CEL_TEXT_MAX);
    int rc = gr_buf_putc(&b, '"');
    for (size_t i = 0; i < l && rc == GR_OK; i++) {
        const char *esc = NULL;
        switch (p[i]) {
        case '\a':
            esc = "\\a";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\v':
            esc = "\\v";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '"':
            esc = "\\\"";
            break;
        default:
            break;
        }
        rc = esc ? gr_buf_puts(&b, esc) : gr_buf_putc(&b, p[i]);
    }
    if (rc == GR_OK)
        rc = gr_buf_putc(&b, '"');
    if (rc != GR_OK) {
        gr_buf_free(&b);
        return cel_lib_oom(n);
    }
    return cel_lib_str_from_buf(n, &b);
}

/* ---- string.format ---- */

typedef struct fmt_err {
    char msg[160];
} fmt_err;

__attribute__((format(printf, 2, 3))) static bool fmt_fail(fmt_err *e, const char *fmt, ...);
static bool fmt_fail(fmt_err *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return false;
}

static bool fmt_value(ectx *c, const cel_node *n, const gr_cel_val *v, gr_buf *b, fmt_err *e,
                      int depth);

/* string(v) as cel-go converts it for %s. */
static bool fmt_plain(const cel_node *n, const gr_cel_val *v, gr_buf *b, fmt_err *e)
{
    if (v->kind == GR_CEL_NULL)
        return gr_buf_puts(b, "null") == GR_OK;
    gr_cel_val s = cel_conv_string(n, v);
    if (cel_is_err(&s)) {
        const cel_errv *ev = cel_err_of(&s);
        bool nomem = !ev || ev->code == GR_ENOMEM;
        gr_cel_val_release(&s);
        if (nomem)
            return fmt_fail(e, "%s", "out of memory");
        return fmt_fail(e,
                        "string clause can only be used on strings, bools, bytes, ints, "
                        "doubles, maps, lists, types, durations, and timestamps, was given %s",
                        gr_cel_val_type_name(v));
    }
    size_t l;
    const char *p = cel_sv(&s, &l);
    int rc = gr_buf_append(b, p, l);
    gr_cel_val_release(&s);
    return rc == GR_OK;
}

/* A list element or map value inside %s: a CEL literal. */
static bool fmt_literal(ectx *c, const cel_node *n, const gr_cel_val *v, gr_buf *b, fmt_err *e,
                        int depth)
{
    char tmp[64];
    switch (v->kind) {
    case GR_CEL_STRING: {
        size_t l;
        const char *p = cel_sv(v, &l);
        return quote_into(b, p, l) == GR_OK;
    }
    case GR_CEL_BYTES: {
        size_t l;
        const char *p = cel_sv(v, &l);
        if (!cel_utf8_valid(p, l))
            return fmt_fail(e, "invalid UTF-8 in bytes %s", "value");
        return gr_buf_putc(b, 'b') == GR_OK && quote_into(b, p, l) == GR_OK;
    }
    case GR_CEL_DOUBLE:
        if (isnan(v->u.d) || isinf(v->u.d)) {
            cel_fmt_double(v->u.d, tmp, sizeof(tmp));
            return quote_into(b, tmp, strlen(tmp)) == GR_OK;
        }
        return gr_buf_printf(b, "%.6f", v->u.d) == GR_OK;
    case GR_CEL_TIMESTAMP:
        cel_timestamp_fmt(v->u.ts.sec, v->u.ts.nsec, tmp, sizeof(tmp));
        return gr_buf_printf(b, "timestamp(\"%s\")", tmp) == GR_OK;
    case GR_CEL_DURATION:
        cel_duration_fmt(v->u.dur_ns, tmp, sizeof(tmp));
        return gr_buf_printf(b, "duration(\"%s\")", tmp) == GR_OK;
    case GR_CEL_LIST:
    case GR_CEL_MAP:
        return fmt_value(c, n, v, b, e, depth + 1);
    default:
        return fmt_plain(n, v, b, e);
    }
}

typedef struct kv_str {
    char *k, *v;
} kv_str;

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const kv_str *)a)->k, ((const kv_str *)b)->k);
}

static bool fmt_value(ectx *c, const cel_node *n, const gr_cel_val *v, gr_buf *b, fmt_err *e,
                      int depth)
{
    if (depth > 32)
        return fmt_fail(e, "%s nested too deeply", "value");
    if (v->kind == GR_CEL_LIST) {
        size_t len = cel_list_len(v);
        if (gr_buf_putc(b, '[') != GR_OK)
            return false;
        for (size_t i = 0; i < len; i++) {
            if (cel_charge(c, 1))
                return fmt_fail(e, "%s", "cost");
            gr_cel_val x = cel_list_at(v, i);
            bool ok =
                (i == 0 || gr_buf_puts(b, ", ") == GR_OK) && fmt_literal(c, n, &x, b, e, depth);
            gr_cel_val_release(&x);
            if (!ok)
                return false;
        }
        return gr_buf_putc(b, ']') == GR_OK;
    }
    if (v->kind == GR_CEL_MAP) {
        size_t len = cel_map_len(v), k = 0;
        kv_str *ent = calloc(len ? len : 1, sizeof(*ent));
        if (!ent)
            return fmt_fail(e, "%s", "out of memory");
        bool ok = true;
        cel_iter it;
        cel_iter_init(&it, v);
        gr_cel_val key;
        while (ok && k < len && cel_iter_next(&it, &key)) {
            gr_buf kb = GR_BUF_INIT(b->max), vb = GR_BUF_INIT(b->max);
            gr_cel_val val = {0};
            if (cel_charge(c, 1))
                ok = fmt_fail(e, "%s", "cost");
            else if (key.kind == GR_CEL_STRING)
                ok = fmt_literal(c, n, &key, &kb, e, depth);
            else
                ok = fmt_plain(n, &key, &kb, e);
            if (ok && cel_map_find(v, &key, &val))
                ok = fmt_literal(c, n, &val, &vb, e, depth);
            gr_cel_val_release(&val);
            gr_cel_val_release(&key);
            ent[k].k = ok ? gr_buf_steal(&kb, NULL) : NULL;
            ent[k].v = ok ? gr_buf_steal(&vb, NULL) : NULL;
            gr_buf_free(&kb);
            gr_buf_free(&vb);
            if (ok && (!ent[k].k || !ent[k].v))
                ok = fmt_fail(e, "%s", "out of memory");
            k++;
        }
        if (ok) {
            qsort(ent, k, sizeof(*ent), kv_cmp);
            ok = gr_buf_putc(b, '{') == GR_OK;
            for (size_t i = 0; ok && i < k; i++)
                ok = gr_buf_printf(b, "%s%s:%s", i ? ", " : "", ent[i].k, ent[i].v) == GR_OK;
            ok = ok && gr_buf_putc(b, '}') == GR_OK;
        }
        for (size_t i = 0; i < k; i++) {
            free(ent[i].k);
            free(ent[i].v);
        }
        free(ent);
        return ok;
    }
    return fmt_plain(n, v, b, e);
}

/* Go's %b / %o / %x of a signed or unsigned integer. */
static bool fmt_radix(gr_buf *b, bool neg, uint64_t u, unsigned base, bool upper)
{
    char tmp[72];
    size_t i = sizeof(tmp);
    const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        tmp[--i] = dig[u % base];
        u /= base;
    } while (u);
    if (neg)
        tmp[--i] = '-';
    return gr_buf_append(b, tmp + i, sizeof(tmp) - i) == GR_OK;
}

static bool fmt_float_str(const gr_cel_val *v, double *d)
{
    if (v->kind == GR_CEL_DOUBLE) {
        *d = v->u.d;
        return true;
    }
    if (v->kind == GR_CEL_STRING) {
        size_t l;
        const char *s = cel_sv(v, &l);
        if (l == 3 && memcmp(s, "NaN", 3) == 0)
            *d = (double)NAN;
        else if (l == 8 && memcmp(s, "Infinity", 8) == 0)
            *d = (double)INFINITY;
        else if (l == 9 && memcmp(s, "-Infinity", 9) == 0)
            *d = -(double)INFINITY;
        else
            return false;
        return true;
    }
    return false;
}

/* %f and %e as cel-go's strings v2 (what Kubernetes 1.36 enables) prints
 * them: through golang.org/x/text's message printer in the en-US locale, so
 * %f groups thousands ("1,234.50") and prints infinities as "∞"; %e prints
 * "1.234500×10⁰³" with a precision of 6 whatever is asked, the asked
 * precision becoming a minimum width (cel-go writes "%<p>e"). */
static bool fmt_fixed_en(gr_buf *b, double d, int prec)
{
    if (isnan(d))
        return gr_buf_puts(b, "NaN") == GR_OK;
    if (isinf(d))
        return gr_buf_puts(b, d > 0 ? "∞" : "-∞") == GR_OK;
    if (d == 0)
        d = 0.0; /* x/text prints -0.0 as 0 (but -0.001 as -0.00) */
    char tmp[1500];
    int l = snprintf(tmp, sizeof(tmp), "%.*f", prec, d);
    if (l < 0 || (size_t)l >= sizeof(tmp))
        return false;
    const char *p = tmp;
    bool ok = true;
    if (*p == '-') {
        ok = gr_buf_putc(b, '-') == GR_OK;
        p++;
    }
    size_t ilen = strcspn(p, ".");
    for (size_t i = 0; ok && i < ilen; i++) {
        if (i > 0 && (ilen - i) % 3 == 0)
            ok = gr_buf_putc(b, ',') == GR_OK;
        if (ok)
            ok = gr_buf_putc(b, p[i]) == GR_OK;
    }
    return ok && gr_buf_puts(b, p + ilen) == GR_OK;
}

static bool fmt_sci_en(gr_buf *b, double d, int width)
{
    static const char *const sup[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
    char out[96];
    size_t ol = 0, runes = 0;
    if (isnan(d) || isinf(d)) {
        const char *t = isnan(d) ? "NaN" : d > 0 ? "∞" : "-∞";
        ol = (size_t)snprintf(out, sizeof(out), "%s", t);
        runes = cel_utf8_count(out, ol);
    } else {
        char tmp[64];
        snprintf(tmp, sizeof(tmp), "%.6e", d == 0 ? 0.0 : d);
        char *e = strchr(tmp, 'e');
        if (!e)
            return false;
        *e++ = 0;
        bool eneg = *e == '-';
        e++;
        ol = (size_t)snprintf(out, sizeof(out), "%s×10%s", tmp, eneg ? "⁻" : "");
        runes = strlen(tmp) + 3 + (eneg ? 1 : 0);
        for (; *e && ol + 4 < sizeof(out); e++, runes++) {
            const char *sd = sup[*e - '0'];
            memcpy(out + ol, sd, strlen(sd));
            ol += strlen(sd);
        }
    }
    bool ok = true;
    for (size_t i = runes; ok && i < (size_t)width; i++)
        ok = gr_buf_putc(b, ' ') == GR_OK;
    return ok && gr_buf_append(b, out, ol) == GR_OK;
}

static bool fmt_clause(ectx *c, const cel_node *n, char verb, int prec, const gr_cel_val *v,
                       gr_buf *b, fmt_err *e)
{
    const char *tn = gr_cel_val_type_name(v);
    switch (verb) {
    case 's':
        return fmt_value(c, n, v, b, e, 0);
    case 'd':
        if (v->kind == GR_CEL_INT)
            return gr_buf_printf(b, "%" PRId64, v->u.i) == GR_OK;
        if (v->kind == GR_CEL_UINT)
            return gr_buf_printf(b, "%" PRIu64, v->u.u) == GR_OK;
        return fmt_fail(e, "decimal clause can only be used on integers, was given %s", tn);
    case 'f':
    case 'e': {
        double d;
        if (!fmt_float_str(v, &d))
            return fmt_fail(e, "%s clause can only be used on doubles, was given %s",
                            verb == 'f' ? "fixed-point" : "scientific", tn);
        return verb == 'f' ? fmt_fixed_en(b, d, prec < 0 ? 6 : prec)
                           : fmt_sci_en(b, d, prec < 0 ? 6 : prec);
    }
    case 'b':
        if (v->kind == GR_CEL_BOOL)
            return gr_buf_putc(b, v->u.b ? '1' : '0') == GR_OK;
        __attribute__((fallthrough));
    case 'o':
    case 'x':
    case 'X':
        if (v->kind == GR_CEL_INT)
            return fmt_radix(b, v->u.i < 0, v->u.i < 0 ? 0 - (uint64_t)v->u.i : (uint64_t)v->u.i,
                             verb == 'b'   ? 2
                             : verb == 'o' ? 8
                                           : 16,
                             verb == 'X');
        if (v->kind == GR_CEL_UINT)
            return fmt_radix(b, false, v->u.u, verb == 'b' ? 2 : verb == 'o' ? 8 : 16, verb == 'X');
        if ((verb == 'x' || verb == 'X') && (v->kind == GR_CEL_STRING || v->kind == GR_CEL_BYTES)) {
            size_t l;
            const char *p = cel_sv(v, &l);
            bool ok = true;
            for (size_t i = 0; ok && i < l; i++)
                ok = gr_buf_printf(b, verb == 'X' ? "%02X" : "%02x", (unsigned char)p[i]) == GR_OK;
            return ok;
        }
        if (verb == 'b')
            return fmt_fail(e, "only integers and bools can be formatted as binary, was given %s",
                            tn);
        if (verb == 'o')
            return fmt_fail(e, "octal clause can only be used on integers, was given %s", tn);
        return fmt_fail(
            e, "only integers, byte buffers, and strings can be formatted as hex, was given %s",
            tn);
    default:
        return false;
    }
}

static gr_cel_val str_format(ectx *c, const cel_node *n, const gr_cel_val *a)
{
    if (a[1].kind != GR_CEL_LIST)
        return cel_no_overload(n, a, 2);
    size_t fl;
    const char *f = cel_sv(&a[0], &fl);
    size_t nargs = cel_list_len(&a[1]), argi = 0;
    /* Output is bounded by the cost budget: 16 bytes per unit. */
    gr_buf b = GR_BUF_INIT(c->max_cost > (SIZE_MAX / 32) ? SIZE_MAX / 2 : (size_t)c->max_cost * 16);
    fmt_err e = {""};
    bool ok = true;
    for (size_t i = 0; ok && i < fl;) {
        if (f[i] != '%') {
            ok = gr_buf_putc(&b, f[i++]) == GR_OK;
            continue;
        }
        if (i + 1 < fl && f[i + 1] == '%') {
            ok = gr_buf_putc(&b, '%') == GR_OK;
            i += 2;
            continue;
        }
        if (argi >= nargs) {
            snprintf(e.msg, sizeof(e.msg), "index %zu out of range", argi);
            ok = false;
            break;
        }
        i++;
        int prec = -1;
        if (i < fl && f[i] == '.') {
            i++;
            prec = 0;
            size_t st = i;
            while (i < fl && f[i] >= '0' && f[i] <= '9') {
                if (prec > 1000) {
                    snprintf(e.msg, sizeof(e.msg), "precision too large");
                    ok = false;
                    break;
                }
                prec = prec * 10 + (f[i++] - '0');
            }
            if (ok && i == st) {
                snprintf(e.msg, sizeof(e.msg),
                         "could not parse formatting clause: error while parsing precision");
                ok = false;
            }
        }
        if (!ok)
            break;
        if (i >= fl) {
            snprintf(e.msg, sizeof(e.msg), "unexpected end of string");
            ok = false;
            break;
        }
        char verb = f[i++];
        if (!strchr("sdfebxXo", verb)) {
            snprintf(e.msg, sizeof(e.msg),
                     "could not parse formatting clause: unrecognized formatting clause \"%c\"",
                     verb);
            ok = false;
            break;
        }
        gr_cel_val arg = cel_list_at(&a[1], argi++);
        fmt_err ce = {""};
        ok = fmt_clause(c, n, verb, prec, &arg, &b, &ce);
        gr_cel_val_release(&arg);
        if (!ok && ce.msg[0])
            snprintf(e.msg, sizeof(e.msg), "error during formatting: %s", ce.msg);
    }
    if (c->over || cel_charge_bytes(c, b.len + fl)) {
        gr_buf_free(&b);
        return cel_cost_err(c, n);
    }
    if (!ok) {
        gr_buf_free(&b);
        if (!e.msg[0] || strstr(e.msg, "out of memory"))
            return cel_lib_oom(n);
        return cel_err(GR_EINVAL, n->off, "%s", e.msg);
    }
    return cel_lib_str_from_buf(n, &b);
}

/* ---- lists ---- */

static bool comparable_kind(int k)
{
    return k == GR_CEL_INT || k == GR_CEL_UINT || k == GR_CEL_DOUBLE || k == GR_CEL_BOOL ||
           k == GR_CEL_STRING || k == GR_CEL_BYTES || k == GR_CEL_DURATION || k == GR_CEL_TIMESTAMP;
}

/* Kubernetes isSorted/min/max: elements compared with CEL ordering. */
static gr_cel_val list_order(ectx *c, const cel_node *n, const gr_cel_val *l)
{
    size_t len = cel_list_len(l);
    if (cel_charge(c, len))
        return cel_cost_err(c, n);
    if (len == 0) {
        if (n->fn == F_ISSORTED)
            return gr_cel_val_bool(1);
        return cel_err(GR_EINVAL, n->off, "%s called on empty list",
                       n->fn == F_MIN ? "min" : "max");
    }
    gr_cel_val best = cel_list_at(l, 0);
    if (!comparable_kind(best.kind)) {
        gr_cel_val r = cel_no_overload(n, &best, 1);
        gr_cel_val_release(&best);
        return r;
    }
    for (size_t i = 1; i < len; i++) {
        gr_cel_val x = cel_list_at(l, i);
        int r = cel_compare(&best, &x);
        if (r == -2 || !comparable_kind(x.kind)) {
            gr_cel_val args[2] = {best, x};
            gr_cel_val err = cel_no_overload(n, args, 2);
            gr_cel_val_release(&best);
            gr_cel_val_release(&x);
            return err;
        }
        if (n->fn == F_ISSORTED) {
            if (r == 1) {
                gr_cel_val_release(&best);
                gr_cel_val_release(&x);
                return gr_cel_val_bool(0);
            }
        } else if ((n->fn == F_MIN && r == 1) || (n->fn == F_MAX && r == -1)) {
            gr_cel_val_release(&best);
            best = x;
            continue;
        }
        if (n->fn == F_ISSORTED) {
            gr_cel_val_release(&best);
            best = x;
        } else {
            gr_cel_val_release(&x);
        }
    }
    if (n->fn == F_ISSORTED) {
        gr_cel_val_release(&best);
        return gr_cel_val_bool(1);
    }
    return best;
}

static gr_cel_val list_sum(ectx *c, const cel_node *n, const gr_cel_val *l)
{
    size_t len = cel_list_len(l);
    if (cel_charge(c, len))
        return cel_cost_err(c, n);
    gr_cel_val acc = gr_cel_val_int(0);
    for (size_t i = 0; i < len; i++) {
        gr_cel_val x = cel_list_at(l, i);
        if (i == 0 && (x.kind == GR_CEL_INT || x.kind == GR_CEL_UINT || x.kind == GR_CEL_DOUBLE ||
                       x.kind == GR_CEL_DURATION)) {
            acc = x;
            continue;
        }
        bool ok = x.kind == acc.kind;
        if (ok) {
            switch (x.kind) {
            case GR_CEL_INT:
                ok = !__builtin_add_overflow(acc.u.i, x.u.i, &acc.u.i);
                if (!ok)
                    return cel_err(GR_EINVAL, n->off, "int overflow");
                break;
            case GR_CEL_UINT:
                ok = !__builtin_add_overflow(acc.u.u, x.u.u, &acc.u.u);
                if (!ok)
                    return cel_err(GR_EINVAL, n->off, "uint overflow");
                break;
            case GR_CEL_DOUBLE:
                acc.u.d += x.u.d;
                break;
            case GR_CEL_DURATION:
                ok = !__builtin_add_overflow(acc.u.dur_ns, x.u.dur_ns, &acc.u.dur_ns);
                if (!ok)
                    return cel_err(GR_EINVAL, n->off, "duration overflow");
                break;
            default:
                ok = false;
            }
        }
        if (!ok) {
            gr_cel_val args[2] = {acc, x};
            gr_cel_val err = cel_no_overload(n, args, 2);
            gr_cel_val_release(&x);
            return err;
        }
    }
    if (len == 1 && acc.kind != GR_CEL_INT && acc.kind != GR_CEL_UINT &&
        acc.kind != GR_CEL_DOUBLE && acc.kind != GR_CEL_DURATION) {
        gr_cel_val err = cel_no_overload(n, &acc, 1);
        gr_cel_val_release(&acc);
        return err;
    }
    return acc;
}

static gr_cel_val list_index_of(ectx *c, const cel_node *n, const gr_cel_val *a, size_t na)
{
    if (na != 2)
        return cel_no_overload(n, a, na);
    size_t len = cel_list_len(&a[0]);
    bool last = n->fn == F_LASTINDEXOF;
    for (size_t k = 0; k < len; k++) {
        size_t i = last ? len - 1 - k : k;
        if (cel_charge(c, 1))
            return cel_cost_err(c, n);
        gr_cel_val x = cel_list_at(&a[0], i);
        int eq = cel_equal(&x, &a[1]);
        gr_cel_val_release(&x);
        if (eq)
            return gr_cel_val_int((int64_t)i);
    }
    return gr_cel_val_int(-1);
}

static gr_cel_val list_reverse(ectx *c, const cel_node *n, const gr_cel_val *l)
{
    size_t len;
    if (cel_charge(c, cel_list_len(l)))
        return cel_cost_err(c, n);
    gr_cel_val *v = cel_lib_list_items(l, &len);
    if (!v)
        return cel_lib_oom(n);
    for (size_t i = 0; i < len / 2; i++) {
        gr_cel_val t = v[i];
        v[i] = v[len - 1 - i];
        v[len - 1 - i] = t;
    }
    gr_cel_val r = cel_lib_list_of(n, v, len);
    free(v);
    return r;
}

static gr_cel_val list_slice(ectx *c, const cel_node *n, const gr_cel_val *a)
{
    if (a[1].kind != GR_CEL_INT || a[2].kind != GR_CEL_INT)
        return cel_no_overload(n, a, 3);
    int64_t st = a[1].u.i, en = a[2].u.i;
    size_t len = cel_list_len(&a[0]);
    if (st < 0 || en < 0)
        return cel_err(GR_EINVAL, n->off,
                       "cannot slice(%" PRId64 ", %" PRId64 "), negative indexes not supported", st,
                       en);
    if (st > en)
        return cel_err(GR_EINVAL, n->off,
                       "cannot slice(%" PRId64 ", %" PRId64
                       "), start index must be less than or equal to end index",
                       st, en);
    if ((uint64_t)en > len)
        return cel_err(GR_EINVAL, n->off,
                       "cannot slice(%" PRId64 ", %" PRId64 "), list is length %zu", st, en, len);
    size_t k = (size_t)(en - st);
    if (cel_charge(c, k))
        return cel_cost_err(c, n);
    gr_cel_val *v = malloc((k ? k : 1) * sizeof(*v));
    if (!v)
        return cel_lib_oom(n);
    for (size_t i = 0; i < k; i++)
        v[i] = cel_list_at(&a[0], (size_t)st + i);
    gr_cel_val r = cel_lib_list_of(n, v, k);
    free(v);
    return r;
}

bool cel_vec_push(cel_vec *x, gr_cel_val v)
{
    if (x->n == x->cap) {
        size_t nc = x->cap ? x->cap * 2 : 8;
        gr_cel_val *nv = realloc(x->v, nc * sizeof(*nv));
        if (!nv) {
            gr_cel_val_release(&v);
            return false;
        }
        x->v = nv;
        x->cap = nc;
    }
    x->v[x->n++] = v;
    return true;
}

static bool flatten_into(ectx *c, const gr_cel_val *l, int64_t depth, cel_vec *out)
{
    size_t len = cel_list_len(l);
    for (size_t i = 0; i < len; i++) {
        if (cel_charge(c, 1))
            return false;
        gr_cel_val x = cel_list_at(l, i);
        if (x.kind == GR_CEL_LIST && depth > 0) {
            bool ok = flatten_into(c, &x, depth - 1, out);
            gr_cel_val_release(&x);
            if (!ok)
                return false;
        } else if (!cel_vec_push(out, x)) {
            return false;
        }
    }
    return true;
}

static gr_cel_val list_flatten(ectx *c, const cel_node *n, const gr_cel_val *a, size_t na)
{
    int64_t depth = 1;
    if (na == 2) {
        if (a[1].kind != GR_CEL_INT)
            return cel_no_overload(n, a, na);
        depth = a[1].u.i;
        if (depth < 0)
            return cel_err(GR_EINVAL, n->off, "level must be non-negative");
        if (depth > 64) /* deeper than any list the depth limit lets one build */
            depth = 64;
    }
    cel_vec out = {0};
    bool ok = flatten_into(c, &a[0], depth, &out);
    if (!ok) {
        cel_lib_items_free(out.v, out.n);
        return c->over ? cel_cost_err(c, n) : cel_lib_oom(n);
    }
    gr_cel_val r = cel_lib_list_of(n, out.v, out.n);
    free(out.v);
    return r;
}

/* Merge sort (stable) with CEL ordering; all elements share one kind. */
static void merge_sort(gr_cel_val *v, gr_cel_val *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    merge_sort(v, tmp, h);
    merge_sort(v + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cel_compare(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof(*v));
}

static gr_cel_val list_sort(ectx *c, const cel_node *n, const gr_cel_val *l)
{
    size_t len;
    gr_cel_val *v = cel_lib_list_items(l, &len);
    if (!v)
        return cel_lib_oom(n);
    uint64_t lg = 1;
    for (size_t m = len; m > 1; m >>= 1)
        lg++;
    if (cel_charge(c, (uint64_t)len * lg)) {
        cel_lib_items_free(v, len);
        return cel_cost_err(c, n);
    }
    for (size_t i = 0; i < len; i++) {
        if (!comparable_kind(v[i].kind)) {
            cel_lib_items_free(v, len);
            return cel_err(GR_EINVAL, n->off, "list elements must be comparable");
        }
        if (v[i].kind != v[0].kind) {
            cel_lib_items_free(v, len);
            return cel_err(GR_EINVAL, n->off, "list elements must have the same type");
        }
    }
    gr_cel_val *tmp = malloc((len ? len : 1) * sizeof(*tmp));
    if (!tmp) {
        cel_lib_items_free(v, len);
        return cel_lib_oom(n);
    }
    merge_sort(v, tmp, len);
    free(tmp);
    gr_cel_val r = cel_lib_list_of(n, v, len);
    free(v);
    return r;
}

static gr_cel_val list_distinct(ectx *c, const cel_node *n, const gr_cel_val *l)
{
    size_t len;
    gr_cel_val *v = cel_lib_list_items(l, &len);
    if (!v)
        return cel_lib_oom(n);
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        bool dup = false;
        if (cel_charge(c, k + 1)) {
            cel_lib_items_free(v, len);
            return cel_cost_err(c, n);
        }
        for (size_t j = 0; j < k && !dup; j++)
            dup = cel_equal(&v[j], &v[i]);
        if (dup)
            gr_cel_val_release(&v[i]);
        else
            v[k++] = v[i];
    }
    gr_cel_val r = cel_lib_list_of(n, v, k);
    free(v);
    return r;
}

static gr_cel_val lists_range(ectx *c, const cel_node *n, const gr_cel_val *a)
{
    if (a[0].kind != GR_CEL_INT)
        return cel_no_overload(n, a, 1);
    int64_t k = a[0].u.i < 0 ? 0 : a[0].u.i;
    if (cel_charge(c, (uint64_t)k))
        return cel_cost_err(c, n);
    gr_cel_val *items;
    gr_cel_val r = cel_list_alloc((size_t)k, &items);
    if (cel_is_err(&r))
        return cel_lib_at(n, r);
    for (int64_t i = 0; i < k; i++)
        items[i] = gr_cel_val_int(i);
    return r;
}

/* ---- sets ---- */

static bool list_contains_elem(ectx *c, const gr_cel_val *l, const gr_cel_val *x)
{
    size_t len = cel_list_len(l);
    for (size_t i = 0; i < len; i++) {
        if (cel_charge(c, 1))
            return false;
        gr_cel_val y = cel_list_at(l, i);
        int eq = cel_equal(&y, x);
        gr_cel_val_release(&y);
        if (eq)
            return true;
    }
    return false;
}

/* 1 when every element of b is in a, 0 otherwise; `any` asks instead
 * whether some element of b is in a. */
static bool set_check(ectx *c, const gr_cel_val *a, const gr_cel_val *b, bool any)
{
    size_t len = cel_list_len(b);
    for (size_t i = 0; i < len && !c->over; i++) {
        gr_cel_val x = cel_list_at(b, i);
        bool in = list_contains_elem(c, a, &x);
        gr_cel_val_release(&x);
        if (any && in)
            return true;
        if (!any && !in)
            return false;
    }
    return !any;
}

static gr_cel_val sets_fn(ectx *c, const cel_node *n, const gr_cel_val *a)
{
    if (a[0].kind != GR_CEL_LIST || a[1].kind != GR_CEL_LIST)
        return cel_no_overload(n, a, 2);
    bool r;
    if (n->fn == F_SETS_CONTAINS)
        r = set_check(c, &a[0], &a[1], false);
    else if (n->fn == F_SETS_INTERSECTS)
        r = set_check(c, &a[0], &a[1], true);
    else
        r = set_check(c, &a[0], &a[1], false) && set_check(c, &a[1], &a[0], false);
    if (c->over)
        return cel_cost_err(c, n);
    return gr_cel_val_bool(r);
}

/* ---- regex (Kubernetes) ---- */

static gr_cel_val re_find(ectx *c, const cel_node *n, const gr_cel_val *a, size_t na)
{
    if (a[1].kind != GR_CEL_STRING || (na == 3 && a[2].kind != GR_CEL_INT))
        return cel_no_overload(n, a, na);
    size_t sl, pl;
    const char *s = cel_sv(&a[0], &sl), *pat = cel_sv(&a[1], &pl);
    char msg[200];
    pcre2_code *re = (pcre2_code *)n->re, *own = NULL;
    if (!re) {
        if (cel_charge_bytes(c, pl * 4))
            return cel_cost_err(c, n);
        own = re = cel_re_compile(pat, pl, msg, sizeof(msg));
        if (!re)
            return cel_err(GR_EINVAL, n->off, "invalid regular expression: %s", msg);
    }
    int64_t limit = n->fn == F_FIND ? 1 : (na == 3 ? a[2].u.i : -1);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    cel_vec out = {0};
    gr_cel_val err = {0};
    if (!md || !mc) {
        err = cel_lib_oom(n);
    } else {
        pcre2_set_match_limit(mc, LIB_RE_MATCH_LIMIT);
        pcre2_set_depth_limit(mc, LIB_RE_DEPTH_LIMIT);
        size_t pos = 0, prev_end = (size_t)-1;
        while (pos <= sl && (limit < 0 || (int64_t)out.n < limit)) {
            int rc = pcre2_match(re, (PCRE2_SPTR)s, sl, pos, PCRE2_NO_UTF_CHECK, md, mc);
            if (rc == PCRE2_ERROR_NOMATCH)
                break;
            if (rc < 0) {
                err = rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT
                          ? cel_err(GR_ETOOBIG, n->off,
                                    "regular expression match exceeded its backtracking limit "
                                    "(simplify the pattern)")
                          : cel_err(GR_EINVAL, n->off, "regular expression match failed (%d)", rc);
                break;
            }
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            size_t ms = ov[0], me = ov[1];
            /* Go's FindAll: an empty match right after the previous match is
             * skipped; after an empty match, advance one code point. */
            if (!(me == ms && ms == prev_end)) {
                if (cel_charge_bytes(c, me - ms + 16)) {
                    err = cel_cost_err(c, n);
                    break;
                }
                gr_cel_val m = cel_str_new(GR_CEL_STRING, s + ms, me - ms);
                if (cel_is_err(&m)) {
                    gr_cel_val_release(&m);
                    err = cel_lib_oom(n);
                    break;
                }
                if (!cel_vec_push(&out, m)) { /* vec_push released m */
                    err = cel_lib_oom(n);
                    break;
                }
            }
            prev_end = me;
            if (me > ms) {
                pos = me;
            } else {
                if (ms >= sl)
                    break;
                uint32_t cp;
                pos = ms + cel_utf8_decode(s + ms, sl - ms, &cp);
            }
        }
        if (err.kind == GR_CEL_UNSET && cel_charge_bytes(c, sl))
            err = cel_cost_err(c, n);
    }
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    if (own)
        pcre2_code_free(own);
    if (err.kind != GR_CEL_UNSET) {
        cel_lib_items_free(out.v, out.n);
        return err;
    }
    if (n->fn == F_FIND) {
        gr_cel_val r = out.n ? out.v[0] : cel_lib_at(n, cel_str_new(GR_CEL_STRING, "", 0));
        free(out.v);
        return r;
    }
    gr_cel_val r = cel_lib_list_of(n, out.v, out.n);
    free(out.v);
    return r;
}

/* ---- math ---- */

static bool is_num(const gr_cel_val *v)
{
    return v->kind == GR_CEL_INT || v->kind == GR_CEL_UINT || v->kind == GR_CEL_DOUBLE;
}

static gr_cel_val math_extreme(ectx *c, const cel_node *n, gr_cel_val *a, size_t na)
{
    bool greatest = n->fn == F_MATH_GREATEST;
    const char *fname = greatest ? "math.greatest" : "math.least";
    gr_cel_val *v = a;
    size_t len = na;
    gr_cel_val *own = NULL;
    if (na == 1 && a[0].kind == GR_CEL_LIST) {
        own = v = cel_lib_list_items(&a[0], &len);
        if (!v)
            return cel_lib_oom(n);
        if (len == 0) {
            free(own);
            return cel_err(GR_EINVAL, n->off, "%s(list) argument must not be empty", fname);
        }
    }
    if (cel_charge(c, len)) {
        if (own)
            cel_lib_items_free(own, len);
        return cel_cost_err(c, n);
    }
    size_t best = 0;
    gr_cel_val r = {0};
    for (size_t i = 0; i < len; i++) {
        if (!is_num(&v[i])) {
            r = cel_err(GR_EINVAL, n->off, "%s(%s) no such overload", fname,
                        gr_cel_val_type_name(&v[i]));
            break;
        }
        if (i == 0)
            continue;
        int cmp = cel_compare(&v[i], &v[best]);
        if ((greatest && cmp == 1) || (!greatest && cmp == -1))
            best = i;
        else if (cmp == 2 && v[i].kind == GR_CEL_DOUBLE && isnan(v[i].u.d))
            best = i; /* NaN wins, as cel-go's comparison leaves it */
    }
    if (r.kind == GR_CEL_UNSET)
        r = cel_ref(&v[best]);
    if (own)
        cel_lib_items_free(own, len);
    return r;
}

static gr_cel_val math_unary(const cel_node *n, const gr_cel_val *a)
{
    const gr_cel_val *x = a;
    switch (n->fn) {
    case F_MATH_CEIL:
    case F_MATH_FLOOR:
    case F_MATH_ROUND:
    case F_MATH_TRUNC:
    case F_MATH_ISINF:
    case F_MATH_ISNAN:
    case F_MATH_ISFINITE:
        if (x->kind != GR_CEL_DOUBLE)
            return cel_no_overload(n, a, 1);
        switch (n->fn) {
        case F_MATH_CEIL:
            return gr_cel_val_double(ceil(x->u.d));
        case F_MATH_FLOOR:
            return gr_cel_val_double(floor(x->u.d));
        case F_MATH_ROUND:
            return gr_cel_val_double(round(x->u.d)); /* half away from zero, as Go */
        case F_MATH_TRUNC:
            return gr_cel_val_double(trunc(x->u.d));
        case F_MATH_ISINF:
            return gr_cel_val_bool(isinf(x->u.d) != 0);
        case F_MATH_ISNAN:
            return gr_cel_val_bool(isnan(x->u.d) != 0);
        default:
            return gr_cel_val_bool(isfinite(x->u.d) != 0);
        }
    case F_MATH_ABS:
        if (x->kind == GR_CEL_INT) {
            if (x->u.i == INT64_MIN)
                return cel_err(GR_EINVAL, n->off, "int overflow");
            return gr_cel_val_int(x->u.i < 0 ? -x->u.i : x->u.i);
        }
        if (x->kind == GR_CEL_UINT)
            return *x;
        if (x->kind == GR_CEL_DOUBLE)
            return gr_cel_val_double(fabs(x->u.d));
        return cel_no_overload(n, a, 1);
    case F_MATH_SIGN:
        if (x->kind == GR_CEL_INT)
            return gr_cel_val_int(x->u.i > 0 ? 1 : x->u.i < 0 ? -1 : 0);
        if (x->kind == GR_CEL_UINT)
            return gr_cel_val_uint(x->u.u > 0 ? 1 : 0);
        if (x->kind == GR_CEL_DOUBLE) {
            if (isnan(x->u.d))
                return *x;
            return gr_cel_val_double(x->u.d > 0 ? 1.0 : x->u.d < 0 ? -1.0 : 0.0);
        }
        return cel_no_overload(n, a, 1);
    case F_MATH_SQRT:
        if (x->kind == GR_CEL_INT)
            return gr_cel_val_double(sqrt((double)x->u.i));
        if (x->kind == GR_CEL_UINT)
            return gr_cel_val_double(sqrt((double)x->u.u));
        if (x->kind == GR_CEL_DOUBLE)
            return gr_cel_val_double(sqrt(x->u.d));
        return cel_no_overload(n, a, 1);
    case F_MATH_BITNOT:
        if (x->kind == GR_CEL_INT)
            return gr_cel_val_int(~x->u.i);
        if (x->kind == GR_CEL_UINT)
            return gr_cel_val_uint(~x->u.u);
        return cel_no_overload(n, a, 1);
    default:
        return cel_no_overload(n, a, 1);
    }
}

static gr_cel_val math_bits(const cel_node *n, const gr_cel_val *a)
{
    if (n->fn == F_MATH_BITSHL || n->fn == F_MATH_BITSHR) {
        if ((a[0].kind != GR_CEL_INT && a[0].kind != GR_CEL_UINT) || a[1].kind != GR_CEL_INT)
            return cel_no_overload(n, a, 2);
        int64_t s = a[1].u.i;
        if (s < 0)
            return cel_err(GR_EINVAL, n->off, "%s() negative offset: %" PRId64,
                           n->fn == F_MATH_BITSHL ? "math.bitShiftLeft" : "math.bitShiftRight", s);
        uint64_t u = a[0].kind == GR_CEL_INT ? (uint64_t)a[0].u.i : a[0].u.u;
        /* shifts of 64 bits or more give 0; right shifts of ints are
         * logical, as in cel-go */
        u = s > 63 ? 0 : n->fn == F_MATH_BITSHL ? u << s : u >> s;
        return a[0].kind == GR_CEL_INT ? gr_cel_val_int((int64_t)u) : gr_cel_val_uint(u);
    }
    if (a[0].kind != a[1].kind || (a[0].kind != GR_CEL_INT && a[0].kind != GR_CEL_UINT))
        return cel_no_overload(n, a, 2);
    uint64_t x = a[0].kind == GR_CEL_INT ? (uint64_t)a[0].u.i : a[0].u.u;
    uint64_t y = a[1].kind == GR_CEL_INT ? (uint64_t)a[1].u.i : a[1].u.u;
    uint64_t r = n->fn == F_MATH_BITAND ? (x & y) : n->fn == F_MATH_BITOR ? (x | y) : (x ^ y);
    return a[0].kind == GR_CEL_INT ? gr_cel_val_int((int64_t)r) : gr_cel_val_uint(r);
}

/* ---- dispatch ---- */

static gr_cel_val lib_call_core(ectx *c, const cel_node *n, gr_cel_val *a, size_t na)
{
    switch (n->fn) {
    case F_INDEXOF:
    case F_LASTINDEXOF:
        return list_index_of(c, n, a, na);
    case F_REVERSE:
        if (a[0].kind == GR_CEL_STRING)
            return str_reverse(c, n, &a[0]);
        if (a[0].kind == GR_CEL_LIST)
            return list_reverse(c, n, &a[0]);
        break;
    case F_QUOTE:
        if (a[0].kind == GR_CEL_STRING)
            return str_quote(c, n, &a[0]);
        break;
    case F_FORMAT:
        if (a[0].kind == GR_CEL_STRING)
            return str_format(c, n, a);
        break;
    case F_ISSORTED:
    case F_MIN:
    case F_MAX:
        if (a[0].kind == GR_CEL_LIST)
            return list_order(c, n, &a[0]);
        break;
    case F_SUM:
        if (a[0].kind == GR_CEL_LIST)
            return list_sum(c, n, &a[0]);
        break;
    case F_SLICE:
        if (a[0].kind == GR_CEL_LIST)
            return list_slice(c, n, a);
        break;
    case F_FLATTEN:
        if (a[0].kind == GR_CEL_LIST)
            return list_flatten(c, n, a, na);
        break;
    case F_SORT:
        if (a[0].kind == GR_CEL_LIST)
            return list_sort(c, n, &a[0]);
        break;
    case F_DISTINCT:
        if (a[0].kind == GR_CEL_LIST)
            return list_distinct(c, n, &a[0]);
        break;
    case F_LISTS_RANGE:
        return lists_range(c, n, a);
    case F_FIND:
    case F_FINDALL:
        if (a[0].kind == GR_CEL_STRING)
            return re_find(c, n, a, na);
        break;
    case F_SETS_CONTAINS:
    case F_SETS_EQUIVALENT:
    case F_SETS_INTERSECTS:
        return sets_fn(c, n, a);
    case F_MATH_GREATEST:
    case F_MATH_LEAST:
        return math_extreme(c, n, a, na);
    case F_MATH_BITAND:
    case F_MATH_BITOR:
    case F_MATH_BITXOR:
    case F_MATH_BITSHL:
    case F_MATH_BITSHR:
        return math_bits(n, a);
    default:
        if (n->fn >= F_MATH_CEIL && n->fn <= F_MATH_BITNOT)
            return math_unary(n, a);
        break;
    }
    return cel_no_overload(n, a, na);
}

/* ---- optional types (cel-go cel.OptionalTypes, enabled by Kubernetes) ---- */

#define T_OPTIONAL "optional_type"

gr_cel_val cel_opt_none(const cel_node *n)
{
    gr_cel_val *keys, *vals;
    gr_cel_val r = cel_map_alloc(0, &keys, &vals);
    if (cel_is_err(&r))
        return cel_lib_at(n, r);
    cel_map *m = r.u.p;
    m->tname = strdup(T_OPTIONAL);
    if (!m->tname) {
        gr_cel_val_release(&r);
        return cel_lib_oom(n);
    }
    r.kind = GR_CEL_OBJECT;
    return r;
}

gr_cel_val cel_opt_of(const cel_node *n, const gr_cel_val *v)
{
    gr_cel_val *keys, *vals;
    gr_cel_val r = cel_map_alloc(1, &keys, &vals);
    if (cel_is_err(&r))
        return cel_lib_at(n, r);
    keys[0] = cel_str_new(GR_CEL_STRING, "", 0);
    vals[0] = cel_ref(v);
    cel_map *m = r.u.p;
    m->tname = strdup(T_OPTIONAL);
    if (cel_is_err(&keys[0]) || !m->tname) {
        gr_cel_val_release(&r);
        return cel_lib_oom(n);
    }
    r.kind = GR_CEL_OBJECT;
    return r;
}

int cel_opt_get(const gr_cel_val *v, gr_cel_val *inner)
{
    if (v->kind != GR_CEL_OBJECT || strcmp(gr_cel_val_type_name(v), T_OPTIONAL) != 0)
        return -1;
    const cel_map *m = v->u.p;
    if (m->n == 0)
        return 0;
    *inner = cel_ref(&m->vals[0]);
    return 1;
}

/* The zero value of its type (optional.ofNonZeroValue). */
static bool is_zero_value(const gr_cel_val *v)
{
    switch (v->kind) {
    case GR_CEL_NULL:
        return true;
    case GR_CEL_BOOL:
        return !v->u.b;
    case GR_CEL_INT:
        return v->u.i == 0;
    case GR_CEL_UINT:
        return v->u.u == 0;
    case GR_CEL_DOUBLE:
        return v->u.d == 0;
    case GR_CEL_STRING:
    case GR_CEL_BYTES: {
        size_t l;
        cel_sv(v, &l);
        return l == 0;
    }
    case GR_CEL_LIST:
        return cel_list_len(v) == 0;
    case GR_CEL_MAP:
        return cel_map_len(v) == 0;
    case GR_CEL_DURATION:
        return v->u.dur_ns == 0;
    case GR_CEL_TIMESTAMP:
        return v->u.ts.sec == 0 && v->u.ts.nsec == 0;
    case GR_CEL_OBJECT:
        return cel_map_len(v) == 0 && strcmp(gr_cel_val_type_name(v), T_OPTIONAL) != 0;
    default:
        return false;
    }
}

static gr_cel_val opt_call(const cel_node *n, gr_cel_val *a, size_t na)
{
    gr_cel_val inner;
    switch (n->fn) {
    case F_OPT_OF:
        return cel_opt_of(n, &a[0]);
    case F_OPT_NONE:
        return cel_opt_none(n);
    case F_OPT_OFNONZERO:
        return is_zero_value(&a[0]) ? cel_opt_none(n) : cel_opt_of(n, &a[0]);
    default:
        break;
    }
    int st = cel_opt_get(&a[0], &inner);
    if (st < 0)
        return cel_no_overload(n, a, na);
    switch (n->fn) {
    case F_OPT_HASVALUE:
        if (st > 0)
            gr_cel_val_release(&inner);
        return gr_cel_val_bool(st > 0);
    case F_OPT_VALUE:
        if (st == 0)
            return cel_err(GR_EINVAL, n->off, "optional.none() dereference");
        return inner;
    case F_OPT_ORVALUE:
        return st > 0 ? inner : cel_ref(&a[1]);
    default: { /* or */
        gr_cel_val other;
        int so = cel_opt_get(&a[1], &other);
        if (so < 0) {
            if (st > 0)
                gr_cel_val_release(&inner);
            return cel_no_overload(n, a, na);
        }
        if (so > 0)
            gr_cel_val_release(&other);
        if (st > 0) {
            gr_cel_val_release(&inner);
            return cel_ref(&a[0]);
        }
        return cel_ref(&a[1]);
    }
    }
}

/* ---- encoders (cel-go ext, not enabled by Kubernetes): base64 ---- */

static const char b64_alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_val(char c)
{
    const char *p = c ? strchr(b64_alpha, c) : NULL;
    return p ? (int)(p - b64_alpha) : -1;
}

static gr_cel_val base64_call(ectx *c, const cel_node *n, gr_cel_val *a, size_t na)
{
    size_t l;
    const char *s;
    if (n->fn == F_B64_ENCODE) {
        if (a[0].kind != GR_CEL_BYTES)
            return cel_no_overload(n, a, na);
        s = cel_sv(&a[0], &l);
        if (cel_charge_bytes(c, l * 2))
            return cel_cost_err(c, n);
        char *d;
        gr_cel_val r = cel_str_alloc(GR_CEL_STRING, (l + 2) / 3 * 4, &d);
        if (cel_is_err(&r))
            return cel_lib_at(n, r);
        size_t o = 0;
        for (size_t i = 0; i < l; i += 3) {
            uint32_t v = (uint32_t)(unsigned char)s[i] << 16;
            if (i + 1 < l)
                v |= (uint32_t)(unsigned char)s[i + 1] << 8;
            if (i + 2 < l)
                v |= (unsigned char)s[i + 2];
            d[o++] = b64_alpha[v >> 18 & 63];
            d[o++] = b64_alpha[v >> 12 & 63];
            d[o++] = i + 1 < l ? b64_alpha[v >> 6 & 63] : '=';
            d[o++] = i + 2 < l ? b64_alpha[v & 63] : '=';
        }
        return r;
    }
    /* decode: Go's StdEncoding, else RawStdEncoding (no padding) */
    if (a[0].kind != GR_CEL_STRING)
        return cel_no_overload(n, a, na);
    s = cel_sv(&a[0], &l);
    if (cel_charge_bytes(c, l * 2))
        return cel_cost_err(c, n);
    size_t body = l;
    bool padded = l % 4 == 0 && l > 0 && s[l - 1] == '=';
    if (padded)
        body = s[l - 2] == '=' ? l - 2 : l - 1;
    bool ok = (l % 4 == 0 || (!padded && l % 4 != 1));
    for (size_t i = 0; ok && i < body; i++)
        ok = b64_val(s[i]) >= 0;
    if (!ok)
        return cel_err(GR_EINVAL, n->off, "illegal base64 data at input byte %zu", body);
    char *d;
    gr_cel_val r = cel_str_alloc(GR_CEL_BYTES, body * 3 / 4, &d);
    if (cel_is_err(&r))
        return cel_lib_at(n, r);
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < body; i++) {
        acc = acc << 6 | (uint32_t)b64_val(s[i]);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            d[o++] = (char)(acc >> bits & 0xff);
        }
    }
    return r;
}

gr_cel_val cel_lib_call(ectx *c, const cel_node *n, gr_cel_val *a, size_t na)
{
    if (n->fn == F_B64_ENCODE || n->fn == F_B64_DECODE)
        return base64_call(c, n, a, na);
    if (n->fn >= F_OPT_OF && n->fn <= F_OPT_OR)
        return opt_call(n, a, na);
    if ((n->fn >= F_QUANTITY && n->fn <= F_URL_QUERY) ||
        (n->fn >= F_FORMAT_NAMED && n->fn <= F_FORMAT_VALIDATE))
        return cel_k8s_call(c, n, a, na);
    return lib_call_core(c, n, a, na);
}

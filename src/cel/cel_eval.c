/*
 * cel_eval.c — evaluation of a compiled CEL program, the standard function
 * library, the Kubernetes string extensions, and the public program API.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"
#include "gr_duration.h"

/* Cost model: one unit per node visited and per comprehension iteration,
 * plus one unit per CEL_BYTES_PER_COST bytes copied or scanned. */
#define CEL_BYTES_PER_COST 16
#define CEL_LOCALS_INLINE  16

/* PCRE2 limits standing in for RE2's linear-time guarantee. */
#define CEL_RE_MATCH_LIMIT 1000000u
#define CEL_RE_DEPTH_LIMIT 10000u

static gr_cel_val eval(ectx *c, const cel_node *n);
__attribute__((noinline)) static gr_cel_val eval_comp2(ectx *c, const cel_node *n);

static bool charge(ectx *c, uint64_t units)
{
    c->cost += units;
    if (c->cost > c->max_cost)
        c->over = true;
    return c->over;
}

static bool charge_bytes(ectx *c, size_t n)
{
    return charge(c, (uint64_t)(n / CEL_BYTES_PER_COST));
}

static gr_cel_val cost_err(ectx *c, const cel_node *n)
{
    return cel_err(GR_ETOOBIG, n->off,
                   "evaluation cost budget of %" PRIu64 " exceeded (simplify the expression or "
                   "reduce the input)",
                   c->max_cost);
}

static const char *fn_display(const cel_node *n)
{
    static const char *const ops[F_COUNT_] = {
        [F_ADD] = "_+_", [F_SUB] = "_-_", [F_MUL] = "_*_", [F_DIV] = "_/_", [F_MOD] = "_%_",
        [F_NEG] = "-_",  [F_NOT] = "!_",  [F_EQ] = "_==_", [F_NE] = "_!=_", [F_LT] = "_<_",
        [F_LE] = "_<=_", [F_GT] = "_>_",  [F_GE] = "_>=_", [F_IN] = "@in",
    };
    if (n->fn < F_COUNT_ && ops[n->fn])
        return ops[n->fn];
    return n->name ? n->name : "function";
}

static gr_cel_val no_overload(const cel_node *n, const gr_cel_val *a, size_t na)
{
    char types[160] = "";
    size_t l = 0;
    for (size_t i = 0; i < na && l < sizeof(types) - 1; i++) {
        int w = snprintf(types + l, sizeof(types) - l, "%s%s", i ? ", " : "",
                         gr_cel_val_type_name(&a[i]));
        if (w < 0)
            break;
        l += (size_t)w;
    }
    return cel_err(GR_EINVAL, n->off, "no such overload: %s(%s)", fn_display(n), types);
}

static gr_cel_val mk_bool(bool b)
{
    return gr_cel_val_bool(b);
}

/* For the extension libraries (cel_lib.c). */
bool cel_charge(ectx *c, uint64_t units)
{
    return charge(c, units);
}

bool cel_charge_bytes(ectx *c, size_t n)
{
    return charge_bytes(c, n);
}

gr_cel_val cel_cost_err(ectx *c, const cel_node *n)
{
    return cost_err(c, n);
}

gr_cel_val cel_no_overload(const cel_node *n, const gr_cel_val *a, size_t na)
{
    return no_overload(n, a, na);
}

/* ---- regular expressions ---- */

void *cel_re_compile(const char *pat, size_t len, char *msg, size_t msgsz)
{
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *re =
        pcre2_compile((PCRE2_SPTR)pat, len,
                      PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_BACKSLASH_C, &ec, &eo, NULL);
    if (!re) {
        char buf[120];
        pcre2_get_error_message(ec, (PCRE2_UCHAR *)buf, sizeof(buf));
        snprintf(msg, msgsz, "%s at offset %zu", buf, (size_t)eo);
    }
    return re;
}

void cel_re_free(void *re)
{
    pcre2_code_free((pcre2_code *)re);
}

static gr_cel_val re_match(ectx *c, const cel_node *n, const void *re_in, const gr_cel_val *s,
                           const gr_cel_val *pat)
{
    char msg[200];
    pcre2_code *re = (pcre2_code *)(uintptr_t)re_in;
    pcre2_code *own = NULL;
    if (!re) {
        size_t plen;
        const char *p = cel_sv(pat, &plen);
        if (charge_bytes(c, plen * 4))
            return cost_err(c, n);
        own = re = cel_re_compile(p, plen, msg, sizeof(msg));
        if (!re)
            return cel_err(GR_EINVAL, n->off, "invalid regular expression: %s", msg);
    }
    size_t slen;
    const char *str = cel_sv(s, &slen);
    gr_cel_val r;
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    if (!md || !mc) {
        r = cel_err(GR_ENOMEM, n->off, "out of memory");
    } else {
        pcre2_set_match_limit(mc, CEL_RE_MATCH_LIMIT);
        pcre2_set_depth_limit(mc, CEL_RE_DEPTH_LIMIT);
        int rc = pcre2_match(re, (PCRE2_SPTR)str, slen, 0, PCRE2_NO_UTF_CHECK, md, mc);
        if (rc >= 0)
            r = mk_bool(true);
        else if (rc == PCRE2_ERROR_NOMATCH)
            r = mk_bool(false);
        else if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT)
            r = cel_err(GR_ETOOBIG, n->off,
                        "regular expression match exceeded its backtracking limit (simplify the "
                        "pattern)");
        else
            r = cel_err(GR_EINVAL, n->off, "regular expression match failed (%d)", rc);
        if (!cel_is_err(&r) && charge_bytes(c, slen))
            r = cost_err(c, n);
    }
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    if (own)
        pcre2_code_free(own);
    return r;
}

/* ---- arithmetic ---- */

static gr_cel_val overflow(const cel_node *n, const char *what)
{
    return cel_err(GR_EINVAL, n->off, "%s overflow", what);
}

static gr_cel_val concat(ectx *c, const cel_node *n, const gr_cel_val *a, const gr_cel_val *b)
{
    if (a->kind == GR_CEL_LIST) {
        size_t la = cel_list_len(a), lb = cel_list_len(b);
        if (charge(c, (la + lb) / 4))
            return cost_err(c, n);
        gr_cel_val *items;
        gr_cel_val r = cel_list_alloc(la + lb, &items);
        if (cel_is_err(&r))
            return r;
        for (size_t i = 0; i < la; i++)
            items[i] = cel_list_at(a, i);
        for (size_t i = 0; i < lb; i++)
            items[la + i] = cel_list_at(b, i);
        return r;
    }
    size_t la, lb;
    const char *sa = cel_sv(a, &la), *sb = cel_sv(b, &lb);
    if (charge_bytes(c, la + lb))
        return cost_err(c, n);
    char *d;
    gr_cel_val r = cel_str_alloc(a->kind, la + lb, &d);
    if (cel_is_err(&r))
        return r;
    memcpy(d, sa, la);
    memcpy(d + la, sb, lb);
    return r;
}

static gr_cel_val ts_make(const cel_node *n, int64_t sec, int64_t nsec)
{
    while (nsec < 0) {
        nsec += 1000000000;
        sec--;
    }
    while (nsec >= 1000000000) {
        nsec -= 1000000000;
        sec++;
    }
    gr_cel_val r;
    if (gr_cel_val_timestamp(sec, (int32_t)nsec, &r, NULL) != GR_OK)
        return cel_err(GR_EINVAL, n->off, "timestamp out of range");
    return r;
}

static gr_cel_val ts_add(const cel_node *n, const gr_cel_val *ts, int64_t dur, bool sub)
{
    int64_t ds = dur / 1000000000, dn = dur % 1000000000;
    if (sub) {
        ds = -ds;
        dn = -dn;
    }
    return ts_make(n, ts->u.ts.sec + ds, ts->u.ts.nsec + dn);
}

static gr_cel_val arith(ectx *c, const cel_node *n, const gr_cel_val *a, const gr_cel_val *b)
{
    int fn = n->fn;
    if (a->kind == GR_CEL_INT && b->kind == GR_CEL_INT) {
        int64_t x = a->u.i, y = b->u.i, r;
        switch (fn) {
        case F_ADD:
            if (__builtin_add_overflow(x, y, &r))
                return overflow(n, "int");
            return gr_cel_val_int(r);
        case F_SUB:
            if (__builtin_sub_overflow(x, y, &r))
                return overflow(n, "int");
            return gr_cel_val_int(r);
        case F_MUL:
            if (__builtin_mul_overflow(x, y, &r))
                return overflow(n, "int");
            return gr_cel_val_int(r);
        case F_DIV:
            if (y == 0)
                return cel_err(GR_EINVAL, n->off, "division by zero");
            if (x == INT64_MIN && y == -1)
                return overflow(n, "int");
            return gr_cel_val_int(x / y);
        default:
            if (y == 0)
                return cel_err(GR_EINVAL, n->off, "modulus by zero");
            if (x == INT64_MIN && y == -1)
                return overflow(n, "int");
            return gr_cel_val_int(x % y);
        }
    }
    if (a->kind == GR_CEL_UINT && b->kind == GR_CEL_UINT) {
        uint64_t x = a->u.u, y = b->u.u, r;
        switch (fn) {
        case F_ADD:
            if (__builtin_add_overflow(x, y, &r))
                return overflow(n, "uint");
            return gr_cel_val_uint(r);
        case F_SUB:
            if (__builtin_sub_overflow(x, y, &r))
                return overflow(n, "uint");
            return gr_cel_val_uint(r);
        case F_MUL:
            if (__builtin_mul_overflow(x, y, &r))
                return overflow(n, "uint");
            return gr_cel_val_uint(r);
        case F_DIV:
            if (y == 0)
                return cel_err(GR_EINVAL, n->off, "division by zero");
            return gr_cel_val_uint(x / y);
        default:
            if (y == 0)
                return cel_err(GR_EINVAL, n->off, "modulus by zero");
            return gr_cel_val_uint(x % y);
        }
    }
    if (a->kind == GR_CEL_DOUBLE && b->kind == GR_CEL_DOUBLE && fn != F_MOD) {
        double x = a->u.d, y = b->u.d;
        return gr_cel_val_double(fn == F_ADD   ? x + y
                                 : fn == F_SUB ? x - y
                                 : fn == F_MUL ? x * y
                                               : x / y);
    }
    if (fn == F_ADD && a->kind == b->kind &&
        (a->kind == GR_CEL_STRING || a->kind == GR_CEL_BYTES || a->kind == GR_CEL_LIST))
        return concat(c, n, a, b);
    if ((fn == F_ADD || fn == F_SUB) && a->kind == GR_CEL_DURATION && b->kind == GR_CEL_DURATION) {
        int64_t r;
        if (fn == F_ADD ? __builtin_add_overflow(a->u.dur_ns, b->u.dur_ns, &r)
                        : __builtin_sub_overflow(a->u.dur_ns, b->u.dur_ns, &r))
            return overflow(n, "duration");
        return gr_cel_val_duration(r);
    }
    if ((fn == F_ADD || fn == F_SUB) && a->kind == GR_CEL_TIMESTAMP && b->kind == GR_CEL_DURATION)
        return ts_add(n, a, b->u.dur_ns, fn == F_SUB);
    if (fn == F_ADD && a->kind == GR_CEL_DURATION && b->kind == GR_CEL_TIMESTAMP)
        return ts_add(n, b, a->u.dur_ns, false);
    if (fn == F_SUB && a->kind == GR_CEL_TIMESTAMP && b->kind == GR_CEL_TIMESTAMP) {
        int64_t ds = a->u.ts.sec - b->u.ts.sec, r;
        int64_t dn = (int64_t)a->u.ts.nsec - b->u.ts.nsec;
        if (__builtin_mul_overflow(ds, (int64_t)1000000000, &r) ||
            __builtin_add_overflow(r, dn, &r))
            return overflow(n, "duration");
        return gr_cel_val_duration(r);
    }
    gr_cel_val args[2] = {*a, *b};
    return no_overload(n, args, 2);
}

/* ---- selection and indexing ---- */

static inline __attribute__((always_inline)) gr_cel_val
select_field2(const cel_node *n, const gr_cel_val *obj, bool test_only);

static gr_cel_val select_field(ectx *c, const cel_node *n, const gr_cel_val *obj)
{
    (void)c;
    return select_field2(n, obj, (n->flags & NF_TEST_ONLY) != 0);
}

static inline __attribute__((always_inline)) gr_cel_val
select_field2(const cel_node *n, const gr_cel_val *obj, bool test_only)
{
    if (obj->kind == GR_CEL_OBJECT) {
        gr_cel_val key = cel_str_new(GR_CEL_STRING, n->name, n->namelen), r;
        if (cel_is_err(&key))
            return key;
        int found = cel_map_find(obj, &key, &r);
        gr_cel_val_release(&key);
        if (test_only) {
            if (found)
                gr_cel_val_release(&r);
            return mk_bool(found);
        }
        if (!found)
            return cel_err(GR_EINVAL, n->off,
                           "field '%s' of %s is not set (message field defaults are not "
                           "modelled)",
                           n->name, gr_cel_val_type_name(obj));
        return r;
    }
    if (obj->kind != GR_CEL_MAP) {
        if (test_only)
            return cel_err(GR_EINVAL, n->off, "has() is not supported on type '%s'",
                           gr_cel_val_type_name(obj));
        return cel_err(GR_EINVAL, n->off, "type '%s' does not support field selection",
                       gr_cel_val_type_name(obj));
    }
    gr_cel_val key = mk_bool(false), r;
    /* Build a transient string key without copying for heap maps. */
    if (obj->rep == CEL_REP_JSON) {
        json_t *j = json_object_getn((const json_t *)obj->u.p, n->name, n->namelen);
        if (test_only)
            return mk_bool(j != NULL);
        if (!j)
            return cel_err(GR_EINVAL, n->off, "no such key: '%s'", n->name);
        return cel_from_json(j);
    }
    key = cel_str_new(GR_CEL_STRING, n->name, n->namelen);
    if (cel_is_err(&key))
        return key;
    int found = cel_map_find(obj, &key, &r);
    gr_cel_val_release(&key);
    if (test_only) {
        if (found)
            gr_cel_val_release(&r);
        return mk_bool(found);
    }
    if (!found)
        return cel_err(GR_EINVAL, n->off, "no such key: '%s'", n->name);
    return r;
}

/* An integral index from int, uint or double; false when not integral. */
static bool as_index(const gr_cel_val *k, int64_t *out)
{
    switch (k->kind) {
    case GR_CEL_INT:
        *out = k->u.i;
        return true;
    case GR_CEL_UINT:
        *out = k->u.u > INT64_MAX ? INT64_MAX : (int64_t)k->u.u;
        return true;
    case GR_CEL_DOUBLE:
        if (k->u.d != trunc(k->u.d) || !(k->u.d > -9.2e18 && k->u.d < 9.2e18))
            return false;
        *out = (int64_t)k->u.d;
        return true;
    default:
        return false;
    }
}

static gr_cel_val index_val(const cel_node *n, const gr_cel_val *obj, const gr_cel_val *k)
{
    if (obj->kind == GR_CEL_LIST) {
        int64_t i;
        if (!as_index(k, &i)) {
            if (k->kind == GR_CEL_DOUBLE)
                return cel_err(GR_EINVAL, n->off, "invalid list index %g (not an integer)", k->u.d);
            gr_cel_val args[2] = {*obj, *k};
            return no_overload(n, args, 2);
        }
        size_t len = cel_list_len(obj);
        if (i < 0 || (uint64_t)i >= len)
            return cel_err(GR_EINVAL, n->off, "index out of range: %" PRId64 " (list size %zu)", i,
                           len);
        return cel_list_at(obj, (size_t)i);
    }
    if (obj->kind == GR_CEL_MAP) {
        gr_cel_val r;
        if (cel_map_find(obj, k, &r))
            return r;
        gr_buf b = GR_BUF_INIT(200);
        gr_cel_val_format(k, &b);
        r = cel_err(GR_EINVAL, n->off, "no such key: %s", gr_buf_cstr(&b));
        gr_buf_free(&b);
        return r;
    }
    gr_cel_val args[2] = {*obj, *k};
    return no_overload(n, args, 2);
}

/* ---- string helpers ---- */

/* Byte offset of code point index cpi (cpi <= count). */
static size_t cp_to_byte(const char *s, size_t len, size_t cpi)
{
    size_t i = 0;
    while (cpi > 0 && i < len) {
        i++;
        while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        cpi--;
    }
    return i;
}

static gr_cel_val mk_str(const cel_node *n, int kind, const char *s, size_t len)
{
    gr_cel_val r = cel_str_new(kind, s, len);
    if (cel_is_err(&r)) {
        gr_cel_val_release(&r);
        return cel_err(GR_ENOMEM, n->off, "out of memory");
    }
    return r;
}

static bool is_unicode_space(uint32_t cp)
{
    switch (cp) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
        return true;
    default:
        return cp >= 0x2000 && cp <= 0x200A;
    }
}

static const char *find_bytes(const char *h, size_t hl, const char *nd, size_t nl)
{
    if (nl == 0)
        return h;
    return memmem(h, hl, nd, nl);
}

static gr_cel_val str_index_of(ectx *c, const cel_node *n, const gr_cel_val *a, size_t na,
                               bool last)
{
    if (a[1].kind != GR_CEL_STRING || (na == 3 && a[2].kind != GR_CEL_INT))
        return no_overload(n, a, na);
    size_t sl, tl;
    const char *s = cel_sv(&a[0], &sl), *t = cel_sv(&a[1], &tl);
    if (charge_bytes(c, sl + tl))
        return cost_err(c, n);
    size_t count = cel_utf8_count(s, sl);
    size_t tcount = cel_utf8_count(t, tl);
    /* cel-go v0.26.0 ext/strings.go (Kubernetes 1.36): an empty needle
     * returns the offset as given; a negative offset is an error; an offset
     * at or past the end yields -1 (not an error); lastIndexOf searches
     * backwards from min(offset, size - size(needle)). */
    if (tl == 0)
        return gr_cel_val_int(na == 3 ? a[2].u.i : last ? (int64_t)count : 0);
    int64_t off = na == 3 ? a[2].u.i : (last ? (int64_t)count - 1 : 0);
    if (na == 3 && off < 0)
        return cel_err(GR_EINVAL, n->off, "index out of range: %" PRId64, off);
    if (off < 0 || (uint64_t)off >= count || tcount > count)
        return gr_cel_val_int(-1);
    if (!last) {
        size_t b = cp_to_byte(s, sl, (size_t)off);
        const char *f = find_bytes(s + b, sl - b, t, tl);
        if (!f)
            return gr_cel_val_int(-1);
        return gr_cel_val_int((int64_t)cel_utf8_count(s, (size_t)(f - s)));
    }
    /* last occurrence starting at a code point index <= off */
    if ((size_t)off > count - tcount)
        off = (int64_t)(count - tcount);
    size_t limit = cp_to_byte(s, sl, (size_t)off);
    int64_t best = -1;
    const char *p = s;
    while (p <= s + limit) {
        const char *f = find_bytes(p, sl - (size_t)(p - s), t, tl);
        if (!f || f > s + limit)
            break;
        best = (int64_t)(f - s);
        p = f + 1;
    }
    if (best < 0)
        return gr_cel_val_int(-1);
    return gr_cel_val_int((int64_t)cel_utf8_count(s, (size_t)best));
}

static gr_cel_val str_replace(ectx *c, const cel_node *n, const gr_cel_val *a, size_t na)
{
    if (a[1].kind != GR_CEL_STRING || a[2].kind != GR_CEL_STRING ||
        (na == 4 && a[3].kind != GR_CEL_INT))
        return no_overload(n, a, na);
    size_t sl, ol, nl;
    const char *s = cel_sv(&a[0], &sl), *o = cel_sv(&a[1], &ol), *nw = cel_sv(&a[2], &nl);
    int64_t limit = na == 4 ? a[3].u.i : -1;
    gr_buf b = GR_BUF_INIT(CEL_TEXT_MAX);
    size_t i = 0;
    int64_t done = 0;
    int rc = GR_OK;
    while (rc == GR_OK && i <= sl && (limit < 0 || done < limit)) {
        if (charge_bytes(c, nl + ol + 16)) {
            gr_buf_free(&b);
            return cost_err(c, n);
        }
        if (ol == 0) {
            /* Go strings.Replace: insert at each code point boundary */
            rc = gr_buf_append(&b, nw, nl);
            if (i == sl) {
                i = sl + 1;
                done++;
                break;
            }
            size_t step = 1;
            while (i + step < sl && ((unsigned char)s[i + step] & 0xC0) == 0x80)
                step++;
            if (rc == GR_OK)
                rc = gr_buf_append(&b, s + i, step);
            i += step;
            done++;
            continue;
        }
        const char *f = find_bytes(s + i, sl - i, o, ol);
        if (!f)
            break;
        size_t at = (size_t)(f - s);
        rc = gr_buf_append(&b, s + i, at - i);
        if (rc == GR_OK)
            rc = gr_buf_append(&b, nw, nl);
        i = at + ol;
        done++;
    }
    if (rc == GR_OK && i < sl)
        rc = gr_buf_append(&b, s + i, sl - i);
    if (rc != GR_OK) {
        gr_buf_free(&b);
        return cel_err(GR_ENOMEM, n->off, "out of memory");
    }
    gr_cel_val r = mk_str(n, GR_CEL_STRING, b.data ? b.data : "", b.len);
    gr_buf_free(&b);
    return r;
}

static gr_cel_val str_split(ectx *c, const cel_node *n, const gr_cel_val *a, size_t na)
{
    if (a[1].kind != GR_CEL_STRING || (na == 3 && a[2].kind != GR_CEL_INT))
        return no_overload(n, a, na);
    size_t sl, tl;
    const char *s = cel_sv(&a[0], &sl), *t = cel_sv(&a[1], &tl);
    int64_t limit = na == 3 ? a[2].u.i : -1;
    if (charge_bytes(c, sl * 2))
        return cost_err(c, n);
    gr_cel_val *items = NULL;
    if (limit == 0)
        return cel_list_alloc(0, &items);
    /* count pieces */
    size_t cap = tl == 0 ? cel_utf8_count(s, sl) : 1;
    if (tl) {
        for (const char *p = s; (p = find_bytes(p, sl - (size_t)(p - s), t, tl)) != NULL; p += tl)
            cap++;
    }
    if (limit > 0 && (uint64_t)limit < cap)
        cap = (size_t)limit;
    if (charge(c, cap))
        return cost_err(c, n);
    gr_cel_val r = cel_list_alloc(cap, &items);
    if (cel_is_err(&r))
        return r;
    size_t i = 0;
    for (size_t k = 0; k < cap; k++) {
        size_t end;
        size_t next;
        if (k == cap - 1) {
            end = sl;
            next = sl;
        } else if (tl == 0) {
            end = i + 1;
            while (end < sl && ((unsigned char)s[end] & 0xC0) == 0x80)
                end++;
            next = end;
        } else {
            const char *f = find_bytes(s + i, sl - i, t, tl);
            end = (size_t)(f - s);
            next = end + tl;
        }
        items[k] = mk_str(n, GR_CEL_STRING, s + i, end - i);
        if (cel_is_err(&items[k])) {
            gr_cel_val e = items[k];
            memset(&items[k], 0, sizeof(items[k]));
            gr_cel_val_release(&r);
            return e;
        }
        i = next;
    }
    return r;
}

static gr_cel_val list_join(ectx *c, const cel_node *n, const gr_cel_val *a, size_t na)
{
    if (a[0].kind != GR_CEL_LIST || (na == 2 && a[1].kind != GR_CEL_STRING))
        return no_overload(n, a, na);
    size_t sepl = 0;
    const char *sep = na == 2 ? cel_sv(&a[1], &sepl) : "";
    gr_buf b = GR_BUF_INIT(CEL_TEXT_MAX);
    size_t len = cel_list_len(&a[0]);
    for (size_t i = 0; i < len; i++) {
        gr_cel_val e = cel_list_at(&a[0], i);
        if (e.kind != GR_CEL_STRING) {
            gr_cel_val_release(&e);
            gr_buf_free(&b);
            return cel_err(GR_EINVAL, n->off, "join: list element %zu is not a string", i);
        }
        size_t el;
        const char *es = cel_sv(&e, &el);
        int rc = i ? gr_buf_append(&b, sep, sepl) : GR_OK;
        if (rc == GR_OK)
            rc = gr_buf_append(&b, es, el);
        gr_cel_val_release(&e);
        if (rc != GR_OK || charge_bytes(c, el + sepl + CEL_BYTES_PER_COST)) {
            gr_buf_free(&b);
            return rc != GR_OK ? cel_err(GR_ENOMEM, n->off, "out of memory") : cost_err(c, n);
        }
    }
    gr_cel_val r = mk_str(n, GR_CEL_STRING, b.data ? b.data : "", b.len);
    gr_buf_free(&b);
    return r;
}

/* ---- conversions ---- */

static bool parse_i64(const char *s, size_t n, int64_t *out)
{
    char buf[32];
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end || !(buf[0] == '-' || buf[0] == '+' || (buf[0] >= '0' && buf[0] <= '9')))
        return false;
    *out = v;
    return true;
}

static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
    char buf[32];
    if (n == 0 || n >= sizeof(buf) || !(s[0] >= '0' && s[0] <= '9'))
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

gr_cel_val cel_conv_string(const cel_node *n, const gr_cel_val *a)
{
    char tmp[64];
    switch (a->kind) {
    case GR_CEL_STRING:
        return cel_ref(a);
    case GR_CEL_INT:
        snprintf(tmp, sizeof(tmp), "%" PRId64, a->u.i);
        break;
    case GR_CEL_UINT:
        snprintf(tmp, sizeof(tmp), "%" PRIu64, a->u.u);
        break;
    case GR_CEL_DOUBLE:
        cel_fmt_double(a->u.d, tmp, sizeof(tmp));
        break;
    case GR_CEL_BOOL:
        snprintf(tmp, sizeof(tmp), "%s", a->u.b ? "true" : "false");
        break;
    case GR_CEL_BYTES: {
        size_t l;
        const char *s = cel_sv(a, &l);
        if (!cel_utf8_valid(s, l))
            return cel_err(GR_EINVAL, n->off, "invalid UTF-8 in bytes to string conversion");
        return mk_str(n, GR_CEL_STRING, s, l);
    }
    case GR_CEL_DURATION:
        cel_duration_fmt(a->u.dur_ns, tmp, sizeof(tmp));
        break;
    case GR_CEL_TIMESTAMP:
        cel_timestamp_fmt(a->u.ts.sec, a->u.ts.nsec, tmp, sizeof(tmp));
        break;
    case GR_CEL_TYPE:
        snprintf(tmp, sizeof(tmp), "%s", gr_cel_kind_name((gr_cel_kind)a->u.type));
        break;
    case GR_CEL_OBJECT: {
        gr_cel_val r = cel_lib_to_string(a);
        if (r.kind != GR_CEL_UNSET)
            return r;
        return no_overload(n, a, 1);
    }
    default:
        return no_overload(n, a, 1);
    }
    return mk_str(n, GR_CEL_STRING, tmp, strlen(tmp));
}

static gr_cel_val conv_num(const cel_node *n, const gr_cel_val *a)
{
    int fn = n->fn;
    switch (a->kind) {
    case GR_CEL_INT:
        if (fn == F_INT)
            return *a;
        if (fn == F_DOUBLE)
            return gr_cel_val_double((double)a->u.i);
        if (a->u.i < 0)
            return cel_err(GR_EINVAL, n->off, "range error converting %" PRId64 " to uint", a->u.i);
        return gr_cel_val_uint((uint64_t)a->u.i);
    case GR_CEL_UINT:
        if (fn == F_UINT)
            return *a;
        if (fn == F_DOUBLE)
            return gr_cel_val_double((double)a->u.u);
        if (a->u.u > INT64_MAX)
            return cel_err(GR_EINVAL, n->off, "range error converting %" PRIu64 "u to int", a->u.u);
        return gr_cel_val_int((int64_t)a->u.u);
    case GR_CEL_DOUBLE: {
        double d = a->u.d;
        if (fn == F_DOUBLE)
            return *a;
        if (fn == F_INT) {
            if (!(d > -9223372036854775808.0 && d < 9223372036854775808.0))
                return cel_err(GR_EINVAL, n->off, "range error converting %g to int", d);
            return gr_cel_val_int((int64_t)d);
        }
        /* cel-go: negative values (-0.5 too), NaN and >= 2^64 overflow; -0.0 is 0u */
        if (!(d >= 0.0 && d < 18446744073709551616.0))
            return cel_err(GR_EINVAL, n->off, "range error converting %g to uint", d);
        return gr_cel_val_uint((uint64_t)d);
    }
    case GR_CEL_STRING: {
        size_t l;
        const char *s = cel_sv(a, &l);
        if (fn == F_INT) {
            int64_t v;
            if (!parse_i64(s, l, &v))
                return cel_err(GR_EINVAL, n->off, "cannot convert string to int");
            return gr_cel_val_int(v);
        }
        if (fn == F_UINT) {
            uint64_t v;
            if (!parse_u64(s, l, &v))
                return cel_err(GR_EINVAL, n->off, "cannot convert string to uint");
            return gr_cel_val_uint(v);
        }
        char buf[400];
        if (l == 0 || l >= sizeof(buf))
            return cel_err(GR_EINVAL, n->off, "cannot convert string to double");
        memcpy(buf, s, l);
        buf[l] = 0;
        char *end;
        double d = strtod(buf, &end);
        if (*end || buf[0] == ' ' || buf[0] == '\t' || buf[0] == '\n' ||
            (l > 1 && (buf[1] == 'x' || buf[1] == 'X' || buf[2] == 'x' || buf[2] == 'X')))
            return cel_err(GR_EINVAL, n->off, "cannot convert string to double");
        return gr_cel_val_double(d);
    }
    case GR_CEL_TIMESTAMP:
        if (fn == F_INT)
            return gr_cel_val_int(a->u.ts.sec);
        break;
    case GR_CEL_DURATION:
        if (fn == F_INT)
            return gr_cel_val_int(a->u.dur_ns);
        break;
    default:
        break;
    }
    return no_overload(n, a, 1);
}

static gr_cel_val conv_bool(const cel_node *n, const gr_cel_val *a)
{
    if (a->kind == GR_CEL_BOOL)
        return *a;
    if (a->kind == GR_CEL_STRING) {
        static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True", NULL};
        static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False", NULL};
        size_t l;
        const char *s = cel_sv(a, &l);
        for (int i = 0; t[i]; i++) {
            if (strlen(t[i]) == l && memcmp(s, t[i], l) == 0)
                return mk_bool(true);
            if (strlen(f[i]) == l && memcmp(s, f[i], l) == 0)
                return mk_bool(false);
        }
        return cel_err(GR_EINVAL, n->off, "Type conversion error: cannot convert string to bool");
    }
    return no_overload(n, a, 1);
}

/* ---- time accessors ---- */

static gr_cel_val time_get(const cel_node *n, const gr_cel_val *a, size_t na)
{
    int fn = n->fn;
    if (a[0].kind == GR_CEL_DURATION && na == 1) {
        int64_t d = a[0].u.dur_ns;
        switch (fn) {
        case F_GETHOURS:
            return gr_cel_val_int(d / 3600000000000LL);
        case F_GETMINUTES:
            return gr_cel_val_int(d / 60000000000LL);
        case F_GETSECONDS:
            return gr_cel_val_int(d / 1000000000LL);
        case F_GETMILLISECONDS:
            return gr_cel_val_int((d % 1000000000LL) / 1000000LL);
        default:
            return no_overload(n, a, na);
        }
    }
    if (a[0].kind != GR_CEL_TIMESTAMP || (na == 2 && a[1].kind != GR_CEL_STRING))
        return no_overload(n, a, na);
    int64_t sec = a[0].u.ts.sec, off = 0;
    if (na == 2) {
        size_t tl;
        const char *tz = cel_sv(&a[1], &tl);
        int trc = cel_tz_offset(tz, tl, sec, &off);
        if (trc == GR_ENOMEM)
            return cel_err(GR_ENOMEM, n->off, "out of memory");
        if (trc != GR_OK)
            return cel_err(GR_EINVAL, n->off, "unknown time zone '%.*s'", (int)(tl > 64 ? 64 : tl),
                           tz);
    }
    int64_t t = sec + off;
    int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
    int64_t secs = t - days * 86400;
    int64_t y;
    unsigned m, d;
    cel_civil_from_days(days, &y, &m, &d);
    switch (fn) {
    case F_GETFULLYEAR:
        return gr_cel_val_int(y);
    case F_GETMONTH:
        return gr_cel_val_int((int64_t)m - 1);
    case F_GETDAYOFYEAR: {
        static const int cum[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        int64_t doy = cum[m - 1] + (int64_t)d - 1 + (leap && m > 2 ? 1 : 0);
        return gr_cel_val_int(doy);
    }
    case F_GETDAYOFMONTH:
        return gr_cel_val_int((int64_t)d - 1);
    case F_GETDATE:
        return gr_cel_val_int((int64_t)d);
    case F_GETDAYOFWEEK: {
        int64_t w = (days + 4) % 7; /* 1970-01-01 was a Thursday */
        return gr_cel_val_int(w < 0 ? w + 7 : w);
    }
    case F_GETHOURS:
        return gr_cel_val_int(secs / 3600);
    case F_GETMINUTES:
        return gr_cel_val_int((secs / 60) % 60);
    case F_GETSECONDS:
        return gr_cel_val_int(secs % 60);
    default:
        return gr_cel_val_int(a[0].u.ts.nsec / 1000000);
    }
}

/* ---- function dispatch ---- */

static inline __attribute__((always_inline)) gr_cel_val call_fn(ectx *c, const cel_node *n,
                                                                gr_cel_val *a, size_t na)
{
    switch (n->fn) {
    case F_ADD:
    case F_SUB:
    case F_MUL:
    case F_DIV:
    case F_MOD:
        return arith(c, n, &a[0], &a[1]);
    case F_NEG:
        if (a[0].kind == GR_CEL_INT) {
            if (a[0].u.i == INT64_MIN)
                return overflow(n, "int");
            return gr_cel_val_int(-a[0].u.i);
        }
        if (a[0].kind == GR_CEL_DOUBLE)
            return gr_cel_val_double(-a[0].u.d);
        if (a[0].kind == GR_CEL_DURATION && a[0].u.dur_ns != INT64_MIN)
            return gr_cel_val_duration(-a[0].u.dur_ns);
        return no_overload(n, a, 1);
    case F_NOT:
        if (a[0].kind == GR_CEL_BOOL)
            return mk_bool(!a[0].u.b);
        return no_overload(n, a, 1);
    case F_EQ:
        return mk_bool(cel_equal(&a[0], &a[1]));
    case F_NE:
        return mk_bool(!cel_equal(&a[0], &a[1]));
    case F_LT:
    case F_LE:
    case F_GT:
    case F_GE: {
        int r = cel_compare(&a[0], &a[1]);
        if (r == -2)
            return no_overload(n, a, 2);
        if (r == 2)
            return mk_bool(false);
        switch (n->fn) {
        case F_LT:
            return mk_bool(r < 0);
        case F_LE:
            return mk_bool(r <= 0);
        case F_GT:
            return mk_bool(r > 0);
        default:
            return mk_bool(r >= 0);
        }
    }
    case F_IN:
        if (a[1].kind == GR_CEL_LIST) {
            size_t len = cel_list_len(&a[1]);
            for (size_t i = 0; i < len; i++) {
                gr_cel_val e = cel_list_at(&a[1], i);
                int eq = cel_equal(&a[0], &e);
                gr_cel_val_release(&e);
                if (eq)
                    return mk_bool(true);
                if (charge(c, 1))
                    return cost_err(c, n);
            }
            return mk_bool(false);
        }
        if (a[1].kind == GR_CEL_MAP) {
            /* @in(A, map(A, B)): A must be a key type (numbers look up
             * across int/uint/double); `null in m`, `[1] in m` have no
             * overload, as in cel-es and the checked cel-go. */
            int k = a[0].kind;
            if (k != GR_CEL_BOOL && k != GR_CEL_INT && k != GR_CEL_UINT && k != GR_CEL_DOUBLE &&
                k != GR_CEL_STRING)
                return no_overload(n, a, 2);
            gr_cel_val r;
            if (charge(c, cel_map_len(&a[1]) / 8))
                return cost_err(c, n);
            int f = cel_map_find(&a[1], &a[0], &r);
            if (f)
                gr_cel_val_release(&r);
            return mk_bool(f);
        }
        return no_overload(n, a, 2);
    case F_SIZE:
        switch (a[0].kind) {
        case GR_CEL_STRING: {
            size_t l;
            const char *s = cel_sv(&a[0], &l);
            if (charge_bytes(c, l))
                return cost_err(c, n);
            return gr_cel_val_int((int64_t)cel_utf8_count(s, l));
        }
        case GR_CEL_BYTES: {
            size_t l;
            cel_sv(&a[0], &l);
            return gr_cel_val_int((int64_t)l);
        }
        case GR_CEL_LIST:
            return gr_cel_val_int((int64_t)cel_list_len(&a[0]));
        case GR_CEL_MAP:
            return gr_cel_val_int((int64_t)cel_map_len(&a[0]));
        default:
            return no_overload(n, a, 1);
        }
    case F_CONTAINS:
    case F_STARTSWITH:
    case F_ENDSWITH: {
        if (a[0].kind != GR_CEL_STRING || a[1].kind != GR_CEL_STRING)
            return no_overload(n, a, 2);
        size_t sl, tl;
        const char *s = cel_sv(&a[0], &sl), *t = cel_sv(&a[1], &tl);
        if (charge_bytes(c, sl))
            return cost_err(c, n);
        if (n->fn == F_CONTAINS)
            return mk_bool(find_bytes(s, sl, t, tl) != NULL);
        if (tl > sl)
            return mk_bool(false);
        if (n->fn == F_STARTSWITH)
            return mk_bool(memcmp(s, t, tl) == 0);
        return mk_bool(memcmp(s + sl - tl, t, tl) == 0);
    }
    case F_MATCHES:
        if (a[0].kind != GR_CEL_STRING || a[1].kind != GR_CEL_STRING)
            return no_overload(n, a, 2);
        return re_match(c, n, n->re, &a[0], &a[1]);
    case F_INT:
    case F_UINT:
    case F_DOUBLE:
        return conv_num(n, &a[0]);
    case F_STRING:
        return cel_conv_string(n, &a[0]);
    case F_BYTES:
        if (a[0].kind == GR_CEL_BYTES)
            return cel_ref(&a[0]);
        if (a[0].kind == GR_CEL_STRING) {
            size_t l;
            const char *s = cel_sv(&a[0], &l);
            return mk_str(n, GR_CEL_BYTES, s, l);
        }
        return no_overload(n, a, 1);
    case F_BOOL:
        return conv_bool(n, &a[0]);
    case F_DYN:
        return cel_ref(&a[0]);
    case F_TYPE:
        if (a[0].kind == GR_CEL_OBJECT)
            return cel_err(GR_EINVAL, n->off, "type() of message %s is not supported",
                           gr_cel_val_type_name(&a[0]));
        return cel_type_val(a[0].kind);
    case F_DURATION:
        if (a[0].kind == GR_CEL_DURATION)
            return a[0];
        if (a[0].kind == GR_CEL_STRING) {
            size_t l;
            const char *s = cel_sv(&a[0], &l);
            int64_t ns;
            if (gr_duration_parse_n(s, l, &ns, NULL) != GR_OK)
                return cel_err(GR_EINVAL, n->off, "invalid duration \"%.64s\"", s);
            return gr_cel_val_duration(ns);
        }
        return no_overload(n, a, 1);
    case F_TIMESTAMP:
        if (a[0].kind == GR_CEL_TIMESTAMP)
            return a[0];
        if (a[0].kind == GR_CEL_INT)
            return ts_make(n, a[0].u.i, 0);
        if (a[0].kind == GR_CEL_STRING) {
            size_t l;
            const char *s = cel_sv(&a[0], &l);
            int64_t sec;
            int32_t nsec;
            if (cel_timestamp_parse(s, l, &sec, &nsec) != GR_OK)
                return cel_err(GR_EINVAL, n->off, "invalid timestamp \"%.64s\"", s);
            return ts_make(n, sec, nsec);
        }
        return no_overload(n, a, 1);
    case F_GETFULLYEAR:
    case F_GETMONTH:
    case F_GETDAYOFYEAR:
    case F_GETDAYOFMONTH:
    case F_GETDATE:
    case F_GETDAYOFWEEK:
    case F_GETHOURS:
    case F_GETMINUTES:
    case F_GETSECONDS:
    case F_GETMILLISECONDS:
        return time_get(n, a, na);
    default:
        break;
    }
    if (n->fn >= F_LIB_FIRST_)
        return cel_lib_call(c, n, a, na);
    /* Kubernetes string extensions: receiver is a string (join: a list). */
    if (n->fn == F_JOIN)
        return list_join(c, n, a, na);
    /* Kubernetes list library: indexOf/lastIndexOf on lists. */
    if ((n->fn == F_INDEXOF || n->fn == F_LASTINDEXOF) && a[0].kind == GR_CEL_LIST)
        return cel_lib_call(c, n, a, na);
    if (a[0].kind != GR_CEL_STRING)
        return no_overload(n, a, na);
    size_t sl;
    const char *s = cel_sv(&a[0], &sl);
    if (charge_bytes(c, sl))
        return cost_err(c, n);
    switch (n->fn) {
    case F_CHARAT: {
        if (a[1].kind != GR_CEL_INT)
            return no_overload(n, a, na);
        size_t count = cel_utf8_count(s, sl);
        if (a[1].u.i < 0 || (uint64_t)a[1].u.i > count)
            return cel_err(GR_EINVAL, n->off, "index out of range: %" PRId64, a[1].u.i);
        size_t b = cp_to_byte(s, sl, (size_t)a[1].u.i);
        size_t e = cp_to_byte(s, sl, (size_t)a[1].u.i + ((uint64_t)a[1].u.i < count ? 1 : 0));
        return mk_str(n, GR_CEL_STRING, s + b, e - b);
    }
    case F_INDEXOF:
        return str_index_of(c, n, a, na, false);
    case F_LASTINDEXOF:
        return str_index_of(c, n, a, na, true);
    case F_LOWERASCII:
    case F_UPPERASCII: {
        char *d;
        gr_cel_val r = cel_str_alloc(GR_CEL_STRING, sl, &d);
        if (cel_is_err(&r))
            return r;
        for (size_t i = 0; i < sl; i++) {
            char ch = s[i];
            if (n->fn == F_LOWERASCII && ch >= 'A' && ch <= 'Z')
                ch = (char)(ch - 'A' + 'a');
            else if (n->fn == F_UPPERASCII && ch >= 'a' && ch <= 'z')
                ch = (char)(ch - 'a' + 'A');
            d[i] = ch;
        }
        return r;
    }
    case F_REPLACE:
        return str_replace(c, n, a, na);
    case F_SPLIT:
        return str_split(c, n, a, na);
    case F_SUBSTRING: {
        if (a[1].kind != GR_CEL_INT || (na == 3 && a[2].kind != GR_CEL_INT))
            return no_overload(n, a, na);
        size_t count = cel_utf8_count(s, sl);
        int64_t st = a[1].u.i, en = na == 3 ? a[2].u.i : (int64_t)count;
        if (st < 0 || (uint64_t)st > count)
            return cel_err(GR_EINVAL, n->off, "index out of range: %" PRId64, st);
        if (en < 0 || (uint64_t)en > count)
            return cel_err(GR_EINVAL, n->off, "index out of range: %" PRId64, en);
        if (st > en)
            return cel_err(GR_EINVAL, n->off,
                           "invalid substring range. start: %" PRId64 ", end: %" PRId64, st, en);
        size_t b = cp_to_byte(s, sl, (size_t)st), e = cp_to_byte(s, sl, (size_t)en);
        return mk_str(n, GR_CEL_STRING, s + b, e - b);
    }
    case F_TRIM: {
        size_t b = 0, e = sl;
        while (b < e) {
            uint32_t cp;
            size_t k = cel_utf8_decode(s + b, e - b, &cp);
            if (!is_unicode_space(cp))
                break;
            b += k;
        }
        while (e > b) {
            size_t st = e - 1;
            while (st > b && ((unsigned char)s[st] & 0xC0) == 0x80)
                st--;
            uint32_t cp;
            cel_utf8_decode(s + st, e - st, &cp);
            if (!is_unicode_space(cp))
                break;
            e = st;
        }
        return mk_str(n, GR_CEL_STRING, s + b, e - b);
    }
    default:
        return no_overload(n, a, na);
    }
}

/* ---- comprehensions ---- */

static gr_cel_val eval_comp(ectx *c, const cel_node *n)
{
    gr_cel_val range = eval(c, n->args[0]);
    if (cel_is_err(&range))
        return range;
    if (range.kind != GR_CEL_LIST && range.kind != GR_CEL_MAP) {
        gr_cel_val r = cel_err(GR_EINVAL, n->off, "no such overload: comprehension over '%s'",
                               gr_cel_val_type_name(&range));
        gr_cel_val_release(&range);
        return r;
    }
    gr_cel_val *slot = &c->locals[n->slot];
    gr_cel_val pending = {0}; /* first error for all/exists */
    gr_cel_val result = {0};
    bool have_result = false;
    int64_t count = 0;
    gr_cel_val *out = NULL;
    size_t nout = 0, capout = 0;
    cel_iter it;
    cel_iter_init(&it, &range);
    gr_cel_val elem;
    while (!have_result && cel_iter_next(&it, &elem)) {
        gr_cel_val_release(slot);
        *slot = elem;
        if (cel_is_err(&elem)) {
            result = cel_ref(&elem);
            have_result = true;
            break;
        }
        if (charge(c, 1)) {
            result = cost_err(c, n);
            have_result = true;
            break;
        }
        gr_cel_val r = eval(c, n->args[1]);
        switch (n->fn) {
        case CM_ALL:
        case CM_EXISTS: {
            bool stop_on = n->fn == CM_EXISTS; /* exists stops on true, all on false */
            if (r.kind == GR_CEL_BOOL) {
                if ((bool)r.u.b == stop_on) {
                    result = mk_bool(stop_on);
                    have_result = true;
                }
            } else if (pending.kind == GR_CEL_UNSET) {
                pending = cel_is_err(&r) ? cel_ref(&r) : no_overload(n, &r, 1);
            }
            break;
        }
        case CM_EXISTS_ONE:
            if (r.kind == GR_CEL_BOOL) {
                count += r.u.b ? 1 : 0;
            } else {
                result = cel_is_err(&r) ? cel_ref(&r) : no_overload(n, &r, 1);
                have_result = true;
            }
            break;
        case CM_MAP:
        case CM_FILTER: {
            bool keep = true;
            gr_cel_val item = {0};
            if (n->fn == CM_FILTER || n->nargs == 3) {
                if (r.kind != GR_CEL_BOOL) {
                    result = cel_is_err(&r) ? cel_ref(&r) : no_overload(n, &r, 1);
                    have_result = true;
                    break;
                }
                keep = r.u.b;
            }
            if (!keep)
                break;
            if (n->fn == CM_FILTER) {
                item = cel_ref(slot);
            } else if (n->nargs == 3) {
                item = eval(c, n->args[2]);
            } else {
                item = cel_ref(&r);
            }
            if (cel_is_err(&item)) {
                result = item;
                have_result = true;
                break;
            }
            if (nout == capout) {
                size_t nc = capout ? capout * 2 : 8;
                gr_cel_val *no = realloc(out, nc * sizeof(*no));
                if (!no) {
                    gr_cel_val_release(&item);
                    result = cel_err(GR_ENOMEM, n->off, "out of memory");
                    have_result = true;
                    break;
                }
                out = no;
                capout = nc;
            }
            out[nout++] = item;
            break;
        }
        default:
            break;
        }
        gr_cel_val_release(&r);
    }
    gr_cel_val_release(slot);
    if (!have_result) {
        switch (n->fn) {
        case CM_ALL:
        case CM_EXISTS:
            if (pending.kind != GR_CEL_UNSET) {
                result = pending;
                memset(&pending, 0, sizeof(pending));
            } else {
                result = mk_bool(n->fn == CM_ALL);
            }
            break;
        case CM_EXISTS_ONE:
            result = mk_bool(count == 1);
            break;
        default: {
            gr_cel_val *items;
            result = cel_list_alloc(nout, &items);
            if (!cel_is_err(&result)) {
                if (nout)
                    memcpy(items, out, nout * sizeof(*items));
                nout = 0;
            }
            break;
        }
        }
    }
    for (size_t i = 0; i < nout; i++)
        gr_cel_val_release(&out[i]);
    free(out);
    gr_cel_val_release(&pending);
    gr_cel_val_release(&range);
    return result;
}

/* cel.bind and the two-variable comprehensions (cel-go ext). */
static gr_cel_val eval_comp2(ectx *c, const cel_node *n)
{
    if (n->fn == CM_BIND) {
        gr_cel_val *slot = &c->locals[n->slot];
        gr_cel_val init = eval(c, n->args[0]);
        if (cel_is_err(&init) && cel_err_of(&init) && cel_err_of(&init)->code == GR_ETOOBIG)
            return init;
        gr_cel_val saved = *slot;
        *slot = init; /* an error stays a value: it matters only if read */
        gr_cel_val r = eval(c, n->args[1]);
        gr_cel_val_release(slot);
        *slot = saved;
        return r;
    }
    if (n->fn == CM_OPTMAP || n->fn == CM_OPTFLATMAP) {
        gr_cel_val o = eval(c, n->args[0]), inner;
        if (cel_is_err(&o))
            return o;
        int st = cel_opt_get(&o, &inner);
        if (st <= 0) {
            gr_cel_val r = st == 0 ? cel_opt_none(n) : no_overload(n, &o, 1);
            gr_cel_val_release(&o);
            return r;
        }
        gr_cel_val_release(&o);
        gr_cel_val *slot = &c->locals[n->slot];
        gr_cel_val saved = *slot;
        *slot = inner;
        gr_cel_val r = eval(c, n->args[1]);
        gr_cel_val_release(slot);
        *slot = saved;
        if (n->fn == CM_OPTMAP && !cel_is_err(&r)) {
            gr_cel_val w = cel_opt_of(n, &r);
            gr_cel_val_release(&r);
            return w;
        }
        if (!cel_is_err(&r)) {
            int rs = cel_opt_get(&r, &inner);
            if (rs > 0)
                gr_cel_val_release(&inner);
            if (rs < 0) {
                gr_cel_val e = no_overload(n, &r, 1);
                gr_cel_val_release(&r);
                return e;
            }
        }
        return r;
    }
    gr_cel_val range = eval(c, n->args[0]);
    if (cel_is_err(&range))
        return range;
    if (range.kind != GR_CEL_LIST && range.kind != GR_CEL_MAP) {
        gr_cel_val r = cel_err(GR_EINVAL, n->off, "no such overload: comprehension over '%s'",
                               gr_cel_val_type_name(&range));
        gr_cel_val_release(&range);
        return r;
    }
    bool is_list = range.kind == GR_CEL_LIST;
    size_t len = is_list ? cel_list_len(&range) : cel_map_len(&range);
    gr_cel_val *s1 = &c->locals[n->slot], *s2 = &c->locals[n->slot2];
    gr_cel_val pending = {0}, result = {0};
    bool have = false;
    int64_t count = 0;
    gr_cel_val *ok = NULL, *ov = NULL; /* transform output: keys, values */
    size_t nout = 0;
    if (n->fn == CM_TLIST || n->fn == CM_TMAP || n->fn == CM_TMAPENTRY) {
        ok = calloc(len ? len : 1, sizeof(*ok));
        ov = calloc(len ? len : 1, sizeof(*ov));
        if (!ok || !ov) {
            free(ok);
            free(ov);
            gr_cel_val_release(&range);
            return cel_err(GR_ENOMEM, n->off, "out of memory");
        }
    }
    cel_iter it;
    cel_iter_init(&it, &range);
    gr_cel_val key;
    for (size_t i = 0; !have && cel_iter_next(&it, &key); i++) {
        gr_cel_val_release(s1);
        gr_cel_val_release(s2);
        if (is_list) {
            *s1 = gr_cel_val_int((int64_t)i);
            *s2 = key;
        } else {
            *s1 = key;
            if (!cel_map_find(&range, &key, s2))
                *s2 = cel_err(GR_EINVAL, n->off, "map iteration lost a key");
        }
        if (cel_is_err(s2) || cel_is_err(s1)) {
            result = cel_ref(cel_is_err(s1) ? s1 : s2);
            have = true;
            break;
        }
        if (charge(c, 1)) {
            result = cost_err(c, n);
            have = true;
            break;
        }
        gr_cel_val r = eval(c, n->args[1]);
        switch (n->fn) {
        case CM_ALL2:
        case CM_EXISTS2: {
            bool stop_on = n->fn == CM_EXISTS2;
            if (r.kind == GR_CEL_BOOL) {
                if ((bool)r.u.b == stop_on) {
                    result = mk_bool(stop_on);
                    have = true;
                }
            } else if (cel_is_err(&r) && cel_err_of(&r) && cel_err_of(&r)->code == GR_ETOOBIG) {
                result = cel_ref(&r);
                have = true;
            } else if (pending.kind == GR_CEL_UNSET) {
                pending = cel_is_err(&r) ? cel_ref(&r) : no_overload(n, &r, 1);
            }
            break;
        }
        case CM_EXISTS_ONE2:
            if (r.kind == GR_CEL_BOOL) {
                count += r.u.b ? 1 : 0;
            } else {
                result = cel_is_err(&r) ? cel_ref(&r) : no_overload(n, &r, 1);
                have = true;
            }
            break;
        default: { /* transformList / transformMap */
            gr_cel_val item = {0};
            if (n->nargs == 3) {
                if (r.kind != GR_CEL_BOOL) {
                    result = cel_is_err(&r) ? cel_ref(&r) : no_overload(n, &r, 1);
                    have = true;
                    break;
                }
                if (!r.u.b)
                    break;
                item = eval(c, n->args[2]);
            } else {
                item = cel_ref(&r);
            }
            if (cel_is_err(&item)) {
                result = item;
                have = true;
                break;
            }
            if (n->fn == CM_TMAPENTRY) {
                /* the transform yields a one-entry map {key: value}; keys
                 * must not repeat */
                gr_cel_val ek = {0}, ev = {0};
                bool bad = item.kind != GR_CEL_MAP || cel_map_len(&item) != 1;
                if (!bad) {
                    cel_iter eit;
                    cel_iter_init(&eit, &item);
                    bad = !cel_iter_next(&eit, &ek) || !cel_map_find(&item, &ek, &ev);
                }
                for (size_t j = 0; !bad && j < nout; j++)
                    if (cel_equal(&ok[j], &ek)) {
                        gr_buf kb = GR_BUF_INIT(200);
                        gr_cel_val_format(&ek, &kb);
                        result = cel_err(GR_EINVAL, n->off, "insert failed: key %s already exists",
                                         gr_buf_cstr(&kb));
                        gr_buf_free(&kb);
                        have = true;
                        break;
                    }
                if (bad && !have) {
                    result = cel_err(GR_EINVAL, n->off,
                                     "transformMapEntry: the transform must yield a map of one "
                                     "entry, got %s",
                                     gr_cel_val_type_name(&item));
                    have = true;
                }
                gr_cel_val_release(&item);
                if (have) {
                    gr_cel_val_release(&ek);
                    gr_cel_val_release(&ev);
                    break;
                }
                ok[nout] = ek;
                ov[nout++] = ev;
                break;
            }
            ok[nout] = cel_ref(s1);
            ov[nout++] = item;
            break;
        }
        }
        gr_cel_val_release(&r);
    }
    gr_cel_val_release(s1);
    gr_cel_val_release(s2);
    if (!have) {
        switch (n->fn) {
        case CM_ALL2:
        case CM_EXISTS2:
            if (pending.kind != GR_CEL_UNSET) {
                result = pending;
                memset(&pending, 0, sizeof(pending));
            } else {
                result = mk_bool(n->fn == CM_ALL2);
            }
            break;
        case CM_EXISTS_ONE2:
            result = mk_bool(count == 1);
            break;
        case CM_TLIST: {
            gr_cel_val *items;
            result = cel_list_alloc(nout, &items);
            if (!cel_is_err(&result)) {
                if (nout)
                    memcpy(items, ov, nout * sizeof(*items));
                for (size_t i = 0; i < nout; i++)
                    gr_cel_val_release(&ok[i]);
                nout = 0;
            }
            break;
        }
        default: {
            gr_cel_val *keys, *vals;
            result = cel_map_alloc(nout, &keys, &vals);
            if (!cel_is_err(&result)) {
                if (nout) {
                    memcpy(keys, ok, nout * sizeof(*keys));
                    memcpy(vals, ov, nout * sizeof(*vals));
                }
                nout = 0;
            }
            break;
        }
        }
    }
    for (size_t i = 0; i < nout; i++) {
        gr_cel_val_release(&ok[i]);
        gr_cel_val_release(&ov[i]);
    }
    free(ok);
    free(ov);
    gr_cel_val_release(&pending);
    gr_cel_val_release(&range);
    return result;
}

/* ---- message construction ---- */

static gr_cel_val wkt_field_err(const cel_node *n, const char *field)
{
    return cel_err(GR_EINVAL, n->off, "no such field '%s' in %s", field, n->name);
}

/* A google.protobuf well-known type built with message syntax becomes the
 * CEL value it stands for. vals[i] belongs to field names[i]. */
static gr_cel_val eval_wkt(const cel_node *n, const char *const *names, gr_cel_val *vals, size_t nf)
{
    int w = n->fn;
    if (w == WKT_ANY)
        return cel_err(GR_EUNSUPPORTED, n->off, "google.protobuf.Any is not supported");
    if (w == WKT_DURATION || w == WKT_TIMESTAMP) {
        int64_t sec = 0, nanos = 0;
        for (size_t i = 0; i < nf; i++) {
            bool s = strcmp(names[i], "seconds") == 0;
            if (!s && strcmp(names[i], "nanos") != 0)
                return wkt_field_err(n, names[i]);
            if (vals[i].kind != GR_CEL_INT)
                return no_overload(n, &vals[i], 1);
            if (s)
                sec = vals[i].u.i;
            else
                nanos = vals[i].u.i;
        }
        if (w == WKT_TIMESTAMP)
            return ts_make(n, sec, nanos);
        int64_t ns;
        if (__builtin_mul_overflow(sec, (int64_t)1000000000, &ns) ||
            __builtin_add_overflow(ns, nanos, &ns))
            return overflow(n, "duration");
        return gr_cel_val_duration(ns);
    }
    if (w == WKT_VALUE) {
        static const struct {
            const char *f;
            int kind;
        } vf[] = {{"null_value", GR_CEL_NULL},     {"number_value", GR_CEL_DOUBLE},
                  {"string_value", GR_CEL_STRING}, {"bool_value", GR_CEL_BOOL},
                  {"struct_value", GR_CEL_MAP},    {"list_value", GR_CEL_LIST}};
        if (nf == 0)
            return gr_cel_val_null();
        if (nf > 1)
            return cel_err(GR_EINVAL, n->off, "google.protobuf.Value sets more than one kind");
        for (size_t k = 0; k < sizeof(vf) / sizeof(vf[0]); k++) {
            if (strcmp(names[0], vf[k].f) != 0)
                continue;
            if (vf[k].kind == GR_CEL_NULL)
                return gr_cel_val_null();
            if (vf[k].kind == GR_CEL_DOUBLE && vals[0].kind == GR_CEL_INT)
                return gr_cel_val_double((double)vals[0].u.i);
            if (vals[0].kind != vf[k].kind)
                return no_overload(n, &vals[0], 1);
            return cel_ref(&vals[0]);
        }
        return wkt_field_err(n, names[0]);
    }
    const char *want = w == WKT_STRUCT ? "fields" : w == WKT_LIST ? "values" : "value";
    if (nf > 1 || (nf == 1 && strcmp(names[0], want) != 0))
        return wkt_field_err(n, names[nf > 1 ? 1 : 0]);
    gr_cel_val *items;
    if (nf == 0) {
        switch (w) {
        case WKT_BOOL:
            return mk_bool(false);
        case WKT_BYTES:
            return mk_str(n, GR_CEL_BYTES, "", 0);
        case WKT_DOUBLE:
        case WKT_FLOAT:
            return gr_cel_val_double(0);
        case WKT_INT32:
        case WKT_INT64:
            return gr_cel_val_int(0);
        case WKT_STRING:
            return mk_str(n, GR_CEL_STRING, "", 0);
        case WKT_UINT32:
        case WKT_UINT64:
            return gr_cel_val_uint(0);
        case WKT_STRUCT:
            return cel_map_alloc(0, &items, &items);
        default:
            return cel_list_alloc(0, &items);
        }
    }
    const gr_cel_val *v = &vals[0];
    static const int kinds[] = {
        [WKT_BOOL] = GR_CEL_BOOL,     [WKT_BYTES] = GR_CEL_BYTES, [WKT_DOUBLE] = GR_CEL_DOUBLE,
        [WKT_FLOAT] = GR_CEL_DOUBLE,  [WKT_INT32] = GR_CEL_INT,   [WKT_INT64] = GR_CEL_INT,
        [WKT_STRING] = GR_CEL_STRING, [WKT_UINT32] = GR_CEL_UINT, [WKT_UINT64] = GR_CEL_UINT,
        [WKT_STRUCT] = GR_CEL_MAP,    [WKT_LIST] = GR_CEL_LIST};
    if (v->kind != kinds[w])
        return no_overload(n, v, 1);
    if (w == WKT_INT32 && (v->u.i < INT32_MIN || v->u.i > INT32_MAX))
        return cel_err(GR_EINVAL, n->off, "range error: %" PRId64 " does not fit int32", v->u.i);
    if (w == WKT_UINT32 && v->u.u > UINT32_MAX)
        return cel_err(GR_EINVAL, n->off, "range error: %" PRIu64 " does not fit uint32", v->u.u);
    if (w == WKT_FLOAT)
        return gr_cel_val_double((double)(float)v->u.d);
    if (w == WKT_STRUCT) {
        cel_iter it;
        gr_cel_val k;
        cel_iter_init(&it, v);
        while (cel_iter_next(&it, &k)) {
            bool ok = k.kind == GR_CEL_STRING;
            gr_cel_val_release(&k);
            if (!ok)
                return cel_err(GR_EINVAL, n->off, "google.protobuf.Struct keys must be strings");
        }
    }
    return cel_ref(v);
}

static gr_cel_val eval_struct(ectx *c, const cel_node *n)
{
    size_t nf = n->nargs / 2;
    if (charge(c, nf))
        return cost_err(c, n);
    gr_cel_val *keys, *vals;
    gr_cel_val r = cel_map_alloc(nf, &keys, &vals);
    if (cel_is_err(&r))
        return r;
    size_t kept = 0;
    for (size_t i = 0; i < nf; i++) {
        keys[kept] = cel_ref(&n->args[2 * i]->cval);
        vals[kept] = eval(c, n->args[2 * i + 1]);
        if (!cel_is_err(&vals[kept]) && (n->args[2 * i]->flags & NF_OPT_ENTRY)) {
            gr_cel_val inner;
            int st = cel_opt_get(&vals[kept], &inner);
            gr_cel_val_release(&vals[kept]);
            if (st < 0) {
                vals[kept] = cel_err(GR_EINVAL, n->args[2 * i + 1]->off,
                                     "optional field must be an optional value");
            } else if (st == 0) {
                gr_cel_val_release(&keys[kept]);
                continue;
            } else {
                vals[kept] = inner;
            }
        }
        if (cel_is_err(&vals[kept])) {
            gr_cel_val e = vals[kept];
            memset(&vals[kept], 0, sizeof(vals[kept]));
            ((cel_map *)r.u.p)->n = kept + 1;
            gr_cel_val_release(&r);
            return e;
        }
        kept++;
    }
    ((cel_map *)r.u.p)->n = kept;
    nf = kept;
    if (n->fn != WKT_NONE) {
        const char *names[64];
        gr_cel_val out;
        if (nf > 64) {
            out = cel_err(GR_EINVAL, n->off, "too many fields for %s", n->name);
        } else {
            for (size_t i = 0; i < nf; i++)
                names[i] = cel_sv(&keys[i], &(size_t){0});
            out = eval_wkt(n, names, vals, nf);
        }
        gr_cel_val_release(&r);
        return out;
    }
    cel_map *m = r.u.p;
    m->tname = strdup(n->name);
    if (!m->tname) {
        gr_cel_val_release(&r);
        return cel_err(GR_ENOMEM, n->off, "out of memory");
    }
    r.kind = GR_CEL_OBJECT;
    return r;
}

/* Selection when the operand is an object (maybe an optional) or the
 * selection is a.?b: optional.none() for an absent field. Takes o. */
__attribute__((noinline)) static gr_cel_val eval_opt_select(const cel_node *n, gr_cel_val o)
{
    gr_cel_val inner;
    int st = o.kind == GR_CEL_OBJECT ? cel_opt_get(&o, &inner) : -1;
    if (st < 0 && !(n->flags & NF_OPTIONAL)) {
        gr_cel_val r = select_field2(n, &o, (n->flags & NF_TEST_ONLY) != 0);
        gr_cel_val_release(&o);
        return r;
    }
    /* a.?b, or any selection on an optional: optional.none() when the
     * field is absent (has(): false) */
    if (st >= 0) {
        gr_cel_val_release(&o);
        if (st == 0)
            return (n->flags & NF_TEST_ONLY) ? mk_bool(false) : cel_opt_none(n);
        o = inner;
    }
    gr_cel_val r;
    if (n->flags & NF_TEST_ONLY) {
        r = select_field2(n, &o, true);
    } else if (o.kind != GR_CEL_MAP && o.kind != GR_CEL_OBJECT) {
        r = cel_err(GR_EINVAL, n->off, "no such key: '%s' (type '%s' has no fields)", n->name,
                    gr_cel_val_type_name(&o));
    } else {
        gr_cel_val has = select_field2(n, &o, true);
        if (has.kind == GR_CEL_BOOL && has.u.b) {
            gr_cel_val v = select_field2(n, &o, false);
            r = cel_is_err(&v) ? v : cel_opt_of(n, &v);
            if (!cel_is_err(&v))
                gr_cel_val_release(&v);
        } else {
            r = cel_is_err(&has) ? has : cel_opt_none(n);
        }
    }
    gr_cel_val_release(&o);
    return r;
}

/* Indexing when the operand is an object (maybe an optional) or the index
 * is a[?k]. Takes o and k. */
__attribute__((noinline)) static gr_cel_val eval_opt_index(const cel_node *n, gr_cel_val o,
                                                           gr_cel_val k)
{
    gr_cel_val inner, r;
    int st = o.kind == GR_CEL_OBJECT ? cel_opt_get(&o, &inner) : -1;
    if (st < 0 && !(n->flags & NF_OPTIONAL)) {
        r = index_val(n, &o, &k);
    } else if (st == 0) {
        r = cel_opt_none(n);
    } else {
        if (st > 0) {
            gr_cel_val_release(&o);
            o = inner;
        }
        /* a[?k]: optional.none() for an absent key or index */
        bool present = false;
        if (o.kind == GR_CEL_MAP) {
            gr_cel_val t;
            present = cel_map_find(&o, &k, &t);
            if (present)
                gr_cel_val_release(&t);
        } else if (o.kind == GR_CEL_LIST) {
            int64_t ix;
            present = as_index(&k, &ix) && ix >= 0 && (uint64_t)ix < cel_list_len(&o);
        }
        if (!present && o.kind != GR_CEL_MAP && o.kind != GR_CEL_LIST) {
            r = index_val(n, &o, &k);
        } else if (!present) {
            r = cel_opt_none(n);
        } else {
            gr_cel_val v = index_val(n, &o, &k);
            r = cel_is_err(&v) ? v : cel_opt_of(n, &v);
            if (!cel_is_err(&v))
                gr_cel_val_release(&v);
        }
    }
    gr_cel_val_release(&o);
    gr_cel_val_release(&k);
    return r;
}

/* ---- the evaluator ---- */

static gr_cel_val eval_logic(ectx *c, const cel_node *n)
{
    bool is_and = n->op == N_AND;
    gr_cel_val a = eval(c, n->args[0]);
    if (a.kind == GR_CEL_BOOL && (bool)a.u.b != is_and)
        return a; /* false && _ / true || _ */
    gr_cel_val b = eval(c, n->args[1]);
    if (b.kind == GR_CEL_BOOL && (bool)b.u.b != is_and) {
        gr_cel_val_release(&a);
        return b;
    }
    if (a.kind == GR_CEL_BOOL && b.kind == GR_CEL_BOOL)
        return a; /* both the identity element */
    /* at least one is an error or a non-bool: the first such wins */
    gr_cel_val *bad = a.kind != GR_CEL_BOOL ? &a : &b;
    gr_cel_val r = cel_is_err(bad) ? cel_ref(bad) : no_overload(n, bad, 1);
    gr_cel_val_release(&a);
    gr_cel_val_release(&b);
    return r;
}

static gr_cel_val eval(ectx *c, const cel_node *n)
{
    if (charge(c, 1))
        return cost_err(c, n);
    switch (n->op) {
    case N_CONST:
        return cel_ref(&n->cval);
    case N_VAR: {
        const gr_cel_val *v = &c->vars[n->slot];
        if (v->kind == GR_CEL_UNSET)
            return cel_err(GR_EINVAL, n->off, "no value bound for variable '%s'",
                           c->prog->decls[n->slot].name);
        return cel_ref(v);
    }
    case N_LOCAL:
        return cel_ref(&c->locals[n->slot]);
    case N_UNDECL:
        return cel_err(GR_EINVAL, n->off, "undeclared reference to '%s' (in container '')",
                       n->name);
    case N_SELECT: {
        gr_cel_val o = eval(c, n->args[0]);
        if (cel_is_err(&o))
            return o;
        if (__builtin_expect(o.kind == GR_CEL_OBJECT || (n->flags & NF_OPTIONAL), 0))
            return eval_opt_select(n, o);
        gr_cel_val r = select_field(c, n, &o);
        gr_cel_val_release(&o);
        return r;
    }
    case N_INDEX: {
        gr_cel_val o = eval(c, n->args[0]);
        if (cel_is_err(&o))
            return o;
        gr_cel_val k = eval(c, n->args[1]);
        if (cel_is_err(&k)) {
            gr_cel_val_release(&o);
            return k;
        }
        if (__builtin_expect(o.kind == GR_CEL_OBJECT || (n->flags & NF_OPTIONAL), 0))
            return eval_opt_index(n, o, k);
        gr_cel_val r = index_val(n, &o, &k);
        gr_cel_val_release(&o);
        gr_cel_val_release(&k);
        return r;
    }
    case N_CALL: {
        gr_cel_val abuf[4], *a = abuf;
        size_t na = n->nargs;
        if (n->fn == F_UNBOUND) {
            /* arguments are still evaluated so their errors surface first */
            for (size_t i = 0; i < na; i++) {
                gr_cel_val v = eval(c, n->args[i]);
                if (cel_is_err(&v))
                    return v;
                gr_cel_val_release(&v);
            }
            return cel_err(GR_EINVAL, n->off, "unbound function '%s'", n->name);
        }
        if (na > 4) { /* variadic math.greatest/least */
            a = malloc(na * sizeof(*a));
            if (!a)
                return cel_err(GR_ENOMEM, n->off, "out of memory");
        }
        gr_cel_val r = {0};
        size_t done = 0;
        for (; done < na; done++) {
            a[done] = eval(c, n->args[done]);
            if (cel_is_err(&a[done])) {
                r = a[done];
                break;
            }
        }
        if (done == na)
            r = call_fn(c, n, a, na);
        for (size_t i = 0; i < done; i++)
            gr_cel_val_release(&a[i]);
        if (a != abuf)
            free(a);
        return r;
    }
    case N_LIST: {
        gr_cel_val *items;
        if (charge(c, n->nargs))
            return cost_err(c, n);
        gr_cel_val r = cel_list_alloc(n->nargs, &items);
        if (cel_is_err(&r))
            return r;
        size_t k = 0;
        for (size_t i = 0; i < n->nargs; i++) {
            items[k] = eval(c, n->args[i]);
            if (!cel_is_err(&items[k]) && (n->args[i]->flags & NF_OPT_ENTRY)) {
                /* [?x]: x must be optional; none is left out */
                gr_cel_val inner;
                int st = cel_opt_get(&items[k], &inner);
                gr_cel_val_release(&items[k]);
                if (st < 0)
                    items[k] = cel_err(GR_EINVAL, n->args[i]->off,
                                       "optional list element must be an optional value");
                else if (st == 0)
                    continue;
                else
                    items[k] = inner;
            }
            if (cel_is_err(&items[k])) {
                gr_cel_val e = items[k];
                memset(&items[k], 0, sizeof(items[k]));
                gr_cel_val_release(&r);
                return e;
            }
            k++;
        }
        ((cel_list *)r.u.p)->n = k;
        return r;
    }
    case N_MAP: {
        size_t cnt = n->nargs / 2;
        gr_cel_val *keys, *vals;
        if (charge(c, n->nargs))
            return cost_err(c, n);
        gr_cel_val r = cel_map_alloc(cnt, &keys, &vals);
        if (cel_is_err(&r))
            return r;
        size_t kept = 0;
        for (size_t i = 0; i < cnt; i++) {
            gr_cel_val k = eval(c, n->args[2 * i]);
            gr_cel_val e = {0};
            if (cel_is_err(&k)) {
                e = k;
            } else if (k.kind != GR_CEL_BOOL && k.kind != GR_CEL_INT && k.kind != GR_CEL_UINT &&
                       k.kind != GR_CEL_STRING) {
                e = cel_err(GR_EINVAL, n->args[2 * i]->off, "unsupported key type '%s'",
                            gr_cel_val_type_name(&k));
                gr_cel_val_release(&k);
            } else {
                for (size_t j = 0; j < kept && e.kind == GR_CEL_UNSET; j++)
                    if (cel_equal(&keys[j], &k))
                        e = cel_err(GR_EINVAL, n->args[2 * i]->off,
                                    "Failed with repeated key in map literal");
                if (e.kind != GR_CEL_UNSET)
                    gr_cel_val_release(&k);
            }
            bool skip = false;
            if (e.kind == GR_CEL_UNSET) {
                keys[kept] = k;
                gr_cel_val v = eval(c, n->args[2 * i + 1]);
                if (!cel_is_err(&v) && (n->args[2 * i]->flags & NF_OPT_ENTRY)) {
                    /* {?k: v}: v must be optional; none leaves the entry out */
                    gr_cel_val inner;
                    int st = cel_opt_get(&v, &inner);
                    gr_cel_val_release(&v);
                    if (st < 0)
                        v = cel_err(GR_EINVAL, n->args[2 * i + 1]->off,
                                    "optional map entry must be an optional value");
                    else if (st == 0)
                        skip = true;
                    else
                        v = inner;
                }
                if (cel_is_err(&v))
                    e = v;
                else if (skip)
                    gr_cel_val_release(&keys[kept]);
                else
                    vals[kept++] = v;
            }
            if (e.kind != GR_CEL_UNSET) {
                ((cel_map *)r.u.p)->n = kept + 1; /* keys[kept] is set, vals[kept] unset */
                gr_cel_val_release(&r);
                return e;
            }
        }
        ((cel_map *)r.u.p)->n = kept;
        return r;
    }
    case N_AND:
    case N_OR:
        return eval_logic(c, n);
    case N_COND: {
        gr_cel_val cond = eval(c, n->args[0]);
        if (cel_is_err(&cond))
            return cond;
        if (cond.kind != GR_CEL_BOOL) {
            gr_cel_val r = cel_err(GR_EINVAL, n->off,
                                   "no matching overload for _?_:_ (condition is '%s', not bool)",
                                   gr_cel_val_type_name(&cond));
            gr_cel_val_release(&cond);
            return r;
        }
        return eval(c, n->args[cond.u.b ? 1 : 2]);
    }
    case N_COMP:
        if (n->fn >= CM_ALL2)
            return eval_comp2(c, n);
        return eval_comp(c, n);
    case N_STRUCT:
        return eval_struct(c, n);
    default:
        return cel_err(GR_EINVAL, n->off, "internal error: unresolved node");
    }
}

/* ---- public API ---- */

int gr_cel_compile(const char *expr, size_t len, const gr_cel_decl *decls, size_t ndecls,
                   const gr_cel_options *opts, gr_cel_program **out, gr_cel_pos *pos, gr_err *err)
{
    gr_cel_options o = {0};
    if (opts)
        o = *opts;
    if (!o.max_expr_len)
        o.max_expr_len = GR_CEL_DEFAULT_MAX_EXPR_LEN;
    if (!o.max_depth)
        o.max_depth = GR_CEL_DEFAULT_MAX_DEPTH;
    if (!o.max_cost)
        o.max_cost = GR_CEL_DEFAULT_MAX_COST;
    *out = NULL;
    if (!expr)
        return gr_err_set(err, GR_EINVAL, "no expression given");
    if (len > o.max_expr_len) {
        if (pos)
            cel_pos_of(expr, len, o.max_expr_len, pos);
        return gr_err_set(err, GR_ETOOBIG,
                          "expression is %zu bytes long; the limit is %zu (shorten it)", len,
                          o.max_expr_len);
    }
    for (size_t i = 0; i < ndecls; i++)
        if (!decls[i].name || !decls[i].name[0])
            return gr_err_set(err, GR_EINVAL, "declaration %zu has no name", i);
    gr_cel_program *p = calloc(1, sizeof(*p));
    if (!p)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    p->src = malloc(len + 1);
    p->decls = ndecls ? calloc(ndecls, sizeof(*p->decls)) : NULL;
    if (!p->src || (ndecls && !p->decls)) {
        gr_cel_program_free(p);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    memcpy(p->src, expr, len);
    p->src[len] = 0;
    p->len = len;
    p->max_cost = o.max_cost;
    for (size_t i = 0; i < ndecls; i++) {
        p->decls[i].type = decls[i].type;
        p->decls[i].name = strdup(decls[i].name);
        p->ndecls = i + 1;
        if (!p->decls[i].name) {
            gr_cel_program_free(p);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
    }
    int rc = cel_parse(p, &o, pos, err);
    if (rc != GR_OK) {
        gr_cel_program_free(p);
        return rc;
    }
    *out = p;
    return GR_OK;
}

void gr_cel_program_free(gr_cel_program *p)
{
    if (!p)
        return;
    cel_ast_free_all(p);
    for (size_t i = 0; i < p->ndecls; i++)
        free((char *)(uintptr_t)p->decls[i].name);
    free(p->decls);
    free(p->src);
    free(p);
}

int gr_cel_program_var(const gr_cel_program *p, const char *name)
{
    for (size_t i = 0; p && name && i < p->ndecls; i++)
        if (strcmp(p->decls[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* Check/convert a binding to the declared type. */
static int bind_var(const gr_cel_decl *d, const gr_cel_val *in, gr_cel_val *out, gr_err *err)
{
    int as = d->type;
    if (in->kind == GR_CEL_UNSET || as == GR_CEL_DYN || in->kind == as) {
        *out = cel_ref(in);
        return GR_OK;
    }
    if (as == GR_CEL_DOUBLE && in->kind == GR_CEL_INT) {
        *out = gr_cel_val_double((double)in->u.i);
        return GR_OK;
    }
    if (as == GR_CEL_DOUBLE && in->kind == GR_CEL_UINT) {
        *out = gr_cel_val_double((double)in->u.u);
        return GR_OK;
    }
    if (as == GR_CEL_INT && in->kind == GR_CEL_UINT && in->u.u <= INT64_MAX) {
        *out = gr_cel_val_int((int64_t)in->u.u);
        return GR_OK;
    }
    if (as == GR_CEL_UINT && in->kind == GR_CEL_INT && in->u.i >= 0) {
        *out = gr_cel_val_uint((uint64_t)in->u.i);
        return GR_OK;
    }
    if ((as == GR_CEL_INT || as == GR_CEL_UINT) && in->kind == GR_CEL_DOUBLE) {
        double x = in->u.d;
        if (x == trunc(x) && as == GR_CEL_INT && x >= -9223372036854775808.0 &&
            x < 9223372036854775808.0) {
            *out = gr_cel_val_int((int64_t)x);
            return GR_OK;
        }
        if (x == trunc(x) && as == GR_CEL_UINT && x >= 0 && x < 18446744073709551616.0) {
            *out = gr_cel_val_uint((uint64_t)x);
            return GR_OK;
        }
    }
    return gr_err_set(err, GR_EINVAL, "variable '%s' is declared %s but bound to a %s value",
                      d->name, gr_cel_kind_name(d->type), gr_cel_val_type_name(in));
}

static int run(const gr_cel_program *p, const gr_cel_val *vars, gr_cel_val *out, gr_cel_pos *pos,
               gr_err *err)
{
    gr_cel_val inl[CEL_LOCALS_INLINE];
    gr_cel_val *locals = inl;
    if (p->nlocals > CEL_LOCALS_INLINE) {
        locals = calloc((size_t)p->nlocals, sizeof(*locals));
        if (!locals)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
    } else {
        memset(inl, 0, sizeof(inl));
    }
    ectx c = {p, vars, locals, 0, p->max_cost, false};
    gr_cel_val r = eval(&c, p->root);
    for (int i = 0; i < p->nlocals; i++)
        gr_cel_val_release(&locals[i]);
    if (locals != inl)
        free(locals);
    if (c.over && !cel_is_err(&r)) {
        gr_cel_val_release(&r);
        r = cost_err(&c, p->root);
    }
    if (cel_is_err(&r)) {
        const cel_errv *e = cel_err_of(&r);
        gr_cel_pos ps;
        cel_pos_of(p->src, p->len, e ? e->offset : 0, &ps);
        if (pos)
            *pos = ps;
        int code = e ? e->code : GR_ENOMEM;
        if (c.over)
            code = GR_ETOOBIG;
        gr_err_set(err, code, "%u:%u: %s", ps.line, ps.column, e ? e->msg : "out of memory");
        gr_cel_val_release(&r);
        return code;
    }
    *out = r;
    return GR_OK;
}

int gr_cel_eval(const gr_cel_program *p, const gr_cel_val *vars, gr_cel_val *out, gr_cel_pos *pos,
                gr_err *err)
{
    if (!p || !out)
        return gr_err_set(err, GR_EINVAL, "no program or output");
    memset(out, 0, sizeof(*out));
    gr_cel_val inl[8];
    gr_cel_val *bound = inl;
    if (p->ndecls > 8) {
        bound = calloc(p->ndecls, sizeof(*bound));
        if (!bound)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    int rc = GR_OK;
    size_t nb = 0;
    for (; nb < p->ndecls && rc == GR_OK; nb++) {
        static const gr_cel_val unset;
        rc = bind_var(&p->decls[nb], vars ? &vars[nb] : &unset, &bound[nb], err);
    }
    if (rc == GR_OK)
        rc = run(p, bound, out, pos, err);
    else
        nb--;
    for (size_t i = 0; i < nb; i++)
        gr_cel_val_release(&bound[i]);
    if (bound != inl)
        free(bound);
    return rc;
}

int gr_cel_eval_json(const gr_cel_program *p, json_t *const *vars, gr_cel_val *out, gr_cel_pos *pos,
                     gr_err *err)
{
    if (!p || !out)
        return gr_err_set(err, GR_EINVAL, "no program or output");
    memset(out, 0, sizeof(*out));
    gr_cel_val inl[8];
    gr_cel_val *bound = inl;
    if (p->ndecls > 8) {
        bound = calloc(p->ndecls, sizeof(*bound));
        if (!bound)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
    } else {
        memset(inl, 0, sizeof(inl));
    }
    int rc = GR_OK;
    for (size_t i = 0; i < p->ndecls && rc == GR_OK; i++) {
        if (vars && vars[i]) {
            rc = gr_cel_val_from_json(vars[i], p->decls[i].type, &bound[i], err);
            if (rc != GR_OK)
                gr_err_prefix(err, "variable '%s': ", p->decls[i].name);
        }
    }
    if (rc == GR_OK)
        rc = run(p, bound, out, pos, err);
    for (size_t i = 0; i < p->ndecls; i++)
        gr_cel_val_release(&bound[i]);
    if (bound != inl)
        free(bound);
    return rc;
}

int gr_cel_eval_bool(const gr_cel_program *p, json_t *const *vars, int *out, gr_cel_pos *pos,
                     gr_err *err)
{
    gr_cel_val v;
    int rc = gr_cel_eval_json(p, vars, &v, pos, err);
    if (rc != GR_OK)
        return rc;
    if (v.kind != GR_CEL_BOOL) {
        rc = gr_err_set(err, GR_EINVAL, "expression must evaluate to bool, got %s",
                        gr_cel_val_type_name(&v));
        gr_cel_val_release(&v);
        return rc;
    }
    *out = v.u.b;
    return GR_OK;
}

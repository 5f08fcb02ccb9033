/*
 * gr_yaml.c — YAML → JSON with YAML 1.2 core-schema scalar rules.
 *
 * libfyaml is used only as an event parser (no document tree): the events are
 * folded into jansson values on an explicit stack, so we see every node with
 * its position, control alias expansion ourselves (capped deep copies) and
 * detect duplicate keys after conversion to JSON keys.
 */
#include "gr_yaml.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libfyaml.h>

#include "gr_buf.h"
#include "gr_file.h"
#include "gr_json.h"

#define TAG_PREFIX "tag:yaml.org,2002:"
/* Longest quoted scalar re-read from the source text. */
#define SCALAR_MAX ((size_t)64 * 1024 * 1024)

typedef struct ymark {
    int line; /* 1-based; 0 when unknown */
    int col;
} ymark;

typedef struct yframe {
    json_t *val;       /* object or array under construction (owned) */
    json_t *merges;    /* mapping only: merge sources (array of objects) or NULL */
    char *anchor;      /* anchor to register when complete (owned) or NULL */
    char *key;         /* mapping only: pending converted key (owned) or NULL */
    size_t keylen;     /* length of key */
    bool have_key;     /* mapping only: a key is waiting for its value */
    bool key_is_merge; /* the pending key is `<<` */
    ymark key_mark;    /* where the pending key is */
    ymark mark;        /* where the collection starts */
} yframe;

typedef struct yctx {
    const char *name;
    gr_err *err;
    int rc;
    ymark last; /* last known position (empty scalars have none) */
    yframe stack[GR_YAML_MAX_DEPTH];
    size_t depth;
    json_t *anchors;     /* anchor name → completed value (this document) */
    size_t alias_budget; /* nodes still allowed through alias expansion */
    const char *buf;     /* the input (for single-quoted scalars) */
    size_t len;
    json_t *root;    /* completed root of the current document */
    bool root_empty; /* the root is an implicit empty scalar */
} yctx;

static int yfail(yctx *c, int code, ymark m, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int yfail(yctx *c, int code, ymark m, const char *fmt, ...)
{
    if (c->rc != GR_OK)
        return c->rc;
    char msg[GR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (m.line > 0)
        gr_err_set(c->err, code, "%s:%d:%d: %s", c->name, m.line, m.col, msg);
    else
        gr_err_set(c->err, code, "%s: %s", c->name, msg);
    c->rc = code;
    return code;
}

static ymark mark_of(yctx *c, const struct fy_mark *fm)
{
    if (fm && fm->line >= 0) {
        ymark m = {fm->line + 1, fm->column + 1};
        c->last = m;
        return m;
    }
    return c->last;
}

/* ------------------------------------------------------ scalar resolution */

static bool is_digits(const char *s, size_t n, int base)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        bool ok = base == 16  ? ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
                                (ch >= 'A' && ch <= 'F'))
                  : base == 8 ? (ch >= '0' && ch <= '7')
                              : (ch >= '0' && ch <= '9');
        if (!ok)
            return false;
    }
    return true;
}

static bool eq_any(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++)
        if (strlen(*words) == n && memcmp(s, *words, n) == 0)
            return true;
    return false;
}

static const char *const null_words[] = {"~", "null", "Null", "NULL", NULL};
static const char *const true_words[] = {"true", "True", "TRUE", NULL};
static const char *const false_words[] = {"false", "False", "FALSE", NULL};
static const char *const inf_words[] = {".inf",  ".Inf",  ".INF",  "+.inf", "+.Inf",
                                        "+.INF", "-.inf", "-.Inf", "-.INF", NULL};
static const char *const nan_words[] = {".nan", ".NaN", ".NAN", NULL};

enum { INT_NO = 0, INT_OK, INT_RANGE };

/* Core-schema integer: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+ */
static int parse_int(const char *s, size_t n, long long *out)
{
    int base = 10;
    bool neg = false;
    size_t i = 0;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
        base = s[1] == 'x' ? 16 : 8;
        i = 2;
    } else if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (!is_digits(s + i, n - i, base))
        return INT_NO;
    uint64_t v = 0;
    for (; i < n; i++) {
        char ch = s[i];
        unsigned d = (ch >= '0' && ch <= '9')   ? (unsigned)(ch - '0')
                     : (ch >= 'a' && ch <= 'f') ? (unsigned)(ch - 'a' + 10)
                                                : (unsigned)(ch - 'A' + 10);
        if (v > (UINT64_MAX - d) / (unsigned)base)
            return INT_RANGE;
        v = v * (unsigned)base + d;
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return INT_RANGE;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(long long)v;
    } else {
        if (v > (uint64_t)INT64_MAX)
            return INT_RANGE;
        *out = (long long)v;
    }
    return INT_OK;
}

/* Core-schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool is_float(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    size_t d1 = 0, d2 = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++, d1++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, d2++;
        if (d1 == 0 && d2 == 0)
            return false;
    } else if (d1 == 0) {
        return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t d3 = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, d3++;
        if (d3 == 0)
            return false;
    }
    return i == n;
}

static size_t utf8_seq(const unsigned char *s, size_t n);

/* jansson refuses a string or key only for bad UTF-8 or ENOMEM; tell them
 * apart so that an allocation failure is reported as GR_ENOMEM, not as a
 * parse error (found by test/base/oom_base.c). */
static bool valid_utf8(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq((const unsigned char *)s + i, n - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

static json_t *make_string(yctx *c, const char *s, size_t n, ymark m)
{
    json_t *v = json_stringn(s, n);
    if (!v) /* jansson fails only on bad UTF-8 or ENOMEM */
        yfail(c, valid_utf8(s, n) ? GR_ENOMEM : GR_EPARSE, m,
              valid_utf8(s, n) ? "out of memory" : "scalar is not valid UTF-8");
    return v;
}

static json_t *make_real(yctx *c, const char *s, size_t n, ymark m)
{
    char tmp[128];
    if (n >= sizeof tmp) {
        yfail(c, GR_EPARSE, m, "number \"%.40s...\" is too long", s);
        return NULL;
    }
    memcpy(tmp, s, n);
    tmp[n] = 0;
    errno = 0;
    double d = strtod(tmp, NULL);
    if (isinf(d) || isnan(d)) {
        yfail(c, GR_EPARSE, m,
              "number %s is out of range of a double; quote it to keep it as a string", tmp);
        return NULL;
    }
    json_t *v = json_real(d);
    if (!v)
        yfail(c, GR_ENOMEM, m, "out of memory");
    return v;
}

static json_t *make_int(yctx *c, long long v, ymark m)
{
    json_t *j = json_integer(v);
    if (!j)
        yfail(c, GR_ENOMEM, m, "out of memory");
    return j;
}

static json_t *make_simple(yctx *c, json_t *v, ymark m)
{
    if (!v)
        yfail(c, GR_ENOMEM, m, "out of memory");
    return v;
}

/* Decode the raw content of a single-quoted scalar (between the quotes):
 * '' is a quote; lines are folded as YAML 1.2 flow scalars are (trailing
 * white space of a line and leading white space of the next are dropped; one
 * line break becomes a space, n > 1 become n - 1 newlines). We do this
 * ourselves because libfyaml 0.7.12's fy_token_get_text() leaks memory on
 * runs of '' escapes. Appends to `out`. */
static int sq_decode(const char *raw, size_t n, gr_buf *out)
{
    size_t i = 0;
    bool first = true;
    size_t empty = 0; /* empty lines since the last content line */
    while (true) {
        size_t ls = i;
        while (i < n && raw[i] != '\n' && raw[i] != '\r')
            i++;
        size_t le = i;
        bool last = i >= n;
        if (!last) /* consume the line break (\r\n counts once) */
            i += (raw[i] == '\r' && i + 1 < n && raw[i + 1] == '\n') ? 2 : 1;
        if (!first)
            while (ls < le && (raw[ls] == ' ' || raw[ls] == '\t'))
                ls++;
        if (!last)
            while (le > ls && (raw[le - 1] == ' ' || raw[le - 1] == '\t'))
                le--;
        if (!first && !last && ls == le) {
            empty++;
            continue;
        }
        if (!first) {
            int rc = GR_OK;
            if (empty == 0)
                rc = gr_buf_putc(out, ' ');
            for (size_t k = 0; k < empty && rc == GR_OK; k++)
                rc = gr_buf_putc(out, '\n');
            if (rc != GR_OK)
                return rc;
        }
        empty = 0;
        for (size_t k = ls; k < le; k++) {
            int rc = gr_buf_putc(out, raw[k]);
            if (rc != GR_OK)
                return rc;
            if (raw[k] == '\'' && k + 1 < le && raw[k + 1] == '\'')
                k++;
        }
        first = false;
        if (last)
            return GR_OK;
    }
}

/* Returns a value for `tag`-less plain scalars and for the core tags.
 * kind: 0 = resolve plain, else the tag suffix ("int", "float", ...). */
static json_t *resolve_scalar(yctx *c, const char *s, size_t n, const char *tag, ymark m)
{
    long long iv;
    int ir;
    bool any = tag == NULL;
    bool is_null = (n == 0) || eq_any(s, n, null_words);
    bool is_true = eq_any(s, n, true_words);
    bool is_false = eq_any(s, n, false_words);

    if (any || strcmp(tag, "null") == 0) {
        if (is_null)
            return make_simple(c, json_null(), m);
        if (!any)
            goto bad_tag;
    }
    if (any || strcmp(tag, "bool") == 0) {
        if (is_true || is_false)
            return make_simple(c, json_boolean(is_true), m);
        if (!any)
            goto bad_tag;
    }
    if (any || strcmp(tag, "int") == 0 || strcmp(tag, "float") == 0) {
        bool want_float = !any && strcmp(tag, "float") == 0;
        if (eq_any(s, n, inf_words) || eq_any(s, n, nan_words)) {
            return yfail(c, GR_EPARSE, m,
                         "%.*s cannot be represented in JSON (no NaN/Infinity); quote it to keep "
                         "it as a string",
                         (int)n, s),
                   NULL;
        }
        ir = parse_int(s, n, &iv);
        if (ir == INT_OK)
            return want_float ? make_simple(c, json_real((double)iv), m) : make_int(c, iv, m);
        if (ir == INT_RANGE && !(want_float && is_float(s, n))) {
            return yfail(c, GR_EPARSE, m,
                         "integer %.*s is out of range of a 64-bit integer; quote it to keep it "
                         "as a string",
                         n > 64 ? 64 : (int)n, s),
                   NULL;
        }
        if ((any || want_float) && is_float(s, n))
            return make_real(c, s, n, m);
        if (!any)
            goto bad_tag;
    }
    return make_string(c, s, n, m);

bad_tag:
    return yfail(c, GR_EPARSE, m, "value \"%.*s\" is not a valid !!%s", n > 64 ? 64 : (int)n, s,
                 tag),
           NULL;
}

/* Map a tag token to: NULL (no tag / plain resolution), a core suffix
 * ("str", "int", ...), or "" (any other tag: keep as string). */
static const char *tag_kind(struct fy_token *tag)
{
    if (!tag)
        return NULL;
    size_t n = 0;
    const char *t = fy_token_get_text(tag, &n);
    static const char *const core[] = {"str", "int", "float", "bool", "null",
                                       "map", "seq", "merge", NULL};
    size_t plen = strlen(TAG_PREFIX);
    if (t && n > plen && memcmp(t, TAG_PREFIX, plen) == 0) {
        for (const char *const *k = core; *k; k++)
            if (strlen(*k) == n - plen && memcmp(t + plen, *k, n - plen) == 0)
                return *k;
    }
    return "";
}

/* ------------------------------------------------------ capped deep copy */

static json_t *copy_capped(yctx *c, json_t *v, size_t depth, ymark m)
{
    if (c->alias_budget == 0) {
        yfail(c, GR_ETOOBIG, m,
              "alias expansion exceeds %zu nodes (possible \"billion laughs\" input)",
              (size_t)GR_YAML_MAX_ALIAS_NODES);
        return NULL;
    }
    if (depth > GR_YAML_MAX_DEPTH) {
        yfail(c, GR_ETOOBIG, m, "nesting deeper than %d levels", GR_YAML_MAX_DEPTH);
        return NULL;
    }
    c->alias_budget--;
    if (json_is_object(v)) {
        json_t *o = json_object();
        if (!o)
            return yfail(c, GR_ENOMEM, m, "out of memory"), NULL;
        const char *k;
        size_t klen;
        json_t *x;
        json_object_keylen_foreach(v, k, klen, x)
        {
            json_t *cx = copy_capped(c, x, depth + 1, m);
            if (!cx || json_object_setn_new_nocheck(o, k, klen, cx) != 0) {
                if (cx)
                    yfail(c, GR_ENOMEM, m, "out of memory");
                json_decref(o);
                return NULL;
            }
        }
        return o;
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        if (!a)
            return yfail(c, GR_ENOMEM, m, "out of memory"), NULL;
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            json_t *cx = copy_capped(c, x, depth + 1, m);
            if (!cx || json_array_append_new(a, cx) != 0) {
                if (cx)
                    yfail(c, GR_ENOMEM, m, "out of memory");
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    json_t *s = json_copy(v);
    if (!s)
        yfail(c, GR_ENOMEM, m, "out of memory");
    return s;
}

/* ------------------------------------------------------------ the stack */

static void frame_free(yframe *f)
{
    json_decref(f->val);
    json_decref(f->merges);
    free(f->anchor);
    free(f->key);
    memset(f, 0, sizeof *f);
}

static int remember_anchor(yctx *c, const char *anchor, json_t *v, ymark m)
{
    if (!anchor)
        return GR_OK;
    if (json_object_set(c->anchors, anchor, v) != 0) {
        if (valid_utf8(anchor, strlen(anchor))) /* then jansson's ENOMEM */
            return yfail(c, GR_ENOMEM, m, "out of memory");
        return yfail(c, GR_EPARSE, m, "anchor name is not valid UTF-8");
    }
    return GR_OK;
}

/* Convert a completed scalar-ish JSON value into a mapping key. */
static int key_of(yctx *c, json_t *v, ymark m, char **out, size_t *outlen)
{
    char tmp[64];
    const char *s = NULL;
    size_t n = 0;
    switch (json_typeof(v)) {
    case JSON_STRING:
        s = json_string_value(v);
        n = json_string_length(v);
        break;
    case JSON_INTEGER:
        n = (size_t)snprintf(tmp, sizeof tmp, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        s = tmp;
        break;
    case JSON_REAL:
        n = (size_t)snprintf(tmp, sizeof tmp, "%.17g", json_real_value(v));
        s = tmp;
        break;
    case JSON_TRUE:
        s = "true", n = 4;
        break;
    case JSON_FALSE:
        s = "false", n = 5;
        break;
    case JSON_NULL:
        s = "null", n = 4;
        break;
    default:
        return yfail(c, GR_EPARSE, m,
                     "mapping keys must be scalars (a sequence or mapping cannot be a JSON key)");
    }
    char *k = malloc(n + 1);
    if (!k)
        return yfail(c, GR_ENOMEM, m, "out of memory");
    memcpy(k, s, n);
    k[n] = 0;
    *out = k;
    *outlen = n;
    return GR_OK;
}

static int add_merge_source(yctx *c, yframe *f, json_t *v, ymark m)
{
    if (!f->merges && !(f->merges = json_array()))
        return yfail(c, GR_ENOMEM, m, "out of memory");
    if (json_is_object(v)) {
        if (json_array_append(f->merges, v) != 0)
            return yfail(c, GR_ENOMEM, m, "out of memory");
        return GR_OK;
    }
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            if (!json_is_object(x))
                return yfail(c, GR_EPARSE, m,
                             "merge key \"<<\": element %zu of the sequence is not a mapping", i);
            if (json_array_append(f->merges, x) != 0)
                return yfail(c, GR_ENOMEM, m, "out of memory");
        }
        return GR_OK;
    }
    return yfail(c, GR_EPARSE, m,
                 "merge key \"<<\" needs a mapping or a sequence of mappings as its value");
}

/* A value (new reference, stolen) is complete: attach it to its parent. */
static int push_value(yctx *c, json_t *v, ymark m, bool is_merge_key)
{
    if (c->depth == 0) {
        c->root = v;
        return GR_OK;
    }
    yframe *f = &c->stack[c->depth - 1];
    if (json_is_array(f->val)) {
        if (json_array_append_new(f->val, v) != 0)
            return yfail(c, GR_ENOMEM, m, "out of memory");
        return GR_OK;
    }
    if (!f->have_key) {
        /* v is a key */
        int rc = key_of(c, v, m, &f->key, &f->keylen);
        json_decref(v);
        if (rc != GR_OK)
            return rc;
        f->have_key = true;
        f->key_is_merge = is_merge_key;
        f->key_mark = m;
        if (!is_merge_key && json_object_getn(f->val, f->key, f->keylen))
            return yfail(c, GR_EPARSE, m, "duplicate key \"%.*s\"",
                         f->keylen > 100 ? 100 : (int)f->keylen, f->key);
        return GR_OK;
    }
    int rc = GR_OK;
    if (f->key_is_merge) {
        rc = add_merge_source(c, f, v, m);
        json_decref(v);
    } else if (json_object_setn_new(f->val, f->key, f->keylen, v) != 0) {
        if (valid_utf8(f->key, f->keylen)) /* then jansson's ENOMEM */
            rc = yfail(c, GR_ENOMEM, f->key_mark, "out of memory");
        else
            rc = yfail(c, GR_EPARSE, f->key_mark, "mapping key is not valid UTF-8");
    }
    free(f->key);
    f->key = NULL;
    f->have_key = false;
    f->key_is_merge = false;
    return rc;
}

static int open_collection(yctx *c, bool is_map, struct fy_token *anchor, struct fy_token *tag,
                           ymark m)
{
    if (c->depth >= GR_YAML_MAX_DEPTH)
        return yfail(c, GR_ETOOBIG, m, "nesting deeper than %d levels", GR_YAML_MAX_DEPTH);
    const char *kind = tag_kind(tag);
    if (kind && *kind && strcmp(kind, is_map ? "map" : "seq") != 0)
        return yfail(c, GR_EPARSE, m, "tag !!%s cannot be used on a %s", kind,
                     is_map ? "mapping" : "sequence");
    if (c->depth > 0) {
        yframe *p = &c->stack[c->depth - 1];
        if (json_is_object(p->val) && !p->have_key)
            return yfail(c, GR_EPARSE, m,
                         "mapping keys must be scalars (a sequence or mapping cannot be a JSON "
                         "key)");
    }
    yframe *f = &c->stack[c->depth];
    memset(f, 0, sizeof *f);
    f->mark = m;
    f->val = is_map ? json_object() : json_array();
    if (!f->val)
        return yfail(c, GR_ENOMEM, m, "out of memory");
    if (anchor) {
        const char *a = fy_token_get_text0(anchor);
        f->anchor = strdup(a ? a : "");
        if (!f->anchor) {
            json_decref(f->val);
            f->val = NULL;
            return yfail(c, GR_ENOMEM, m, "out of memory");
        }
    }
    c->depth++;
    return GR_OK;
}

static int close_collection(yctx *c, ymark m)
{
    if (c->depth == 0)
        return yfail(c, GR_EPARSE, m, "unbalanced collection end");
    yframe *f = &c->stack[c->depth - 1];
    if (f->merges) {
        size_t i;
        json_t *src;
        json_array_foreach(f->merges, i, src)
        {
            const char *k;
            size_t klen;
            json_t *x;
            json_object_keylen_foreach(src, k, klen, x)
            {
                if (!json_object_getn(f->val, k, klen) &&
                    json_object_setn_nocheck(f->val, k, klen, x) != 0)
                    return yfail(c, GR_ENOMEM, m, "out of memory");
            }
        }
    }
    json_t *v = f->val;
    ymark start = f->mark;
    f->val = NULL;
    char *anchor = f->anchor;
    f->anchor = NULL;
    frame_free(f);
    c->depth--;
    int rc = remember_anchor(c, anchor, v, start);
    free(anchor);
    if (rc != GR_OK) {
        json_decref(v);
        return rc;
    }
    return push_value(c, v, start, false);
}

static bool expecting_key(yctx *c)
{
    if (c->depth == 0)
        return false;
    yframe *f = &c->stack[c->depth - 1];
    return json_is_object(f->val) && !f->have_key;
}

static int on_scalar(yctx *c, struct fy_event *e)
{
    struct fy_token *tok = e->scalar.value;
    ymark m = mark_of(c, fy_event_start_mark(e));
    if (e->scalar.tag) /* point at the tag, which comes first */
        m = mark_of(c, fy_token_start_mark(e->scalar.tag));
    size_t n = 0;
    const char *s = "";
    enum fy_scalar_style style = tok ? fy_token_scalar_style(tok) : FYSS_PLAIN;
    if (!e->scalar.tag && (style == FYSS_SINGLE_QUOTED || style == FYSS_DOUBLE_QUOTED) && m.col > 1)
        m.col--; /* the mark is on the content; point at the quote */
    gr_buf sq = GR_BUF_INIT(SCALAR_MAX);
    if (style == FYSS_SINGLE_QUOTED) {
        /* The start mark is the first byte after the opening quote; the end
         * mark is unreliable after runs of '' in libfyaml 0.7.12, so find the
         * closing quote ourselves: the first ' not followed by another '. */
        const struct fy_mark *a = fy_token_start_mark(tok);
        if (!a || a->input_pos == 0 || a->input_pos > c->len || c->buf[a->input_pos - 1] != '\'')
            return yfail(c, GR_EPARSE, m, "cannot locate a single-quoted scalar");
        size_t from = a->input_pos, to = from;
        while (to < c->len) {
            if (c->buf[to] == '\'') {
                if (to + 1 < c->len && c->buf[to + 1] == '\'') {
                    to += 2;
                    continue;
                }
                break;
            }
            to++;
        }
        if (to >= c->len)
            return yfail(c, GR_EPARSE, m, "single-quoted scalar without closing quote");
        int rc = sq_decode(c->buf + from, to - from, &sq);
        if (rc == GR_OK)
            rc = gr_buf_puts(&sq, ""); /* make data non-NULL for "" */
        if (rc != GR_OK) {
            gr_buf_free(&sq);
            return yfail(c, rc, m, "single-quoted scalar: out of memory");
        }
        s = sq.data ? sq.data : "";
        n = sq.len;
    } else if (tok) {
        s = fy_token_get_text(tok, &n);
        if (!s)
            s = "", n = 0;
    }
    const char *kind = tag_kind(e->scalar.tag);
    bool plain = style == FYSS_PLAIN || style == FYSS_ANY;
    if (kind && (strcmp(kind, "map") == 0 || strcmp(kind, "seq") == 0)) {
        gr_buf_free(&sq);
        return yfail(c, GR_EPARSE, m, "tag !!%s cannot be used on a scalar", kind);
    }
    bool key = expecting_key(c);
    bool is_merge =
        key && plain && n == 2 && memcmp(s, "<<", 2) == 0 && (!kind || strcmp(kind, "merge") == 0);
    json_t *v;
    if (kind && strcmp(kind, "merge") == 0 && !is_merge)
        v = make_string(c, s, n, m);
    else if (kind && *kind && strcmp(kind, "str") != 0 && strcmp(kind, "merge") != 0)
        v = resolve_scalar(c, s, n, kind, m);
    else if (!kind && plain)
        v = resolve_scalar(c, s, n, NULL, m);
    else
        v = make_string(c, s, n, m);
    gr_buf_free(&sq);
    if (!v)
        return c->rc;
    if (c->depth == 0)
        c->root_empty = plain && !kind && n == 0 && !e->scalar.anchor;
    if (e->scalar.anchor) {
        const char *a = fy_token_get_text0(e->scalar.anchor);
        if (remember_anchor(c, a ? a : "", v, m) != GR_OK) {
            json_decref(v);
            return c->rc;
        }
    }
    return push_value(c, v, m, is_merge);
}

static int on_alias(yctx *c, struct fy_event *e)
{
    ymark m = mark_of(c, fy_event_start_mark(e));
    if (m.col > 1) /* the mark is on the name; point at the '*' */
        m.col--;
    const char *a = e->alias.anchor ? fy_token_get_text0(e->alias.anchor) : NULL;
    if (!a)
        return yfail(c, GR_EPARSE, m, "alias without a name");
    json_t *target = json_object_get(c->anchors, a);
    if (!target) {
        for (size_t i = 0; i < c->depth; i++)
            if (c->stack[i].anchor && strcmp(c->stack[i].anchor, a) == 0)
                return yfail(c, GR_EPARSE, m,
                             "alias *%.64s refers to a node that contains it (recursive alias)", a);
        return yfail(c, GR_EPARSE, m, "alias *%.64s has no anchor &%.64s before it", a, a);
    }
    json_t *v = copy_capped(c, target, c->depth, m);
    if (!v)
        return c->rc;
    if (c->depth == 0)
        c->root_empty = false;
    return push_value(c, v, m, false);
}

static void reset_doc(yctx *c)
{
    while (c->depth > 0)
        frame_free(&c->stack[--c->depth]);
    json_object_clear(c->anchors);
    json_decref(c->root);
    c->root = NULL;
    c->root_empty = false;
}

static int report_parser_error(yctx *c, struct fy_diag *diag)
{
    void *it = NULL;
    struct fy_diag_error *de;
    while ((de = fy_diag_errors_iterate(diag, &it)) != NULL) {
        if (de->type < FYET_ERROR)
            continue;
        ymark m = {de->line > 0 ? de->line : 0, de->column > 0 ? de->column : 0};
        if (m.line == 0)
            m = c->last;
        return yfail(c, GR_EPARSE, m, "%s", de->msg ? de->msg : "YAML syntax error");
    }
    return yfail(c, GR_EPARSE, c->last, "YAML syntax error");
}

/* Length of the valid UTF-8 sequence at s[0..n) (1..4), or 0 when invalid
 * (overlong forms, surrogates, above U+10FFFF, truncated). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char b = s[0];
    if (b < 0x80)
        return 1;
    size_t len;
    unsigned min_second = 0x80, max_second = 0xBF;
    if (b >= 0xC2 && b <= 0xDF)
        len = 2;
    else if (b >= 0xE0 && b <= 0xEF) {
        len = 3;
        if (b == 0xE0)
            min_second = 0xA0; /* overlong */
        if (b == 0xED)
            max_second = 0x9F; /* surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        len = 4;
        if (b == 0xF0)
            min_second = 0x90; /* overlong */
        if (b == 0xF4)
            max_second = 0x8F; /* > U+10FFFF */
    } else
        return 0;
    if (n < len || s[1] < min_second || s[1] > max_second)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

/* libfyaml silently stops at some invalid UTF-8 sequences and drops some
 * control characters, so the whole input is checked first: valid UTF-8 made
 * of YAML printable characters only (no NUL, no C0/C1 controls but tab, LF,
 * CR and NEL, no DEL). */
static int check_text(yctx *c, const char *buf, size_t len)
{
    const unsigned char *s = (const unsigned char *)buf;
    ymark m = {1, 1};
    for (size_t i = 0; i < len;) {
        if (s[i] == 0)
            return yfail(c, GR_EPARSE, m, "input contains a NUL byte (YAML text cannot)");
        size_t k = utf8_seq(s + i, len - i);
        if (k == 0)
            return yfail(c, GR_EPARSE, m, "input is not valid UTF-8 (byte 0x%02x)", s[i]);
        uint32_t cp = k == 1   ? s[i]
                      : k == 2 ? ((uint32_t)(s[i] & 0x1F) << 6) | (s[i + 1] & 0x3F)
                      : k == 3
                          ? ((uint32_t)(s[i] & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) |
                                (s[i + 2] & 0x3F)
                          : ((uint32_t)(s[i] & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) |
                                ((uint32_t)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
        /* YAML c-printable: tab, LF, CR, 0x20-0x7E, 0x85, 0xA0+ (not FFFE/FFFF);
         * escapes in double-quoted scalars still reach the rest */
        bool printable = cp == 0x09 || cp == 0x0A || cp == 0x0D || (cp >= 0x20 && cp <= 0x7E) ||
                         cp == 0x85 || (cp >= 0xA0 && cp != 0xFFFE && cp != 0xFFFF);
        if (!printable)
            return yfail(c, GR_EPARSE, m,
                         "input contains the control character U+%04X (YAML text cannot; use a "
                         "\\u escape in a double-quoted string)",
                         (unsigned)cp);
        if (s[i] == '\n') {
            m.line++;
            m.col = 1;
        } else {
            m.col++;
        }
        i += k;
    }
    return GR_OK;
}

static size_t json_depth(const json_t *v, size_t limit)
{
    size_t best = 0;
    if (limit == 0 || !(json_is_object(v) || json_is_array(v)))
        return json_is_object(v) || json_is_array(v) ? 1 : 0;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)(uintptr_t)v, k, x)
        {
            size_t d = json_depth(x, limit - 1);
            best = d > best ? d : best;
            if (best >= limit)
                break;
        }
    } else {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            size_t d = json_depth(x, limit - 1);
            best = d > best ? d : best;
            if (best >= limit)
                break;
        }
    }
    return best + 1;
}

static bool json_ws(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* Fast path for JSON input (as kubectl's YAMLOrJSONDecoder): when the first
 * significant byte is '{' or '[', parse a stream of JSON objects/arrays with
 * jansson. JSON is a subset of YAML 1.2 and the core schema gives the same
 * values, so the result equals the YAML path's; it avoids libfyaml's token
 * buffering (libfyaml 0.7.12 keeps ~200 bytes per token of a flow collection
 * that could still be a mapping key, i.e. up to a whole single-line JSON
 * document). Returns 1 with the documents appended to `docs`, 0 (docs
 * untouched) when the input is not such a JSON stream, so the caller parses
 * YAML (which reports syntax errors with their position), or a GR_E* code
 * for JSON nested too deeply (not retried as YAML: that is the costly case). */
static int load_json_stream(yctx *c, const char *buf, size_t len, json_t *docs)
{
    size_t off = 0;
    if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
        off = 3;
    while (off < len && json_ws(buf[off]))
        off++;
    if (off >= len || (buf[off] != '{' && buf[off] != '['))
        return 0;
    json_t *tmp = json_array();
    if (!tmp)
        return yfail(c, GR_ENOMEM, c->last, "out of memory");
    int rc = 0;
    while (off < len) {
        if (buf[off] != '{' && buf[off] != '[')
            goto out;
        json_error_t je;
        json_t *v =
            json_loadb(buf + off, len - off,
                       JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &je);
        if (!v) {
            if (json_error_code(&je) == json_error_stack_overflow)
                rc = yfail(c, GR_ETOOBIG, c->last, "nesting deeper than %d levels",
                           GR_YAML_MAX_DEPTH);
            else if (gr_json_load_error_is_nomem(&je))
                rc = yfail(c, GR_ENOMEM, c->last, "out of memory");
            goto out;
        }
        if (json_depth(v, GR_YAML_MAX_DEPTH + 1) > GR_YAML_MAX_DEPTH) {
            json_decref(v);
            rc = yfail(c, GR_ETOOBIG, c->last, "nesting deeper than %d levels", GR_YAML_MAX_DEPTH);
            goto out;
        }
        if (json_array_append_new(tmp, v) != 0) {
            rc = yfail(c, GR_ENOMEM, c->last, "out of memory");
            goto out;
        }
        if (je.position <= 0)
            goto out;
        off += (size_t)je.position;
        while (off < len && json_ws(buf[off]))
            off++;
    }
    if (json_array_extend(docs, tmp) != 0)
        rc = yfail(c, GR_ENOMEM, c->last, "out of memory");
    else
        rc = 1;
out:
    json_decref(tmp);
    return rc;
}

/* YAML 1.2 §5.4: every line break (CR LF, CR, LF) is read as one LF. We do
 * that before libfyaml sees the text: libfyaml 0.7.12 leaks a buffer when it
 * folds a double-quoted scalar with CR LF among many empty lines (found by
 * fuzz_yaml). Lines, columns and the meaning of the text are unchanged.
 * Returns a malloc'd copy (the caller frees it), or NULL when out of memory. */
static char *normalize_breaks(const char *buf, size_t len, size_t *out_len)
{
    char *o = malloc(len ? len : 1);
    if (!o)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != '\r') {
            o[n++] = buf[i];
            continue;
        }
        o[n++] = '\n';
        if (i + 1 < len && buf[i + 1] == '\n')
            i++;
    }
    *out_len = n;
    return o;
}

static int load(const char *buf, size_t len, const char *name, json_t **out_docs, gr_err *err)
{
    *out_docs = NULL;
    gr_err_clear(err);
    char *norm = NULL;
    if (len && memchr(buf, '\r', len)) {
        norm = normalize_breaks(buf, len, &len);
        if (!norm)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        buf = norm;
    }
    yctx *c = calloc(1, sizeof *c);
    if (!c) {
        free(norm);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    c->name = name ? name : "<input>";
    c->err = err;
    c->alias_budget = GR_YAML_MAX_ALIAS_NODES;
    json_t *docs = json_array();
    c->anchors = json_object();
    c->buf = buf;
    c->len = len;
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = NULL;
    dcfg.colorize = false;
    struct fy_diag *diag = fy_diag_create(&dcfg);
    struct fy_parser *fyp = NULL;
    if (diag) {
        fy_diag_set_collect_errors(diag, true);
        struct fy_parse_cfg pcfg = {0};
        pcfg.flags = FYPCF_QUIET | FYPCF_DEFAULT_VERSION_1_2 | FYPCF_JSON_NONE;
        pcfg.diag = diag;
        fyp = fy_parser_create(&pcfg);
    }
    if (!docs || !c->anchors || !fyp || fy_parser_set_string(fyp, len ? buf : "", len) != 0) {
        yfail(c, GR_ENOMEM, c->last, "cannot create the YAML parser");
        goto out;
    }

    if (check_text(c, buf, len) != GR_OK)
        goto out;
    if (load_json_stream(c, buf, len, docs) != 0)
        goto out; /* JSON handled it, or failed for good (c->rc says) */

    struct fy_event *e;
    bool in_doc = false;
    while (c->rc == GR_OK && (e = fy_parser_parse(fyp)) != NULL) {
        switch (e->type) {
        case FYET_DOCUMENT_START:
            mark_of(c, fy_event_start_mark(e));
            reset_doc(c);
            in_doc = true;
            break;
        case FYET_DOCUMENT_END:
            mark_of(c, fy_event_start_mark(e));
            if (in_doc && c->root && !c->root_empty) {
                if (json_array_append(docs, c->root) != 0)
                    yfail(c, GR_ENOMEM, c->last, "out of memory");
            }
            reset_doc(c);
            in_doc = false;
            break;
        case FYET_MAPPING_START:
            open_collection(c, true, e->mapping_start.anchor, e->mapping_start.tag,
                            mark_of(c, fy_event_start_mark(e)));
            break;
        case FYET_SEQUENCE_START:
            open_collection(c, false, e->sequence_start.anchor, e->sequence_start.tag,
                            mark_of(c, fy_event_start_mark(e)));
            break;
        case FYET_MAPPING_END:
        case FYET_SEQUENCE_END:
            close_collection(c, mark_of(c, fy_event_start_mark(e)));
            break;
        case FYET_SCALAR:
            on_scalar(c, e);
            break;
        case FYET_ALIAS:
            on_alias(c, e);
            break;
        default:
            mark_of(c, fy_event_start_mark(e));
            break;
        }
        fy_parser_event_free(fyp, e);
    }
    if (c->rc == GR_OK && fy_parser_get_stream_error(fyp))
        report_parser_error(c, diag);

out:
    reset_doc(c);
    if (fyp)
        fy_parser_destroy(fyp);
    if (diag)
        fy_diag_destroy(diag);
    json_decref(c->anchors);
    int rc = c->rc;
    free(c);
    free(norm);
    if (rc != GR_OK) {
        json_decref(docs);
        return rc;
    }
    *out_docs = docs;
    return GR_OK;
}

int gr_yaml_load_all(const char *buf, size_t len, const char *name, json_t **out_docs, gr_err *err)
{
    if (!out_docs || (!buf && len))
        return gr_err_set(err, GR_EINVAL, "gr_yaml_load_all: NULL argument");
    return load(buf, len, name, out_docs, err);
}

int gr_yaml_load_one(const char *buf, size_t len, const char *name, json_t **out, gr_err *err)
{
    if (!out || (!buf && len))
        return gr_err_set(err, GR_EINVAL, "gr_yaml_load_one: NULL argument");
    *out = NULL;
    json_t *docs;
    int rc = load(buf, len, name, &docs, err);
    if (rc != GR_OK)
        return rc;
    size_t n = json_array_size(docs);
    if (n > 1) {
        json_decref(docs);
        return gr_err_set(err, GR_EPARSE,
                          "%s: expected one YAML document, found %zu; split the input or load it "
                          "with gr_yaml_load_all()",
                          name ? name : "<input>", n);
    }
    *out = n == 1 ? json_incref(json_array_get(docs, 0)) : json_null();
    json_decref(docs);
    return GR_OK;
}

int gr_yaml_load_file(const char *path, size_t max_bytes, json_t **out_docs, gr_err *err)
{
    if (!path || !out_docs)
        return gr_err_set(err, GR_EINVAL, "gr_yaml_load_file: NULL argument");
    *out_docs = NULL;
    if (max_bytes == 0)
        max_bytes = GR_YAML_MAX_FILE;
    gr_buf b = GR_BUF_INIT(max_bytes);
    int rc = gr_file_append(path, &b, err);
    if (rc == GR_ENOTFOUND) { /* missing or unreadable alike: GR_EIO */
        rc = GR_EIO;
        if (err)
            err->code = GR_EIO;
    } else if (rc == GR_ETOOBIG)
        rc =
            gr_err_set(err, GR_ETOOBIG, "%s: file is larger than the %zu-byte limit for YAML input",
                       path, max_bytes);
    if (rc == GR_OK)
        rc = load(gr_buf_cstr(&b), b.len, path, out_docs, err);
    gr_buf_free(&b);
    return rc;
}

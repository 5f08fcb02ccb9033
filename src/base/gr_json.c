/*
 * gr_json.c — JSON helpers and JSON Pointer (RFC 6901).
 * JSON Patch lives in gr_jsonpatch.c, Merge Patch in gr_mergepatch.c; all
 * are declared in gr_json.h.
 */
#include "gr_json.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static size_t depth_of(const json_t *v, size_t limit)
{
    size_t best = 0;
    if (limit == 0)
        return 1;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)(uintptr_t)v, k, x)
        {
            size_t d = depth_of(x, limit - 1);
            if (d > best)
                best = d;
            if (best >= limit)
                break;
        }
        return best + 1;
    }
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            size_t d = depth_of(x, limit - 1);
            if (d > best)
                best = d;
            if (best >= limit)
                break;
        }
        return best + 1;
    }
    return 0;
}

bool gr_json_load_error_is_nomem(const json_error_t *je)
{
    if (json_error_code(je) == json_error_out_of_memory || je->text[0] == '\0')
        return true; /* a failure without a message is a failed allocation */
    /* A string token whose copy could not be allocated becomes an invalid
     * token; a genuinely bad string reports its own message first (jansson
     * keeps the first error), so these two are ENOMEM (found by
     * test/base/oom_base.c). */
    return json_error_code(je) == json_error_invalid_syntax &&
           (strncmp(je->text, "invalid token near '\"", 21) == 0 ||
            strncmp(je->text, "string or '}' expected near '\"", 30) == 0);
}

int gr_json_parse(const char *buf, size_t len, size_t max_len, const char *name, json_t **out,
                  gr_err *err)
{
    if (!out || (!buf && len))
        return gr_err_set(err, GR_EINVAL, "gr_json_parse: NULL argument");
    *out = NULL;
    if (!name)
        name = "<input>";
    if (max_len && len > max_len)
        return gr_err_set(err, GR_ETOOBIG, "%s: JSON text is %zu bytes, the limit is %zu", name,
                          len, max_len);
    json_error_t je;
    json_t *v = json_loadb(len ? buf : "", len,
                           JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (!v) {
        if (gr_json_load_error_is_nomem(&je))
            return gr_err_set(err, GR_ENOMEM, "%s: out of memory", name);
        return gr_err_set(err, GR_EPARSE, "%s:%d:%d: %s", name, je.line, je.column, je.text);
    }
    if (depth_of(v, GR_JSON_MAX_DEPTH + 1) > GR_JSON_MAX_DEPTH) {
        json_decref(v);
        return gr_err_set(err, GR_ETOOBIG, "%s: JSON nests deeper than %d levels", name,
                          GR_JSON_MAX_DEPTH);
    }
    *out = v;
    gr_err_clear(err);
    return GR_OK;
}

typedef struct dump_ctx {
    gr_buf *out;
    int rc;
} dump_ctx;

static int dump_cb(const char *buffer, size_t size, void *data)
{
    dump_ctx *d = data;
    int rc = gr_buf_append(d->out, buffer, size);
    if (rc != GR_OK) {
        d->rc = rc;
        return -1;
    }
    return 0;
}

int gr_json_dump_buf(const json_t *v, size_t flags, gr_buf *out)
{
    if (!v || !out)
        return GR_EINVAL;
    size_t old = out->len;
    dump_ctx d = {out, GR_OK};
    if (json_dump_callback(v, dump_cb, &d, flags | JSON_ENCODE_ANY) != 0) {
        out->len = old;
        if (out->data)
            out->data[old] = 0;
        return d.rc != GR_OK ? d.rc : GR_ENOMEM;
    }
    return GR_OK;
}

bool gr_json_equal(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return a == b;
    if (a == b)
        return true;
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        /* At least one real: compare by value. An integer converts to double
         * exactly when it is small enough; beyond 2^53 compare via the
         * integer side to avoid rounding making unequal values equal. */
        const json_t *r = json_is_real(a) ? a : b;
        const json_t *o = r == a ? b : a;
        double rv = json_real_value(r);
        if (json_is_real(o))
            return rv == json_real_value(o);
        json_int_t iv = json_integer_value(o);
        if (!(rv >= -9223372036854775808.0 && rv < 9223372036854775808.0))
            return false;
        return (json_int_t)rv == iv && (double)(json_int_t)rv == rv;
    }
    if (json_typeof(a) != json_typeof(b))
        return false;
    switch (json_typeof(a)) {
    case JSON_OBJECT: {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        size_t klen;
        json_t *x;
        json_object_keylen_foreach((json_t *)(uintptr_t)a, k, klen, x)
        {
            if (!gr_json_equal(x, json_object_getn(b, k, klen)))
                return false;
        }
        return true;
    }
    case JSON_ARRAY: {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!gr_json_equal(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    default: /* true, false, null: same type is enough */
        return true;
    }
}

const char *gr_json_type_name(const json_t *v)
{
    if (!v)
        return "missing";
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    default:
        return "null";
    }
}

/* ---------------------------------------------------- JSON Pointer (6901) */

static int escape_into(gr_buf *b, const char *key)
{
    int rc = GR_OK;
    for (const char *p = key; *p && rc == GR_OK; p++) {
        if (*p == '~')
            rc = gr_buf_append(b, "~0", 2);
        else if (*p == '/')
            rc = gr_buf_append(b, "~1", 2);
        else
            rc = gr_buf_putc(b, *p);
    }
    return rc;
}

char *gr_json_ptr_escape(const char *key)
{
    gr_buf b = GR_BUF_INIT(GR_JSON_POINTER_MAX);
    if (!key || escape_into(&b, key) != GR_OK) {
        gr_buf_free(&b);
        return NULL;
    }
    return gr_buf_steal(&b, NULL);
}

int gr_json_ptr_append(gr_buf *ptr, const char *key)
{
    if (!ptr || !key)
        return GR_EINVAL;
    size_t old = ptr->len;
    int rc = gr_buf_putc(ptr, '/');
    if (rc == GR_OK)
        rc = escape_into(ptr, key);
    if (rc != GR_OK) {
        ptr->len = old;
        if (ptr->data)
            ptr->data[old] = 0;
    }
    return rc;
}

int gr_json_ptr_append_index(gr_buf *ptr, size_t index)
{
    if (!ptr)
        return GR_EINVAL;
    if (index == GR_JSON_PTR_END)
        return gr_buf_append(ptr, "/-", 2);
    return gr_buf_printf(ptr, "/%zu", index);
}

char *gr_json_ptr_build(const char *first, ...)
{
    gr_buf b = GR_BUF_INIT(GR_JSON_POINTER_MAX);
    int rc = gr_buf_puts(&b, ""); /* make data non-NULL for the "" case */
    va_list ap;
    va_start(ap, first);
    for (const char *k = first; k && rc == GR_OK; k = va_arg(ap, const char *))
        rc = gr_json_ptr_append(&b, k);
    va_end(ap);
    if (rc != GR_OK) {
        gr_buf_free(&b);
        return NULL;
    }
    if (!b.data)
        return strdup("");
    return gr_buf_steal(&b, NULL);
}

void gr_json_ptr_tokens_free(char **tokens)
{
    if (!tokens)
        return;
    for (char **t = tokens; *t; t++)
        free(*t);
    free(tokens);
}

int gr_json_ptr_parse(const char *ptr, char ***tokens, size_t *ntokens, gr_err *err)
{
    if (!ptr || !tokens)
        return gr_err_set(err, GR_EINVAL, "JSON pointer is missing");
    *tokens = NULL;
    if (ntokens)
        *ntokens = 0;
    if (*ptr && *ptr != '/')
        return gr_err_set(err, GR_EINVAL,
                          "JSON pointer \"%.200s\" must be empty or start with \"/\"", ptr);
    size_t n = 0;
    for (const char *p = ptr; *p; p++)
        if (*p == '/')
            n++;
    char **t = calloc(n + 1, sizeof *t);
    if (!t)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    const char *p = ptr;
    for (size_t i = 0; i < n; i++) {
        p++; /* skip '/' */
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char *tok = malloc(len + 1);
        if (!tok) {
            gr_json_ptr_tokens_free(t);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        t[i] = tok;
        size_t o = 0;
        for (size_t j = 0; j < len; j++) {
            if (p[j] == '~') {
                if (j + 1 < len && (p[j + 1] == '0' || p[j + 1] == '1')) {
                    tok[o++] = p[j + 1] == '0' ? '~' : '/';
                    j++;
                } else {
                    gr_json_ptr_tokens_free(t);
                    return gr_err_set(err, GR_EINVAL,
                                      "JSON pointer \"%.200s\": \"~\" must be followed by 0 or 1 "
                                      "(write ~0 for \"~\" and ~1 for \"/\")",
                                      ptr);
                }
            } else {
                tok[o++] = p[j];
            }
        }
        tok[o] = 0;
        p += len;
    }
    *tokens = t;
    if (ntokens)
        *ntokens = n;
    gr_err_clear(err);
    return GR_OK;
}

bool gr_json_ptr_parse_index(const char *token, size_t *index)
{
    if (!token || !*token)
        return false;
    if (token[0] == '0' && token[1] != 0)
        return false;
    size_t v = 0;
    for (const char *p = token; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        size_t d = (size_t)(*p - '0');
        if (v > (SIZE_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (index)
        *index = v;
    return true;
}

int gr_json_ptr_resolve(const json_t *doc, const char *ptr, json_t **out, gr_err *err)
{
    if (!out)
        return gr_err_set(err, GR_EINVAL, "gr_json_ptr_resolve: NULL argument");
    *out = NULL;
    char **toks;
    size_t n;
    int rc = gr_json_ptr_parse(ptr, &toks, &n, err);
    if (rc != GR_OK)
        return rc;
    json_t *cur = (json_t *)(uintptr_t)doc;
    for (size_t i = 0; i < n && cur; i++) {
        if (json_is_object(cur)) {
            json_t *next = json_object_get(cur, toks[i]);
            if (!next) {
                rc = gr_err_set(err, GR_ENOTFOUND, "JSON pointer \"%.200s\": no member \"%.100s\"",
                                ptr, toks[i]);
            }
            cur = next;
        } else if (json_is_array(cur)) {
            size_t idx;
            if (!gr_json_ptr_parse_index(toks[i], &idx)) {
                rc = gr_err_set(err, GR_ENOTFOUND,
                                "JSON pointer \"%.200s\": \"%.100s\" is not an array index "
                                "(0, 1, ... without leading zeros)",
                                ptr, toks[i]);
                cur = NULL;
            } else if (idx >= json_array_size(cur)) {
                rc = gr_err_set(err, GR_ENOTFOUND,
                                "JSON pointer \"%.200s\": index %zu is out of range (array has "
                                "%zu elements)",
                                ptr, idx, json_array_size(cur));
                cur = NULL;
            } else {
                cur = json_array_get(cur, idx);
            }
        } else {
            rc = gr_err_set(err, GR_ENOTFOUND,
                            "JSON pointer \"%.200s\": cannot look up \"%.100s\" in a %s", ptr,
                            toks[i], gr_json_type_name(cur));
            cur = NULL;
        }
    }
    gr_json_ptr_tokens_free(toks);
    if (!cur)
        return rc != GR_OK
                   ? rc
                   : gr_err_set(err, GR_ENOTFOUND, "JSON pointer \"%.200s\": no value", ptr);
    *out = cur;
    return GR_OK;
}

json_t *gr_json_ptr_get(const json_t *doc, const char *ptr)
{
    json_t *v = NULL;
    if (gr_json_ptr_resolve(doc, ptr, &v, NULL) != GR_OK)
        return NULL;
    return v;
}

json_t *gr_json_object_child(json_t *obj, const char *key)
{
    if (!json_is_object(obj))
        return NULL;
    json_t *c = json_object_get(obj, key);
    if (json_is_object(c))
        return c;
    c = json_object();
    if (!c || json_object_set_new(obj, key, c) != 0)
        return NULL;
    return c;
}

json_t *gr_json_array_child(json_t *obj, const char *key)
{
    if (!json_is_object(obj))
        return NULL;
    json_t *c = json_object_get(obj, key);
    if (json_is_array(c))
        return c;
    c = json_array();
    if (!c || json_object_set_new(obj, key, c) != 0)
        return NULL;
    return c;
}

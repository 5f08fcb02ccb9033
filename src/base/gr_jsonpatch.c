/*
 * gr_jsonpatch.c — JSON Patch (RFC 6902): apply (atomic) and build.
 * Declared in gr_json.h.
 */
#include "gr_json.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pctx {
    size_t idx;       /* operation index in the patch */
    const char *op;   /* operation name (borrowed from the patch) */
    const char *path; /* its "path" (borrowed) or NULL */
    gr_err *err;
    size_t copy_budget; /* nodes that "copy" may still create */
} pctx;

static int pfail(pctx *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int pfail(pctx *p, int code, const char *fmt, ...)
{
    char msg[GR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (p->op && p->path)
        return gr_err_set(p->err, code, "patch[%zu] (op \"%.40s\", path \"%.200s\"): %s", p->idx,
                          p->op, p->path, msg);
    if (p->op)
        return gr_err_set(p->err, code, "patch[%zu] (op \"%.40s\"): %s", p->idx, p->op, msg);
    return gr_err_set(p->err, code, "patch[%zu]: %s", p->idx, msg);
}

/* Resolve the first n tokens. *out is borrowed. `what` names the pointer
 * ("path" or "from") in messages. */
static int walk(pctx *p, json_t *root, char **toks, size_t n, const char *what, json_t **out)
{
    json_t *cur = root;
    for (size_t i = 0; i < n; i++) {
        if (json_is_object(cur)) {
            json_t *next = json_object_get(cur, toks[i]);
            if (!next)
                return pfail(p, GR_ENOTFOUND, "%s: member \"%.100s\" does not exist", what,
                             toks[i]);
            cur = next;
        } else if (json_is_array(cur)) {
            size_t idx;
            if (!gr_json_ptr_parse_index(toks[i], &idx))
                return pfail(p, GR_EINVAL,
                             "%s: \"%.100s\" is not a valid array index (0, 1, ... without "
                             "leading zeros)",
                             what, toks[i]);
            if (idx >= json_array_size(cur))
                return pfail(p, GR_ENOTFOUND,
                             "%s: array index %zu is out of range (array has %zu elements)", what,
                             idx, json_array_size(cur));
            cur = json_array_get(cur, idx);
        } else {
            return pfail(p, GR_ENOTFOUND, "%s: cannot look up \"%.100s\" in a %s", what, toks[i],
                         gr_json_type_name(cur));
        }
    }
    *out = cur;
    return GR_OK;
}

/* value is stolen */
static int do_add(pctx *p, json_t **root, char **toks, size_t n, json_t *value)
{
    if (n == 0) {
        json_decref(*root);
        *root = value;
        return GR_OK;
    }
    json_t *parent;
    int rc = walk(p, *root, toks, n - 1, "path", &parent);
    if (rc != GR_OK) {
        json_decref(value);
        return rc;
    }
    const char *last = toks[n - 1];
    if (json_is_object(parent)) {
        if (json_object_set_new(parent, last, value) != 0)
            return pfail(p, GR_ENOMEM, "out of memory");
        return GR_OK;
    }
    if (json_is_array(parent)) {
        size_t idx, size = json_array_size(parent);
        if (strcmp(last, "-") == 0) {
            idx = size;
        } else if (!gr_json_ptr_parse_index(last, &idx)) {
            json_decref(value);
            return pfail(p, GR_EINVAL,
                         "\"%.100s\" is not a valid array index (0, 1, ... without leading zeros, "
                         "or \"-\" to append)",
                         last);
        } else if (idx > size) {
            json_decref(value);
            return pfail(p, GR_EINVAL,
                         "array index %zu is out of range (array has %zu elements; use \"-\" to "
                         "append)",
                         idx, size);
        }
        if (json_array_insert_new(parent, idx, value) != 0)
            return pfail(p, GR_ENOMEM, "out of memory");
        return GR_OK;
    }
    json_decref(value);
    return pfail(p, GR_EINVAL, "cannot add \"%.100s\" to a %s", last, gr_json_type_name(parent));
}

/* *removed (optional) receives a new reference to the removed value. */
static int do_remove(pctx *p, json_t *root, char **toks, size_t n, const char *what,
                     json_t **removed)
{
    if (n == 0)
        return pfail(p, GR_EINVAL, "%s: cannot remove the whole document", what);
    json_t *parent;
    int rc = walk(p, root, toks, n - 1, what, &parent);
    if (rc != GR_OK)
        return rc;
    const char *last = toks[n - 1];
    json_t *v = NULL;
    if (json_is_object(parent)) {
        v = json_object_get(parent, last);
        if (!v)
            return pfail(p, GR_ENOTFOUND, "%s: member \"%.100s\" does not exist", what, last);
        if (removed)
            *removed = json_incref(v);
        json_object_del(parent, last);
        return GR_OK;
    }
    if (json_is_array(parent)) {
        size_t idx;
        if (!gr_json_ptr_parse_index(last, &idx))
            return pfail(p, GR_EINVAL,
                         "%s: \"%.100s\" is not a valid array index (0, 1, ... without leading "
                         "zeros)",
                         what, last);
        if (idx >= json_array_size(parent))
            return pfail(p, GR_ENOTFOUND,
                         "%s: array index %zu is out of range (array has %zu elements)", what, idx,
                         json_array_size(parent));
        if (removed)
            *removed = json_incref(json_array_get(parent, idx));
        json_array_remove(parent, idx);
        return GR_OK;
    }
    return pfail(p, GR_ENOTFOUND, "%s: cannot remove \"%.100s\" from a %s", what, last,
                 gr_json_type_name(parent));
}

/* value is stolen */
static int do_replace(pctx *p, json_t **root, char **toks, size_t n, json_t *value)
{
    if (n == 0) {
        json_decref(*root);
        *root = value;
        return GR_OK;
    }
    json_t *parent;
    int rc = walk(p, *root, toks, n - 1, "path", &parent);
    if (rc != GR_OK) {
        json_decref(value);
        return rc;
    }
    const char *last = toks[n - 1];
    if (json_is_object(parent)) {
        if (!json_object_get(parent, last)) {
            json_decref(value);
            return pfail(p, GR_ENOTFOUND,
                         "member \"%.100s\" does not exist (use \"add\" to create it)", last);
        }
        if (json_object_set_new(parent, last, value) != 0)
            return pfail(p, GR_ENOMEM, "out of memory");
        return GR_OK;
    }
    if (json_is_array(parent)) {
        size_t idx;
        if (!gr_json_ptr_parse_index(last, &idx)) {
            json_decref(value);
            return pfail(p, GR_EINVAL,
                         "\"%.100s\" is not a valid array index (0, 1, ... without leading zeros)",
                         last);
        }
        if (idx >= json_array_size(parent)) {
            json_decref(value);
            return pfail(p, GR_ENOTFOUND,
                         "array index %zu is out of range (array has %zu elements)", idx,
                         json_array_size(parent));
        }
        if (json_array_set_new(parent, idx, value) != 0)
            return pfail(p, GR_ENOMEM, "out of memory");
        return GR_OK;
    }
    json_decref(value);
    return pfail(p, GR_ENOTFOUND, "cannot replace \"%.100s\" in a %s", last,
                 gr_json_type_name(parent));
}

/* Count nodes of v, stopping once `limit` is exceeded. */
static size_t count_nodes(const json_t *v, size_t limit)
{
    size_t n = 1;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)(uintptr_t)v, k, x)
        {
            if (n > limit)
                break;
            n += count_nodes(x, limit - n);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            if (n > limit)
                break;
            n += count_nodes(x, limit - n);
        }
    }
    return n;
}

static int get_pointer(pctx *p, const json_t *op, const char *member, const char **out)
{
    json_t *v = json_object_get(op, member);
    if (!v)
        return pfail(p, GR_EINVAL, "missing \"%s\" member", member);
    if (!json_is_string(v))
        return pfail(p, GR_EINVAL, "\"%s\" must be a string (a JSON Pointer), not a %s", member,
                     gr_json_type_name(v));
    if (strlen(json_string_value(v)) != json_string_length(v))
        return pfail(p, GR_EINVAL, "\"%s\" contains a NUL character", member);
    *out = json_string_value(v);
    return GR_OK;
}

static int parse_ptr(pctx *p, const char *ptr, const char *what, char ***toks, size_t *n)
{
    gr_err e;
    int rc = gr_json_ptr_parse(ptr, toks, n, &e);
    if (rc != GR_OK)
        return pfail(p, rc, "%s: %s", what, e.msg);
    return GR_OK;
}

static int apply_one(pctx *p, json_t **root, const json_t *op)
{
    if (!json_is_object(op))
        return pfail(p, GR_EINVAL, "an operation must be an object, not a %s",
                     gr_json_type_name(op));
    json_t *opv = json_object_get(op, "op");
    if (!opv)
        return pfail(p, GR_EINVAL, "missing \"op\" member");
    if (!json_is_string(opv))
        return pfail(p, GR_EINVAL, "\"op\" must be a string, not a %s", gr_json_type_name(opv));
    p->op = json_string_value(opv);
    const char *opname = p->op;
    enum { ADD, REMOVE, REPLACE, MOVE, COPY, TEST } kind;
    if (strcmp(opname, "add") == 0)
        kind = ADD;
    else if (strcmp(opname, "remove") == 0)
        kind = REMOVE;
    else if (strcmp(opname, "replace") == 0)
        kind = REPLACE;
    else if (strcmp(opname, "move") == 0)
        kind = MOVE;
    else if (strcmp(opname, "copy") == 0)
        kind = COPY;
    else if (strcmp(opname, "test") == 0)
        kind = TEST;
    else
        return pfail(p, GR_EINVAL,
                     "unknown operation (expected add, remove, replace, move, copy or test)");

    const char *path;
    int rc = get_pointer(p, op, "path", &path);
    if (rc != GR_OK)
        return rc;
    p->path = path;
    const char *from = NULL;
    if (kind == MOVE || kind == COPY) {
        rc = get_pointer(p, op, "from", &from);
        if (rc != GR_OK)
            return rc;
    }
    const json_t *value = NULL;
    if (kind == ADD || kind == REPLACE || kind == TEST) {
        value = json_object_get(op, "value");
        if (!value)
            return pfail(p, GR_EINVAL, "missing \"value\" member");
    }

    char **toks = NULL, **ftoks = NULL;
    size_t n = 0, fn = 0;
    rc = parse_ptr(p, path, "path", &toks, &n);
    if (rc == GR_OK && from)
        rc = parse_ptr(p, from, "from", &ftoks, &fn);
    if (rc != GR_OK)
        goto out;

    switch (kind) {
    case ADD:
    case REPLACE: {
        json_t *copy = json_deep_copy(value);
        if (!copy) {
            rc = pfail(p, GR_ENOMEM, "out of memory");
            break;
        }
        rc = kind == ADD ? do_add(p, root, toks, n, copy) : do_replace(p, root, toks, n, copy);
        break;
    }
    case REMOVE:
        rc = do_remove(p, *root, toks, n, "path", NULL);
        break;
    case MOVE: {
        bool prefix = fn <= n;
        for (size_t i = 0; prefix && i < fn; i++)
            prefix = strcmp(ftoks[i], toks[i]) == 0;
        if (prefix && fn == n) { /* move onto itself: the value must exist */
            json_t *src;
            rc = walk(p, *root, ftoks, fn, "from", &src);
            break;
        }
        if (prefix) {
            rc = pfail(p, GR_EINVAL, "cannot move \"%.200s\" into one of its own children", from);
            break;
        }
        json_t *moved = NULL;
        rc = do_remove(p, *root, ftoks, fn, "from", &moved);
        if (rc == GR_OK)
            rc = do_add(p, root, toks, n, moved);
        break;
    }
    case COPY: {
        json_t *src;
        rc = walk(p, *root, ftoks, fn, "from", &src);
        if (rc != GR_OK)
            break;
        size_t cnt = count_nodes(src, p->copy_budget);
        if (cnt > p->copy_budget) {
            rc = pfail(p, GR_ETOOBIG,
                       "copies in this patch would create more than %zu nodes; the patch is "
                       "rejected to bound memory",
                       (size_t)GR_JSON_PATCH_MAX_COPY_NODES);
            break;
        }
        p->copy_budget -= cnt;
        json_t *copy = json_deep_copy(src);
        if (!copy) {
            rc = pfail(p, GR_ENOMEM, "out of memory");
            break;
        }
        rc = do_add(p, root, toks, n, copy);
        break;
    }
    case TEST: {
        json_t *cur;
        rc = walk(p, *root, toks, n, "path", &cur);
        if (rc == GR_OK && !gr_json_equal(cur, value))
            rc = pfail(p, GR_ECONFLICT, "test failed: the value differs");
        break;
    }
    }
out:
    gr_json_ptr_tokens_free(toks);
    gr_json_ptr_tokens_free(ftoks);
    return rc;
}

int gr_json_patch_apply_copy(const json_t *doc, const json_t *patch, json_t **out, gr_err *err)
{
    if (!out)
        return gr_err_set(err, GR_EINVAL, "gr_json_patch_apply_copy: NULL argument");
    *out = NULL;
    if (!doc)
        return gr_err_set(err, GR_EINVAL, "JSON Patch: no document to patch");
    if (!json_is_array(patch))
        return gr_err_set(err, GR_EINVAL, "JSON Patch must be an array of operations (got %s)",
                          gr_json_type_name(patch));
    json_t *work = json_deep_copy(doc);
    if (!work)
        return gr_err_set(err, GR_ENOMEM, "JSON Patch: out of memory copying the document");
    pctx p = {0, NULL, NULL, err, GR_JSON_PATCH_MAX_COPY_NODES};
    for (size_t i = 0; i < json_array_size(patch); i++) {
        p.idx = i;
        p.op = NULL;
        p.path = NULL;
        int rc = apply_one(&p, &work, json_array_get(patch, i));
        if (rc != GR_OK) {
            json_decref(work);
            return rc;
        }
    }
    gr_err_clear(err);
    *out = work;
    return GR_OK;
}

int gr_json_patch_apply(json_t **doc, const json_t *patch, gr_err *err)
{
    if (!doc || !*doc)
        return gr_err_set(err, GR_EINVAL, "JSON Patch: no document to patch");
    json_t *out;
    int rc = gr_json_patch_apply_copy(*doc, patch, &out, err);
    if (rc != GR_OK)
        return rc;
    json_decref(*doc);
    *doc = out;
    return GR_OK;
}

/* ------------------------------------------------------------- builder */

static int build_op(json_t *patch, const char *op, const char *from, const char *path,
                    json_t *value, bool needs_value, gr_err *err)
{
    int rc = GR_OK;
    json_t *o = NULL;
    if (!json_is_array(patch)) {
        rc = gr_err_set(err, GR_EINVAL, "JSON Patch builder: the patch must be a JSON array");
        goto fail;
    }
    if (needs_value && !value) {
        rc = gr_err_set(err, GR_EINVAL, "JSON Patch builder: %s \"%s\" needs a value", op,
                        path ? path : "");
        goto fail;
    }
    const char *ptrs[2] = {from, path};
    for (int i = 0; i < 2; i++) {
        if (i == 0 && !from)
            continue;
        char **toks;
        gr_err e;
        rc = gr_json_ptr_parse(ptrs[i], &toks, NULL, &e);
        if (rc != GR_OK) {
            rc = gr_err_set(err, rc, "JSON Patch builder: %s %s: %s", op, i == 0 ? "from" : "path",
                            e.msg);
            goto fail;
        }
        gr_json_ptr_tokens_free(toks);
    }
    o = json_object();
    if (!o || json_object_set_new(o, "op", json_string(op)) != 0 ||
        (from && json_object_set_new(o, "from", json_string(from)) != 0) ||
        json_object_set_new(o, "path", json_string(path)) != 0) {
        rc = gr_err_set(err, GR_ENOMEM, "JSON Patch builder: out of memory (or bad UTF-8)");
        goto fail;
    }
    if (value) {
        json_t *v = value;
        value = NULL;
        if (json_object_set_new(o, "value", v) != 0) {
            rc = gr_err_set(err, GR_ENOMEM, "JSON Patch builder: out of memory");
            goto fail;
        }
    }
    if (json_array_append_new(patch, o) != 0) {
        o = NULL;
        rc = gr_err_set(err, GR_ENOMEM, "JSON Patch builder: out of memory");
        goto fail;
    }
    gr_err_clear(err);
    return GR_OK;
fail:
    json_decref(o);
    json_decref(value);
    return rc;
}

int gr_json_patch_add(json_t *patch, const char *path, json_t *value, gr_err *err)
{
    return build_op(patch, "add", NULL, path, value, true, err);
}

int gr_json_patch_remove(json_t *patch, const char *path, gr_err *err)
{
    return build_op(patch, "remove", NULL, path, NULL, false, err);
}

int gr_json_patch_replace(json_t *patch, const char *path, json_t *value, gr_err *err)
{
    return build_op(patch, "replace", NULL, path, value, true, err);
}

int gr_json_patch_move(json_t *patch, const char *from, const char *path, gr_err *err)
{
    if (!from)
        return gr_err_set(err, GR_EINVAL, "JSON Patch builder: move needs \"from\"");
    return build_op(patch, "move", from, path, NULL, false, err);
}

int gr_json_patch_copy(json_t *patch, const char *from, const char *path, gr_err *err)
{
    if (!from)
        return gr_err_set(err, GR_EINVAL, "JSON Patch builder: copy needs \"from\"");
    return build_op(patch, "copy", from, path, NULL, false, err);
}

int gr_json_patch_test(json_t *patch, const char *path, json_t *value, gr_err *err)
{
    return build_op(patch, "test", NULL, path, value, true, err);
}

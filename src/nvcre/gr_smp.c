/*
 * gr_smp.c — strategic merge patch driven by the generated schema
 * (gr_smp.h). The algorithm follows the behaviour of the kube-apiserver's
 * strategic merge patch for `kubectl patch --type strategic`: see the
 * comments at each step for the rule it reproduces.
 */
#include "gr_smp.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_json.h"

struct gr_smp_schema {
    json_t *doc;
    json_t *defs;  /* borrowed from doc */
    json_t *roots; /* borrowed from doc */
};

extern const char gr_smp_schema_json[];

#define DIR_PATCH     "$patch"
#define DIR_RETAIN    "$retainKeys"
#define DIR_ORDER     "$setElementOrder/"
#define DIR_DELPRIM   "$deleteFromPrimitiveList/"
#define PATH_MAX_TEXT 256

/* ------------------------------------------------------------- schema */

int gr_smp_schema_load(const char *json, size_t len, gr_smp_schema **out, gr_err *err)
{
    *out = NULL;
    json_t *doc = NULL;
    int rc = gr_json_parse(json, len, 0, "smp-schema", &doc, err);
    if (rc != GR_OK)
        return rc;
    json_t *defs = json_object_get(doc, "definitions");
    json_t *roots = json_object_get(doc, "roots");
    if (!json_is_object(defs) || !json_is_object(roots)) {
        json_decref(doc);
        return gr_err_set(err, GR_EINVAL,
                          "smp-schema: needs objects \"definitions\" and \"roots\"; regenerate it "
                          "with scripts/gen-smp-schema");
    }
    gr_smp_schema *s = calloc(1, sizeof(*s));
    if (!s) {
        json_decref(doc);
        return gr_err_set(err, GR_ENOMEM, "smp-schema: out of memory");
    }
    s->doc = doc;
    s->defs = defs;
    s->roots = roots;
    *out = s;
    return GR_OK;
}

void gr_smp_schema_free(gr_smp_schema *s)
{
    if (!s)
        return;
    json_decref(s->doc);
    free(s);
}

const char *gr_smp_schema_source(const gr_smp_schema *s)
{
    const char *v = s ? json_string_value(json_object_get(s->doc, "generatedFrom")) : NULL;
    return v ? v : "";
}

static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;
static gr_smp_schema *builtin;

static void builtin_init(void)
{
    (void)gr_smp_schema_load(gr_smp_schema_json, strlen(gr_smp_schema_json), &builtin, NULL);
}

const gr_smp_schema *gr_smp_schema_builtin(void)
{
    pthread_once(&builtin_once, builtin_init);
    return builtin;
}

/* A position in the schema: `def` is an object with "p" (properties), or
 * `mapval` is the meta of every value of a map. Both NULL: untyped. */
typedef struct cur {
    const json_t *def;
    const json_t *mapval;
} cur;

typedef struct ctx {
    const gr_smp_schema *s;
    gr_err *err;
} ctx;

/* Type (t/d) of a meta, ignoring map-ness. */
static cur cur_type(const ctx *c, const json_t *meta)
{
    cur r = {NULL, NULL};
    if (!meta)
        return r;
    const char *t = json_string_value(json_object_get(meta, "t"));
    if (t)
        r.def = json_object_get(c->s->defs, t);
    else
        r.def = json_object_get(meta, "d");
    return r;
}

/* Cursor inside the value of a field with `meta`. */
static cur cur_of(const ctx *c, const json_t *meta)
{
    cur r = {NULL, NULL};
    if (!meta)
        return r;
    if (json_object_get(meta, "m")) {
        r.mapval = meta;
        return r;
    }
    return cur_type(c, meta);
}

/* Cursor of the items of a list field with `meta`. */
static cur cur_item(const ctx *c, const json_t *meta)
{
    if (!meta)
        return (cur){NULL, NULL};
    const json_t *i = json_object_get(meta, "i");
    return cur_type(c, i ? i : meta);
}

/* Meta of member `k` at `at`. For a map, every member's meta is the
 * value type (no strategy: strategies belong to struct fields). */
static const json_t *field_meta(const cur *at, const char *k, int *is_mapval)
{
    *is_mapval = 0;
    if (at->mapval) {
        *is_mapval = 1;
        return at->mapval;
    }
    if (!at->def)
        return NULL;
    return json_object_get(json_object_get(at->def, "p"), k);
}

static cur cur_child(const ctx *c, const cur *at, const char *k)
{
    int mv;
    const json_t *m = field_meta(at, k, &mv);
    return mv ? cur_type(c, m) : cur_of(c, m);
}

/* Patch strategy of a field with the retainKeys part removed
 * (extractRetainKeysPatchStrategy). */
static int field_strategy(const ctx *c, const cur *at, const char *k, const char *path,
                          const char **strategy, const char **mkey)
{
    int mv;
    const json_t *m = field_meta(at, k, &mv);
    *strategy = "";
    *mkey = "";
    if (!m || mv)
        return GR_OK;
    const char *s = json_string_value(json_object_get(m, "s"));
    const char *key = json_string_value(json_object_get(m, "k"));
    if (key)
        *mkey = key;
    if (!s)
        return GR_OK;
    if (!strcmp(s, "retainKeys"))
        return GR_OK;
    if (!strcmp(s, "merge") || !strcmp(s, "replace")) {
        *strategy = s;
        return GR_OK;
    }
    if (!strcmp(s, "merge,retainKeys") || !strcmp(s, "retainKeys,merge")) {
        *strategy = "merge";
        return GR_OK;
    }
    return gr_err_set(c->err, GR_EINVAL, "%s.%s: unexpected patch strategy \"%s\" in the schema",
                      path, k, s);
}

/* ------------------------------------------------------------- helpers */

/* out = path + "." + k (or k at the root), truncated to PATH_MAX_TEXT. */
static void path_cat(char *out, const char *a, const char *b, const char *c3)
{
    size_t n = 0;
    const char *parts[3] = {a, b, c3};
    for (int i = 0; i < 3; i++) {
        for (const char *p = parts[i]; p && *p && n + 1 < PATH_MAX_TEXT; p++)
            out[n++] = *p;
    }
    out[n] = 0;
}

static void sub_path(char *out, const char *path, const char *k)
{
    path_cat(out, path, *path ? "." : "", k);
}

static void idx_path(char *out, const char *path, size_t i)
{
    char num[32];
    snprintf(num, sizeof(num), "[%zu]", i);
    path_cat(out, path, num, NULL);
}

/* Go's reflect kinds of decoded JSON: numbers are all float64, booleans
 * one kind. */
static int kind_of(const json_t *v)
{
    if (!v)
        return -1;
    switch (json_typeof(v)) {
    case JSON_INTEGER:
    case JSON_REAL:
        return JSON_REAL;
    case JSON_TRUE:
    case JSON_FALSE:
        return JSON_TRUE;
    default:
        return (int)json_typeof(v);
    }
}

/* Go == on decoded JSON scalars (maps/lists never compare equal here). */
static int scalar_eq(const json_t *a, const json_t *b)
{
    if (json_is_object(a) || json_is_array(a) || json_is_object(b) || json_is_array(b))
        return 0;
    return gr_json_equal(a, b);
}

/* Recursively drop null members of maps (IgnoreUnmatchedNulls). */
static void discard_nulls(json_t *v)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        void *tmp;
        json_object_foreach_safe(v, tmp, k, x)
        {
            if (json_is_null(x))
                json_object_del(v, k);
            else
                discard_nulls(x);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) discard_nulls(x);
    }
}

/* Index of `item` in `list` (by merge key for maps, by value otherwise). */
static long index_in(const json_t *list, const json_t *item, const char *mkey, int maps)
{
    size_t i;
    json_t *x;
    if (maps) {
        const json_t *want = json_object_get(item, mkey);
        if (!want)
            return -1;
        json_array_foreach(list, i, x)
        {
            if (scalar_eq(json_object_get(x, mkey), want))
                return (long)i;
        }
        return -1;
    }
    json_array_foreach(list, i, x)
    {
        if (scalar_eq(x, item))
            return (long)i;
    }
    return -1;
}

static int need_merge_key(const ctx *c, const json_t *list, const char *mkey, const char *path)
{
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        if (!json_is_object(x) || !json_object_get(x, mkey))
            return gr_err_set(c->err, GR_EINVAL,
                              "%s[%zu]: map does not contain declared merge key \"%s\"", path, i,
                              mkey);
    }
    return GR_OK;
}

/* Stable sort of `a` by position in `order` (normalizeSliceOrder): an item
 * moves before its predecessor only when both are found and it comes
 * first in `order`. Insertion sort, as Go's stable sort does on short runs;
 * every caller sorts items that are all present in `order`. */
static void sort_by_order(json_t *a, const json_t *order, const char *mkey, int maps)
{
    size_t n = json_array_size(a);
    for (size_t i = 1; i < n; i++) {
        for (size_t j = i; j > 0; j--) {
            long ij = index_in(order, json_array_get(a, j), mkey, maps);
            long ip = index_in(order, json_array_get(a, j - 1), mkey, maps);
            int less = ij >= 0 && ip >= 0 ? ij < ip : 1;
            if (!less)
                break;
            json_t *x = json_incref(json_array_get(a, j));
            json_t *y = json_incref(json_array_get(a, j - 1));
            json_array_set_new(a, j, y);
            json_array_set_new(a, j - 1, x);
        }
    }
}

/* normalizeElementOrder + mergeSortedSlice: patch items sorted by
 * `patch_order`, server-only items by `server_order`, then interleaved:
 * a server-only item goes first only when both are in `server_order` and
 * it precedes. Steals `patch_items` and `server_only`. */
static int normalize_order(const ctx *c, json_t *patch_items, json_t *server_only,
                           const json_t *patch_order, const json_t *server_order, const char *mkey,
                           int maps, const char *path, json_t **out)
{
    int rc = GR_OK;
    *out = NULL;
    if (maps) {
        if ((rc = need_merge_key(c, patch_items, mkey, path)) != GR_OK ||
            (rc = need_merge_key(c, patch_order, mkey, path)) != GR_OK ||
            (rc = need_merge_key(c, server_only, mkey, path)) != GR_OK ||
            (rc = need_merge_key(c, server_order, mkey, path)) != GR_OK)
            goto done;
    }
    sort_by_order(patch_items, patch_order, mkey, maps);
    sort_by_order(server_only, server_order, mkey, maps);
    json_t *all = json_array();
    if (!all) {
        rc = gr_err_set(c->err, GR_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    size_t i = 0, j = 0, nl = json_array_size(server_only), nr = json_array_size(patch_items);
    while (i < nl || j < nr) {
        json_t *pick;
        if (i >= nl) {
            pick = json_array_get(patch_items, j++);
        } else if (j >= nr) {
            pick = json_array_get(server_only, i++);
        } else {
            long li = index_in(server_order, json_array_get(server_only, i), mkey, maps);
            long ri = index_in(server_order, json_array_get(patch_items, j), mkey, maps);
            if (li >= 0 && ri >= 0 && li < ri)
                pick = json_array_get(server_only, i++);
            else
                pick = json_array_get(patch_items, j++);
        }
        json_array_append(all, pick);
    }
    *out = all;
done:
    json_decref(patch_items);
    json_decref(server_only);
    return rc;
}

/* Split `merged` into items present in `by` and the rest. */
static int partition(const ctx *c, const json_t *merged, const json_t *by, const char *mkey,
                     int maps, const char *path, json_t **in, json_t **rest)
{
    *in = json_array();
    *rest = json_array();
    if (!*in || !*rest) {
        json_decref(*in);
        json_decref(*rest);
        return gr_err_set(c->err, GR_ENOMEM, "%s: out of memory", path);
    }
    size_t i;
    json_t *x;
    json_array_foreach(merged, i, x)
    {
        if (maps && (!json_is_object(x) || !json_object_get(x, mkey))) {
            json_decref(*in);
            json_decref(*rest);
            return gr_err_set(c->err, GR_EINVAL,
                              "%s[%zu]: map does not contain declared merge key \"%s\"", path, i,
                              mkey);
        }
        json_array_append(index_in(by, x, mkey, maps) >= 0 ? *in : *rest, x);
    }
    return GR_OK;
}

/* sliceElementType: every element of a and b has one kind, not a list.
 * *maps = 1 for maps. GR_EINVAL when empty or mixed. */
static int element_kind(const ctx *c, const json_t *a, const json_t *b, const char *path, int *maps)
{
    int kind = -2;
    const json_t *lists[2] = {a, b};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *x;
        json_array_foreach(lists[l], i, x)
        {
            int k = kind_of(x);
            if (kind == -2) {
                kind = k;
                if (k == JSON_ARRAY)
                    return gr_err_set(c->err, GR_EINVAL, "%s: lists of lists are not supported",
                                      path);
            } else if (k != kind) {
                return gr_err_set(c->err, GR_EINVAL, "%s: list element types are not identical",
                                  path);
            }
        }
    }
    if (kind == -2)
        return gr_err_set(c->err, GR_EINVAL, "%s: no elements in any of the given lists", path);
    *maps = kind == JSON_OBJECT;
    return GR_OK;
}

static int merge_map(const ctx *c, json_t *orig, json_t *patch, cur at, const char *path, int depth,
                     json_t **out);

/* mergeSlice. `orig` and `patch` are owned copies (may be modified). */
static int merge_slice(const ctx *c, json_t *orig, json_t *patch, cur item, const char *mkey,
                       int is_delete, const char *path, int depth, json_t **out)
{
    int rc, maps;
    *out = NULL;
    if (json_array_size(orig) == 0 && json_array_size(patch) == 0) {
        *out = json_incref(orig);
        return GR_OK;
    }
    if ((rc = element_kind(c, orig, patch, path, &maps)) != GR_OK)
        return rc;
    json_t *merged = NULL;
    json_t *order_patch = patch, *order_server = orig;
    json_t *own_orig = NULL, *own_patch = NULL;
    if (!maps) {
        size_t i;
        json_t *x;
        merged = json_array();
        if (!merged)
            return gr_err_set(c->err, GR_ENOMEM, "%s: out of memory", path);
        if (is_delete) {
            /* deleteFromSlice: every occurrence of every listed value goes. */
            json_array_foreach(orig, i, x)
            {
                if (index_in(patch, x, NULL, 0) < 0)
                    json_array_append(merged, x);
            }
            *out = merged;
            return GR_OK;
        }
        /* Union, first occurrence kept. */
        const json_t *both[2] = {orig, patch};
        for (int l = 0; l < 2; l++) {
            json_array_foreach(both[l], i, x)
            {
                if (index_in(merged, x, NULL, 0) < 0)
                    json_array_append(merged, x);
            }
        }
    } else {
        if (!*mkey)
            return gr_err_set(c->err, GR_EINVAL,
                              "%s: cannot merge lists without merge key (the schema declares "
                              "patch strategy merge but no merge key)",
                              path);
        /* mergeSliceWithSpecialElements: $patch: delete removes matching
         * originals, $patch: replace makes the rest of the patch the list. */
        own_patch = json_array();
        own_orig = json_copy(orig);
        if (!own_patch || !own_orig) {
            json_decref(own_patch);
            json_decref(own_orig);
            return gr_err_set(c->err, GR_ENOMEM, "%s: out of memory", path);
        }
        int replace = 0;
        size_t i;
        json_t *x;
        json_array_foreach(patch, i, x)
        {
            if (!json_is_object(x)) {
                rc = gr_err_set(c->err, GR_EINVAL, "%s[%zu]: expected a map", path, i);
                goto fail;
            }
            json_t *d = json_object_get(x, DIR_PATCH);
            if (!d) {
                json_array_append(own_patch, x);
                continue;
            }
            const char *ds = json_string_value(d);
            if (ds && !strcmp(ds, "delete")) {
                json_t *mv = json_object_get(x, mkey);
                if (!mv) {
                    rc = gr_err_set(c->err, GR_EINVAL,
                                    "%s[%zu]: map does not contain declared merge key \"%s\"", path,
                                    i, mkey);
                    goto fail;
                }
                for (size_t j = 0; j < json_array_size(own_orig);) {
                    if (scalar_eq(json_object_get(json_array_get(own_orig, j), mkey), mv))
                        json_array_remove(own_orig, j);
                    else
                        j++;
                }
            } else if (ds && !strcmp(ds, "replace")) {
                replace = 1;
            } else if (ds && !strcmp(ds, "merge")) {
                rc = gr_err_set(c->err, GR_EINVAL,
                                "%s[%zu]: merging lists cannot yet be specified in the patch", path,
                                i);
                goto fail;
            } else {
                rc = gr_err_set(c->err, GR_EINVAL, "%s[%zu]: unknown patch type in list item", path,
                                i);
                goto fail;
            }
        }
        if (replace) {
            json_decref(own_orig);
            own_orig = own_patch;
            own_patch = json_array();
            if (!own_patch) {
                rc = gr_err_set(c->err, GR_ENOMEM, "%s: out of memory", path);
                goto fail;
            }
        }
        /* mergeSliceWithoutSpecialElements: merge by key in place, else append. */
        merged = json_copy(own_orig);
        if (!merged) {
            rc = gr_err_set(c->err, GR_ENOMEM, "%s: out of memory", path);
            goto fail;
        }
        json_array_foreach(own_patch, i, x)
        {
            json_t *mv = json_object_get(x, mkey);
            if (!mv) {
                rc = gr_err_set(c->err, GR_EINVAL,
                                "%s[%zu]: map does not contain declared merge key \"%s\"", path, i,
                                mkey);
                goto fail;
            }
            size_t j;
            json_t *o;
            int found = 0;
            json_array_foreach(merged, j, o)
            {
                if (json_is_object(o) && scalar_eq(json_object_get(o, mkey), mv)) {
                    char p2[PATH_MAX_TEXT];
                    idx_path(p2, path, j);
                    json_t *res = NULL;
                    /* In place, as Go's maps are references. */
                    rc = merge_map(c, o, x, item, p2, depth + 1, &res);
                    if (rc != GR_OK)
                        goto fail;
                    json_array_set_new(merged, j, res);
                    found = 1;
                    break;
                }
            }
            if (!found)
                json_array_append(merged, x);
        }
        order_patch = own_patch;
        order_server = own_orig;
    }
    json_t *in = NULL, *rest = NULL;
    rc = partition(c, merged, order_patch, mkey, maps, path, &in, &rest);
    if (rc == GR_OK)
        rc = normalize_order(c, in, rest, order_patch, order_server, mkey, maps, path, out);
fail:
    json_decref(merged);
    json_decref(own_orig);
    json_decref(own_patch);
    return rc;
}

static int merge_slice_handler(const ctx *c, json_t *orig, json_t *patch, cur item,
                               const char *strategy, const char *mkey, int is_delete,
                               const char *path, int depth, json_t **out)
{
    if (strcmp(strategy, "merge") != 0) {
        *out = json_incref(patch);
        return GR_OK;
    }
    return merge_slice(c, orig, patch, item, mkey, is_delete, path, depth, out);
}

/* mergeKeyValueEqual for $setElementOrder validation. */
static int order_matches(const ctx *c, const json_t *a, const json_t *b, const char *mkey,
                         const char *path, int *eq)
{
    if (!*mkey) {
        *eq = scalar_eq(a, b);
        return GR_OK;
    }
    if (!json_is_object(a) || !json_is_object(b) || !json_object_get(a, mkey) ||
        !json_object_get(b, mkey))
        return gr_err_set(c->err, GR_EINVAL, "%s: map does not contain declared merge key \"%s\"",
                          path, mkey);
    *eq = scalar_eq(json_object_get(a, mkey), json_object_get(b, mkey));
    return GR_OK;
}

/* validatePatchWithSetOrderList: the patch list (without delete items)
 * must appear in the order list in the same relative order. */
static int validate_order(const ctx *c, const json_t *plist, const json_t *order, const char *mkey,
                          const char *path)
{
    size_t np = json_array_size(plist), no = json_array_size(order);
    if (np == 0 || no == 0)
        return GR_OK;
    size_t pi = 0, oi = 0;
    while (pi < np && oi < no) {
        const json_t *p = json_array_get(plist, pi);
        if (json_is_object(p) && json_object_get(p, DIR_PATCH)) {
            pi++;
            continue;
        }
        int eq = 0, rc = order_matches(c, p, json_array_get(order, oi), mkey, path, &eq);
        if (rc != GR_OK)
            return rc;
        if (eq)
            pi++;
        oi++;
    }
    while (pi < np) {
        const json_t *p = json_array_get(plist, pi);
        if (!(json_is_object(p) && json_object_get(p, DIR_PATCH)))
            break;
        pi++;
    }
    if (pi < np)
        return gr_err_set(c->err, GR_EINVAL,
                          "%s: the order in the patch list does not match the %s list", path,
                          DIR_ORDER);
    return GR_OK;
}

/* applyRetainKeysDirective. */
static int retain_keys(const ctx *c, json_t *orig, json_t *patch, const char *path)
{
    json_t *rk = json_object_get(patch, DIR_RETAIN);
    if (!rk)
        return GR_OK;
    json_incref(rk);
    json_object_del(patch, DIR_RETAIN);
    int rc = GR_OK;
    if (!json_is_array(rk)) {
        rc = gr_err_set(c->err, GR_EINVAL, "%s: invalid patch format of retainKeys", path);
        goto done;
    }
    const char *k;
    json_t *v;
    json_object_foreach(patch, k, v)
    {
        if (json_is_null(v) || !strncmp(k, DIR_DELPRIM, strlen(DIR_DELPRIM)) ||
            !strncmp(k, DIR_ORDER, strlen(DIR_ORDER)))
            continue;
        int found = 0;
        size_t i;
        json_t *x;
        json_array_foreach(rk, i, x)
        {
            if (json_is_string(x) && !strcmp(json_string_value(x), k))
                found = 1;
        }
        if (!found) {
            rc = gr_err_set(c->err, GR_EINVAL,
                            "%s: invalid patch format of retainKeys: \"%s\" is patched but not "
                            "listed in $retainKeys",
                            path, k);
            goto done;
        }
    }
    void *tmp;
    json_object_foreach_safe(orig, tmp, k, v)
    {
        int found = 0;
        size_t i;
        json_t *x;
        json_array_foreach(rk, i, x)
        {
            if (json_is_string(x) && !strcmp(json_string_value(x), k))
                found = 1;
        }
        if (!found)
            json_object_del(orig, k);
    }
done:
    json_decref(rk);
    return rc;
}

/* mergePatchIntoOriginal: every $setElementOrder/<field> with its list. */
static int set_element_order(const ctx *c, json_t *orig, json_t *patch, cur at, const char *path,
                             int depth)
{
    size_t plen = strlen(DIR_ORDER);
    for (;;) {
        const char *dk = NULL;
        const char *k;
        json_t *v;
        json_object_foreach(patch, k, v)
        {
            if (!strncmp(k, DIR_ORDER, plen)) {
                dk = k;
                break;
            }
        }
        if (!dk)
            return GR_OK;
        char p2[PATH_MAX_TEXT];
        /* A copy: deleting the directive below frees dk. */
        char *okey = strdup(dk + plen);
        if (!okey)
            return gr_err_set(c->err, GR_ENOMEM, "%s: out of memory", path);
        sub_path(p2, path, okey);
        json_t *order = json_incref(json_object_get(patch, dk));
        json_object_del(patch, dk);
        int rc = GR_OK;
        json_t *olist = json_object_get(orig, okey), *plist = json_object_get(patch, okey);
        json_t *merged = NULL, *empty = json_array();
        (void)depth;
        if (!empty) {
            json_decref(order);
            free(okey);
            return gr_err_set(c->err, GR_ENOMEM, "%s: out of memory", path);
        }
        if (!json_is_array(order) || (olist && !json_is_array(olist)) ||
            (plist && !json_is_array(plist))) {
            rc =
                gr_err_set(c->err, GR_EINVAL, "%s: invalid patch: %s%s and the field must be lists",
                           p2, DIR_ORDER, okey);
            goto next;
        }
        const char *strategy, *mkey;
        if ((rc = field_strategy(c, &at, okey, path, &strategy, &mkey)) != GR_OK)
            goto next;
        if ((rc = validate_order(c, plist ? plist : empty, order, mkey, p2)) != GR_OK)
            goto next;
        if (!olist && !plist)
            goto next;
        if (!olist) {
            merged = json_incref(plist);
        } else if (!plist) {
            merged = json_incref(olist);
        } else {
            int fm;
            const json_t *meta = field_meta(&at, okey, &fm);
            cur item = fm ? cur_type(c, NULL) : cur_item(c, meta);
            rc = merge_slice_handler(c, olist, plist, item, strategy, mkey, 0, p2, depth, &merged);
            if (rc != GR_OK)
                goto next;
        }
        {
            int maps;
            if ((rc = element_kind(c, olist ? olist : empty, plist ? plist : empty, p2, &maps)) !=
                GR_OK)
                goto next;
            json_t *in = NULL, *rest = NULL;
            if ((rc = partition(c, merged, order, mkey, maps && *mkey, p2, &in, &rest)) != GR_OK)
                goto next;
            json_t *res = NULL;
            rc = normalize_order(c, in, rest, order, olist ? olist : empty, mkey, maps && *mkey, p2,
                                 &res);
            if (rc != GR_OK)
                goto next;
            json_object_set_new(orig, okey, res);
            json_object_del(patch, okey);
        }
    next:
        json_decref(merged);
        json_decref(empty);
        json_decref(order);
        free(okey);
        if (rc != GR_OK)
            return rc;
    }
}

static int merge_map(const ctx *c, json_t *orig, json_t *patch, cur at, const char *path, int depth,
                     json_t **out)
{
    int rc;
    *out = NULL;
    if (depth > GR_SMP_MAX_DEPTH)
        return gr_err_set(c->err, GR_ETOOBIG, "%s: patch nested deeper than %d levels", path,
                          GR_SMP_MAX_DEPTH);
    /* handleDirectiveInMergeMap */
    json_t *d = json_object_get(patch, DIR_PATCH);
    if (d) {
        const char *ds = json_string_value(d);
        if (ds && !strcmp(ds, "replace")) {
            json_object_del(patch, DIR_PATCH);
            *out = json_incref(patch);
            return GR_OK;
        }
        if (ds && !strcmp(ds, "delete")) {
            *out = json_object();
            return *out ? GR_OK : gr_err_set(c->err, GR_ENOMEM, "%s: out of memory", path);
        }
        return gr_err_set(c->err, GR_EINVAL,
                          "%s: unknown patch type \"%s\" in map (use replace or delete)", path,
                          ds ? ds : gr_json_type_name(d));
    }
    if ((rc = retain_keys(c, orig, patch, path)) != GR_OK)
        return rc;
    if ((rc = set_element_order(c, orig, patch, at, path, depth)) != GR_OK)
        return rc;

    const char *k;
    json_t *pv;
    size_t dlen = strlen(DIR_DELPRIM);
    json_object_foreach(patch, k, pv)
    {
        int is_delete = 0;
        const char *key = k;
        if (!strncmp(k, DIR_DELPRIM, dlen)) {
            is_delete = 1;
            key = k + dlen;
        }
        char p2[PATH_MAX_TEXT];
        sub_path(p2, path, key);
        if (json_is_null(pv)) {
            json_object_del(orig, key);
            continue;
        }
        json_t *ov = json_object_get(orig, key);
        const char *strategy, *mkey;
        if ((rc = field_strategy(c, &at, key, path, &strategy, &mkey)) != GR_OK)
            return rc;
        json_t *res = NULL;
        if (!ov) {
            /* A new member: nulls are dropped and directives resolved
             * against an empty original, as the apiserver does. */
            if (is_delete)
                continue;
            /* A new map that carries a $patch directive is dropped (the
             * apiserver neither replaces nor deletes what is not there). */
            if (json_is_object(pv) && json_object_get(pv, DIR_PATCH))
                continue;
            discard_nulls(pv);
            json_t *empty = json_is_object(pv) ? json_object() : json_array();
            if (!empty)
                return gr_err_set(c->err, GR_ENOMEM, "%s: out of memory", path);
            if (json_is_object(pv) && strcmp(strategy, "replace") != 0) {
                rc = merge_map(c, empty, pv, cur_child(c, &at, key), p2, depth + 1, &res);
            } else if (json_is_array(pv) && json_array_size(pv) > 0) {
                int mv;
                const json_t *meta = field_meta(&at, key, &mv);
                rc = merge_slice_handler(c, empty, pv, mv ? cur_type(c, NULL) : cur_item(c, meta),
                                         strategy, mkey, 0, p2, depth + 1, &res);
            } else {
                res = json_incref(pv);
            }
            json_decref(empty);
            if (rc != GR_OK)
                return rc;
            json_object_set_new(orig, key, res);
            continue;
        }
        if (kind_of(ov) != kind_of(pv)) {
            if (!is_delete) {
                discard_nulls(pv);
                json_object_set(orig, key, pv);
            }
            continue;
        }
        if (json_is_object(ov)) {
            if (!strcmp(strategy, "replace")) {
                res = json_incref(pv);
            } else {
                rc = merge_map(c, ov, pv, cur_child(c, &at, key), p2, depth + 1, &res);
            }
        } else if (json_is_array(ov)) {
            int mv;
            const json_t *meta = field_meta(&at, key, &mv);
            cur item = mv ? cur_type(c, NULL) : cur_item(c, meta);
            rc = merge_slice_handler(c, ov, pv, item, strategy, mkey, is_delete, p2, depth + 1,
                                     &res);
        } else {
            res = json_incref(pv);
        }
        if (rc != GR_OK)
            return rc;
        json_object_set_new(orig, key, res);
    }
    *out = json_incref(orig);
    return GR_OK;
}

int gr_smp_apply(json_t **doc, const json_t *patch, const gr_smp_schema *schema, const char *root,
                 gr_err *err)
{
    if (!schema)
        schema = gr_smp_schema_builtin();
    if (!schema)
        return gr_err_set(err, GR_ENOMEM, "strategic merge patch: out of memory");
    if (!doc || !json_is_object(*doc))
        return gr_err_set(err, GR_EINVAL,
                          "strategic merge patch: the document must be a JSON object");
    if (!json_is_object(patch))
        return gr_err_set(err, GR_EINVAL,
                          "strategic merge patch: the patch must be a JSON object, got %s",
                          gr_json_type_name(patch));
    ctx c = {schema, err};
    cur at = {NULL, NULL};
    if (root) {
        const json_t *m = json_object_get(schema->roots, root);
        at = cur_of(&c, m);
    }
    json_t *o = json_deep_copy(*doc), *p = json_deep_copy(patch), *res = NULL;
    int rc;
    if (!o || !p)
        rc = gr_err_set(err, GR_ENOMEM, "strategic merge patch: out of memory");
    else
        rc = merge_map(&c, o, p, at, "", 0, &res);
    json_decref(o);
    json_decref(p);
    if (rc != GR_OK)
        return rc;
    json_decref(*doc);
    *doc = res;
    return GR_OK;
}

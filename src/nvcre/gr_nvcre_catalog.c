/* The Certification catalog renderer (gr_nvcre_catalog.h, docs/catalog.md). */
#include "gr_nvcre_catalog.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_buf.h"
#include "gr_nvcre_catalog_data.h"
#include "gr_yaml.h"

/* Longest string an interpolation may build (names, images, args). */
#define CAT_MAX_STRING ((size_t)64 * 1024)
/* Nesting of fragments inside fragments. */
#define CAT_MAX_FRAGMENT_DEPTH 8

typedef struct {
    char *domain, *variant, *description;
    const char *path, *text;
    json_t *doc; /* the whole file */
} cat_entry;

struct gr_nvcre_catalog {
    json_t *files; /* path → parsed document (fragments, platforms, defaults) */
    json_t *defaults;
    cat_entry *entries;
    size_t n;
};

static int entry_cmp(const void *a, const void *b)
{
    const cat_entry *x = a, *y = b;
    int c = strcmp(x->domain, y->domain);
    return c ? c : strcmp(x->variant, y->variant);
}

void gr_nvcre_catalog_free(gr_nvcre_catalog *cat)
{
    if (!cat)
        return;
    for (size_t i = 0; i < cat->n; i++) {
        free(cat->entries[i].domain);
        free(cat->entries[i].variant);
        free(cat->entries[i].description);
    }
    free(cat->entries);
    json_decref(cat->files);
    free(cat);
}

static char *dup_str(const json_t *v)
{
    const char *s = json_string_value(v);
    return strdup(s ? s : "");
}

int gr_nvcre_catalog_load(gr_nvcre_catalog **out, gr_err *err)
{
    *out = NULL;
    gr_nvcre_catalog *cat = calloc(1, sizeof *cat);
    if (!cat || !(cat->files = json_object()) ||
        !(cat->entries = calloc(gr_nvcre_catalog_nfiles ? gr_nvcre_catalog_nfiles : 1,
                                sizeof *cat->entries))) {
        gr_nvcre_catalog_free(cat);
        return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
    }
    for (size_t i = 0; i < gr_nvcre_catalog_nfiles; i++) {
        const gr_nvcre_catalog_file *f = &gr_nvcre_catalog_files[i];
        json_t *doc = NULL;
        char name[256];
        snprintf(name, sizeof name, "deploy/catalog/%s", f->path);
        int rc = gr_yaml_load_one(f->text, strlen(f->text), name, &doc, err);
        if (rc != GR_OK) {
            gr_nvcre_catalog_free(cat);
            return rc;
        }
        if (!json_is_object(doc)) {
            json_decref(doc);
            gr_nvcre_catalog_free(cat);
            return gr_err_set(err, GR_EPARSE, "%s: want a mapping at the top", name);
        }
        json_object_set_new(cat->files, f->path, doc);
        if (!strcmp(f->path, "_defaults.yaml")) {
            cat->defaults = doc;
            continue;
        }
        if (f->path[0] == '_')
            continue;
        json_t *c = json_object_get(doc, "category");
        const char *d = json_string_value(json_object_get(c, "domain"));
        const char *v = json_string_value(json_object_get(c, "variant"));
        if (!d || !v || !json_is_object(json_object_get(doc, "spec"))) {
            gr_nvcre_catalog_free(cat);
            return gr_err_set(err, GR_EPARSE,
                              "%s: an entry needs category.domain, category.variant and spec",
                              name);
        }
        char want[256];
        snprintf(want, sizeof want, "%s/%s.yaml", d, v);
        if (strcmp(want, f->path)) {
            gr_nvcre_catalog_free(cat);
            return gr_err_set(err, GR_EPARSE, "%s: category %s/%s must live in %s", name, d, v,
                              want);
        }
        cat_entry *e = &cat->entries[cat->n++];
        e->domain = dup_str(json_object_get(c, "domain"));
        e->variant = dup_str(json_object_get(c, "variant"));
        e->description = dup_str(json_object_get(c, "description"));
        e->path = f->path;
        e->text = f->text;
        e->doc = doc;
        if (!e->domain || !e->variant || !e->description) {
            gr_nvcre_catalog_free(cat);
            return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
        }
    }
    if (!cat->defaults || !json_is_object(json_object_get(cat->defaults, "options"))) {
        gr_nvcre_catalog_free(cat);
        return gr_err_set(err, GR_EPARSE, "deploy/catalog/_defaults.yaml: missing options");
    }
    qsort(cat->entries, cat->n, sizeof *cat->entries, entry_cmp);
    *out = cat;
    return GR_OK;
}

size_t gr_nvcre_catalog_count(const gr_nvcre_catalog *cat)
{
    return cat->n;
}

void gr_nvcre_catalog_entry(const gr_nvcre_catalog *cat, size_t i, const char **domain,
                            const char **variant, const char **description)
{
    const cat_entry *e = &cat->entries[i];
    if (domain)
        *domain = e->domain;
    if (variant)
        *variant = e->variant;
    if (description)
        *description = e->description;
}

static const cat_entry *find(const gr_nvcre_catalog *cat, const char *d, const char *v)
{
    if (!d || !v)
        return NULL;
    for (size_t i = 0; i < cat->n; i++)
        if (!strcmp(cat->entries[i].domain, d) && !strcmp(cat->entries[i].variant, v))
            return &cat->entries[i];
    return NULL;
}

bool gr_nvcre_catalog_has(const gr_nvcre_catalog *cat, const char *domain, const char *variant)
{
    return find(cat, domain, variant) != NULL;
}

const char *gr_nvcre_catalog_source(const gr_nvcre_catalog *cat, const char *domain,
                                    const char *variant)
{
    const cat_entry *e = find(cat, domain, variant);
    return e ? e->text : NULL;
}

char *gr_nvcre_catalog_arch_of_product(const char *product, char *buf, size_t n)
{
    if (!n)
        return buf;
    const char *p = product ? product : "";
    if (!strncmp(p, "NVIDIA-", 7))
        p += 7;
    if (!*p) {
        snprintf(buf, n, "unknown");
        return buf;
    }
    if (!strncmp(p, "RTX-PRO-6000", 12)) {
        snprintf(buf, n, "rtxpro6000");
        return buf;
    }
    size_t i = 0;
    for (; p[i] && p[i] != '-' && i + 1 < n; i++)
        buf[i] = (char)tolower((unsigned char)p[i]);
    buf[i] = '\0';
    return buf;
}

static const json_t *gpu_row(const gr_nvcre_catalog *cat, const char *arch, const char *platform)
{
    const json_t *g = json_object_get(cat->defaults, "gpuDefaults");
    const json_t *row =
        json_object_get(json_object_get(json_object_get(g, "platformOverrides"), platform), arch);
    if (!row)
        row = json_object_get(json_object_get(g, "defaults"), arch);
    if (!row)
        row = json_object_get(g, "unknown");
    return row;
}

void gr_nvcre_catalog_gpu_defaults(const gr_nvcre_catalog *cat, const char *arch,
                                   const char *platform, int *gpus_per_node, int *mlnx_per_node)
{
    const json_t *row = gpu_row(cat, arch ? arch : "unknown", platform ? platform : "onprem");
    json_t *g = json_object_get(row, "gpusPerNode"), *m = json_object_get(row, "mlnxPerNode");
    *gpus_per_node = json_is_integer(g) ? (int)json_integer_value(g) : 4;
    *mlnx_per_node = json_is_integer(m) ? (int)json_integer_value(m) : 0;
}

bool gr_nvcre_catalog_arch_known(const gr_nvcre_catalog *cat, const char *arch)
{
    const json_t *g = json_object_get(cat->defaults, "gpuDefaults");
    return arch && json_object_get(json_object_get(g, "defaults"), arch) != NULL;
}

bool gr_nvcre_catalog_explicit_gpu_count(const gr_nvcre_catalog *cat, const char *arch)
{
    const json_t *l = json_object_get(cat->defaults, "explicitGpuCountArchitectures");
    size_t i;
    json_t *v;
    json_array_foreach(l, i, v) if (arch && json_is_string(v) &&
                                    !strcmp(json_string_value(v), arch)) return true;
    return false;
}

/* ------------------------------------------------------------ options */

/* Keys of the Certification spec that are not CategoryOptions. */
static bool not_an_option(const char *k)
{
    return !strcmp(k, "target") || !strcmp(k, "categories") || !strcmp(k, "gangScheduler");
}

static int set_copy(json_t *dst, const char *k, json_t *v)
{
    json_t *c = json_deep_copy(v);
    return c && json_object_set_new(dst, k, c) == 0 ? GR_OK : GR_ENOMEM;
}

/* Lay `layer` over `opts`; workloadMetadata merges per key (labels,
 * annotations) instead of replacing. */
static int layer_options(json_t *opts, const json_t *layer, bool category_options)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)(uintptr_t)layer, k, v)
    {
        if (category_options && not_an_option(k))
            continue;
        if (!strcmp(k, "workloadMetadata") && json_is_object(v)) {
            json_t *cur = json_object_get(opts, k);
            if (!json_is_object(cur)) {
                if (set_copy(opts, k, v) != GR_OK)
                    return GR_ENOMEM;
                continue;
            }
            const char *mk;
            json_t *mv;
            json_object_foreach(v, mk, mv)
            {
                json_t *cm = json_object_get(cur, mk);
                if (json_is_object(cm) && json_is_object(mv)) {
                    json_t *merged = json_deep_copy(cm);
                    if (!merged || json_object_update(merged, mv) ||
                        json_object_set_new(cur, mk, merged)) {
                        json_decref(merged);
                        return GR_ENOMEM;
                    }
                } else if (set_copy(cur, mk, mv) != GR_OK) {
                    return GR_ENOMEM;
                }
            }
            continue;
        }
        if (set_copy(opts, k, v) != GR_OK)
            return GR_ENOMEM;
    }
    return GR_OK;
}

static bool truthy(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_NULL:
    case JSON_FALSE:
        return false;
    case JSON_STRING:
        return json_string_length(v) > 0;
    case JSON_INTEGER:
        return json_integer_value(v) != 0;
    case JSON_REAL:
        return json_real_value(v) != 0;
    case JSON_ARRAY:
        return json_array_size(v) > 0;
    case JSON_OBJECT:
        return json_object_size(v) > 0;
    default:
        return true;
    }
}

/* ------------------------------------------------------------ templates */

typedef struct {
    const gr_nvcre_catalog *cat;
    const json_t *opts;
    const char *file; /* for messages */
    int depth;
    json_t *used; /* option name → true for every option a template read; or NULL */
} tctx;

/* An option as a template reads it (placeholders, $if, $merge, $each):
 * recorded in t->used, so options the user set but no template read can
 * be refused (gr_nvcre_catalog_check_options()). */
static json_t *opt(const tctx *t, const char *name)
{
    if (t->used && name)
        json_object_set_new(t->used, name, json_true());
    return json_object_get(t->opts, name);
}

/* Marker for "this node is left out" ($if false). */
static json_t removed_marker;
#define REMOVED (&removed_marker)

/* null, {} and [] leave their key out (like Go's omitempty). */
static bool is_empty(const json_t *v)
{
    return json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0) ||
           (json_is_array(v) && json_array_size(v) == 0);
}

static int scalar_text(const json_t *v, gr_buf *b)
{
    char tmp[64];
    switch (json_typeof(v)) {
    case JSON_STRING:
        return gr_buf_append(b, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        snprintf(tmp, sizeof tmp, "%lld", (long long)json_integer_value(v));
        return gr_buf_append(b, tmp, strlen(tmp));
    case JSON_REAL:
        snprintf(tmp, sizeof tmp, "%.17g", json_real_value(v));
        return gr_buf_append(b, tmp, strlen(tmp));
    case JSON_TRUE:
        return gr_buf_append(b, "true", 4);
    case JSON_FALSE:
        return gr_buf_append(b, "false", 5);
    default:
        return GR_EINVAL;
    }
}

/* Expand `${name}` inside a string. *whole is set when the string is
 * exactly one placeholder (the option's value, of any type, is used). */
static int interpolate(const tctx *t, const char *s, json_t **out, gr_err *err)
{
    size_t len = strlen(s);
    if (len > 3 && s[0] == '$' && s[1] == '{' && s[len - 1] == '}' && !strchr(s + 2, '$') &&
        memchr(s + 2, '}', len - 2) == s + len - 1) {
        char name[128];
        if (len - 3 >= sizeof name)
            return gr_err_set(err, GR_EINVAL, "%s: placeholder %s is too long", t->file, s);
        memcpy(name, s + 2, len - 3);
        name[len - 3] = '\0';
        char *bar = strchr(name, '|');
        if (bar) {
            if (strcmp(bar, "|string"))
                return gr_err_set(err, GR_EINVAL, "%s: placeholder %s: the only filter is |string",
                                  t->file, s);
            *bar = '\0';
        }
        json_t *v = opt(t, name);
        if (!v)
            return gr_err_set(err, GR_EINVAL,
                              "%s: placeholder ${%s} has no option; add %s to the entry's "
                              "defaults or to deploy/catalog/_defaults.yaml",
                              t->file, name, name);
        if (bar) {
            gr_buf b;
            gr_buf_init(&b, CAT_MAX_STRING);
            int rc = scalar_text(v, &b);
            if (rc != GR_OK) {
                gr_buf_free(&b);
                return gr_err_set(err, GR_EINVAL,
                                  "%s: option %s must be a string, number or boolean for %s",
                                  t->file, name, s);
            }
            *out = json_stringn(b.data ? b.data : "", b.len);
            gr_buf_free(&b);
        } else if (is_empty(v)) {
            *out = REMOVED;
            return GR_OK;
        } else {
            *out = json_deep_copy(v);
        }
        return *out ? GR_OK : gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
    }
    if (!strstr(s, "${")) {
        *out = json_string(s);
        return *out ? GR_OK : gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
    }
    gr_buf b;
    gr_buf_init(&b, CAT_MAX_STRING);
    int rc = GR_OK;
    const char *p = s;
    while (*p && rc == GR_OK) {
        const char *st = strstr(p, "${");
        if (!st) {
            rc = gr_buf_append(&b, p, strlen(p));
            break;
        }
        const char *en = strchr(st, '}');
        if (!en) {
            rc = gr_err_set(err, GR_EINVAL, "%s: unterminated placeholder in \"%s\"", t->file, s);
            break;
        }
        if ((rc = gr_buf_append(&b, p, (size_t)(st - p))) != GR_OK)
            break;
        char name[128];
        size_t nl = (size_t)(en - st - 2);
        if (nl >= sizeof name) {
            rc = gr_err_set(err, GR_EINVAL, "%s: placeholder in \"%s\" is too long", t->file, s);
            break;
        }
        memcpy(name, st + 2, nl);
        name[nl] = '\0';
        json_t *v = opt(t, name);
        if (!v) {
            rc = gr_err_set(err, GR_EINVAL,
                            "%s: placeholder ${%s} has no option; add %s to the entry's "
                            "defaults or to deploy/catalog/_defaults.yaml",
                            t->file, name, name);
            break;
        }
        if (scalar_text(v, &b) != GR_OK) {
            rc = gr_err_set(err, GR_EINVAL,
                            "%s: option %s is a %s; only strings, numbers and booleans can be "
                            "part of \"%s\"",
                            t->file, name,
                            json_is_object(v)  ? "mapping"
                            : json_is_array(v) ? "list"
                                               : "null",
                            s);
            break;
        }
        p = en + 1;
    }
    if (rc == GR_OK) {
        *out = json_stringn(b.data ? b.data : "", b.len);
        if (!*out)
            rc = gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
    } else if (rc == GR_ETOOBIG) {
        gr_err_set(err, rc, "%s: \"%s\" expands past %zu bytes", t->file, s, CAT_MAX_STRING);
    }
    gr_buf_free(&b);
    return rc;
}

static int expand(const tctx *t, const json_t *in, json_t **out, gr_err *err);

static int cond_holds(const tctx *t, const json_t *obj, bool *holds, gr_err *err)
{
    *holds = true;
    const json_t *c;
    if ((c = json_object_get(obj, "$if")) || (c = json_object_get(obj, "$unless"))) {
        bool neg = json_object_get(obj, "$unless") != NULL;
        if (!json_is_string(c))
            return gr_err_set(err, GR_EINVAL, "%s: $if/$unless takes an option name", t->file);
        json_t *v = opt(t, json_string_value(c));
        *holds = truthy(v) != neg;
    }
    return GR_OK;
}

static int expand_fragment(const tctx *t, const char *path, json_t **out, gr_err *err)
{
    json_t *frag = json_object_get(t->cat->files, path);
    if (!frag)
        return gr_err_set(err, GR_EINVAL, "%s: $fragment %s does not exist under deploy/catalog",
                          t->file, path);
    if (t->depth >= CAT_MAX_FRAGMENT_DEPTH)
        return gr_err_set(err, GR_EINVAL, "%s: fragments nest deeper than %d", t->file,
                          CAT_MAX_FRAGMENT_DEPTH);
    tctx sub = *t;
    sub.file = path;
    sub.depth++;
    return expand(&sub, frag, out, err);
}

static int expand_object(const tctx *t, const json_t *in, json_t **out, gr_err *err)
{
    bool holds;
    int rc = cond_holds(t, in, &holds, err);
    if (rc != GR_OK)
        return rc;
    if (!holds) {
        *out = REMOVED;
        return GR_OK;
    }
    const json_t *x;
    if ((x = json_object_get(in, "$fragment"))) {
        if (!json_is_string(x))
            return gr_err_set(err, GR_EINVAL, "%s: $fragment takes a path", t->file);
        return expand_fragment(t, json_string_value(x), out, err);
    }
    if ((x = json_object_get(in, "$value")))
        return expand(t, x, out, err);
    json_t *o = json_object();
    if (!o)
        return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)(uintptr_t)in, k, v)
    {
        if (!strcmp(k, "$if") || !strcmp(k, "$unless"))
            continue;
        if (!strcmp(k, "$merge")) { /* an option name or a list of them */
            size_t nm = json_is_array(v) ? json_array_size(v) : 1;
            for (size_t mi = 0; mi < nm; mi++) {
                const json_t *mn = json_is_array(v) ? json_array_get(v, mi) : v;
                json_t *m = json_is_string(mn) ? opt(t, json_string_value(mn)) : NULL;
                if (!json_is_object(m)) {
                    json_decref(o);
                    return gr_err_set(err, GR_EINVAL, "%s: $merge needs options that are mappings",
                                      t->file);
                }
                json_t *mc = json_deep_copy(m);
                if (!mc || json_object_update(o, mc)) {
                    json_decref(mc);
                    json_decref(o);
                    return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
                }
                json_decref(mc);
            }
            continue;
        }
        if (k[0] == '$') {
            json_decref(o);
            return gr_err_set(err, GR_EINVAL,
                              "%s: unknown directive %s (want $if $unless $fragment $value $merge "
                              "$each)",
                              t->file, k);
        }
        json_t *key = NULL, *val = NULL;
        if ((rc = interpolate(t, k, &key, err)) != GR_OK) {
            json_decref(o);
            return rc;
        }
        if (key == REMOVED || !json_is_string(key)) {
            if (key == REMOVED)
                key = NULL;
            json_decref(key);
            json_decref(o);
            return gr_err_set(err, GR_EINVAL, "%s: key %s must expand to a string", t->file, k);
        }
        if ((rc = expand(t, v, &val, err)) != GR_OK) {
            json_decref(key);
            json_decref(o);
            return rc;
        }
        if (val != REMOVED && json_object_set_new(o, json_string_value(key), val)) {
            json_decref(key);
            json_decref(o);
            return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
        }
        json_decref(key);
    }
    *out = o;
    return GR_OK;
}

static int expand_array(const tctx *t, const json_t *in, json_t **out, gr_err *err)
{
    json_t *a = json_array();
    if (!a)
        return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
    size_t i;
    json_t *item;
    json_array_foreach(in, i, item)
    {
        const json_t *each = json_is_object(item) ? json_object_get(item, "$each") : NULL;
        if (each) {
            json_t *l = json_is_string(each) ? opt(t, json_string_value(each)) : NULL;
            if (!json_is_array(l)) {
                json_decref(a);
                return gr_err_set(err, GR_EINVAL, "%s: $each needs an option that is a list",
                                  t->file);
            }
            size_t j;
            json_t *e;
            json_array_foreach(l, j, e)
            {
                if (json_array_append_new(a, json_deep_copy(e))) {
                    json_decref(a);
                    return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
                }
            }
            continue;
        }
        json_t *v = NULL;
        int rc = expand(t, item, &v, err);
        if (rc != GR_OK) {
            json_decref(a);
            return rc;
        }
        if (v != REMOVED && json_array_append_new(a, v)) {
            json_decref(a);
            return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
        }
    }
    *out = a;
    return GR_OK;
}

static int expand(const tctx *t, const json_t *in, json_t **out, gr_err *err)
{
    if (json_is_object(in))
        return expand_object(t, in, out, err);
    if (json_is_array(in))
        return expand_array(t, in, out, err);
    if (json_is_string(in))
        return interpolate(t, json_string_value(in), out, err);
    *out = json_deep_copy(in);
    return *out ? GR_OK : gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
}

/* ------------------------------------------------------------ render */

static bool in_list(const json_t *list, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(list, i,
                       v) if (json_is_string(v) && !strcmp(json_string_value(v), s)) return true;
    return false;
}

static int resolve_options(const gr_nvcre_catalog *cat, const cat_entry *e,
                           const gr_nvcre_catalog_req *req, json_t **out, gr_err *err)
{
    const char *arch =
        req->gpu_architecture && *req->gpu_architecture ? req->gpu_architecture : "unknown";
    const char *plat = req->platform && *req->platform ? req->platform : "onprem";
    json_t *o = json_deep_copy(json_object_get(cat->defaults, "options"));
    if (!o)
        return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
    int rc = GR_OK;
    const json_t *d = json_object_get(e->doc, "defaults");
    if (json_is_object(d))
        rc = layer_options(o, d, false);
    /* hardware defaults */
    int gpus, mlnx;
    gr_nvcre_catalog_gpu_defaults(cat, arch, plat, &gpus, &mlnx);
    if (rc == GR_OK && (json_object_set_new(o, "gpusPerNode", json_integer(gpus)) ||
                        json_object_set_new(o, "mlnxPerNode", json_integer(mlnx))))
        rc = GR_ENOMEM;
    if (rc == GR_OK && in_list(json_object_get(cat->defaults, "mnnvlArchitectures"), arch) &&
        json_object_set_new(o, "enableMNNVL", json_true()))
        rc = GR_ENOMEM;
    json_t *mb = json_object_get(json_object_get(cat->defaults, "largeMessageArchitectures"), arch);
    if (rc == GR_OK && mb)
        rc = set_copy(o, "maxBytes", mb);
    /* platform file */
    char pf[96];
    snprintf(pf, sizeof pf, "_platforms/%s.yaml", plat);
    const json_t *p = json_object_get(cat->files, pf);
    if (rc == GR_OK && p) {
        const json_t *po = json_object_get(p, "options");
        if (json_is_object(po))
            rc = layer_options(o, po, false);
        const json_t *pa = json_object_get(json_object_get(p, "architectures"), arch);
        if (rc == GR_OK && json_is_object(pa))
            rc = layer_options(o, pa, false);
    }
    /* the user's CategoryOptions */
    if (rc == GR_OK && json_is_object(req->global_options))
        rc = layer_options(o, req->global_options, true);
    if (rc == GR_OK && json_is_object(req->category_options))
        rc = layer_options(o, req->category_options, true);
    if (rc != GR_OK) {
        json_decref(o);
        return gr_err_set(err, rc, "catalog: out of memory");
    }
    /* derived */
    const char *scale = json_string_value(json_object_get(o, "testScale"));
    if (scale && !strcmp(scale, "intra-node"))
        json_object_set_new(o, "nodesPerJob", json_integer(1));
    /* testScale diagnose → orchestration.diagnose (fault isolation by
     * bisection, floor minGroupSize), 15m per Job unless the user set
     * timeoutPerJob; intra-rack → orchestration.topology strictDomain (one
     * group per topologyKey domain at its natural size). */
    bool diagnose = scale && !strcmp(scale, "diagnose");
    json_object_set_new(o, "diagnose", json_boolean(diagnose));
    json_object_set_new(o, "intraRack", json_boolean(scale && !strcmp(scale, "intra-rack")));
    if (diagnose && !json_object_get(req->global_options, "timeoutPerJob") &&
        !json_object_get(req->category_options, "timeoutPerJob"))
        json_object_set_new(o, "timeoutPerJob", json_string("15m"));
    json_object_set_new(o, "platform", json_string(plat));
    json_object_set_new(o, "gpuArchitecture", json_string(arch));
    json_object_set_new(o, "domain", json_string(e->domain));
    json_object_set_new(o, "variant", json_string(e->variant));
    json_object_set_new(o, "target", req->target ? json_deep_copy(req->target) : json_object());
    json_t *nic = json_object();
    const char *nicname = json_string_value(json_object_get(o, "nicResourceName"));
    json_int_t nmlnx = json_integer_value(json_object_get(o, "mlnxPerNode"));
    if (nic && nicname && *nicname && nmlnx > 0)
        json_object_set_new(nic, nicname, json_integer(nmlnx));
    json_object_set_new(o, "nicLimits", nic);
    /* CategoryOptions.resources {limits, requests}: cpu/memory beside the
     * GPU and NIC resources of the workload container */
    const json_t *res = json_object_get(o, "resources");
    json_t *rl = json_deep_copy(json_object_get(res, "limits"));
    json_t *rr = json_deep_copy(json_object_get(res, "requests"));
    json_object_set_new(o, "resourceLimits", json_is_object(rl) ? rl : json_object());
    json_object_set_new(o, "resourceRequests", json_is_object(rr) ? rr : json_object());
    if (!json_is_object(rl))
        json_decref(rl);
    if (!json_is_object(rr))
        json_decref(rr);
    /* options that are themselves templates (image: ${checksRegistry}/…) */
    tctx t = {cat, o, e->path, 0, NULL};
    const char *k;
    json_t *v;
    json_t *fixed = json_object();
    json_object_foreach(o, k, v)
    {
        if (json_is_string(v) && strstr(json_string_value(v), "${")) {
            json_t *x = NULL;
            if ((rc = interpolate(&t, json_string_value(v), &x, err)) != GR_OK) {
                gr_err_prefix(err, "option %s: ", k);
                json_decref(fixed);
                json_decref(o);
                return rc;
            }
            json_object_set_new(fixed, k, x == REMOVED ? json_null() : x);
        }
    }
    json_object_update(o, fixed);
    json_decref(fixed);
    *out = o;
    return GR_OK;
}

int gr_nvcre_catalog_platform_options(const gr_nvcre_catalog *cat, const char *platform,
                                      const char *arch, json_t **out, gr_err *err)
{
    *out = NULL;
    if (cat->n == 0)
        return gr_err_set(err, GR_EINVAL, "catalog: no entries");
    /* an empty entry: only the catalog, GPU and platform layers apply */
    cat_entry bare = cat->entries[0];
    json_t *doc = json_object();
    if (!doc)
        return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
    bare.doc = doc;
    gr_nvcre_catalog_req req = {bare.domain, bare.variant, platform, arch, NULL, NULL, NULL};
    int rc = resolve_options(cat, &bare, &req, out, err);
    json_decref(doc);
    if (rc == GR_OK) {
        json_object_del(*out, "domain");
        json_object_del(*out, "variant");
    }
    return rc;
}

/* Render without refusing unused options; *used (optional) gets the
 * options the templates read. */
static int render_impl(const gr_nvcre_catalog *cat, const gr_nvcre_catalog_req *req, json_t **spec,
                       json_t **options, json_t **used, gr_err *err)
{
    *spec = NULL;
    if (options)
        *options = NULL;
    if (used)
        *used = NULL;
    const cat_entry *e = find(cat, req->domain, req->variant);
    if (!e)
        return gr_err_set(err, GR_ENOTFOUND, "Unknown certification category: %s/%s",
                          req->domain ? req->domain : "", req->variant ? req->variant : "");
    json_t *o = NULL;
    int rc = resolve_options(cat, e, req, &o, err);
    if (rc != GR_OK)
        return rc;
    json_t *u = used ? json_object() : NULL;
    if (used && !u) {
        json_decref(o);
        return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
    }
    tctx t = {cat, o, e->path, 0, u};
    json_t *s = NULL;
    rc = expand(&t, json_object_get(e->doc, "spec"), &s, err);
    if (rc == GR_OK && s == REMOVED) {
        s = NULL;
        rc = gr_err_set(err, GR_EINVAL, "%s: spec is conditional; remove its $if", e->path);
    }
    if (rc != GR_OK) {
        json_decref(o);
        json_decref(u);
        return rc;
    }
    *spec = s;
    if (options)
        *options = o;
    else
        json_decref(o);
    if (used)
        *used = u;
    return GR_OK;
}

/* The CategoryOptions fields (deploy/crds, Certification
 * spec.categories[].options) and why an entry may not use one. */
#define HINT_TRAINING                                                                       \
    "it configures training runs (checkpoints, steps, the source checkout), and this is a " \
    "communication or diagnostics test"
#define HINT_ONE_NODE_NICS "it runs on one node and requests no network NICs"
#define HINT_SWEEP         "it does not run the nccl-tests message-size sweep"
static const struct {
    const char *field, *hint;
} option_fields[] = {
    {"enableCheckpoint", HINT_TRAINING},
    {"enableMNNVL", "it runs on one node, where NVLink needs no ComputeDomain"},
    {"exitDurationMins", HINT_TRAINING},
    {"gpusPerNode", "no template of this category reads it"},
    {"image", "no template of this category reads it"},
    {"imagePullSecrets", "no template of this category reads it"},
    {"maxBytes", HINT_SWEEP},
    {"maxConcurrent", "no template of this category reads it"},
    {"maxRestarts", HINT_TRAINING},
    {"maxSteps", HINT_TRAINING},
    {"measurementTimeout",
     "it bounds the wait for bandwidth data, which happens only when thresholds are set on a "
     "category that measures bandwidth"},
    {"minGroupSize",
     "it is the diagnose bisection floor and applies only with testScale: diagnose"},
    {"mlnxPerNode", HINT_ONE_NODE_NICS},
    {"nicResourceName", HINT_ONE_NODE_NICS},
    {"nodesPerJob", "it runs one node per Job"},
    {"numCycles", HINT_SWEEP},
    {"numIterations", "it has no iteration count"},
    {"placement", "no template of this category reads it"},
    {"repeatCount", "no template of this category reads it"},
    {"resources", "no template of this category reads it"},
    {"saveInterval", HINT_TRAINING},
    {"saveRetainInterval", HINT_TRAINING},
    {"saveTopK", HINT_TRAINING},
    {"sourceRepo", HINT_TRAINING},
    {"startupStallTimeoutSeconds", "no template of this category reads it"},
    {"storageClassName", HINT_TRAINING},
    {"storageSize", HINT_TRAINING},
    {"testScale",
     "diagnose and intra-rack split multi-node groups, and it runs one node per Job (use "
     "intra-node or full-scale)"},
    {"thresholds", "it has no bandwidth measurement to judge"},
    {"timeoutPerJob", "no template of this category reads it"},
    {"workloadMetadata", "no template of this category reads it"},
};

/* Did the templates use `field` as set to `value`? */
static bool field_used(const json_t *used, const char *field, const json_t *value)
{
    if (!strcmp(field, "resources"))
        return json_object_get(used, "resourceLimits") || json_object_get(used, "resourceRequests");
    if (!strcmp(field, "mlnxPerNode") || !strcmp(field, "nicResourceName"))
        return json_object_get(used, "nicLimits") != NULL;
    if (!strcmp(field, "testScale")) {
        const char *v = json_string_value(value);
        if (v && !strcmp(v, "diagnose"))
            return json_object_get(used, "diagnose") != NULL;
        if (v && !strcmp(v, "intra-rack"))
            return json_object_get(used, "intraRack") != NULL;
        return true; /* full-scale, intra-node: every category can run so */
    }
    return json_object_get(used, field) != NULL;
}

/* The user-set fields the templates did not use (see the header). */
static int unused_of(const gr_nvcre_catalog_req *req, const json_t *used, json_t **unused,
                     gr_err *err)
{
    json_t *out = json_array();
    if (!out)
        return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
    for (size_t i = 0; i < sizeof option_fields / sizeof option_fields[0]; i++) {
        const char *f = option_fields[i].field;
        const json_t *cv = json_object_get(req->category_options, f);
        const json_t *gv = json_object_get(req->global_options, f);
        /* a global value the category overrides is not this category's */
        const json_t *v = cv ? cv : gv;
        if (!v || json_is_null(v) || field_used(used, f, v))
            continue;
        json_t *row = json_pack("{s:s,s:s,s:s}", "field", f, "scope", cv ? "category" : "global",
                                "hint", option_fields[i].hint);
        if (!row || json_array_append_new(out, row)) {
            json_decref(out);
            return gr_err_set(err, GR_ENOMEM, "catalog: out of memory");
        }
    }
    *unused = out;
    return GR_OK;
}

int gr_nvcre_catalog_check_options(const gr_nvcre_catalog *cat, const gr_nvcre_catalog_req *req,
                                   json_t **unused, gr_err *err)
{
    *unused = NULL;
    json_t *spec = NULL, *used = NULL;
    int rc = render_impl(cat, req, &spec, NULL, &used, err);
    json_decref(spec);
    if (rc == GR_OK)
        rc = unused_of(req, used, unused, err);
    json_decref(used);
    return rc;
}

int gr_nvcre_catalog_render(const gr_nvcre_catalog *cat, const gr_nvcre_catalog_req *req,
                            json_t **spec, json_t **options, gr_err *err)
{
    json_t *unused = NULL, *used = NULL;
    int rc = render_impl(cat, req, spec, options, &used, err);
    if (rc == GR_OK)
        rc = unused_of(req, used, &unused, err);
    json_decref(used);
    size_t i;
    json_t *u;
    json_array_foreach(unused, i, u)
    {
        if (strcmp(json_string_value(json_object_get(u, "scope")), "category"))
            continue;
        rc = gr_err_set(err, GR_EINVAL, GR_NVCRE_CATALOG_MSG_UNUSED_OPTION_FMT,
                        json_string_value(json_object_get(u, "field")), req->domain, req->variant,
                        json_string_value(json_object_get(u, "hint")));
        break;
    }
    json_decref(unused);
    if (rc != GR_OK && *spec) {
        json_decref(*spec);
        *spec = NULL;
        if (options) {
            json_decref(*options);
            *options = NULL;
        }
    }
    return rc;
}

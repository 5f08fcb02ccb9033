/*
 * gr_gang.c — naming, peers, discovery specs and anchors, minCount, the
 * trimmed pod cache transform, gang ConfigMap building and updating, and
 * PreflightConfig precedence. Pure: no I/O (see gr_gang.h).
 */
#include "gr_gang.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_cel.h"
#include "gr_gang_topo_data.h"
#include "gr_kube_object.h"
#include "gr_time.h"

/* ----------------------------------------------------------------- peers */

void gr_gang_peers_free(gr_gang_peers *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].name);
        free(p->v[i].ip);
        free(p->v[i].checks);
    }
    free(p->v);
    p->v = NULL;
    p->n = 0;
}

int gr_gang_peers_add(gr_gang_peers *p, const char *name, const char *ip, const char *checks)
{
    if (p->n >= GR_GANG_PEERS_MAX)
        return GR_ETOOBIG;
    gr_gang_peer *nv = realloc(p->v, (p->n + 1) * sizeof *nv);
    if (!nv)
        return GR_ENOMEM;
    p->v = nv;
    gr_gang_peer *e = &p->v[p->n];
    e->name = strdup(name ? name : "");
    e->ip = strdup(ip ? ip : "");
    e->checks = strdup(checks ? checks : "");
    e->rank = -1;
    if (!e->name || !e->ip || !e->checks) {
        free(e->name);
        free(e->ip);
        free(e->checks);
        return GR_ENOMEM;
    }
    p->n++;
    return GR_OK;
}

static char *trim(char *s, char *end)
{
    while (s < end && isspace((unsigned char)*s))
        s++;
    while (end > s && isspace((unsigned char)end[-1]))
        end--;
    *end = 0;
    return s;
}

int gr_gang_peers_parse(const char *text, gr_gang_peers *out, gr_err *err)
{
    out->v = NULL;
    out->n = 0;
    if (!text)
        return GR_OK;
    size_t len = strlen(text);
    if (len > GR_GANG_PEERS_MAX_BYTES)
        return gr_err_set(err, GR_ETOOBIG, "peers: %zu bytes is more than the %zu allowed", len,
                          GR_GANG_PEERS_MAX_BYTES);
    char *copy = strdup(text);
    if (!copy)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    int rc = GR_OK;
    size_t lineno = 0;
    char *p = copy;
    while (p && *p && rc == GR_OK) {
        lineno++;
        char *nl = strchr(p, '\n');
        char *end = nl ? nl : p + strlen(p);
        char *line = trim(p, end);
        p = nl ? nl + 1 : NULL;
        if (!*line)
            continue;
        char *f[4] = {line, NULL, NULL, NULL};
        size_t nf = 1;
        for (char *q = line; *q && nf < 4; q++)
            if (*q == ';') {
                *q = 0;
                f[nf++] = q + 1;
            }
        if (nf < 2 || !*f[0]) {
            rc = gr_err_set(err, GR_EPARSE,
                            "peers line %zu: want podName;podIP;rank[;checkNames], got \"%s\"",
                            lineno, line);
            break;
        }
        long rank = -1;
        if (nf >= 3) {
            char *r = trim(f[2], f[2] + strlen(f[2]));
            char *e = NULL;
            errno = 0;
            rank = strtol(r, &e, 10);
            if (!*r || *e || errno || rank < 0) {
                rc = gr_err_set(err, GR_EPARSE,
                                "peers line %zu: rank \"%s\" is not a non-negative integer", lineno,
                                r);
                break;
            }
        }
        char *name = trim(f[0], f[0] + strlen(f[0]));
        char *ip = trim(f[1], f[1] + strlen(f[1]));
        if ((rc = gr_gang_peers_add(out, name, ip, nf == 4 ? f[3] : "")) != GR_OK) {
            gr_err_set(err, rc, "peers: more than %d entries or out of memory", GR_GANG_PEERS_MAX);
            break;
        }
        out->v[out->n - 1].rank = rank;
    }
    free(copy);
    if (rc != GR_OK)
        gr_gang_peers_free(out);
    return rc;
}

static int peer_cmp(const void *a, const void *b)
{
    return strcmp(((const gr_gang_peer *)a)->name, ((const gr_gang_peer *)b)->name);
}

void gr_gang_peers_assign_ranks(gr_gang_peers *p)
{
    if (p->n > 1)
        qsort(p->v, p->n, sizeof *p->v, peer_cmp);
    for (size_t i = 0; i < p->n; i++)
        p->v[i].rank = (long)i;
}

int gr_gang_peers_format(const gr_gang_peers *p, gr_buf *out)
{
    for (size_t i = 0; i < p->n; i++) {
        const gr_gang_peer *e = &p->v[i];
        int rc = gr_buf_printf(out, "%s%s;%s;%ld", i ? "\n" : "", e->name, e->ip, e->rank);
        if (rc == GR_OK && e->checks && *e->checks)
            rc = gr_buf_printf(out, ";%s", e->checks);
        if (rc != GR_OK)
            return rc;
    }
    if (!out->data)
        return gr_buf_puts(out, "");
    return GR_OK;
}

/* ------------------------------------------------------------- discovery */

void gr_gang_spec_free(gr_gang_spec *s)
{
    if (!s)
        return;
    free(s->name);
    for (size_t i = 0; i < s->n_annotation_keys; i++)
        free(s->annotation_keys[i]);
    free(s->annotation_keys);
    for (size_t i = 0; i < s->n_label_keys; i++)
        free(s->label_keys[i]);
    free(s->label_keys);
    free(s->group);
    free(s->version);
    free(s->resource);
    free(s->min_count_expr);
    memset(s, 0, sizeof *s);
}

static int get_str(const json_t *o, const char *key, const char *path, char **out, gr_err *err)
{
    const json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return GR_OK;
    if (!json_is_string(v))
        return gr_err_set(err, GR_EINVAL, "%s%s: must be a string", path, key);
    if (!*json_string_value(v))
        return GR_OK;
    if (!(*out = strdup(json_string_value(v))))
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    return GR_OK;
}

static int get_strv(const json_t *o, const char *key, char ***out, size_t *n, gr_err *err)
{
    const json_t *v = json_object_get(o, key);
    *out = NULL;
    *n = 0;
    if (!v || json_is_null(v))
        return GR_OK;
    if (!json_is_array(v))
        return gr_err_set(err, GR_EINVAL, "gangDiscovery.%s: must be a list of strings", key);
    size_t cnt = json_array_size(v);
    if (!cnt)
        return GR_OK;
    char **a = calloc(cnt, sizeof *a);
    if (!a)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < cnt; i++) {
        const json_t *e = json_array_get(v, i);
        if (!json_is_string(e)) {
            for (size_t j = 0; j < k; j++)
                free(a[j]);
            free(a);
            return gr_err_set(err, GR_EINVAL, "gangDiscovery.%s[%zu]: must be a string", key, i);
        }
        if (!*json_string_value(e))
            continue;
        if (!(a[k] = strdup(json_string_value(e)))) {
            for (size_t j = 0; j < k; j++)
                free(a[j]);
            free(a);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        k++;
    }
    *out = a;
    *n = k;
    return GR_OK;
}

/* Grove (beyond upstream): `{name: grove}` is shorthand for the PodGang GVR
 * and label; a block naming the PodGang GVR is Grove with the default label
 * key when it lists none. */
static int grove_defaults(gr_gang_spec *s, gr_err *err)
{
    bool shorthand = s->name && strcmp(s->name, GR_PREFLIGHT_GROVE_NAME) == 0 &&
                     !s->n_annotation_keys && !s->n_label_keys && !s->group && !s->version &&
                     !s->resource;
    bool gvr = s->group && s->resource && strcmp(s->group, GR_PREFLIGHT_GROVE_GROUP) == 0 &&
               strcmp(s->resource, GR_PREFLIGHT_GROVE_RESOURCE) == 0;
    if (!shorthand && !gvr)
        return GR_OK;
    s->grove = true;
    if (shorthand && (!(s->group = strdup(GR_PREFLIGHT_GROVE_GROUP)) ||
                      !(s->version = strdup(GR_PREFLIGHT_GROVE_VERSION)) ||
                      !(s->resource = strdup(GR_PREFLIGHT_GROVE_RESOURCE))))
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    if (!s->n_annotation_keys && !s->n_label_keys && s->name) {
        if (!(s->label_keys = calloc(1, sizeof(char *))) ||
            !(s->label_keys[0] = strdup(GR_PREFLIGHT_GROVE_LABEL)))
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        s->n_label_keys = 1;
    }
    /* A PodGang has no spec.minMember: the generic default (which the
     * webhook's config parser fills in, PF-100) means "the Grove rule". */
    if (s->min_count_expr && strcmp(s->min_count_expr, GR_PREFLIGHT_GANG_DEFAULT_MIN_EXPR) == 0) {
        free(s->min_count_expr);
        s->min_count_expr = NULL;
    }
    return GR_OK;
}

int gr_gang_spec_parse(const json_t *gd, gr_gang_spec *s, gr_err *err)
{
    memset(s, 0, sizeof *s);
    if (gd && !json_is_object(gd) && !json_is_null(gd))
        return gr_err_set(err, GR_EINVAL, "gangDiscovery: must be a mapping");
    const json_t *gvr = json_object_get(gd, "podGroupGVR");
    if (gvr && !json_is_object(gvr) && !json_is_null(gvr))
        return gr_err_set(err, GR_EINVAL, "gangDiscovery.podGroupGVR: must be a mapping");
    int rc;
    if ((rc = get_str(gd, "name", "gangDiscovery.", &s->name, err)) != GR_OK ||
        (rc = get_strv(gd, "annotationKeys", &s->annotation_keys, &s->n_annotation_keys, err)) !=
            GR_OK ||
        (rc = get_strv(gd, "labelKeys", &s->label_keys, &s->n_label_keys, err)) != GR_OK ||
        (rc = get_str(gvr, "group", "gangDiscovery.podGroupGVR.", &s->group, err)) != GR_OK ||
        (rc = get_str(gvr, "version", "gangDiscovery.podGroupGVR.", &s->version, err)) != GR_OK ||
        (rc = get_str(gvr, "resource", "gangDiscovery.podGroupGVR.", &s->resource, err)) != GR_OK ||
        (rc = get_str(gd, "minCountExpr", "gangDiscovery.", &s->min_count_expr, err)) != GR_OK) {
        gr_gang_spec_free(s);
        return rc;
    }
    if (!s->name && !s->n_annotation_keys && !s->n_label_keys && !s->group && !s->version &&
        !s->resource && !s->min_count_expr) {
        s->native = true; /* PF-9, PF-121 */
        return GR_OK;
    }
    if ((rc = grove_defaults(s, err)) != GR_OK) {
        gr_gang_spec_free(s);
        return rc;
    }
    /* A core-group PodGroup CRD cannot exist, so group is required too. */
    if (!s->name || (!s->n_annotation_keys && !s->n_label_keys) || !s->group || !s->version ||
        !s->resource) {
        rc = gr_err_set(err, GR_EINVAL,
                        "invalid gangDiscovery config: name \"%s\" requires "
                        "annotationKeys/labelKeys, podGroupGVR, and minCountExpr",
                        s->name ? s->name : "");
        gr_gang_spec_free(s);
        return rc;
    }
    if (!s->grove && !s->min_count_expr &&
        !(s->min_count_expr = strdup(GR_PREFLIGHT_GANG_DEFAULT_MIN_EXPR))) {
        gr_gang_spec_free(s);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    return GR_OK;
}

struct gr_gang_discoverer {
    atomic_int refs;
    gr_gang_mode mode;
    gr_gang_spec spec; /* own copy */
    char *name;
    char *kind;
    char *version;
    gr_cel_program *prog;
};

static char *dupn(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int spec_copy(const gr_gang_spec *src, gr_gang_spec *dst)
{
    memset(dst, 0, sizeof *dst);
    dst->native = src->native;
    dst->grove = src->grove;
    if ((src->name && !(dst->name = strdup(src->name))) ||
        (src->group && !(dst->group = strdup(src->group))) ||
        (src->version && !(dst->version = strdup(src->version))) ||
        (src->resource && !(dst->resource = strdup(src->resource))) ||
        (src->min_count_expr && !(dst->min_count_expr = strdup(src->min_count_expr))))
        goto oom;
    if (src->n_annotation_keys) {
        if (!(dst->annotation_keys = calloc(src->n_annotation_keys, sizeof(char *))))
            goto oom;
        for (; dst->n_annotation_keys < src->n_annotation_keys; dst->n_annotation_keys++)
            if (!(dst->annotation_keys[dst->n_annotation_keys] =
                      strdup(src->annotation_keys[dst->n_annotation_keys])))
                goto oom;
    }
    if (src->n_label_keys) {
        if (!(dst->label_keys = calloc(src->n_label_keys, sizeof(char *))))
            goto oom;
        for (; dst->n_label_keys < src->n_label_keys; dst->n_label_keys++)
            if (!(dst->label_keys[dst->n_label_keys] = strdup(src->label_keys[dst->n_label_keys])))
                goto oom;
    }
    return GR_OK;
oom:
    gr_gang_spec_free(dst);
    return GR_ENOMEM;
}

int gr_gang_discoverer_new(const gr_gang_spec *spec, gr_gang_mode mode, const char *kind,
                           const char *version, gr_gang_discoverer **out, gr_err *err)
{
    *out = NULL;
    bool custom = mode == GR_GANG_CRD || mode == GR_GANG_GROVE;
    if (custom == spec->native || (mode == GR_GANG_GROVE) != spec->grove)
        return gr_err_set(err, GR_EINVAL, "gangDiscovery: discoverer mode does not match the spec");
    gr_gang_discoverer *d = calloc(1, sizeof *d);
    if (!d)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    atomic_init(&d->refs, 1);
    d->mode = mode;
    if (spec_copy(spec, &d->spec) != GR_OK)
        goto oom;
    const char *defkind = mode == GR_GANG_NATIVE_WORKLOAD ? "Workload"
                          : mode == GR_GANG_GROVE         ? GR_GANG_GROVE_KIND
                                                          : "PodGroup";
    const char *defver = mode == GR_GANG_NATIVE_WORKLOAD ? "v1alpha1" : "v1alpha2";
    if (custom)
        defver = spec->version;
    d->name = strdup(custom ? spec->name : GR_PREFLIGHT_GANG_NATIVE_NAME);
    d->kind = strdup(kind && *kind ? kind : defkind);
    d->version = strdup(version && *version ? version : defver);
    if (!d->name || !d->kind || !d->version)
        goto oom;
    if (custom && spec->min_count_expr) {
        static const gr_cel_decl decls[] = {{"podGroup", GR_CEL_MAP}};
        gr_err e;
        int rc = gr_cel_compile(spec->min_count_expr, strlen(spec->min_count_expr), decls, 1, NULL,
                                &d->prog, NULL, &e);
        if (rc != GR_OK) {
            gr_gang_discoverer_unref(d);
            return gr_err_set(err, rc == GR_ENOMEM ? GR_ENOMEM : GR_EINVAL,
                              "gangDiscovery.minCountExpr: %s", e.msg);
        }
    }
    *out = d;
    return GR_OK;
oom:
    gr_gang_discoverer_unref(d);
    return gr_err_set(err, GR_ENOMEM, "out of memory");
}

gr_gang_discoverer *gr_gang_discoverer_ref(gr_gang_discoverer *d)
{
    if (d)
        atomic_fetch_add(&d->refs, 1);
    return d;
}

void gr_gang_discoverer_unref(gr_gang_discoverer *d)
{
    if (!d || atomic_fetch_sub(&d->refs, 1) != 1)
        return;
    gr_gang_spec_free(&d->spec);
    free(d->name);
    free(d->kind);
    free(d->version);
    gr_cel_program_free(d->prog);
    free(d);
}

const char *gr_gang_discoverer_name(const gr_gang_discoverer *d)
{
    return d->name;
}

gr_gang_mode gr_gang_discoverer_mode(const gr_gang_discoverer *d)
{
    return d->mode;
}

const gr_gang_spec *gr_gang_discoverer_spec(const gr_gang_discoverer *d)
{
    return &d->spec;
}

void gr_gang_anchor_clear(gr_gang_anchor *a)
{
    if (!a)
        return;
    free(a->gang_id);
    free(a->cm_name);
    free(a->discoverer);
    free(a->group);
    free(a->version);
    free(a->resource);
    free(a->kind);
    free(a->ns);
    free(a->name);
    free(a->pod_group);
    memset(a, 0, sizeof *a);
}

static const char *nonempty(const json_t *v)
{
    const char *s = json_string_value(v);
    return s && *s ? s : NULL;
}

static int anchor_fill(gr_gang_anchor *a, const char *disc, const char *group, const char *ver,
                       const char *res, const char *kind, const char *ns, const char *name,
                       const char *pg, gr_err *err)
{
    memset(a, 0, sizeof *a);
    a->gang_id = gr_preflight_gang_id(disc, ns, name, pg);
    a->cm_name = a->gang_id ? gr_preflight_gang_configmap_name(a->gang_id) : NULL;
    a->discoverer = dupn(disc);
    a->group = dupn(group);
    a->version = dupn(ver);
    a->resource = dupn(res);
    a->kind = dupn(kind);
    a->ns = dupn(ns);
    a->name = dupn(name);
    a->pod_group = dupn(pg ? pg : "");
    if (!a->gang_id || !a->cm_name || !a->discoverer || !a->group || !a->version || !a->resource ||
        !a->kind || !a->ns || !a->name || !a->pod_group) {
        gr_gang_anchor_clear(a);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    return GR_OK;
}

int gr_gang_anchor_from_pod(const gr_gang_discoverer *d, const json_t *pod, const char *ns,
                            gr_gang_anchor *out, gr_err *err)
{
    memset(out, 0, sizeof *out);
    const json_t *md = json_object_get(pod, "metadata");
    if (!ns || !*ns)
        ns = nonempty(json_object_get(md, "namespace"));
    if (!ns)
        return gr_err_set(err, GR_EINVAL, "metadata.namespace: the pod has no namespace");
    switch (d->mode) {
    case GR_GANG_NATIVE_PODGROUP: {
        const char *pg = gr_preflight_gang_native_podgroup(pod);
        if (!pg)
            return GR_ENOTFOUND;
        return anchor_fill(out, d->name, "scheduling.k8s.io", d->version, "podgroups", d->kind, ns,
                           pg, "", err);
    }
    case GR_GANG_NATIVE_WORKLOAD: {
        const char *sub = NULL;
        const char *wl = gr_preflight_gang_native_workload(pod, &sub);
        if (!wl)
            return GR_ENOTFOUND;
        return anchor_fill(out, d->name, "scheduling.k8s.io", d->version, "workloads", d->kind, ns,
                           wl, sub, err);
    }
    case GR_GANG_CRD:
    case GR_GANG_GROVE: {
        const char *group = gr_preflight_gang_keyed_group(
            pod, (const char *const *)d->spec.annotation_keys, d->spec.n_annotation_keys,
            (const char *const *)d->spec.label_keys, d->spec.n_label_keys);
        if (!group)
            return GR_ENOTFOUND;
        return anchor_fill(out, d->name, d->spec.group, d->spec.version, d->spec.resource, d->kind,
                           ns, group, "", err);
    }
    }
    return GR_ENOTFOUND;
}

json_t *gr_gang_anchor_to_json(const gr_gang_anchor *a)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "gangID", a->gang_id, "discoverer",
                     a->discoverer, "group", a->group, "version", a->version, "resource",
                     a->resource, "kind", a->kind, "name", a->name, "podGroup",
                     a->pod_group ? a->pod_group : "");
}

int gr_gang_anchor_from_json(const json_t *j, gr_gang_anchor *out, gr_err *err)
{
    memset(out, 0, sizeof *out);
    const char *id = nonempty(json_object_get(j, "gangID"));
    const char *disc = nonempty(json_object_get(j, "discoverer"));
    const char *g = json_string_value(json_object_get(j, "group"));
    const char *v = nonempty(json_object_get(j, "version"));
    const char *r = nonempty(json_object_get(j, "resource"));
    const char *k = nonempty(json_object_get(j, "kind"));
    const char *n = nonempty(json_object_get(j, "name"));
    const char *pg = json_string_value(json_object_get(j, "podGroup"));
    if (!id || !disc || !g || !v || !r || !k || !n)
        return gr_err_set(err, GR_EINVAL,
                          "annotation " GR_GANG_ANNOT_ANCHOR ": missing gangID, discoverer, "
                          "group, version, resource, kind or name");
    out->gang_id = strdup(id);
    out->cm_name = gr_preflight_gang_configmap_name(id);
    out->discoverer = strdup(disc);
    out->group = strdup(g);
    out->version = strdup(v);
    out->resource = strdup(r);
    out->kind = strdup(k);
    out->ns = strdup("");
    out->name = strdup(n);
    out->pod_group = strdup(pg ? pg : "");
    if (!out->gang_id || !out->cm_name || !out->discoverer || !out->group || !out->version ||
        !out->resource || !out->kind || !out->ns || !out->name || !out->pod_group) {
        gr_gang_anchor_clear(out);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    return GR_OK;
}

static int json_count(const json_t *v, const char *what, int64_t *out, gr_err *err)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
    } else if (json_is_real(v)) {
        double x = json_real_value(v);
        if (!(x > -9.2e18 && x < 9.2e18))
            return gr_err_set(err, GR_EINVAL, "%s: %g is out of range", what, x);
        *out = (int64_t)x;
    } else {
        return GR_ENOTFOUND;
    }
    if (*out < 0)
        return gr_err_set(err, GR_EINVAL, "%s: %lld is negative", what, (long long)*out);
    return GR_OK;
}

static int cel_min_count(const gr_gang_discoverer *d, const json_t *obj, int64_t *out, gr_err *err)
{
    json_t *vars[1] = {(json_t *)(uintptr_t)obj};
    gr_cel_val v = {0};
    gr_err e;
    int rc = gr_cel_eval_json(d->prog, vars, &v, NULL, &e);
    if (rc != GR_OK)
        return gr_err_set(err, rc == GR_ENOMEM ? GR_ENOMEM : GR_EINVAL, "minCountExpr \"%s\": %s",
                          d->spec.min_count_expr, e.msg);
    int64_t n = 0;
    rc = GR_OK;
    if (v.kind == GR_CEL_INT) {
        n = v.u.i;
    } else if (v.kind == GR_CEL_UINT) {
        n = v.u.u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v.u.u;
    } else if (v.kind == GR_CEL_DOUBLE && v.u.d > -9.2e18 && v.u.d < 9.2e18) {
        n = (int64_t)v.u.d;
    } else {
        rc = gr_err_set(err, GR_EINVAL, "minCountExpr \"%s\" returned non-numeric type %s",
                        d->spec.min_count_expr, gr_cel_val_type_name(&v));
    }
    gr_cel_val_release(&v);
    if (rc == GR_OK && n < 0)
        rc = gr_err_set(err, GR_EINVAL, "minCountExpr \"%s\" returned %lld (negative)",
                        d->spec.min_count_expr, (long long)n);
    if (rc == GR_OK)
        *out = n;
    return rc;
}

/* Grove's PodGang is gang-scheduled once every podgroup (one per PodClique,
 * or per PodClique of each PodCliqueScalingGroup replica in the gang) has
 * minReplicas pods: the gang's minimum is their sum. */
static int grove_min_count(const gr_gang_anchor *a, const json_t *obj, int64_t *out, gr_err *err)
{
    const json_t *groups = json_object_get(json_object_get(obj, "spec"), "podgroups");
    if (!json_is_array(groups))
        return gr_err_set(err, GR_ENOTFOUND, "PodGang %s has no spec.podgroups", a->name);
    int64_t sum = 0;
    size_t i;
    const json_t *g;
    json_array_foreach(groups, i, g)
    {
        const json_t *v = json_object_get(g, "minReplicas");
        if (!v)
            return gr_err_set(err, GR_ENOTFOUND,
                              "PodGang %s: spec.podgroups[%zu] has no minReplicas", a->name, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return gr_err_set(err, GR_EINVAL,
                              "PodGang %s: spec.podgroups[%zu].minReplicas must be a "
                              "non-negative integer",
                              a->name, i);
        sum += json_integer_value(v) > INT32_MAX ? (int64_t)INT32_MAX + 1 : json_integer_value(v);
        if (sum > INT32_MAX)
            return gr_err_set(err, GR_EINVAL,
                              "PodGang %s: the sum of spec.podgroups[].minReplicas is out of range",
                              a->name);
    }
    *out = sum;
    return GR_OK;
}

int gr_gang_min_count(const gr_gang_discoverer *d, const gr_gang_anchor *a, const json_t *obj,
                      int64_t *out, gr_err *err)
{
    *out = 0;
    switch (d->mode) {
    case GR_GANG_NATIVE_PODGROUP: {
        const json_t *v = json_object_get(
            json_object_get(json_object_get(json_object_get(obj, "spec"), "schedulingPolicy"),
                            "gang"),
            "minCount");
        int rc = json_count(v, "spec.schedulingPolicy.gang.minCount", out, err);
        if (rc == GR_ENOTFOUND)
            return gr_err_set(err, GR_ENOTFOUND,
                              "PodGroup %s has no spec.schedulingPolicy.gang.minCount", a->name);
        return rc;
    }
    case GR_GANG_NATIVE_WORKLOAD: {
        const json_t *spec = json_object_get(obj, "spec");
        static const char *const lists[] = {"podGroups", "podGroupTemplates"};
        for (size_t l = 0; l < 2; l++) {
            const json_t *arr = json_object_get(spec, lists[l]);
            size_t i;
            const json_t *e;
            json_array_foreach(arr, i, e)
            {
                const char *nm = json_string_value(json_object_get(e, "name"));
                if (a->pod_group && *a->pod_group && (!nm || strcmp(nm, a->pod_group) != 0))
                    continue;
                const json_t *pol = json_object_get(e, "policy");
                if (!pol)
                    pol = json_object_get(e, "schedulingPolicy"); /* v1alpha2 templates */
                const json_t *v = json_object_get(json_object_get(pol, "gang"), "minCount");
                int rc = json_count(v, "policy.gang.minCount", out, err);
                if (rc == GR_ENOTFOUND)
                    return gr_err_set(err, GR_ENOTFOUND,
                                      "Workload %s: spec.%s[%zu] has no policy.gang.minCount",
                                      a->name, lists[l], i);
                return rc;
            }
        }
        return gr_err_set(err, GR_ENOTFOUND, "Workload %s has no pod group \"%s\"", a->name,
                          a->pod_group ? a->pod_group : "");
    }
    case GR_GANG_GROVE:
        if (!d->prog)
            return grove_min_count(a, obj, out, err);
        return cel_min_count(d, obj, out, err);
    case GR_GANG_CRD:
        return cel_min_count(d, obj, out, err);
    }
    return GR_ENOTFOUND;
}

/* ------------------------------------------------------------- pod cache */

const char *gr_gang_pod_configmap(const json_t *pod)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "volumes"), i, v)
    {
        const char *n = json_string_value(json_object_get(v, "name"));
        if (n && strcmp(n, GR_PREFLIGHT_VOL_GANG) == 0)
            return nonempty(json_object_get(json_object_get(v, "configMap"), "name"));
    }
    return NULL;
}

static int copy_key(json_t *dst, const json_t *src, const char *key)
{
    json_t *v = json_object_get(src, key);
    if (!v)
        return 0;
    return json_object_set(dst, key, v);
}

static int keep_keys(json_t *dstmd, const json_t *srcmd, const char *field, const char *const *keys,
                     size_t n, const char *extra)
{
    const json_t *src = json_object_get(srcmd, field);
    if (!json_is_object(src))
        return 0;
    json_t *o = json_object();
    if (!o)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = copy_key(o, src, keys[i]);
    if (extra && rc == 0)
        rc = copy_key(o, src, extra);
    if (rc == 0 && json_object_size(o))
        return json_object_set_new(dstmd, field, o);
    json_decref(o);
    return rc;
}

int gr_gang_pod_trim(json_t **podp, const gr_gang_trim_keys *keys)
{
    const json_t *pod = *podp;
    const json_t *md = json_object_get(pod, "metadata");
    const json_t *spec = json_object_get(pod, "spec");
    const json_t *status = json_object_get(pod, "status");
    const char *cm = gr_gang_pod_configmap(pod);
    json_t *n = json_object(), *nmd = json_object();
    if (!n || !nmd) {
        json_decref(n);
        json_decref(nmd);
        return GR_ENOMEM;
    }
    int rc = json_object_set_new(n, "metadata", nmd);
    static const char *const ident[] = {"name", "namespace", "uid", "resourceVersion"};
    for (size_t i = 0; i < 4 && rc == 0; i++)
        rc = copy_key(nmd, md, ident[i]);
    if (cm && rc == 0) {
        static const char *const more[] = {"creationTimestamp", "deletionTimestamp",
                                           "generateName"};
        for (size_t i = 0; i < 3 && rc == 0; i++)
            rc = copy_key(nmd, md, more[i]);
        if (rc == 0)
            rc = keep_keys(nmd, md, "annotations", keys ? keys->annotations : NULL,
                           keys ? keys->n_annotations : 0, GR_PREFLIGHT_ANNOTATION_CHECKS);
        if (rc == 0)
            rc = keep_keys(nmd, md, "labels", keys ? keys->labels : NULL, keys ? keys->n_labels : 0,
                           NULL);
        json_t *nspec = json_object(), *nstat = json_object();
        if (!nspec || !nstat) {
            json_decref(nspec);
            json_decref(nstat);
            json_decref(n);
            return GR_ENOMEM;
        }
        rc = rc ? rc : copy_key(nspec, spec, "nodeName");
        rc = rc ? rc : copy_key(nspec, spec, "schedulingGroup");
        rc = rc ? rc : copy_key(nspec, spec, "workloadRef");
        json_t *vol =
            json_pack("[{s:s, s:{s:s}}]", "name", GR_PREFLIGHT_VOL_GANG, "configMap", "name", cm);
        rc = rc ? rc : (vol ? json_object_set_new(nspec, "volumes", vol) : -1);
        rc = rc ? rc : copy_key(nstat, status, "podIP");
        rc = rc ? rc : copy_key(nstat, status, "podIPs");
        rc = rc ? rc : copy_key(nstat, status, "phase");
        int r1 = json_object_set_new(n, "spec", nspec);
        int r2 = json_object_set_new(n, "status", nstat);
        if (rc == 0)
            rc = r1 ? r1 : r2;
    }
    if (rc != 0) {
        json_decref(n);
        return GR_ENOMEM;
    }
    json_decref(*podp);
    *podp = n;
    return GR_OK;
}

/* ------------------------------------------------------------ ConfigMaps */

static json_t *owner_ref_of(const json_t *owner)
{
    const json_t *md = json_object_get(owner, "metadata");
    const char *av = nonempty(json_object_get(owner, "apiVersion"));
    const char *k = nonempty(json_object_get(owner, "kind"));
    const char *n = nonempty(json_object_get(md, "name"));
    const char *u = nonempty(json_object_get(md, "uid"));
    if (!av || !k || !n || !u)
        return NULL;
    return json_pack("{s:s, s:s, s:s, s:s}", "apiVersion", av, "kind", k, "name", n, "uid", u);
}

bool gr_gang_cm_set_owner(json_t *cm, const json_t *owner)
{
    json_t *ref = owner_ref_of(owner);
    if (!ref)
        return false;
    json_t *md = json_object_get(cm, "metadata");
    if (!md) {
        md = json_object();
        json_object_set_new(cm, "metadata", md);
    }
    json_t *refs = json_object_get(md, "ownerReferences");
    if (!json_is_array(refs)) {
        refs = json_array();
        json_object_set_new(md, "ownerReferences", refs);
    }
    size_t i;
    json_t *e;
    json_array_foreach(refs, i, e)
    {
        if (!json_equal(json_object_get(e, "apiVersion"), json_object_get(ref, "apiVersion")) ||
            !json_equal(json_object_get(e, "kind"), json_object_get(ref, "kind")) ||
            !json_equal(json_object_get(e, "name"), json_object_get(ref, "name")))
            continue;
        if (json_equal(json_object_get(e, "uid"), json_object_get(ref, "uid"))) {
            json_decref(ref);
            return false;
        }
        json_array_set_new(refs, i, ref);
        return true;
    }
    json_array_append_new(refs, ref);
    return true;
}

json_t *gr_gang_cm_skeleton(const gr_gang_anchor *a, int64_t expected, int64_t master_port,
                            const json_t *owner)
{
    char exp[32], port[32];
    snprintf(exp, sizeof exp, "%lld", (long long)(expected > 0 ? expected : 0));
    snprintf(port, sizeof port, "%lld", (long long)master_port);
    char *label = gr_preflight_gang_sanitize(a->gang_id);
    json_t *anchor = gr_gang_anchor_to_json(a);
    char *anchor_s = anchor ? json_dumps(anchor, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(anchor);
    json_t *cm = NULL;
    if (label && anchor_s)
        cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}, s:{s:s}}, s:{s:s, s:s, s:s, s:s, "
                       "s:s}}",
                       "apiVersion", "v1", "kind", "ConfigMap", "metadata", "name", a->cm_name,
                       "namespace", a->ns, "labels", GR_GANG_LABEL_MANAGED_BY,
                       GR_GANG_MANAGED_BY_VALUE, GR_GANG_LABEL_GANG_ID, label, "annotations",
                       GR_GANG_ANNOT_ANCHOR, anchor_s, "data", GR_GANG_KEY_EXPECTED, exp,
                       GR_GANG_KEY_PEERS, "", GR_GANG_KEY_MASTER_ADDR, "", GR_GANG_KEY_MASTER_PORT,
                       port, GR_GANG_KEY_GANG_ID, a->gang_id);
    free(label);
    free(anchor_s);
    if (cm && owner)
        gr_gang_cm_set_owner(cm, owner);
    return cm;
}

static int64_t parse_count(const char *s)
{
    if (!s)
        return 0;
    char *e = NULL;
    errno = 0;
    long long v = strtoll(s, &e, 10);
    if (e == s || errno || v < 0)
        return 0;
    while (*e && isspace((unsigned char)*e))
        e++;
    return *e ? 0 : (int64_t)v;
}

static int set_data(json_t *data, const char *key, const char *val, bool *changed)
{
    const char *cur = json_string_value(json_object_get(data, key));
    if (cur && strcmp(cur, val) == 0)
        return GR_OK;
    if (json_object_set_new(data, key, json_string(val)) != 0)
        return GR_ENOMEM;
    *changed = true;
    return GR_OK;
}

static bool member_active(const json_t *pod)
{
    if (gr_kube_is_deleting(pod))
        return false;
    const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    return !phase || !*phase || strcmp(phase, "Running") == 0 || strcmp(phase, "Pending") == 0;
}

int gr_gang_cm_update(json_t *cm, const json_t *members, int64_t expected,
                      const gr_preflight_config *cfg, bool *changed, gr_err *err)
{
    *changed = false;
    json_t *data = json_object_get(cm, "data");
    if (!json_is_object(data)) {
        data = json_object();
        if (!data || json_object_set_new(cm, "data", data) != 0)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        *changed = true;
    }
    int rc = GR_OK;
    /* expected_count: set once (PF-147). */
    int64_t cur = parse_count(json_string_value(json_object_get(data, GR_GANG_KEY_EXPECTED)));
    if (cur == 0 && expected > 0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)expected);
        rc = set_data(data, GR_GANG_KEY_EXPECTED, buf, changed);
    } else if (!json_is_string(json_object_get(data, GR_GANG_KEY_EXPECTED))) {
        rc = set_data(data, GR_GANG_KEY_EXPECTED, "0", changed);
    }
    gr_gang_peers peers = {0};
    size_t i;
    const json_t *pod;
    json_array_foreach(members, i, pod)
    {
        if (rc != GR_OK)
            break;
        if (!member_active(pod))
            continue;
        const char *ip = nonempty(json_object_get(json_object_get(pod, "status"), "podIP"));
        const char *name = nonempty(json_object_get(json_object_get(pod, "metadata"), "name"));
        if (!ip || !name)
            continue;
        char *checks = gr_preflight_check_names(cfg, pod);
        rc = checks ? gr_gang_peers_add(&peers, name, ip, checks) : GR_ENOMEM;
        free(checks);
    }
    if (rc == GR_OK) {
        gr_gang_peers_assign_ranks(&peers);
        gr_buf b = GR_BUF_INIT(GR_GANG_PEERS_MAX_BYTES);
        rc = gr_gang_peers_format(&peers, &b);
        if (rc == GR_OK)
            rc = set_data(data, GR_GANG_KEY_PEERS, gr_buf_cstr(&b), changed);
        if (rc == GR_OK)
            rc = set_data(data, GR_GANG_KEY_MASTER_ADDR, peers.n ? peers.v[0].ip : "", changed);
        gr_buf_free(&b);
    }
    gr_gang_peers_free(&peers);
    if (rc == GR_ETOOBIG)
        return gr_err_set(err, rc, "peers: the gang does not fit in one ConfigMap (%zu bytes)",
                          GR_GANG_PEERS_MAX_BYTES);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "out of memory");
    return GR_OK;
}

/* --------------------------------------------------------- NCCL topology */

const char *gr_gang_topo_builtin(const char *shape)
{
    if (!shape)
        return NULL;
    if (strcmp(shape, "ndv4") == 0)
        return gr_gang_topo_ndv4_xml;
    if (strcmp(shape, "ndv5") == 0)
        return gr_gang_topo_ndv5_xml;
    return NULL;
}

const char *gr_gang_topo_xml(const gr_preflight_config *cfg)
{
    if (!cfg)
        return NULL;
    if (cfg->gang.nccl_topo_data && *cfg->gang.nccl_topo_data)
        return cfg->gang.nccl_topo_data;
    return gr_gang_topo_builtin(cfg->gang.nccl_topo_shape);
}

json_t *gr_gang_topo_configmap(const char *name, const char *ns, const char *xml, const char *shape)
{
    json_t *cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, s:{s:s}}", "apiVersion", "v1",
                           "kind", "ConfigMap", "metadata", "name", name, "namespace", ns, "labels",
                           "app.kubernetes.io/component", "nccl-topo", "app.kubernetes.io/name",
                           "nvsentinel", "data", GR_GANG_TOPO_KEY, xml);
    if (cm && shape && *shape &&
        json_object_set_new(json_object_get(json_object_get(cm, "metadata"), "labels"),
                            GR_GANG_TOPO_LABEL_SHAPE, json_string(shape)) != 0) {
        json_decref(cm);
        return NULL;
    }
    return cm;
}

/* ------------------------------------------------------ PreflightConfig */

/* obj.metadata.<field> as a string (borrowed) or NULL. */
static const char *meta_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

static int64_t created_ns(const json_t *o)
{
    const char *ts = meta_str(o, "creationTimestamp");
    int64_t ns = INT64_MAX;
    if (!ts || gr_time_parse_ns(ts, &ns, NULL) != GR_OK)
        return INT64_MAX;
    return ns;
}

static int pfc_cmp(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    int64_t tx = created_ns(x), ty = created_ns(y);
    if (tx != ty)
        return tx < ty ? -1 : 1;
    const char *nx = meta_str(x, "name"), *ny = meta_str(y, "name");
    return strcmp(nx ? nx : "", ny ? ny : "");
}

json_t *gr_gang_pfc_order(const json_t *items)
{
    size_t n = json_array_size(items);
    json_t **v = calloc(n ? n : 1, sizeof *v);
    json_t *out = json_array();
    if (!v || !out) {
        free(v);
        json_decref(out);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(items, i);
    qsort(v, n, sizeof *v, pfc_cmp);
    for (size_t i = 0; i < n; i++)
        json_array_append(out, v[i]);
    free(v);
    return out;
}

int gr_gang_pfc_superseded_msg(const char *winner, bool winner_valid, char *buf, size_t n)
{
    if (winner_valid)
        return snprintf(buf, n,
                        "PreflightConfig \"%s\" is already active in this namespace; only one is "
                        "allowed",
                        winner);
    return snprintf(buf, n,
                    "superseded by older PreflightConfig \"%s\" (not active: invalid "
                    "configuration); only one is allowed per namespace",
                    winner);
}

int gr_gang_pfc_set_status(json_t *obj, bool ready, const char *reason, const char *message,
                           const char *discoverer, int64_t now_ns, bool *changed, gr_err *err)
{
    *changed = false;
    json_t *md = json_object_get(obj, "metadata");
    json_int_t gen = json_integer_value(json_object_get(md, "generation"));
    json_t *st = json_object_get(obj, "status");
    if (!json_is_object(st)) {
        st = json_object();
        if (!st || json_object_set_new(obj, "status", st) != 0)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    if (json_integer_value(json_object_get(st, "observedGeneration")) != gen ||
        !json_is_integer(json_object_get(st, "observedGeneration"))) {
        json_object_set_new(st, "observedGeneration", json_integer(gen));
        *changed = true;
    }
    const char *cur = json_string_value(json_object_get(st, "discoverer"));
    if (!cur || strcmp(cur, discoverer ? discoverer : "") != 0) {
        json_object_set_new(st, "discoverer", json_string(discoverer ? discoverer : ""));
        *changed = true;
    }
    bool c2 = false;
    int rc = gr_kube_condition_set(obj, "Ready", ready ? "True" : "False", reason, message, gen,
                                   now_ns, &c2, err);
    if (c2)
        *changed = true;
    return rc;
}

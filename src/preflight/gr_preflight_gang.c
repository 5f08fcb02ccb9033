/*
 * gr_preflight_gang.c — gang ConfigMap naming (facts §3.6) and the static
 * resolver that derives a gang from the admission object alone (§3.2–§3.4
 * anchors; the 1.35 workloadRef is read from the admission JSON, fixing
 * upstream's GET of a Pod that does not exist yet, risk R2).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_hash.h"
#include "gr_preflight.h"
#include "gr_preflight_internal.h"

/* ------------------------------------------------------------- naming
 * The one implementation of facts §3.6 (src/gang uses it too). */

/* s (sanitized) cut to max-9 characters, trailing '-' dropped, then '-' and
 * the first 8 hex of sha256(original). `out` holds max+1 bytes. */
static void truncate_with_hash(const char *s, const char *original, size_t max, char *out)
{
    char hex[GR_HASH_SHA256_HEX_MAX];
    if (gr_hash_sha256_hex_str(original, hex, NULL) != GR_OK)
        memset(hex, '0', 9);
    size_t keep = strlen(s);
    if (keep > max - 9)
        keep = max - 9;
    while (keep > 0 && s[keep - 1] == '-')
        keep--;
    memcpy(out, s, keep);
    out[keep] = '-';
    memcpy(out + keep + 1, hex, 8);
    out[keep + 9] = 0;
}

char *gr_preflight_gang_sanitize(const char *in)
{
    if (!in)
        in = "";
    size_t n = strlen(in);
    char *s = malloc(n + GR_HASH_SHA256_HEX_MAX);
    if (!s)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = in[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            c = '-';
        if (c == '-' && (o == 0 || s[o - 1] == '-'))
            continue; /* collapse runs, trim leading */
        s[o++] = c;
    }
    while (o > 0 && s[o - 1] == '-')
        o--;
    s[o] = 0;
    if (o == 0) {
        char hex[GR_HASH_SHA256_HEX_MAX];
        if (gr_hash_sha256_hex_str(in, hex, NULL) != GR_OK) {
            free(s);
            return NULL;
        }
        memcpy(s, hex, GR_PREFLIGHT_GANG_NAME_MAX);
        s[GR_PREFLIGHT_GANG_NAME_MAX] = 0;
        return s;
    }
    if (o <= GR_PREFLIGHT_GANG_NAME_MAX)
        return s;
    char *t = malloc(GR_PREFLIGHT_GANG_NAME_MAX + 1);
    if (t)
        truncate_with_hash(s, in, GR_PREFLIGHT_GANG_NAME_MAX, t);
    free(s);
    return t;
}

char *gr_preflight_gang_configmap_name(const char *gang_id)
{
    if (!gang_id)
        gang_id = "";
    char *s = gr_preflight_gang_sanitize(gang_id);
    if (!s)
        return NULL;
    const size_t plen = strlen(GR_PREFLIGHT_GANG_CM_PREFIX);
    char *out = malloc(GR_PREFLIGHT_GANG_NAME_MAX + 1);
    if (!out) {
        free(s);
        return NULL;
    }
    memcpy(out, GR_PREFLIGHT_GANG_CM_PREFIX, plen);
    if (plen + strlen(s) <= GR_PREFLIGHT_GANG_NAME_MAX)
        memcpy(out + plen, s, strlen(s) + 1);
    else
        truncate_with_hash(s, gang_id, GR_PREFLIGHT_GANG_NAME_MAX - plen, out + plen);
    free(s);
    return out;
}

char *gr_preflight_gang_id(const char *discoverer, const char *ns, const char *group,
                           const char *sub)
{
    char *id = NULL;
    int n = (sub && *sub) ? asprintf(&id, "%s-%s-%s-%s", discoverer, ns, group, sub)
                          : asprintf(&id, "%s-%s-%s", discoverer, ns, group);
    return n < 0 ? NULL : id;
}

/* ---------------------------------------------------- static resolver */

static const char *nonempty(const json_t *v)
{
    const char *s = json_string_value(v);
    return s && *s ? s : NULL;
}

const char *gr_preflight_gang_native_podgroup(const json_t *pod)
{
    const json_t *spec = json_object_get(pod, "spec");
    return nonempty(json_object_get(json_object_get(spec, "schedulingGroup"), "podGroupName"));
}

const char *gr_preflight_gang_native_workload(const json_t *pod, const char **pod_group)
{
    const json_t *wr = json_object_get(json_object_get(pod, "spec"), "workloadRef");
    const char *wl = nonempty(json_object_get(wr, "name"));
    if (pod_group)
        *pod_group = wl ? nonempty(json_object_get(wr, "podGroup")) : NULL;
    return wl;
}

const char *gr_preflight_gang_keyed_group(const json_t *pod, const char *const *annotation_keys,
                                          size_t n_annotation_keys, const char *const *label_keys,
                                          size_t n_label_keys)
{
    const json_t *md = json_object_get(pod, "metadata");
    const json_t *ann = json_object_get(md, "annotations");
    const json_t *lab = json_object_get(md, "labels");
    for (size_t i = 0; i < n_annotation_keys; i++) {
        const char *v =
            annotation_keys[i] ? nonempty(json_object_get(ann, annotation_keys[i])) : NULL;
        if (v)
            return v;
    }
    for (size_t i = 0; i < n_label_keys; i++) {
        const char *v = label_keys[i] ? nonempty(json_object_get(lab, label_keys[i])) : NULL;
        if (v)
            return v;
    }
    return NULL;
}

/* The keys of a gangDiscovery list (annotationKeys / labelKeys) as C
 * strings borrowed from it (non-strings become NULL, which the lookup
 * skips). *out is the caller's (free()); NULL with *n 0 for an empty list.
 * GR_ENOMEM. */
static int keys_of(const json_t *list, const char ***out, size_t *n)
{
    *out = NULL;
    *n = json_array_size(list);
    if (*n == 0)
        return GR_OK;
    *out = calloc(*n, sizeof **out);
    if (!*out)
        return GR_ENOMEM;
    for (size_t i = 0; i < *n; i++)
        (*out)[i] = json_string_value(json_array_get(list, i));
    return GR_OK;
}

static int static_resolve(void *ud, const json_t *pod, const char *ns, gr_preflight_gang_ctx *ctx,
                          gr_err *err)
{
    const gr_preflight_config *cfg = ud;
    const json_t *gd = cfg ? cfg->gang_discovery : NULL;
    const char *dname = nonempty(json_object_get(gd, "name"));
    char *id = NULL;
    if (dname) {
        /* PodGroup CRD discoverer: annotations first, then labels (PF-96/97). */
        const char **ak = NULL, **lk = NULL;
        size_t na = 0, nl = 0;
        if (keys_of(json_object_get(gd, "annotationKeys"), &ak, &na) != GR_OK ||
            keys_of(json_object_get(gd, "labelKeys"), &lk, &nl) != GR_OK) {
            free(ak);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        const char *group = gr_preflight_gang_keyed_group(pod, ak, na, lk, nl);
        free(ak);
        free(lk);
        if (!group)
            return GR_ENOTFOUND;
        id = gr_preflight_gang_id(dname, ns, group, NULL);
    } else {
        /* native: 1.36 schedulingGroup, else 1.35 workloadRef (from the
         * admission object itself). */
        const char *pg = gr_preflight_gang_native_podgroup(pod), *wpg = NULL;
        const char *wl = pg ? NULL : gr_preflight_gang_native_workload(pod, &wpg);
        if (pg)
            id = gr_preflight_gang_id(GR_PREFLIGHT_GANG_NATIVE_NAME, ns, pg, NULL);
        else if (wl)
            id = gr_preflight_gang_id(GR_PREFLIGHT_GANG_NATIVE_NAME, ns, wl, wpg);
        else
            return GR_ENOTFOUND;
    }
    if (!id)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    ctx->gang_id = id;
    ctx->configmap_name = gr_preflight_gang_configmap_name(id);
    ctx->expected_count = 0;
    if (!ctx->configmap_name) {
        gr_preflight_gang_ctx_clear(ctx);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    return GR_OK;
}

gr_preflight_gang_ops gr_preflight_gang_static_ops(const gr_preflight_config *cfg)
{
    gr_preflight_gang_ops ops = {
        .resolve = static_resolve, .admitted = NULL, .ud = (void *)(uintptr_t)cfg};
    return ops;
}

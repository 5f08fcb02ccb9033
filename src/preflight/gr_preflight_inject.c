/*
 * gr_preflight_inject.c — the mutation: eligibility, check selection,
 * init-container building and the JSON Patch (facts §2.3–§2.9).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_buf.h"
#include "gr_glob.h"
#include "gr_json.h"
#include "gr_preflight.h"
#include "gr_preflight_internal.h"
#include "gr_quantity.h"

#define CPU_FLOOR    "100m"
#define MEMORY_FLOOR "500Mi"

#define OOM(err) gr_err_set((err), GR_ENOMEM, "out of memory")

/* ------------------------------------------------------------ helpers */

int gr_pf_quantity_from_json(const json_t *v, gr_quantity *out, gr_err *err)
{
    if (json_is_string(v))
        return gr_quantity_parse_n(json_string_value(v), json_string_length(v), out, err);
    if (json_is_integer(v)) {
        char buf[32];
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return gr_quantity_parse(buf, out, err);
    }
    if (json_is_real(v)) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.17g", json_real_value(v));
        return gr_quantity_parse(buf, out, err);
    }
    return gr_err_set(err, GR_EINVAL, "must be a quantity string such as \"8\" or \"500Mi\"");
}

void gr_preflight_gang_ctx_clear(gr_preflight_gang_ctx *ctx)
{
    if (!ctx)
        return;
    free(ctx->gang_id);
    free(ctx->configmap_name);
    memset(ctx, 0, sizeof *ctx);
}

void gr_preflight_result_clear(gr_preflight_result *res)
{
    if (!res)
        return;
    json_decref(res->patch);
    gr_preflight_gang_ctx_clear(&res->gang);
    memset(res, 0, sizeof *res);
}

/* Find the element of array `arr` whose member `key` equals `val`. */
static json_t *find_by(const json_t *arr, const char *key, const char *val)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        const char *s = json_string_value(json_object_get(e, key));
        if (s && strcmp(s, val) == 0)
            return e;
    }
    return NULL;
}

/* ----------------------------------------------------- pod type check */

static int check_str_map(const json_t *m, const char *path, gr_err *err)
{
    if (!m || json_is_null(m))
        return GR_OK;
    if (!json_is_object(m))
        return gr_err_set(err, GR_EINVAL, "%s: must be a map of strings", path);
    const char *k;
    json_t *v;
    json_object_foreach(gr_pf_mut(m), k, v)
    {
        if (!json_is_string(v))
            return gr_err_set(err, GR_EINVAL, "%s[\"%s\"]: must be a string", path, k);
    }
    return GR_OK;
}

static int check_named_list(const json_t *l, const char *path, const char *second, gr_err *err)
{
    if (!l || json_is_null(l))
        return GR_OK;
    if (!json_is_array(l))
        return gr_err_set(err, GR_EINVAL, "%s: must be a list", path);
    size_t i;
    json_t *e;
    json_array_foreach(l, i, e)
    {
        if (!json_is_object(e))
            return gr_err_set(err, GR_EINVAL, "%s[%zu]: must be an object", path, i);
        json_t *n = json_object_get(e, "name");
        if (n && !json_is_null(n) && !json_is_string(n))
            return gr_err_set(err, GR_EINVAL, "%s[%zu].name: must be a string", path, i);
        json_t *s = second ? json_object_get(e, second) : NULL;
        if (s && !json_is_null(s) && !json_is_string(s))
            return gr_err_set(err, GR_EINVAL, "%s[%zu].%s: must be a string", path, i, second);
    }
    return GR_OK;
}

int gr_preflight_pod_check(const json_t *pod, gr_err *err)
{
    if (!json_is_object(pod))
        return gr_err_set(err, GR_EINVAL, "the object is not a Pod (expected a JSON object)");
    json_t *md = json_object_get(pod, "metadata");
    if (md && !json_is_null(md)) {
        if (!json_is_object(md))
            return gr_err_set(err, GR_EINVAL, "metadata: must be an object");
        static const char *const strs[] = {"name", "generateName", "namespace"};
        for (size_t i = 0; i < 3; i++) {
            json_t *v = json_object_get(md, strs[i]);
            if (v && !json_is_null(v) && !json_is_string(v))
                return gr_err_set(err, GR_EINVAL, "metadata.%s: must be a string", strs[i]);
        }
        if (check_str_map(json_object_get(md, "annotations"), "metadata.annotations", err) ||
            check_str_map(json_object_get(md, "labels"), "metadata.labels", err))
            return GR_EINVAL;
    }
    json_t *spec = json_object_get(pod, "spec");
    if (!spec || json_is_null(spec))
        return GR_OK;
    if (!json_is_object(spec))
        return gr_err_set(err, GR_EINVAL, "spec: must be an object");
    static const char *const lists[] = {"initContainers", "volumes", "imagePullSecrets",
                                        "resourceClaims"};
    for (size_t i = 0; i < 4; i++) {
        char p[64];
        snprintf(p, sizeof p, "spec.%s", lists[i]);
        if (check_named_list(json_object_get(spec, lists[i]), p, NULL, err))
            return GR_EINVAL;
    }
    json_t *cs = json_object_get(spec, "containers");
    if (check_named_list(cs, "spec.containers", NULL, err))
        return GR_EINVAL;
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c)
    {
        char p[96];
        snprintf(p, sizeof p, "spec.containers[%zu].env", i);
        if (check_named_list(json_object_get(c, "env"), p, "value", err))
            return GR_EINVAL;
        snprintf(p, sizeof p, "spec.containers[%zu].volumeMounts", i);
        if (check_named_list(json_object_get(c, "volumeMounts"), p, "mountPath", err))
            return GR_EINVAL;
        json_t *r = json_object_get(c, "resources");
        if (!r || json_is_null(r))
            continue;
        if (!json_is_object(r))
            return gr_err_set(err, GR_EINVAL, "spec.containers[%zu].resources: must be an object",
                              i);
        static const char *const parts[] = {"limits", "requests"};
        for (size_t p2 = 0; p2 < 2; p2++) {
            json_t *m = json_object_get(r, parts[p2]);
            if (!m || json_is_null(m))
                continue;
            if (!json_is_object(m))
                return gr_err_set(err, GR_EINVAL,
                                  "spec.containers[%zu].resources.%s: must be an object", i,
                                  parts[p2]);
            const char *k;
            json_t *q;
            json_object_foreach(m, k, q)
            {
                gr_quantity qv;
                if (gr_pf_quantity_from_json(q, &qv, err) != GR_OK)
                    return gr_err_prefix(err, "spec.containers[%zu].resources.%s[\"%s\"]: ", i,
                                         parts[p2], k);
            }
        }
    }
    return GR_OK;
}

/* ------------------------------------------------------- eligibility */

typedef struct maxres {
    const char *name;      /* borrowed from cfg */
    const gr_pf_item *key; /* `"name":`, serialised at load */
    gr_quantity q;
    bool gpu;
} maxres;

/* Max of limits and requests over spec.containers for every configured
 * name (GPU names first, then network names, once each); zero quantities
 * are ignored (facts §2.3). Returns the count. */
static size_t find_max_resources(const gr_pf_compiled *pc, const json_t *containers, maxres *out,
                                 size_t cap)
{
    size_t n = 0;
    for (size_t k = 0; k < pc->res_names.n && n < cap; k++) {
        const char *name = pc->res_names.v[k].name;
        bool found = false;
        gr_quantity best;
        size_t i;
        json_t *c;
        json_array_foreach(containers, i, c)
        {
            json_t *r = json_object_get(c, "resources");
            static const char *const parts[] = {"limits", "requests"};
            for (size_t p = 0; p < 2; p++) {
                json_t *v = json_object_get(json_object_get(r, parts[p]), name);
                gr_quantity q;
                if (!v || gr_pf_quantity_from_json(v, &q, NULL) != GR_OK || gr_quantity_is_zero(&q))
                    continue;
                if (!found || gr_quantity_cmp(&q, &best) > 0)
                    best = q;
                found = true;
            }
        }
        if (!found)
            continue;
        out[n].name = name;
        out[n].key = &pc->res_names.v[k];
        out[n].q = best;
        out[n].gpu = k < pc->n_gpu_names;
        n++;
    }
    return n;
}

/* ------------------------------------------------------------ selection */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static const gr_preflight_check *find_check(const gr_preflight_config *cfg, const char *name,
                                            size_t len)
{
    for (size_t i = 0; i < cfg->n_checks; i++)
        if (strlen(cfg->checks[i].name) == len && memcmp(cfg->checks[i].name, name, len) == 0)
            return &cfg->checks[i];
    return NULL;
}

/* Fill sel[] (cap cfg->n_checks) in injection order; *nsel the count.
 * Strict (admission): a duplicate or unknown name is GR_EINVAL with the
 * contract's denial text. Lenient (the gang coordinator, gr_preflight_check_names):
 * unknown names are dropped and a duplicate selects nothing, GR_OK. */
static int select_checks(const gr_preflight_config *cfg, const json_t *pod, bool lenient,
                         const gr_preflight_check **sel, size_t *nsel, gr_err *err)
{
    *nsel = 0;
    json_t *ann = json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"),
                                  GR_PREFLIGHT_ANNOTATION_CHECKS);
    if (!json_is_string(ann)) {
        for (size_t i = 0; i < cfg->n_checks; i++) /* PF-28, PF-29, PF-30 */
            if (cfg->checks[i].default_enabled)
                sel[(*nsel)++] = &cfg->checks[i];
        return GR_OK;
    }
    const char *s = json_string_value(ann);
    size_t slen = json_string_length(ann);
    gr_buf unknown = GR_BUF_INIT(GR_ERR_MSG_MAX);
    /* names seen so far: offsets into s */
    size_t seen_cap = 16, nseen = 0;
    size_t(*seen)[2] = malloc(seen_cap * sizeof *seen);
    if (!seen)
        return OOM(err);
    int rc = GR_OK;
    size_t pos = 0;
    while (pos <= slen && rc == GR_OK) {
        const char *comma = memchr(s + pos, ',', slen - pos);
        size_t end = comma ? (size_t)(comma - s) : slen;
        size_t b = pos, e = end;
        while (b < e && is_space(s[b]))
            b++;
        while (e > b && is_space(s[e - 1]))
            e--;
        pos = end + 1;
        if (b == e)
            continue;
        size_t len = e - b;
        bool dup = false;
        for (size_t j = 0; j < nseen && !dup; j++)
            dup = seen[j][1] == len && memcmp(s + seen[j][0], s + b, len) == 0;
        if (dup && lenient) {
            *nsel = 0;
            free(seen);
            gr_buf_free(&unknown);
            return GR_OK;
        }
        for (size_t j = 0; dup && j < nseen; j++)
            if (seen[j][1] == len && memcmp(s + seen[j][0], s + b, len) == 0) {
                rc = gr_err_set(err, GR_EINVAL,
                                "duplicate check name \"%.*s\" in annotation " /* PF-33 */
                                GR_PREFLIGHT_ANNOTATION_CHECKS,
                                (int)len, s + b);
                break;
            }
        if (rc != GR_OK)
            break;
        if (nseen == seen_cap) {
            void *ns = realloc(seen, 2 * seen_cap * sizeof *seen);
            if (!ns) {
                rc = OOM(err);
                break;
            }
            seen = ns;
            seen_cap *= 2;
        }
        seen[nseen][0] = b;
        seen[nseen][1] = len;
        nseen++;
        const gr_preflight_check *c = find_check(cfg, s + b, len);
        if (!c && lenient)
            continue;
        if (!c) {
            if (unknown.len)
                gr_buf_puts(&unknown, ", ");
            gr_buf_append(&unknown, s + b, len);
            continue;
        }
        sel[(*nsel)++] = c; /* annotation order, PF-32; at most n_checks (no dups) */
    }
    free(seen);
    if (rc == GR_OK && unknown.len) { /* PF-34 */
        gr_buf conf = GR_BUF_INIT(GR_ERR_MSG_MAX);
        for (size_t i = 0; i < cfg->n_checks; i++) {
            if (i)
                gr_buf_puts(&conf, ", ");
            gr_buf_puts(&conf, cfg->checks[i].name);
        }
        rc = gr_err_set(err, GR_EINVAL,
                        "annotation " GR_PREFLIGHT_ANNOTATION_CHECKS
                        " references unknown checks: %s (configured: %s)",
                        gr_buf_cstr(&unknown), gr_buf_cstr(&conf));
        gr_buf_free(&conf);
    }
    gr_buf_free(&unknown);
    if (rc != GR_OK)
        *nsel = 0;
    return rc;
}

char *gr_preflight_check_names(const gr_preflight_config *cfg, const json_t *pod)
{
    if (!cfg || cfg->n_checks == 0)
        return strdup("");
    const gr_preflight_check **sel = malloc(cfg->n_checks * sizeof *sel);
    if (!sel)
        return NULL;
    size_t nsel = 0;
    gr_buf b = GR_BUF_INIT(GR_PREFLIGHT_CONFIG_MAX);
    int rc = select_checks(cfg, pod, true, sel, &nsel, NULL);
    for (size_t i = 0; i < nsel && rc == GR_OK; i++)
        rc = gr_buf_printf(&b, "%s%s", i ? "," : "", sel[i]->name);
    free(sel);
    if (rc != GR_OK) {
        gr_buf_free(&b);
        return NULL;
    }
    char *out = gr_buf_steal(&b, NULL);
    return out ? out : strdup("");
}

/* ------------------------------------------------------------- emitting */

/* The patch is written as JSON text straight into a gr_buf: pod-independent
 * parts were serialised at config load (gr_preflight_compile.c); only the
 * pod-dependent parts (mirrored quantities, inherited env and mounts, gang
 * id and ConfigMap, claims) are formatted here. The bytes are those of the
 * json_t the documented algorithm builds, dumped with JSON_COMPACT. */

/* Sticky-error writer: after the first failure every call is a no-op. */
typedef struct jw {
    gr_buf *b;
    int rc;
} jw;

static inline void w_raw(jw *w, const char *s, size_t n)
{
    if (w->rc == GR_OK)
        w->rc = gr_pf_put(w->b, s, n);
}

#define W_LIT(w, lit) w_raw((w), (lit), sizeof(lit) - 1)

static void w_str(jw *w, const char *s)
{
    if (w->rc == GR_OK)
        w->rc = gr_pf_json_str(w->b, s, strlen(s));
}

/* One entry of a list being assembled: a compiled item, or pod JSON
 * serialised once per admission (text at off/len of the scratch buffer). */
typedef struct entry {
    const gr_pf_item *it; /* NULL: a pod-derived entry */
    const char *name;
    const char *path;
    size_t off, len;
} entry;

typedef struct emit_ctx {
    const gr_preflight_config *cfg;
    const gr_pf_compiled *comp;
    const json_t *pod_volumes;
    const json_t *claims; /* spec.resourceClaims */
    const maxres *max;
    size_t nmax;
    const char (*qstr)[GR_QUANTITY_STR_MAX];
    const gr_preflight_gang_ctx *gang; /* NULL when not a gang member */
    bool claims_needed;
    gr_buf scratch; /* serialised pod entries */
    entry *envc;    /* inheritable env vars: matching a pattern, first per name */
    size_t n_envc;
    entry *mntc; /* inheritable mounts: name and path set, name matching */
    size_t n_mntc;
    entry *sel; /* per-container scratch list */
} emit_ctx;

static void w_entry(jw *w, const emit_ctx *ec, const entry *e)
{
    if (!e->it) {
        w_raw(w, ec->scratch.data + e->off, e->len);
        return;
    }
    const gr_pf_item *it = e->it;
    w_raw(w, it->json, it->json_len);
    if (it->flags & (GR_PF_DYN_GANG_ID | GR_PF_DYN_GANG_CM)) {
        w_str(w, it->flags & GR_PF_DYN_GANG_ID ? ec->gang->gang_id : ec->gang->configmap_name);
        w_raw(w, it->post, it->post_len);
    }
}

static bool entries_have(const entry *l, size_t n, const char *name, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if ((name && l[i].name && strcmp(l[i].name, name) == 0) ||
            (path && l[i].path && strcmp(l[i].path, path) == 0))
            return true;
    return false;
}

static entry from_item(const gr_pf_item *it)
{
    return (entry){.it = it, .name = it->name, .path = it->path};
}

/* Serialise pod JSON `v` into the scratch buffer as an entry. */
static int pod_entry(emit_ctx *ec, const json_t *v, const char *name, const char *path, entry *out)
{
    size_t off = ec->scratch.len;
    int rc = gr_pf_json_value(&ec->scratch, v);
    *out = (entry){.name = name, .path = path, .off = off, .len = ec->scratch.len - off};
    return rc;
}

/* Inheritance candidates, computed once per admission (PF-77..84): the
 * same for every check, only the deduplication against a check's own
 * entries differs. */
static int collect_candidates(emit_ctx *ec, const json_t *containers)
{
    const gr_pf_compiled *pc = ec->comp;
    size_t n_env = 0, n_mnt = 0, i, j;
    json_t *uc, *e;
    json_array_foreach(containers, i, uc)
    {
        n_env += json_array_size(json_object_get(uc, "env"));
        n_mnt += json_array_size(json_object_get(uc, "volumeMounts"));
    }
    ec->envc = n_env ? malloc(n_env * sizeof *ec->envc) : NULL;
    ec->mntc = n_mnt ? malloc(n_mnt * sizeof *ec->mntc) : NULL;
    if ((n_env && !ec->envc) || (n_mnt && !ec->mntc))
        return GR_ENOMEM;
    json_array_foreach(containers, i, uc)
    {
        if (pc->n_env_globs) {
            json_array_foreach(json_object_get(uc, "env"), j, e)
            {
                const char *n = json_string_value(json_object_get(e, "name"));
                if (!n || entries_have(ec->envc, ec->n_envc, n, NULL) ||
                    !gr_pf_glob_any(pc->env_globs, pc->n_env_globs, n))
                    continue;
                if (pod_entry(ec, e, n, NULL, &ec->envc[ec->n_envc++]) != GR_OK)
                    return GR_ENOMEM;
            }
        }
        if (pc->n_mount_globs) {
            json_array_foreach(json_object_get(uc, "volumeMounts"), j, e)
            {
                const char *n = json_string_value(json_object_get(e, "name"));
                const char *p = json_string_value(json_object_get(e, "mountPath"));
                if (!n || !p || !gr_pf_glob_any(pc->mount_globs, pc->n_mount_globs, n))
                    continue;
                if (pod_entry(ec, e, n, p, &ec->mntc[ec->n_mntc++]) != GR_OK)
                    return GR_ENOMEM;
            }
        }
    }
    return GR_OK;
}

static bool items_have_name(const gr_pf_items *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].name && strcmp(l->v[i].name, name) == 0)
            return true;
    return false;
}

static bool has_member(const gr_pf_items *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0)
            return true;
    return false;
}

/* `"limits":{...}` / `"requests":{...}`: template members (a mirrored name
 * overrides its value in place), then mirrored names the template lacks,
 * then (requests) the cpu/memory floors. */
static void w_quantities(jw *w, const emit_ctx *ec, const char *key, const gr_pf_items *tmpl,
                         bool floors)
{
    w_str(w, key);
    W_LIT(w, ":{");
    bool first = true;
    for (size_t i = 0; i < tmpl->n; i++) {
        const gr_pf_item *m = &tmpl->v[i];
        if (!first)
            W_LIT(w, ",");
        first = false;
        size_t k = 0;
        while (k < ec->nmax && strcmp(ec->max[k].name, m->name) != 0)
            k++;
        if (k == ec->nmax) {
            w_raw(w, m->json, m->json_len);
        } else {
            w_raw(w, m->json, m->key_len);
            w_str(w, ec->qstr[k]);
        }
    }
    bool have_cpu = has_member(tmpl, "cpu"), have_mem = has_member(tmpl, "memory");
    for (size_t k = 0; k < ec->nmax; k++) {
        const char *n = ec->max[k].name;
        have_cpu |= strcmp(n, "cpu") == 0;
        have_mem |= strcmp(n, "memory") == 0;
        if (has_member(tmpl, n))
            continue;
        if (!first)
            W_LIT(w, ",");
        first = false;
        w_raw(w, ec->max[k].key->json, ec->max[k].key->key_len);
        w_str(w, ec->qstr[k]);
    }
    if (floors && !have_cpu) {
        if (!first)
            W_LIT(w, ",");
        first = false;
        W_LIT(w, "\"cpu\":\"" CPU_FLOOR "\"");
    }
    if (floors && !have_mem) {
        if (!first)
            W_LIT(w, ",");
        W_LIT(w, "\"memory\":\"" MEMORY_FLOOR "\"");
    }
    W_LIT(w, "}");
}

/* `"claims":[...]` (PF-160): the template's list (unless it was not a
 * list) plus every pod resource claim name not there yet. */
static void w_claims(jw *w, const emit_ctx *ec, const gr_pf_check *cc)
{
    W_LIT(w, "\"claims\":[");
    bool first = true;
    bool keep = cc->claims_state == GR_PF_PRESENT;
    for (size_t i = 0; keep && i < cc->claims.n; i++) {
        if (!first)
            W_LIT(w, ",");
        first = false;
        w_raw(w, cc->claims.v[i].json, cc->claims.v[i].json_len);
    }
    size_t i;
    json_t *e;
    json_array_foreach(ec->claims, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (!n || (keep && items_have_name(&cc->claims, n)))
            continue;
        bool dup = false;
        for (size_t j = 0; j < i && !dup; j++) {
            const char *o =
                json_string_value(json_object_get(json_array_get(ec->claims, j), "name"));
            dup = o && strcmp(o, n) == 0;
        }
        if (dup)
            continue;
        if (!first)
            W_LIT(w, ",");
        first = false;
        W_LIT(w, "{\"name\":");
        w_str(w, n);
        W_LIT(w, "}");
    }
    W_LIT(w, "]");
}

/* Step 1 (PF-50..): the resources member, template order kept. */
static void w_resources(jw *w, const emit_ctx *ec, const gr_pf_check *cc)
{
    W_LIT(w, "\"resources\":{");
    bool first = true;
    for (size_t i = 0; i < cc->rkeys.n; i++) {
        const gr_pf_item *k = &cc->rkeys.v[i];
        if (!first)
            W_LIT(w, ",");
        first = false;
        if (k->flags == GR_PF_KEY_LIMITS && (ec->nmax || cc->limits_state == GR_PF_PRESENT))
            w_quantities(w, ec, "limits", &cc->limits, false);
        else if (k->flags == GR_PF_KEY_REQUESTS)
            w_quantities(w, ec, "requests", &cc->requests, true);
        else if (k->flags == GR_PF_KEY_CLAIMS && ec->claims_needed)
            w_claims(w, ec, cc);
        else
            w_raw(w, k->json, k->json_len);
    }
    if (cc->limits_state == GR_PF_ABSENT && ec->nmax) {
        if (!first)
            W_LIT(w, ",");
        first = false;
        w_quantities(w, ec, "limits", &cc->limits, false);
    }
    if (cc->requests_state == GR_PF_ABSENT) {
        if (!first)
            W_LIT(w, ",");
        first = false;
        w_quantities(w, ec, "requests", &cc->requests, true);
    }
    if (cc->claims_state == GR_PF_ABSENT && ec->claims_needed) {
        if (!first)
            W_LIT(w, ",");
        w_claims(w, ec, cc);
    }
    W_LIT(w, "}");
}

static void w_list(jw *w, const emit_ctx *ec, const char *key, const entry *l, size_t n)
{
    w_str(w, key);
    W_LIT(w, ":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            W_LIT(w, ",");
        w_entry(w, ec, &l[i]);
    }
    W_LIT(w, "]");
}

/* One init container (facts §2.5; steps 1-7 in the documented order). */
static void w_container(jw *w, emit_ctx *ec, const gr_preflight_check *chk, const gr_pf_check *cc)
{
    const gr_pf_compiled *pc = ec->comp;
    entry *env = ec->sel;
    size_t n_env = 0;
    /* 2 + 4: template env, common env, gang env (members only) */
    for (size_t i = 0; i < cc->env.n; i++)
        if (ec->gang || !(cc->env.v[i].flags & GR_PF_GANG_ONLY))
            env[n_env++] = from_item(&cc->env.v[i]);
    /* 5: inherited env, names already present win */
    size_t n_base = n_env;
    if (chk->inherit_env)
        for (size_t i = 0; i < ec->n_envc; i++)
            if (!entries_have(env, n_base, ec->envc[i].name, NULL))
                env[n_env++] = ec->envc[i];
    entry *mounts = env + n_env;
    size_t n_mnt = 0;
    /* 2 + 3: template mounts, token and CA mounts */
    for (size_t i = 0; i < cc->mounts.n; i++)
        mounts[n_mnt++] = from_item(&cc->mounts.v[i]);
    /* 5: inherited mounts, names and mount paths already present win */
    if (chk->inherit_mounts)
        for (size_t i = 0; i < ec->n_mntc; i++)
            if (!entries_have(mounts, n_mnt, ec->mntc[i].name, ec->mntc[i].path))
                mounts[n_mnt++] = ec->mntc[i];
    /* 6: gang mounts, deduplicated by name and mountPath (R4 fix) */
    for (size_t i = 0; ec->gang && i < pc->gang_mounts.n; i++) {
        const gr_pf_item *it = &pc->gang_mounts.v[i];
        /* extraVolumeMounts only for volumes the pod has: a mount of a
         * missing volume makes the whole pod invalid */
        if ((it->flags & GR_PF_NEEDS_VOLUME) && !find_by(ec->pod_volumes, "name", it->name))
            continue;
        if (!entries_have(mounts, n_mnt, it->name, it->path))
            mounts[n_mnt++] = from_item(it);
    }

    W_LIT(w, "{");
    bool first = true;
    for (size_t i = 0; i < cc->keys.n; i++) {
        const gr_pf_item *k = &cc->keys.v[i];
        if (k->flags == GR_PF_KEY_MOUNTS && n_mnt == 0)
            continue; /* an empty volumeMounts is dropped */
        if (!first)
            W_LIT(w, ",");
        first = false;
        switch (k->flags) {
        case GR_PF_KEY_RESOURCES:
            w_resources(w, ec, cc);
            break;
        case GR_PF_KEY_ENV:
            w_list(w, ec, "env", env, n_env);
            break;
        case GR_PF_KEY_MOUNTS:
            w_list(w, ec, "volumeMounts", mounts, n_mnt);
            break;
        default:
            w_raw(w, k->json, k->json_len);
            break;
        }
    }
    /* members the template lacks are added in this order */
    if (!cc->has_resources) {
        if (!first)
            W_LIT(w, ",");
        first = false;
        w_resources(w, ec, cc);
    }
    if (!cc->has_env) {
        if (!first)
            W_LIT(w, ",");
        first = false;
        w_list(w, ec, "env", env, n_env);
    }
    if (!cc->has_mounts && n_mnt) {
        if (!first)
            W_LIT(w, ",");
        w_list(w, ec, "volumeMounts", mounts, n_mnt);
    }
    W_LIT(w, "}");
}

/* Start op `nop` adding to /spec/<field>: the whole list when the pod has
 * none (`whole`), else item `idx` at "/-" or, prepending, at "/<idx>". */
static void w_op_begin(jw *w, size_t nop, const char *field, bool whole, size_t idx, bool prepend)
{
    char path[96];
    if (whole)
        snprintf(path, sizeof path, "/spec/%s", field);
    else if (prepend)
        snprintf(path, sizeof path, "/spec/%s/%zu", field, idx);
    else
        snprintf(path, sizeof path, "/spec/%s/-", field);
    if (nop)
        W_LIT(w, ",");
    W_LIT(w, "{\"op\":\"add\",\"path\":");
    w_str(w, path);
    W_LIT(w, ",\"value\":");
    if (whole)
        W_LIT(w, "[");
}

static void w_op_end(jw *w, bool whole)
{
    if (whole)
        W_LIT(w, "]");
    W_LIT(w, "}");
}

/* Emit a list of entries as ops on /spec/<field>; returns the op count. */
static size_t w_list_ops(jw *w, const emit_ctx *ec, size_t nop, const json_t *spec,
                         const char *field, const entry *l, size_t n)
{
    if (n == 0)
        return nop;
    bool whole = json_array_size(json_object_get(spec, field)) == 0;
    for (size_t i = 0; i < n; i++) {
        if (whole && i)
            W_LIT(w, ",");
        if (!whole || i == 0)
            w_op_begin(w, nop++, field, whole, i, false);
        w_entry(w, ec, &l[i]);
        if (!whole)
            w_op_end(w, false);
    }
    if (whole)
        w_op_end(w, true);
    return nop;
}

static void emit_ctx_free(emit_ctx *ec)
{
    gr_buf_free(&ec->scratch);
    free(ec->envc);
    free(ec->mntc);
    free(ec->sel);
}

/* The token volume collision rule (facts §2.4.1). */
static bool token_volume_ok(const gr_preflight_config *cfg, const json_t *vol)
{
    const json_t *proj = json_object_get(vol, "projected");
    const json_t *srcs = json_object_get(proj, "sources");
    if (!json_is_object(proj) || json_array_size(srcs) != 1)
        return false;
    const json_t *src = json_array_get(srcs, 0);
    const json_t *sat = json_object_get(src, "serviceAccountToken");
    if (json_object_size(src) != 1 || !json_is_object(sat))
        return false;
    const char *aud = json_string_value(json_object_get(sat, "audience"));
    const char *path = json_string_value(json_object_get(sat, "path"));
    const json_t *exp = json_object_get(sat, "expirationSeconds");
    return aud && strcmp(aud, cfg->token_audience) == 0 && path && strcmp(path, "token") == 0 &&
           json_is_integer(exp) && json_integer_value(exp) == cfg->token_expiration_seconds;
}

/* The pod-level part of the patch after the init containers: volumes,
 * imagePullSecrets, the health-publisher label (PF-176). */
static size_t w_pod_ops(jw *w, emit_ctx *ec, size_t nop, const json_t *spec, const json_t *md)
{
    const gr_pf_compiled *pc = ec->comp;
    entry *l = ec->sel;
    size_t n = 0;
    for (size_t i = 0; i < pc->volumes.n; i++) {
        const gr_pf_item *it = &pc->volumes.v[i];
        if ((it->flags & GR_PF_GANG_ONLY) && !ec->gang)
            continue;
        if (find_by(ec->pod_volumes, "name", it->name) || entries_have(l, n, it->name, NULL))
            continue;
        l[n++] = from_item(it);
    }
    nop = w_list_ops(w, ec, nop, spec, "volumes", l, n);
    const json_t *pod_secrets = json_object_get(spec, "imagePullSecrets");
    n = 0;
    for (size_t i = 0; i < pc->pull_secrets.n; i++)
        if (!find_by(pod_secrets, "name", pc->pull_secrets.v[i].name))
            l[n++] = from_item(&pc->pull_secrets.v[i]);
    nop = w_list_ops(w, ec, nop, spec, "imagePullSecrets", l, n);
    if (ec->cfg->publish.mode == GR_PREFLIGHT_PUBLISH_DEPLOYMENT) {
        if (nop++)
            W_LIT(w, ",");
        if (!json_is_object(md))
            W_LIT(w, "{\"op\":\"add\",\"path\":\"/"
                     "metadata\",\"value\":{\"labels\":{\"" GR_PREFLIGHT_LABEL_HEALTH_PUB
                     "\":\"true\"}}}");
        else if (!json_is_object(json_object_get(md, "labels")))
            W_LIT(w, "{\"op\":\"add\",\"path\":\"/metadata/"
                     "labels\",\"value\":{\"" GR_PREFLIGHT_LABEL_HEALTH_PUB "\":\"true\"}}");
        else
            W_LIT(w, "{\"op\":\"add\",\"path\":\"/metadata/labels/"
                     "nvsentinel.nvidia.com~1health-publisher\",\"value\":\"true\"}");
    }
    return nop;
}

int gr_preflight_inject_text(const gr_preflight_config *cfg, const gr_preflight_gang_ops *gang,
                             const json_t *pod, const char *ns, gr_buf *patch,
                             gr_preflight_result *res, gr_err *err)
{
    memset(res, 0, sizeof *res);
    const gr_pf_compiled *pc = cfg->compiled;
    const json_t *spec = json_object_get(pod, "spec");
    const json_t *containers = json_object_get(spec, "containers");
    maxres max[64];
    size_t nmax = find_max_resources(pc, containers, max, sizeof max / sizeof *max);
    bool eligible = false;
    for (size_t i = 0; i < nmax; i++)
        eligible |= max[i].gpu; /* network names alone never trigger */
    if (!eligible)
        return GR_OK; /* PF-02 */

    const json_t *md = json_object_get(pod, "metadata");
    const char *pns = json_string_value(json_object_get(md, "namespace"));
    if (!pns || !*pns)
        pns = ns ? ns : "";
    const json_t *pod_volumes = json_object_get(spec, "volumes");

    if (cfg->token_audience) {
        const json_t *tv = find_by(pod_volumes, "name", GR_PREFLIGHT_VOL_TOKEN);
        if (tv && !token_volume_ok(cfg, tv))
            return gr_err_set(err, GR_EINVAL,
                              "pod declares a volume named \"" GR_PREFLIGHT_VOL_TOKEN
                              "\" that is not the projected ServiceAccount token preflight "
                              "injects; rename it, because injected checks read their "
                              "platform-connector credential from that volume");
    }

    bool member = false;
    if (cfg->gang.enabled && gang && gang->resolve) {
        int rc = gang->resolve(gang->ud, pod, pns, &res->gang, err);
        if (rc == GR_OK && res->gang.gang_id && res->gang.configmap_name) {
            member = true;
        } else {
            gr_preflight_gang_ctx_clear(&res->gang);
            if (rc != GR_OK && rc != GR_ENOTFOUND)
                return rc;
        }
    }

    const gr_preflight_check *sel_buf[16];
    const gr_preflight_check **sel = sel_buf;
    size_t nsel = 0;
    if (cfg->n_checks > sizeof sel_buf / sizeof *sel_buf &&
        !(sel = calloc(cfg->n_checks, sizeof *sel)))
        return OOM(err);
    if (cfg->n_checks) {
        int rc = select_checks(cfg, pod, false, sel, &nsel, err);
        if (rc != GR_OK) {
            if (sel != sel_buf)
                free(sel);
            gr_preflight_gang_ctx_clear(&res->gang);
            return rc;
        }
    }
    if (nsel == 0) { /* PF-35: nothing selected, no patch, no registration */
        if (sel != sel_buf)
            free(sel);
        gr_preflight_gang_ctx_clear(&res->gang);
        return GR_OK;
    }

    char qstr[64][GR_QUANTITY_STR_MAX];
    for (size_t i = 0; i < nmax; i++)
        gr_quantity_string(&max[i].q, qstr[i]);
    const json_t *claims = json_object_get(spec, "resourceClaims");
    emit_ctx ec = {.cfg = cfg,
                   .comp = pc,
                   .pod_volumes = pod_volumes,
                   .claims = claims,
                   .max = max,
                   .nmax = nmax,
                   .qstr = (const char(*)[GR_QUANTITY_STR_MAX])qstr,
                   .gang = member ? &res->gang : NULL,
                   .claims_needed =
                       member && cfg->gang.mirror_resource_claims && json_array_size(claims) > 0,
                   .scratch = GR_BUF_INIT(GR_PF_TEXT_MAX)};
    int rc = collect_candidates(&ec, containers);
    /* room for the longest list one container or the pod part needs */
    size_t most = pc->volumes.n + pc->pull_secrets.n;
    for (size_t i = 0; i < nsel; i++) {
        const gr_pf_check *cc = &pc->checks[sel[i] - cfg->checks];
        size_t need = cc->env.n + ec.n_envc + cc->mounts.n + ec.n_mntc + pc->gang_mounts.n;
        if (need > most)
            most = need;
    }
    if (rc == GR_OK && !(ec.sel = malloc((most ? most : 1) * sizeof *ec.sel)))
        rc = GR_ENOMEM;

    size_t start = patch->len;
    jw w = {.b = patch, .rc = rc};
    if (w.rc == GR_OK)
        w.rc = gr_buf_reserve(patch, 2048 * nsel + 1024);
    W_LIT(&w, "[");
    bool whole = json_array_size(json_object_get(spec, "initContainers")) == 0;
    bool prepend = cfg->placement == GR_PREFLIGHT_PREPEND;
    size_t nop = 0;
    for (size_t i = 0; i < nsel && w.rc == GR_OK; i++) {
        if (whole && i)
            W_LIT(&w, ",");
        if (!whole || i == 0)
            w_op_begin(&w, nop++, "initContainers", whole, i, prepend);
        w_container(&w, &ec, sel[i], &pc->checks[sel[i] - cfg->checks]);
        if (!whole)
            w_op_end(&w, false);
    }
    if (whole)
        w_op_end(&w, true);
    nop = w_pod_ops(&w, &ec, nop, spec, md);
    W_LIT(&w, "]");
    emit_ctx_free(&ec);
    if (sel != sel_buf)
        free(sel);
    if (w.rc != GR_OK) {
        patch->len = start;
        if (patch->data)
            patch->data[start] = 0;
        gr_preflight_result_clear(res);
        if (w.rc == GR_ETOOBIG)
            return gr_err_set(err, GR_ETOOBIG, "the JSON Patch would be larger than %zu bytes",
                              patch->max);
        return OOM(err);
    }
    res->n_injected = nsel;
    res->outcome = GR_PREFLIGHT_INJECTED;
    return GR_OK;
}

int gr_preflight_inject(const gr_preflight_config *cfg, const gr_preflight_gang_ops *gang,
                        const json_t *pod, const char *ns, gr_preflight_result *res, gr_err *err)
{
    gr_buf text = GR_BUF_INIT(GR_PF_TEXT_MAX);
    int rc = gr_preflight_inject_text(cfg, gang, pod, ns, &text, res, err);
    if (rc == GR_OK && res->outcome == GR_PREFLIGHT_INJECTED) {
        json_error_t je;
        res->patch = json_loadb(text.data, text.len, 0, &je);
        if (!res->patch) {
            gr_preflight_result_clear(res);
            rc = json_error_code(&je) == json_error_out_of_memory
                     ? OOM(err)
                     : gr_err_set(err, GR_EINVAL,
                                  "the mutated pod cannot be encoded as JSON (%s); check the "
                                  "pod's strings are valid UTF-8",
                                  je.text);
        }
    }
    gr_buf_free(&text);
    return rc;
}

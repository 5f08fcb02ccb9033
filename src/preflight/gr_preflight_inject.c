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
#define DSHM_LIMIT   "64Gi"

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

/* Get or create `obj[key]` as an object/array. NULL on ENOMEM. */
static json_t *ensure(json_t *obj, const char *key, bool array)
{
    json_t *v = json_object_get(obj, key);
    if (array ? json_is_array(v) : json_is_object(v))
        return v;
    v = array ? json_array() : json_object();
    if (!v || json_object_set_new(obj, key, v) != 0)
        return NULL;
    return v;
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
    const char *name; /* borrowed from cfg */
    gr_quantity q;
    bool gpu;
} maxres;

/* Max of limits and requests over spec.containers for every configured
 * name; zero quantities are ignored (facts §2.3). Returns the count. */
static size_t find_max_resources(const gr_preflight_config *cfg, const json_t *containers,
                                 maxres *out, size_t cap)
{
    size_t n = 0;
    for (size_t pass = 0; pass < 2; pass++) {
        const gr_preflight_strv *names =
            pass == 0 ? &cfg->gpu_resource_names : &cfg->network_resource_names;
        for (size_t k = 0; k < names->n; k++) {
            const char *name = names->v[k];
            bool dup = false;
            for (size_t j = 0; j < n; j++)
                dup |= strcmp(out[j].name, name) == 0;
            if (dup || n == cap)
                continue;
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
                    if (!v || gr_pf_quantity_from_json(v, &q, NULL) != GR_OK ||
                        gr_quantity_is_zero(&q))
                        continue;
                    if (!found || gr_quantity_cmp(&q, &best) > 0)
                        best = q;
                    found = true;
                }
            }
            if (!found)
                continue;
            out[n].name = name;
            out[n].q = best;
            out[n].gpu = pass == 0;
            n++;
        }
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

/* Fill sel[] (cap cfg->n_checks) in injection order; *nsel the count. */
static int select_checks(const gr_preflight_config *cfg, const json_t *pod,
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
        for (size_t j = 0; j < nseen; j++)
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

/* ------------------------------------------------------------- building */

static bool has_env(const json_t *env, const char *name)
{
    return find_by(env, "name", name) != NULL;
}

/* Append {name, value} unless the name is present (template wins). */
static int env_value(json_t *env, const char *name, const char *value)
{
    if (has_env(env, name))
        return GR_OK;
    return json_array_append_new(env, json_pack("{s:s,s:s}", "name", name, "value", value)) == 0
               ? GR_OK
               : GR_ENOMEM;
}

static int env_field(json_t *env, const char *name, const char *field)
{
    if (has_env(env, name))
        return GR_OK;
    return json_array_append_new(env, json_pack("{s:s,s:{s:{s:s}}}", "name", name, "valueFrom",
                                                "fieldRef", "fieldPath", field)) == 0
               ? GR_OK
               : GR_ENOMEM;
}

static json_t *mount_new(const char *name, const char *path, bool ro)
{
    json_t *m = json_pack("{s:s,s:s}", "name", name, "mountPath", path);
    if (m && ro && json_object_set_new(m, "readOnly", json_true()) != 0) {
        json_decref(m);
        return NULL;
    }
    return m;
}

/* Add a mount unless one with the same name or mountPath is there (the
 * R4 fix: no second /dev/shm). */
static int mount_add_dedupe(json_t *mounts, const char *name, const char *path, bool ro)
{
    if (find_by(mounts, "name", name) || find_by(mounts, "mountPath", path))
        return GR_OK;
    return json_array_append_new(mounts, mount_new(name, path, ro)) == 0 ? GR_OK : GR_ENOMEM;
}

static bool match_any(const gr_preflight_strv *pats, const char *name)
{
    for (size_t i = 0; i < pats->n; i++)
        if (gr_glob_match(pats->v[i], name))
            return true;
    return false;
}

static bool pod_has_volume(const json_t *pod_volumes, const json_t *added, const char *name)
{
    return find_by(pod_volumes, "name", name) || find_by(added, "name", name);
}

typedef struct build_ctx {
    const gr_preflight_config *cfg;
    const json_t *pod;
    const json_t *containers; /* spec.containers */
    const json_t *pod_volumes;
    const maxres *max;
    size_t nmax;
    const gr_preflight_gang_ctx *gang; /* NULL when not a gang member */
    char token_path[4096];
} build_ctx;

static int build_container(const build_ctx *bc, const gr_preflight_check *chk, json_t **out,
                           gr_err *err)
{
    const gr_preflight_config *cfg = bc->cfg;
    json_t *c = json_deep_copy(chk->container);
    if (!c)
        return OOM(err);
    int rc = GR_ENOMEM;
    char qbuf[GR_QUANTITY_STR_MAX];

    /* 1. resources: mirror the max of every GPU/network name, floors. */
    json_t *res = ensure(c, "resources", false);
    if (!res)
        goto out;
    json_t *lim = NULL, *req = NULL;
    if (bc->nmax) {
        if (!(lim = ensure(res, "limits", false)))
            goto out;
    }
    if (!(req = ensure(res, "requests", false)))
        goto out;
    for (size_t i = 0; i < bc->nmax; i++) {
        gr_quantity_string(&bc->max[i].q, qbuf);
        if (json_object_set_new(req, bc->max[i].name, json_string(qbuf)) ||
            json_object_set_new(lim, bc->max[i].name, json_string(qbuf)))
            goto out;
    }
    if (!json_object_get(req, "cpu") && json_object_set_new(req, "cpu", json_string(CPU_FLOOR)))
        goto out;
    if (!json_object_get(req, "memory") &&
        json_object_set_new(req, "memory", json_string(MEMORY_FLOOR)))
        goto out;

    /* 2. common env (PF-40..43) + direct publishing (PF-166..168). */
    json_t *env = ensure(c, "env", true);
    json_t *mounts = ensure(c, "volumeMounts", true);
    if (!env || !mounts)
        goto out;
    if (env_field(env, "NODE_NAME", "spec.nodeName"))
        goto out;
    if (*cfg->connector_socket &&
        env_value(env, "PLATFORM_CONNECTOR_SOCKET", cfg->connector_socket))
        goto out;
    if (env_value(env, "PROCESSING_STRATEGY", cfg->processing_strategy))
        goto out;
    if (cfg->token_audience && env_value(env, "PLATFORM_CONNECTOR_TOKEN_PATH", bc->token_path))
        goto out;
    if (cfg->publish.mode == GR_PREFLIGHT_PUBLISH_DEPLOYMENT) {
        if (env_value(env, "HEALTH_PUBLISH_TARGET", cfg->publish.target) ||
            env_value(env, "HEALTH_PUBLISH_TOKEN_PATH", bc->token_path))
            goto out;
        if (cfg->publish.insecure
                ? env_value(env, "HEALTH_PUBLISH_INSECURE", "true")
                : env_value(env, "HEALTH_PUBLISH_TLS_CA_FILE", GR_PREFLIGHT_PUBLISH_CA_FILE))
            goto out;
    }

    /* 3. token mount (by name), CA bundle mount (PF-175). */
    if (cfg->token_audience && !find_by(mounts, "name", GR_PREFLIGHT_VOL_TOKEN) &&
        json_array_append_new(mounts,
                              mount_new(GR_PREFLIGHT_VOL_TOKEN, cfg->token_mount_path, true)))
        goto out;
    if (cfg->publish.mode == GR_PREFLIGHT_PUBLISH_DEPLOYMENT && !cfg->publish.insecure &&
        mount_add_dedupe(mounts, GR_PREFLIGHT_VOL_PUBLISH_CA, GR_PREFLIGHT_PUBLISH_CA_DIR, true))
        goto out;

    /* 4. gang env (PF-44). */
    if (bc->gang) {
        char num[32];
        if (env_value(env, "GANG_ID", bc->gang->gang_id) ||
            env_value(env, "GANG_CONFIG_DIR", cfg->gang.configmap_mount_path))
            goto out;
        snprintf(num, sizeof num, "%" PRId64, cfg->gang.timeout_ns / INT64_C(1000000000));
        if (env_value(env, "GANG_TIMEOUT_SECONDS", num))
            goto out;
        snprintf(num, sizeof num, "%" PRId64, cfg->gang.master_port);
        if (env_value(env, "MASTER_PORT", num) || env_field(env, "POD_NAME", "metadata.name") ||
            env_field(env, "POD_IP", "status.podIP"))
            goto out;
    }

    /* 5. inheritance (PF-77..84): first occurrence across containers wins,
     * names already present win. */
    size_t i, j;
    json_t *uc, *e;
    if (chk->inherit_env && cfg->nccl_env_patterns.n) {
        json_array_foreach(bc->containers, i, uc)
        {
            json_array_foreach(json_object_get(uc, "env"), j, e)
            {
                const char *n = json_string_value(json_object_get(e, "name"));
                if (!n || has_env(env, n) || !match_any(&cfg->nccl_env_patterns, n))
                    continue;
                if (json_array_append_new(env, json_deep_copy(e)))
                    goto out;
            }
        }
    }
    if (chk->inherit_mounts && cfg->volume_mount_patterns.n) {
        json_array_foreach(bc->containers, i, uc)
        {
            json_array_foreach(json_object_get(uc, "volumeMounts"), j, e)
            {
                const char *n = json_string_value(json_object_get(e, "name"));
                const char *p = json_string_value(json_object_get(e, "mountPath"));
                if (!n || !p || find_by(mounts, "name", n) || find_by(mounts, "mountPath", p) ||
                    !match_any(&cfg->volume_mount_patterns, n))
                    continue;
                if (json_array_append_new(mounts, json_deep_copy(e)))
                    goto out;
            }
        }
    }

    /* 6. gang mounts, deduplicated by name and mountPath (R4 fix). */
    if (bc->gang) {
        if (mount_add_dedupe(mounts, GR_PREFLIGHT_VOL_GANG, cfg->gang.configmap_mount_path, true) ||
            mount_add_dedupe(mounts, GR_PREFLIGHT_VOL_DSHM, "/dev/shm", false))
            goto out;
        if (*cfg->gang.nccl_topo_configmap &&
            mount_add_dedupe(mounts, GR_PREFLIGHT_VOL_NCCL_TOPO, GR_PREFLIGHT_NCCL_TOPO_DIR, true))
            goto out;
        for (size_t k = 0; k < cfg->gang.n_extra_host_path_mounts; k++) {
            const gr_preflight_extra_mount *m = &cfg->gang.extra_host_path_mounts[k];
            if (mount_add_dedupe(mounts, m->name, m->mount_path, m->read_only))
                goto out;
        }
        for (size_t k = 0; k < cfg->gang.n_extra_volume_mounts; k++) {
            const gr_preflight_extra_mount *m = &cfg->gang.extra_volume_mounts[k];
            /* only volumes the pod has: a mount of a missing volume makes
             * the whole pod invalid */
            if (!find_by(bc->pod_volumes, "name", m->name))
                continue;
            if (mount_add_dedupe(mounts, m->name, m->mount_path, m->read_only))
                goto out;
        }
    }

    /* 7. DRA claims (PF-160), gang members only. */
    json_t *claims = json_object_get(json_object_get(bc->pod, "spec"), "resourceClaims");
    if (bc->gang && cfg->gang.mirror_resource_claims && json_array_size(claims)) {
        json_t *rc_claims = ensure(res, "claims", true);
        if (!rc_claims)
            goto out;
        json_array_foreach(claims, i, e)
        {
            const char *n = json_string_value(json_object_get(e, "name"));
            if (!n || find_by(rc_claims, "name", n))
                continue;
            if (json_array_append_new(rc_claims, json_pack("{s:s}", "name", n)))
                goto out;
        }
    }
    if (json_array_size(mounts) == 0)
        json_object_del(c, "volumeMounts");
    rc = GR_OK;
out:
    if (rc != GR_OK) {
        json_decref(c);
        return OOM(err);
    }
    *out = c;
    return GR_OK;
}

/* Pod-level volumes in documented order, skipping names the pod has. */
static int build_volumes(const build_ctx *bc, json_t *vols)
{
    const gr_preflight_config *cfg = bc->cfg;
    json_t *v;
#define ADD(name, json)                                       \
    do {                                                      \
        if (!pod_has_volume(bc->pod_volumes, vols, (name))) { \
            v = (json);                                       \
            if (!v || json_array_append_new(vols, v))         \
                return GR_ENOMEM;                             \
        }                                                     \
    } while (0)
    if (*cfg->connector_socket)
        ADD(GR_PREFLIGHT_VOL_SOCKET,
            json_pack("{s:s,s:{s:s,s:s}}", "name", GR_PREFLIGHT_VOL_SOCKET, "hostPath", "path",
                      GR_PREFLIGHT_SOCKET_HOST_DIR, "type", "DirectoryOrCreate"));
    if (cfg->token_audience)
        ADD(GR_PREFLIGHT_VOL_TOKEN,
            json_pack("{s:s,s:{s:[{s:{s:s,s:I,s:s}}]}}", "name", GR_PREFLIGHT_VOL_TOKEN,
                      "projected", "sources", "serviceAccountToken", "audience",
                      cfg->token_audience, "expirationSeconds",
                      (json_int_t)cfg->token_expiration_seconds, "path", "token"));
    if (cfg->publish.mode == GR_PREFLIGHT_PUBLISH_DEPLOYMENT && !cfg->publish.insecure)
        ADD(GR_PREFLIGHT_VOL_PUBLISH_CA,
            json_pack("{s:s,s:{s:s}}", "name", GR_PREFLIGHT_VOL_PUBLISH_CA, "configMap", "name",
                      GR_PREFLIGHT_PUBLISH_CA_CM));
    if (!bc->gang)
        return GR_OK;
    ADD(GR_PREFLIGHT_VOL_GANG,
        json_pack("{s:s,s:{s:s,s:b}}", "name", GR_PREFLIGHT_VOL_GANG, "configMap", "name",
                  bc->gang->configmap_name, "optional", 1));
    ADD(GR_PREFLIGHT_VOL_DSHM, json_pack("{s:s,s:{s:s,s:s}}", "name", GR_PREFLIGHT_VOL_DSHM,
                                         "emptyDir", "medium", "Memory", "sizeLimit", DSHM_LIMIT));
    if (*cfg->gang.nccl_topo_configmap)
        ADD(GR_PREFLIGHT_VOL_NCCL_TOPO,
            json_pack("{s:s,s:{s:s,s:b}}", "name", GR_PREFLIGHT_VOL_NCCL_TOPO, "configMap", "name",
                      cfg->gang.nccl_topo_configmap, "optional", 1));
    for (size_t k = 0; k < cfg->gang.n_extra_host_path_mounts; k++) {
        const gr_preflight_extra_mount *m = &cfg->gang.extra_host_path_mounts[k];
        json_t *hp = *m->host_path_type
                         ? json_pack("{s:s,s:s}", "path", m->host_path, "type", m->host_path_type)
                         : json_pack("{s:s}", "path", m->host_path);
        ADD(m->name, hp ? json_pack("{s:s,s:o}", "name", m->name, "hostPath", hp) : NULL);
    }
#undef ADD
    return GR_OK;
}

/* Emit `items` (stolen) at /spec/<field>: one add of the whole list when
 * the pod has none, else one add per item at "/-" (or at index i when
 * prepending). */
static int patch_list(json_t *patch, const json_t *spec, const char *field, json_t *items,
                      bool prepend, gr_err *err)
{
    if (json_array_size(items) == 0) {
        json_decref(items);
        return GR_OK;
    }
    char path[64];
    if (json_array_size(json_object_get(spec, field)) == 0) {
        snprintf(path, sizeof path, "/spec/%s", field);
        return gr_json_patch_add(patch, path, items, err);
    }
    size_t i;
    json_t *e;
    int rc = GR_OK;
    json_array_foreach(items, i, e)
    {
        if (prepend)
            snprintf(path, sizeof path, "/spec/%s/%zu", field, i);
        else
            snprintf(path, sizeof path, "/spec/%s/-", field);
        json_incref(e);
        if ((rc = gr_json_patch_add(patch, path, e, err)) != GR_OK)
            break;
    }
    json_decref(items);
    return rc;
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

int gr_preflight_inject(const gr_preflight_config *cfg, const gr_preflight_gang_ops *gang,
                        const json_t *pod, const char *ns, gr_preflight_result *res, gr_err *err)
{
    memset(res, 0, sizeof *res);
    const json_t *spec = json_object_get(pod, "spec");
    const json_t *containers = json_object_get(spec, "containers");
    maxres max[64];
    size_t nmax = find_max_resources(cfg, containers, max, sizeof max / sizeof *max);
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

    const gr_preflight_check **sel = NULL;
    size_t nsel = 0;
    if (cfg->n_checks) {
        sel = calloc(cfg->n_checks, sizeof *sel);
        if (!sel)
            return OOM(err);
        int rc = select_checks(cfg, pod, sel, &nsel, err);
        if (rc != GR_OK) {
            free(sel);
            gr_preflight_gang_ctx_clear(&res->gang);
            return rc;
        }
    }
    if (nsel == 0) { /* PF-35: nothing selected, no patch, no registration */
        free(sel);
        gr_preflight_gang_ctx_clear(&res->gang);
        return GR_OK;
    }

    build_ctx bc = {.cfg = cfg,
                    .pod = pod,
                    .containers = containers,
                    .pod_volumes = pod_volumes,
                    .max = max,
                    .nmax = nmax,
                    .gang = member ? &res->gang : NULL};
    if (cfg->token_audience) {
        const char *mp = cfg->token_mount_path;
        size_t l = strlen(mp);
        snprintf(bc.token_path, sizeof bc.token_path, "%s%stoken", mp,
                 l && mp[l - 1] == '/' ? "" : "/");
    }

    int rc = GR_OK;
    json_t *patch = json_array();
    json_t *inits = json_array();
    json_t *vols = json_array();
    json_t *secrets = json_array();
    if (!patch || !inits || !vols || !secrets) {
        rc = OOM(err);
        goto fail;
    }
    for (size_t i = 0; i < nsel && rc == GR_OK; i++) {
        json_t *c = NULL;
        rc = build_container(&bc, sel[i], &c, err);
        if (rc == GR_OK && json_array_append_new(inits, c))
            rc = OOM(err);
    }
    if (rc == GR_OK && build_volumes(&bc, vols) != GR_OK)
        rc = OOM(err);
    const json_t *pod_secrets = json_object_get(spec, "imagePullSecrets");
    for (size_t i = 0; rc == GR_OK && i < cfg->image_pull_secrets.n; i++) {
        const char *n = cfg->image_pull_secrets.v[i];
        if (find_by(pod_secrets, "name", n))
            continue;
        if (json_array_append_new(secrets, json_pack("{s:s}", "name", n)))
            rc = OOM(err);
    }
    if (rc != GR_OK)
        goto fail;
    res->n_injected = json_array_size(inits);
    rc = patch_list(patch, spec, "initContainers", inits, cfg->placement == GR_PREFLIGHT_PREPEND,
                    err);
    inits = NULL;
    if (rc == GR_OK)
        rc = patch_list(patch, spec, "volumes", vols, false, err);
    vols = NULL;
    if (rc == GR_OK)
        rc = patch_list(patch, spec, "imagePullSecrets", secrets, false, err);
    secrets = NULL;
    if (rc == GR_OK && cfg->publish.mode == GR_PREFLIGHT_PUBLISH_DEPLOYMENT) { /* PF-176 */
        const json_t *labels = json_object_get(md, "labels");
        if (!json_is_object(md)) {
            rc = gr_json_patch_add(
                patch, "/metadata",
                json_pack("{s:{s:s}}", "labels", GR_PREFLIGHT_LABEL_HEALTH_PUB, "true"), err);
        } else if (!json_is_object(labels)) {
            rc = gr_json_patch_add(patch, "/metadata/labels",
                                   json_pack("{s:s}", GR_PREFLIGHT_LABEL_HEALTH_PUB, "true"), err);
        } else {
            char *p = gr_json_ptr_build("metadata", "labels", GR_PREFLIGHT_LABEL_HEALTH_PUB, NULL);
            rc = p ? gr_json_patch_add(patch, p, json_string("true"), err) : OOM(err);
            free(p);
        }
    }
    if (rc != GR_OK)
        goto fail;
    free(sel);
    res->outcome = GR_PREFLIGHT_INJECTED;
    res->patch = patch;
    return GR_OK;
fail:
    free(sel);
    json_decref(patch);
    json_decref(inits);
    json_decref(vols);
    json_decref(secrets);
    gr_preflight_result_clear(res);
    return rc;
}

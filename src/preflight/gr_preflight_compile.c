/*
 * gr_preflight_compile.c — the per-config work done once at load so that an
 * admission only copies bytes: init-container templates taken apart into
 * pre-serialised members, the env vars, mounts and volumes the injector adds
 * (already deduplicated against the template), compiled globs. Also the
 * compact JSON writer the injector uses (byte-identical to jansson's
 * json_dumps(JSON_COMPACT), so patches are the same as when they were built
 * as json_t and dumped).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_buf.h"
#include "gr_glob.h"
#include "gr_preflight.h"
#include "gr_preflight_internal.h"

#define OOM(err) gr_err_set((err), GR_ENOMEM, "out of memory")

/* ------------------------------------------------------- JSON writer */

int gr_pf_json_str(gr_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    /* first pass: how much the escapes add (usually nothing) */
    size_t extra = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            extra += 1;
        else if (c < 0x20)
            extra += (c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') ? 1 : 5;
    }
    int rc = gr_buf_reserve(b, n + extra + 2);
    if (rc != GR_OK)
        return rc;
    char *d = b->data + b->len;
    *d++ = '"';
    if (!extra) {
        memcpy(d, s, n);
        d += n;
    } else {
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c >= 0x20 && c != '"' && c != '\\') {
                *d++ = (char)c;
                continue;
            }
            *d++ = '\\';
            switch (c) {
            case '"':
            case '\\':
                *d++ = (char)c;
                break;
            case '\b':
                *d++ = 'b';
                break;
            case '\f':
                *d++ = 'f';
                break;
            case '\n':
                *d++ = 'n';
                break;
            case '\r':
                *d++ = 'r';
                break;
            case '\t':
                *d++ = 't';
                break;
            default:
                *d++ = 'u';
                *d++ = '0';
                *d++ = '0';
                *d++ = hex[c >> 4];
                *d++ = hex[c & 15];
                break;
            }
        }
    }
    *d++ = '"';
    *d = 0;
    b->len = (size_t)(d - b->data);
    return GR_OK;
}

int gr_pf_json_value(gr_buf *b, const json_t *v)
{
    int rc = GR_OK;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if ((rc = gr_pf_putc(b, '{')) != GR_OK)
            return rc;
        bool first = true;
        for (void *it = json_object_iter(gr_pf_mut(v)); it;
             it = json_object_iter_next(gr_pf_mut(v), it)) {
            if (!first && (rc = gr_pf_putc(b, ',')) != GR_OK)
                return rc;
            first = false;
            if ((rc = gr_pf_json_str(b, json_object_iter_key(it), json_object_iter_key_len(it))) !=
                    GR_OK ||
                (rc = gr_pf_putc(b, ':')) != GR_OK ||
                (rc = gr_pf_json_value(b, json_object_iter_value(it))) != GR_OK)
                return rc;
        }
        return gr_pf_putc(b, '}');
    }
    case JSON_ARRAY: {
        if ((rc = gr_pf_putc(b, '[')) != GR_OK)
            return rc;
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++) {
            if ((i && (rc = gr_pf_putc(b, ',')) != GR_OK) ||
                (rc = gr_pf_json_value(b, json_array_get(v, i))) != GR_OK)
                return rc;
        }
        return gr_pf_putc(b, ']');
    }
    case JSON_STRING:
        return gr_pf_json_str(b, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return gr_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL: {
        /* rare (never in what Kubernetes sends for the fields we copy):
         * let jansson format it so the digits match */
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!s)
            return GR_ENOMEM;
        rc = gr_buf_puts(b, s);
        free(s);
        return rc;
    }
    case JSON_TRUE:
        return gr_pf_put(b, "true", 4);
    case JSON_FALSE:
        return gr_pf_put(b, "false", 5);
    case JSON_NULL:
    default:
        return gr_pf_put(b, "null", 4);
    }
}

/* --------------------------------------------------------------- globs */

static void glob_compile(const char *pat, gr_pf_glob *g)
{
    size_t n = strlen(pat);
    size_t meta = strcspn(pat, "*?[\\");
    g->pat = pat;
    if (meta == n) {
        g->kind = GR_PF_GLOB_LITERAL;
        g->len = n;
    } else if (meta == n - 1 && pat[meta] == '*') {
        g->kind = GR_PF_GLOB_PREFIX;
        g->len = meta;
    } else {
        g->kind = GR_PF_GLOB_GENERAL;
        g->len = n;
    }
}

bool gr_pf_glob_any(const gr_pf_glob *g, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        switch (g[i].kind) {
        case GR_PF_GLOB_LITERAL:
            if (strcmp(g[i].pat, name) == 0)
                return true;
            break;
        case GR_PF_GLOB_PREFIX: /* Go: '*' matches any run of non-'/' bytes */
            if (strncmp(g[i].pat, name, g[i].len) == 0 && !strchr(name + g[i].len, '/'))
                return true;
            break;
        default:
            if (gr_glob_match(g[i].pat, name))
                return true;
            break;
        }
    }
    return false;
}

static int globs_compile(const gr_preflight_strv *sv, gr_pf_glob **out, size_t *nout)
{
    *nout = 0;
    if (!sv->n)
        return GR_OK;
    *out = calloc(sv->n, sizeof **out);
    if (!*out)
        return GR_ENOMEM;
    for (size_t i = 0; i < sv->n; i++)
        glob_compile(sv->v[i], &(*out)[i]);
    *nout = sv->n;
    return GR_OK;
}

/* --------------------------------------------------------------- items */

static void item_free(gr_pf_item *it)
{
    free(it->name);
    free(it->path);
    free(it->json);
    free(it->post);
}

static void items_free(gr_pf_items *l)
{
    for (size_t i = 0; i < l->n; i++)
        item_free(&l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static gr_pf_item *items_push(gr_pf_items *l)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        gr_pf_item *nv = realloc(l->v, nc * sizeof *nv);
        if (!nv)
            return NULL;
        l->v = nv;
        l->cap = nc;
    }
    gr_pf_item *it = &l->v[l->n++];
    memset(it, 0, sizeof *it);
    return it;
}

static bool items_has_name(const gr_pf_items *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].name && strcmp(l->v[i].name, name) == 0)
            return true;
    return false;
}

static bool items_has_path(const gr_pf_items *l, const char *path)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].path && strcmp(l->v[i].path, path) == 0)
            return true;
    return false;
}

static int dup_opt(const char *s, char **out)
{
    *out = NULL;
    if (!s)
        return GR_OK;
    *out = strdup(s);
    return *out ? GR_OK : GR_ENOMEM;
}

/* Append an item: `v` (stolen; NULL means ENOMEM) serialised. */
static int item_add(gr_pf_items *l, const char *name, const char *path, json_t *v, unsigned flags)
{
    if (!v)
        return GR_ENOMEM;
    gr_buf b = GR_BUF_INIT(GR_PF_TEXT_MAX);
    gr_pf_item *it = NULL;
    int rc = gr_pf_json_value(&b, v);
    json_decref(v);
    if (rc == GR_OK && !(it = items_push(l)))
        rc = GR_ENOMEM;
    if (rc == GR_OK && (dup_opt(name, &it->name) || dup_opt(path, &it->path))) {
        item_free(it);
        l->n--;
        rc = GR_ENOMEM;
    }
    if (rc != GR_OK) {
        gr_buf_free(&b);
        return rc;
    }
    it->flags = flags;
    it->json = gr_buf_steal(&b, &it->json_len);
    if (!it->json) {
        item_free(it);
        l->n--;
        return GR_ENOMEM;
    }
    return GR_OK;
}

/* Append a dynamic item: `pre` <JSON string filled per pod> `post`. */
static int item_add_dyn(gr_pf_items *l, const char *name, const char *pre, const char *post,
                        unsigned flags)
{
    gr_pf_item *it = items_push(l);
    if (!it)
        return GR_ENOMEM;
    it->flags = flags;
    if (dup_opt(name, &it->name) || dup_opt(pre, &it->json) || dup_opt(post, &it->post)) {
        item_free(it);
        l->n--;
        return GR_ENOMEM;
    }
    it->json_len = strlen(pre);
    it->post_len = strlen(post);
    return GR_OK;
}

/* Append an object member `"key":value` (value borrowed). */
static int member_add(gr_pf_items *l, const char *key, size_t klen, const json_t *v, unsigned kind)
{
    gr_buf b = GR_BUF_INIT(GR_PF_TEXT_MAX);
    int rc = gr_pf_json_str(&b, key, klen);
    size_t key_len = 0;
    if (rc == GR_OK && (rc = gr_buf_putc(&b, ':')) == GR_OK) {
        key_len = b.len;
        rc = v ? gr_pf_json_value(&b, v) : GR_OK;
    }
    gr_pf_item *it = rc == GR_OK ? items_push(l) : NULL;
    if (!it) {
        gr_buf_free(&b);
        return rc == GR_OK ? GR_ENOMEM : rc;
    }
    it->flags = kind;
    it->key_len = key_len;
    it->name = strndup(key, klen);
    it->json = gr_buf_steal(&b, &it->json_len);
    if (!it->name || !it->json) {
        item_free(it);
        l->n--;
        return GR_ENOMEM;
    }
    return GR_OK;
}

static int members_add_all(gr_pf_items *l, const json_t *obj)
{
    for (void *it = json_object_iter(gr_pf_mut(obj)); it;
         it = json_object_iter_next(gr_pf_mut(obj), it)) {
        int rc = member_add(l, json_object_iter_key(it), json_object_iter_key_len(it),
                            json_object_iter_value(it), GR_PF_KEY_VERBATIM);
        if (rc != GR_OK)
            return rc;
    }
    return GR_OK;
}

/* --------------------------------------------------------- containers */

static json_t *mount_json(const char *name, const char *path, bool ro)
{
    json_t *m = json_pack("{s:s,s:s}", "name", name, "mountPath", path);
    if (m && ro && json_object_set_new(m, "readOnly", json_true()) != 0) {
        json_decref(m);
        return NULL;
    }
    return m;
}

/* Env var `name` = value unless the list has it (the template wins). */
static int env_value(gr_pf_items *env, const char *name, const char *value, unsigned flags)
{
    if (items_has_name(env, name))
        return GR_OK;
    return item_add(env, name, NULL, json_pack("{s:s,s:s}", "name", name, "value", value), flags);
}

static int env_field(gr_pf_items *env, const char *name, const char *field, unsigned flags)
{
    if (items_has_name(env, name))
        return GR_OK;
    return item_add(
        env, name, NULL,
        json_pack("{s:s,s:{s:{s:s}}}", "name", name, "valueFrom", "fieldRef", "fieldPath", field),
        flags);
}

static int compile_resources(gr_pf_check *cc, const json_t *r)
{
    int rc = GR_OK;
    for (void *it = json_object_iter(gr_pf_mut(r)); it && rc == GR_OK;
         it = json_object_iter_next(gr_pf_mut(r), it)) {
        const char *k = json_object_iter_key(it);
        size_t klen = json_object_iter_key_len(it);
        const json_t *v = json_object_iter_value(it);
        unsigned kind = GR_PF_KEY_VERBATIM;
        if (strlen(k) == klen && strcmp(k, "limits") == 0) {
            kind = GR_PF_KEY_LIMITS;
            cc->limits_state = json_is_object(v) ? GR_PF_PRESENT : GR_PF_REPLACE;
            if (json_is_object(v))
                rc = members_add_all(&cc->limits, v);
        } else if (strlen(k) == klen && strcmp(k, "requests") == 0) {
            kind = GR_PF_KEY_REQUESTS;
            cc->requests_state = json_is_object(v) ? GR_PF_PRESENT : GR_PF_REPLACE;
            if (json_is_object(v))
                rc = members_add_all(&cc->requests, v);
        } else if (strlen(k) == klen && strcmp(k, "claims") == 0) {
            kind = GR_PF_KEY_CLAIMS;
            cc->claims_state = json_is_array(v) ? GR_PF_PRESENT : GR_PF_REPLACE;
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e)
            {
                if (rc == GR_OK)
                    rc = item_add(&cc->claims, json_string_value(json_object_get(e, "name")), NULL,
                                  json_incref(e), 0);
            }
        }
        if (rc == GR_OK)
            rc = member_add(&cc->rkeys, k, klen, v, kind);
    }
    return rc;
}

static int compile_check(const gr_preflight_config *cfg, const gr_preflight_check *chk,
                         const char *token_path, gr_pf_check *cc)
{
    const json_t *c = chk->container;
    int rc = GR_OK;
    for (void *it = json_object_iter(gr_pf_mut(c)); it && rc == GR_OK;
         it = json_object_iter_next(gr_pf_mut(c), it)) {
        const char *k = json_object_iter_key(it);
        size_t klen = json_object_iter_key_len(it);
        const json_t *v = json_object_iter_value(it);
        unsigned kind = GR_PF_KEY_VERBATIM;
        size_t i;
        json_t *e;
        /* the config parser validated the types of these three */
        if (strcmp(k, "resources") == 0 && json_is_object(v)) {
            kind = GR_PF_KEY_RESOURCES;
            cc->has_resources = true;
            rc = compile_resources(cc, v);
        } else if (strcmp(k, "env") == 0 && json_is_array(v)) {
            kind = GR_PF_KEY_ENV;
            cc->has_env = true;
            json_array_foreach(v, i, e)
            {
                if (rc == GR_OK)
                    rc = item_add(&cc->env, json_string_value(json_object_get(e, "name")), NULL,
                                  json_incref(e), 0);
            }
        } else if (strcmp(k, "volumeMounts") == 0 && json_is_array(v)) {
            kind = GR_PF_KEY_MOUNTS;
            cc->has_mounts = true;
            json_array_foreach(v, i, e)
            {
                if (rc == GR_OK)
                    rc = item_add(&cc->mounts, json_string_value(json_object_get(e, "name")),
                                  json_string_value(json_object_get(e, "mountPath")),
                                  json_incref(e), 0);
            }
        }
        if (rc == GR_OK)
            rc = member_add(&cc->keys, k, klen, v, kind);
    }
    if (rc != GR_OK)
        return rc;

    /* common env (PF-40..43) + direct publishing (PF-166..168) */
    gr_pf_items *env = &cc->env;
    if ((rc = env_field(env, "NODE_NAME", "spec.nodeName", 0)) ||
        (*cfg->connector_socket &&
         (rc = env_value(env, "PLATFORM_CONNECTOR_SOCKET", cfg->connector_socket, 0))) ||
        (rc = env_value(env, "PROCESSING_STRATEGY", cfg->processing_strategy, 0)) ||
        (cfg->token_audience &&
         (rc = env_value(env, "PLATFORM_CONNECTOR_TOKEN_PATH", token_path, 0))))
        return rc;
    if (cfg->publish.mode == GR_PREFLIGHT_PUBLISH_DEPLOYMENT) {
        if ((rc = env_value(env, "HEALTH_PUBLISH_TARGET", cfg->publish.target, 0)) ||
            (rc = env_value(env, "HEALTH_PUBLISH_TOKEN_PATH", token_path, 0)) ||
            (rc = cfg->publish.insecure ? env_value(env, "HEALTH_PUBLISH_INSECURE", "true", 0)
                                        : env_value(env, "HEALTH_PUBLISH_TLS_CA_FILE",
                                                    GR_PREFLIGHT_PUBLISH_CA_FILE, 0)))
            return rc;
    }
    /* token mount (by name), CA bundle mount (PF-175) */
    if (cfg->token_audience && !items_has_name(&cc->mounts, GR_PREFLIGHT_VOL_TOKEN) &&
        (rc = item_add(&cc->mounts, GR_PREFLIGHT_VOL_TOKEN, cfg->token_mount_path,
                       mount_json(GR_PREFLIGHT_VOL_TOKEN, cfg->token_mount_path, true), 0)))
        return rc;
    if (cfg->publish.mode == GR_PREFLIGHT_PUBLISH_DEPLOYMENT && !cfg->publish.insecure &&
        !items_has_name(&cc->mounts, GR_PREFLIGHT_VOL_PUBLISH_CA) &&
        !items_has_path(&cc->mounts, GR_PREFLIGHT_PUBLISH_CA_DIR) &&
        (rc = item_add(&cc->mounts, GR_PREFLIGHT_VOL_PUBLISH_CA, GR_PREFLIGHT_PUBLISH_CA_DIR,
                       mount_json(GR_PREFLIGHT_VOL_PUBLISH_CA, GR_PREFLIGHT_PUBLISH_CA_DIR, true),
                       0)))
        return rc;

    /* gang env (PF-44), after the common env: only for gang members */
    char num[32];
    if (!items_has_name(env, "GANG_ID") &&
        (rc = item_add_dyn(env, "GANG_ID", "{\"name\":\"GANG_ID\",\"value\":", "}",
                           GR_PF_GANG_ONLY | GR_PF_DYN_GANG_ID)))
        return rc;
    if ((rc = env_value(env, "GANG_CONFIG_DIR", cfg->gang.configmap_mount_path, GR_PF_GANG_ONLY)))
        return rc;
    snprintf(num, sizeof num, "%" PRId64, cfg->gang.timeout_ns / INT64_C(1000000000));
    if ((rc = env_value(env, "GANG_TIMEOUT_SECONDS", num, GR_PF_GANG_ONLY)))
        return rc;
    snprintf(num, sizeof num, "%" PRId64, cfg->gang.master_port);
    if ((rc = env_value(env, "MASTER_PORT", num, GR_PF_GANG_ONLY)) ||
        (rc = env_field(env, "POD_NAME", "metadata.name", GR_PF_GANG_ONLY)) ||
        (rc = env_field(env, "POD_IP", "status.podIP", GR_PF_GANG_ONLY)))
        return rc;
    return GR_OK;
}

/* ------------------------------------------------- pod-level additions */

static int compile_pod_parts(const gr_preflight_config *cfg, gr_pf_compiled *pc)
{
    int rc;
    /* gang mounts (PF-45..), in documented order; deduplicated per pod */
    gr_pf_items *gm = &pc->gang_mounts;
    if ((rc = item_add(gm, GR_PREFLIGHT_VOL_GANG, cfg->gang.configmap_mount_path,
                       mount_json(GR_PREFLIGHT_VOL_GANG, cfg->gang.configmap_mount_path, true),
                       0)) ||
        (rc = item_add(gm, GR_PREFLIGHT_VOL_DSHM, "/dev/shm",
                       mount_json(GR_PREFLIGHT_VOL_DSHM, "/dev/shm", false), 0)))
        return rc;
    if (*cfg->gang.nccl_topo_configmap &&
        (rc =
             item_add(gm, GR_PREFLIGHT_VOL_NCCL_TOPO, GR_PREFLIGHT_NCCL_TOPO_DIR,
                      mount_json(GR_PREFLIGHT_VOL_NCCL_TOPO, GR_PREFLIGHT_NCCL_TOPO_DIR, true), 0)))
        return rc;
    for (size_t k = 0; k < cfg->gang.n_extra_host_path_mounts; k++) {
        const gr_preflight_extra_mount *m = &cfg->gang.extra_host_path_mounts[k];
        if ((rc = item_add(gm, m->name, m->mount_path,
                           mount_json(m->name, m->mount_path, m->read_only), 0)))
            return rc;
    }
    for (size_t k = 0; k < cfg->gang.n_extra_volume_mounts; k++) {
        const gr_preflight_extra_mount *m = &cfg->gang.extra_volume_mounts[k];
        if ((rc = item_add(gm, m->name, m->mount_path,
                           mount_json(m->name, m->mount_path, m->read_only), GR_PF_NEEDS_VOLUME)))
            return rc;
    }

    /* pod volumes, each only when the pod has none of that name */
    gr_pf_items *vols = &pc->volumes;
    if (*cfg->connector_socket &&
        (rc = item_add(vols, GR_PREFLIGHT_VOL_SOCKET, NULL,
                       json_pack("{s:s,s:{s:s,s:s}}", "name", GR_PREFLIGHT_VOL_SOCKET, "hostPath",
                                 "path", GR_PREFLIGHT_SOCKET_HOST_DIR, "type", "DirectoryOrCreate"),
                       0)))
        return rc;
    if (cfg->token_audience &&
        (rc = item_add(vols, GR_PREFLIGHT_VOL_TOKEN, NULL,
                       json_pack("{s:s,s:{s:[{s:{s:s,s:I,s:s}}]}}", "name", GR_PREFLIGHT_VOL_TOKEN,
                                 "projected", "sources", "serviceAccountToken", "audience",
                                 cfg->token_audience, "expirationSeconds",
                                 (json_int_t)cfg->token_expiration_seconds, "path", "token"),
                       0)))
        return rc;
    if (cfg->publish.mode == GR_PREFLIGHT_PUBLISH_DEPLOYMENT && !cfg->publish.insecure &&
        (rc = item_add(vols, GR_PREFLIGHT_VOL_PUBLISH_CA, NULL,
                       json_pack("{s:s,s:{s:s}}", "name", GR_PREFLIGHT_VOL_PUBLISH_CA, "configMap",
                                 "name", GR_PREFLIGHT_PUBLISH_CA_CM),
                       0)))
        return rc;
    if ((rc = item_add_dyn(vols, GR_PREFLIGHT_VOL_GANG,
                           "{\"name\":\"" GR_PREFLIGHT_VOL_GANG "\",\"configMap\":{\"name\":",
                           ",\"optional\":true}}", GR_PF_GANG_ONLY | GR_PF_DYN_GANG_CM)) ||
        (rc = item_add(vols, GR_PREFLIGHT_VOL_DSHM, NULL,
                       json_pack("{s:s,s:{s:s,s:s}}", "name", GR_PREFLIGHT_VOL_DSHM, "emptyDir",
                                 "medium", "Memory", "sizeLimit", "64Gi"),
                       GR_PF_GANG_ONLY)))
        return rc;
    if (*cfg->gang.nccl_topo_configmap &&
        (rc = item_add(vols, GR_PREFLIGHT_VOL_NCCL_TOPO, NULL,
                       json_pack("{s:s,s:{s:s,s:b}}", "name", GR_PREFLIGHT_VOL_NCCL_TOPO,
                                 "configMap", "name", cfg->gang.nccl_topo_configmap, "optional", 1),
                       GR_PF_GANG_ONLY)))
        return rc;
    for (size_t k = 0; k < cfg->gang.n_extra_host_path_mounts; k++) {
        const gr_preflight_extra_mount *m = &cfg->gang.extra_host_path_mounts[k];
        json_t *hp = *m->host_path_type
                         ? json_pack("{s:s,s:s}", "path", m->host_path, "type", m->host_path_type)
                         : json_pack("{s:s}", "path", m->host_path);
        if ((rc = item_add(vols, m->name, NULL,
                           hp ? json_pack("{s:s,s:o}", "name", m->name, "hostPath", hp) : NULL,
                           GR_PF_GANG_ONLY)))
            return rc;
    }

    for (size_t i = 0; i < cfg->image_pull_secrets.n; i++) {
        const char *n = cfg->image_pull_secrets.v[i];
        if ((rc = item_add(&pc->pull_secrets, n, NULL, json_pack("{s:s}", "name", n), 0)))
            return rc;
    }

    /* resource names: GPU names first, then network names, once each */
    for (size_t pass = 0; pass < 2; pass++) {
        const gr_preflight_strv *names =
            pass == 0 ? &cfg->gpu_resource_names : &cfg->network_resource_names;
        for (size_t k = 0; k < names->n; k++) {
            if (items_has_name(&pc->res_names, names->v[k]))
                continue;
            if ((rc = member_add(&pc->res_names, names->v[k], strlen(names->v[k]), NULL, 0)))
                return rc;
        }
        if (pass == 0)
            pc->n_gpu_names = pc->res_names.n;
    }

    if (globs_compile(&cfg->nccl_env_patterns, &pc->env_globs, &pc->n_env_globs) ||
        globs_compile(&cfg->volume_mount_patterns, &pc->mount_globs, &pc->n_mount_globs))
        return GR_ENOMEM;
    return GR_OK;
}

void gr_pf_compiled_free(gr_pf_compiled *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_checks; i++) {
        gr_pf_check *cc = &c->checks[i];
        items_free(&cc->keys);
        items_free(&cc->rkeys);
        items_free(&cc->limits);
        items_free(&cc->requests);
        items_free(&cc->claims);
        items_free(&cc->env);
        items_free(&cc->mounts);
    }
    free(c->checks);
    items_free(&c->gang_mounts);
    items_free(&c->volumes);
    items_free(&c->pull_secrets);
    items_free(&c->res_names);
    free(c->env_globs);
    free(c->mount_globs);
    free(c);
}

int gr_pf_compile(gr_preflight_config *cfg, gr_err *err)
{
    gr_pf_compiled *pc = calloc(1, sizeof *pc);
    if (!pc)
        return OOM(err);
    pc->checks = cfg->n_checks ? calloc(cfg->n_checks, sizeof *pc->checks) : NULL;
    if (cfg->n_checks && !pc->checks) {
        free(pc);
        return OOM(err);
    }
    pc->n_checks = cfg->n_checks;
    char *token_path = NULL;
    if (cfg->token_audience) {
        const char *mp = cfg->token_mount_path;
        size_t l = strlen(mp);
        if (asprintf(&token_path, "%s%stoken", mp, l && mp[l - 1] == '/' ? "" : "/") < 0) {
            gr_pf_compiled_free(pc);
            return OOM(err);
        }
    }
    int rc = GR_OK;
    for (size_t i = 0; i < cfg->n_checks && rc == GR_OK; i++)
        rc = compile_check(cfg, &cfg->checks[i], token_path ? token_path : "", &pc->checks[i]);
    free(token_path);
    if (rc == GR_OK)
        rc = compile_pod_parts(cfg, pc);
    if (rc != GR_OK) {
        gr_pf_compiled_free(pc);
        return OOM(err);
    }
    cfg->compiled = pc;
    return GR_OK;
}

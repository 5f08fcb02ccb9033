/*
 * gr_preflight_config.c — config.yaml → gr_preflight_config, with validation.
 * Key list and messages: preflight-upstream-facts.md §2.13, §3.1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gr_duration.h"
#include "gr_glob.h"
#include "gr_preflight.h"
#include "gr_preflight_internal.h"
#include "gr_yaml.h"

#define DEFAULT_SOCKET   "unix:///var/run/nvsentinel.sock"
#define DEFAULT_STRATEGY "EXECUTE_REMEDIATION"
#define DEFAULT_CM_PATH  "/etc/preflight"
#define DEFAULT_TOPO_CM  "preflight-nccl-topo"
#define TOKEN_EXP_MIN    INT64_C(600)
#define TOKEN_EXP_MAX    INT64_C(4294967296)

static const char *const k_default_env_patterns[] = {
    "NCCL_*", "FI_*", "LD_LIBRARY_PATH", "UCX_*", "TORCH_NCCL_*", "CUDA_DEVICE_ORDER",
};
static const char *const k_default_mount_patterns[] = {
    "host-opt-amazon*",
    "nvtcpxo-*",
    "nccl-*",
    "dev-shm",
};

static const char *const k_top_keys[] = {
    "gpuResourceNames",
    "networkResourceNames",
    "ncclEnvPatterns",
    "volumeMountPatterns",
    "connectorSocket",
    "processingStrategy",
    "connectorTokenAudience",
    "connectorTokenMountPath",
    "connectorTokenExpirationSeconds",
    "gangDiscovery",
    "gangCoordination",
    "initContainerPlacement",
    "imagePullSecrets",
    "initContainers",
    "publishTo",
    "healthPublish",
    NULL,
};

/* corev1.Container fields accepted in an initContainers[] template. */
static const char *const k_container_keys[] = {
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "ports",
    "envFrom",
    "env",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
    NULL,
};

static const char *const k_host_path_types[] = {
    "",       "Directory",  "DirectoryOrCreate", "File", "FileOrCreate",
    "Socket", "CharDevice", "BlockDevice",       NULL,
};

/* ------------------------------------------------------------ helpers */

json_t *gr_pf_get(const json_t *obj, const char *key)
{
    if (!json_is_object(obj))
        return NULL;
    json_t *v = json_object_get(obj, key);
    if (v)
        return v;
    const char *k;
    json_t *val;
    json_object_foreach(gr_pf_mut(obj), k, val)
    {
        if (strcasecmp(k, key) == 0)
            return val;
    }
    return NULL;
}

static bool in_list(const char *const *list, const char *s)
{
    for (size_t i = 0; list[i]; i++)
        if (strcasecmp(list[i], s) == 0)
            return true;
    return false;
}

static int dup_str(const char *s, char **out, gr_err *err)
{
    *out = strdup(s ? s : "");
    if (!*out)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    return GR_OK;
}

/* String at key (null/absent ⇒ def; def NULL ⇒ *out NULL). */
static int get_str(const json_t *obj, const char *key, const char *path, const char *def,
                   char **out, gr_err *err)
{
    json_t *v = gr_pf_get(obj, key);
    if (!v || json_is_null(v)) {
        if (!def) {
            *out = NULL;
            return GR_OK;
        }
        return dup_str(def, out, err);
    }
    if (!json_is_string(v))
        return gr_err_set(err, GR_EINVAL, "%s: must be a string, got %s", path,
                          json_is_object(v)  ? "an object"
                          : json_is_array(v) ? "a list"
                                             : "a non-string scalar");
    return dup_str(json_string_value(v), out, err);
}

static int get_bool(const json_t *obj, const char *key, const char *path, bool def, bool *out,
                    gr_err *err)
{
    json_t *v = gr_pf_get(obj, key);
    if (!v || json_is_null(v)) {
        *out = def;
        return GR_OK;
    }
    if (!json_is_boolean(v))
        return gr_err_set(err, GR_EINVAL, "%s: must be true or false", path);
    *out = json_is_true(v);
    return GR_OK;
}

static int get_int(const json_t *obj, const char *key, const char *path, int64_t def, int64_t *out,
                   bool *present, gr_err *err)
{
    json_t *v = gr_pf_get(obj, key);
    if (present)
        *present = v && !json_is_null(v);
    if (!v || json_is_null(v)) {
        *out = def;
        return GR_OK;
    }
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return GR_OK;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == (double)(int64_t)d) {
            *out = (int64_t)d;
            return GR_OK;
        }
    }
    return gr_err_set(err, GR_EINVAL, "%s: must be an integer", path);
}

void gr_pf_strv_free(gr_preflight_strv *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = 0;
}

static int strv_push(gr_preflight_strv *sv, const char *s, gr_err *err)
{
    char **nv = realloc(sv->v, (sv->n + 1) * sizeof *nv);
    if (!nv)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    sv->v = nv;
    if (dup_str(s, &sv->v[sv->n], err) != GR_OK)
        return GR_ENOMEM;
    sv->n++;
    return GR_OK;
}

static int strv_from_defaults(gr_preflight_strv *sv, const char *const *d, size_t n, gr_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (strv_push(sv, d[i], err) != GR_OK)
            return GR_ENOMEM;
    return GR_OK;
}

/* List of strings at key; absent/null ⇒ defaults. */
static int get_strv(const json_t *obj, const char *key, const char *path, const char *const *defs,
                    size_t ndefs, gr_preflight_strv *out, gr_err *err)
{
    json_t *v = gr_pf_get(obj, key);
    if (!v || json_is_null(v))
        return strv_from_defaults(out, defs, ndefs, err);
    if (!json_is_array(v))
        return gr_err_set(err, GR_EINVAL, "%s: must be a list of strings", path);
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        if (!json_is_string(e))
            return gr_err_set(err, GR_EINVAL, "%s[%zu]: must be a string", path, i);
        if (json_string_length(e) == 0)
            return gr_err_set(err, GR_EINVAL, "%s[%zu]: must not be empty", path, i);
        if (strv_push(out, json_string_value(e), err) != GR_OK)
            return GR_ENOMEM;
    }
    return GR_OK;
}

static int check_object(const json_t *v, const char *path, gr_err *err)
{
    if (v && !json_is_null(v) && !json_is_object(v))
        return gr_err_set(err, GR_EINVAL, "%s: must be a mapping", path);
    return GR_OK;
}

/* ------------------------------------------------------ init containers */

static int validate_env(const json_t *env, const char *path, gr_err *err)
{
    if (!json_is_array(env))
        return gr_err_set(err, GR_EINVAL, "%s: must be a list of {name, value|valueFrom}", path);
    size_t i;
    json_t *e;
    json_array_foreach(env, i, e)
    {
        json_t *n = json_object_get(e, "name");
        if (!json_is_object(e) || !json_is_string(n) || json_string_length(n) == 0)
            return gr_err_set(err, GR_EINVAL, "%s[%zu].name must be set", path, i);
        json_t *val = json_object_get(e, "value");
        if (val && !json_is_null(val) && !json_is_string(val))
            return gr_err_set(err, GR_EINVAL,
                              "%s[%zu].value: must be a string (quote numbers, e.g. \"2\")", path,
                              i);
        if (check_object(json_object_get(e, "valueFrom"), path, err) != GR_OK)
            return gr_err_prefix(err, "%s[%zu].valueFrom: ", path, i);
    }
    return GR_OK;
}

static int validate_mounts(const json_t *m, const char *path, gr_err *err)
{
    if (!json_is_array(m))
        return gr_err_set(err, GR_EINVAL, "%s: must be a list of {name, mountPath}", path);
    size_t i;
    json_t *e;
    json_array_foreach(m, i, e)
    {
        json_t *n = json_object_get(e, "name");
        json_t *p = json_object_get(e, "mountPath");
        if (!json_is_object(e) || !json_is_string(n) || json_string_length(n) == 0)
            return gr_err_set(err, GR_EINVAL, "%s[%zu].name must be set", path, i);
        if (!json_is_string(p) || json_string_length(p) == 0)
            return gr_err_set(err, GR_EINVAL, "%s[%zu].mountPath must be set", path, i);
    }
    return GR_OK;
}

static int validate_resources(const json_t *r, const char *path, gr_err *err)
{
    if (!json_is_object(r))
        return gr_err_set(err, GR_EINVAL, "%s: must be a mapping with limits/requests", path);
    static const char *const parts[] = {"limits", "requests"};
    for (size_t p = 0; p < 2; p++) {
        json_t *m = json_object_get(r, parts[p]);
        if (!m || json_is_null(m))
            continue;
        if (!json_is_object(m))
            return gr_err_set(err, GR_EINVAL, "%s.%s: must be a mapping of quantities", path,
                              parts[p]);
        const char *k;
        json_t *q;
        json_object_foreach(m, k, q)
        {
            gr_quantity qv;
            if (gr_pf_quantity_from_json(q, &qv, err) != GR_OK)
                return gr_err_prefix(err, "%s.%s[\"%s\"]: ", path, parts[p], k);
        }
    }
    return GR_OK;
}

/* Build the container template of initContainers[i]. */
static int parse_check(const json_t *src, size_t idx, gr_preflight_check *chk, gr_err *err)
{
    char path[64];
    snprintf(path, sizeof path, "initContainers[%zu]", idx);
    if (!json_is_object(src))
        return gr_err_set(err, GR_EINVAL, "%s: must be a mapping (a corev1.Container)", path);
    json_t *name = json_object_get(src, "name");
    if (!json_is_string(name) || json_string_length(name) == 0)
        return gr_err_set(err, GR_EINVAL, "%s.name must be set", path);
    if (dup_str(json_string_value(name), &chk->name, err) != GR_OK)
        return GR_ENOMEM;
    char key[160];
    if (get_bool(src, "defaultEnabled", (snprintf(key, sizeof key, "%s.defaultEnabled", path), key),
                 true, &chk->default_enabled, err) != GR_OK ||
        get_bool(src, "inheritUserEnv", (snprintf(key, sizeof key, "%s.inheritUserEnv", path), key),
                 true, &chk->inherit_env, err) != GR_OK ||
        get_bool(src, "inheritUserVolumeMounts",
                 (snprintf(key, sizeof key, "%s.inheritUserVolumeMounts", path), key), true,
                 &chk->inherit_mounts, err) != GR_OK)
        return err ? err->code : GR_EINVAL;

    chk->container = json_object();
    if (!chk->container)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    const char *k;
    json_t *v;
    json_object_foreach(gr_pf_mut(src), k, v)
    {
        if (strcasecmp(k, "defaultEnabled") == 0 || strcasecmp(k, "inheritUserEnv") == 0 ||
            strcasecmp(k, "inheritUserVolumeMounts") == 0)
            continue;
        const char *canon = NULL;
        for (size_t i = 0; k_container_keys[i]; i++)
            if (strcasecmp(k_container_keys[i], k) == 0)
                canon = k_container_keys[i];
        if (!canon)
            return gr_err_set(
                err, GR_EINVAL,
                "%s.%s: unknown field (an init container takes corev1.Container "
                "fields plus defaultEnabled, inheritUserEnv, inheritUserVolumeMounts)",
                path, k);
        if (json_is_null(v))
            continue;
        json_t *copy = NULL;
        if (strcmp(canon, "image") == 0 && json_is_object(v)) {
            /* {repository, tag} as the chart renders it: "repo:tag" (PF-16). */
            json_t *repo = gr_pf_get(v, "repository");
            json_t *tag = gr_pf_get(v, "tag");
            if (!json_is_string(repo) || json_string_length(repo) == 0)
                return gr_err_set(err, GR_EINVAL, "%s.image.repository must be set", path);
            if (tag && !json_is_null(tag) && !json_is_string(tag))
                return gr_err_set(err, GR_EINVAL, "%s.image.tag: must be a string", path);
            const char *t = json_is_string(tag) ? json_string_value(tag) : "";
            copy = *t ? json_sprintf("%s:%s", json_string_value(repo), t)
                      : json_string(json_string_value(repo));
        } else if (strcmp(canon, "image") == 0) {
            if (!json_is_string(v) || json_string_length(v) == 0)
                return gr_err_set(err, GR_EINVAL,
                                  "%s.image: must be an image reference or {repository, tag}",
                                  path);
            copy = json_deep_copy(v);
        } else {
            if (strcmp(canon, "env") == 0 &&
                validate_env(v, (snprintf(key, sizeof key, "%s.env", path), key), err) != GR_OK)
                return err ? err->code : GR_EINVAL;
            if (strcmp(canon, "volumeMounts") == 0 &&
                validate_mounts(v, (snprintf(key, sizeof key, "%s.volumeMounts", path), key),
                                err) != GR_OK)
                return err ? err->code : GR_EINVAL;
            if (strcmp(canon, "resources") == 0 &&
                validate_resources(v, (snprintf(key, sizeof key, "%s.resources", path), key),
                                   err) != GR_OK)
                return err ? err->code : GR_EINVAL;
            copy = json_deep_copy(v);
        }
        if (!copy || json_object_set_new(chk->container, canon, copy) != 0)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    if (!json_object_get(chk->container, "image"))
        return gr_err_set(err, GR_EINVAL, "%s.image must be set", path);
    return GR_OK;
}

static int parse_checks(const json_t *list, gr_preflight_config *cfg, gr_err *err)
{
    if (!list || json_is_null(list))
        return GR_OK;
    if (!json_is_array(list))
        return gr_err_set(err, GR_EINVAL, "initContainers: must be a list of containers");
    size_t n = json_array_size(list);
    if (n == 0)
        return GR_OK;
    cfg->checks = calloc(n, sizeof *cfg->checks);
    if (!cfg->checks)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        cfg->n_checks = i + 1;
        int rc = parse_check(json_array_get(list, i), i, &cfg->checks[i], err);
        if (rc != GR_OK)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (strcmp(cfg->checks[j].name, cfg->checks[i].name) == 0)
                return gr_err_set(err, GR_EINVAL, "duplicate init container name \"%s\"",
                                  cfg->checks[i].name);
    }
    return GR_OK;
}

/* --------------------------------------------------- gang coordination */

static int parse_extra_mounts(const json_t *list, const char *path, bool host,
                              gr_preflight_extra_mount **out, size_t *nout, gr_err *err)
{
    if (!list || json_is_null(list))
        return GR_OK;
    if (!json_is_array(list))
        return gr_err_set(err, GR_EINVAL, "%s: must be a list", path);
    size_t n = json_array_size(list);
    if (n == 0)
        return GR_OK;
    *out = calloc(n, sizeof **out);
    if (!*out)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        gr_preflight_extra_mount *m = &(*out)[i];
        *nout = i + 1;
        json_t *e = json_array_get(list, i);
        char p[128], k[192];
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        if (!json_is_object(e))
            return gr_err_set(err, GR_EINVAL, "%s: must be a mapping", p);
        if (get_str(e, "name", (snprintf(k, sizeof k, "%s.name", p), k), "", &m->name, err) ||
            get_str(e, "mountPath", (snprintf(k, sizeof k, "%s.mountPath", p), k), "",
                    &m->mount_path, err) ||
            get_bool(e, "readOnly", (snprintf(k, sizeof k, "%s.readOnly", p), k), true,
                     &m->read_only, err))
            return err ? err->code : GR_EINVAL;
        if (!*m->name)
            return gr_err_set(err, GR_EINVAL, "%s.name must be set", p);
        if (m->mount_path[0] != '/')
            return gr_err_set(err, GR_EINVAL, "%s.mountPath must be an absolute path, got \"%s\"",
                              p, m->mount_path);
        if (!host)
            continue;
        if (get_str(e, "hostPath", (snprintf(k, sizeof k, "%s.hostPath", p), k), "", &m->host_path,
                    err) ||
            get_str(e, "hostPathType", (snprintf(k, sizeof k, "%s.hostPathType", p), k), "",
                    &m->host_path_type, err))
            return err ? err->code : GR_EINVAL;
        if (m->host_path[0] != '/')
            return gr_err_set(err, GR_EINVAL, "%s.hostPath must be an absolute path, got \"%s\"", p,
                              m->host_path);
        bool ok = false;
        for (size_t t = 0; k_host_path_types[t]; t++)
            ok |= strcmp(k_host_path_types[t], m->host_path_type) == 0;
        /* Upstream skipped the volume but kept the mount (invalid pod, R5):
         * we refuse the config instead. */
        if (!ok)
            return gr_err_set(err, GR_EINVAL,
                              "%s.hostPathType: unsupported type \"%s\" (use \"\", Directory, "
                              "DirectoryOrCreate, File, FileOrCreate, Socket, CharDevice or "
                              "BlockDevice)",
                              p, m->host_path_type);
    }
    return GR_OK;
}

static int parse_gang(const json_t *g, gr_preflight_config *cfg, gr_err *err)
{
    if (check_object(g, "gangCoordination", err) != GR_OK)
        return GR_EINVAL;
    int rc;
    if ((rc = get_bool(g, "enabled", "gangCoordination.enabled", false, &cfg->gang.enabled, err)))
        return rc;
    char *timeout = NULL;
    if ((rc = get_str(g, "timeout", "gangCoordination.timeout", "10m", &timeout, err)))
        return rc;
    gr_err derr;
    rc = gr_duration_parse(timeout, &cfg->gang.timeout_ns, &derr);
    if (rc == GR_OK && cfg->gang.timeout_ns <= 0)
        rc = gr_err_set(&derr, GR_EINVAL, "must be positive");
    if (rc != GR_OK) {
        gr_err_set(err, GR_EINVAL, "invalid gangCoordination.timeout \"%s\": %s", timeout,
                   derr.msg);
        free(timeout);
        return GR_EINVAL;
    }
    free(timeout);
    if ((rc = get_int(g, "masterPort", "gangCoordination.masterPort", 29500, &cfg->gang.master_port,
                      NULL, err)))
        return rc;
    if (cfg->gang.master_port < 1 || cfg->gang.master_port > 65535)
        return gr_err_set(err, GR_EINVAL,
                          "gangCoordination.masterPort must be between 1 and 65535, got %" PRId64,
                          cfg->gang.master_port);
    if ((rc = get_str(g, "configMapMountPath", "gangCoordination.configMapMountPath",
                      DEFAULT_CM_PATH, &cfg->gang.configmap_mount_path, err)))
        return rc;
    if (cfg->gang.configmap_mount_path[0] != '/')
        return gr_err_set(
            err, GR_EINVAL,
            "gangCoordination.configMapMountPath must be an absolute path, got \"%s\"",
            cfg->gang.configmap_mount_path);
    if ((rc = get_str(g, "ncclTopoConfigMap", "gangCoordination.ncclTopoConfigMap", "",
                      &cfg->gang.nccl_topo_configmap, err)) ||
        (rc = get_str(g, "ncclTopoData", "gangCoordination.ncclTopoData", "",
                      &cfg->gang.nccl_topo_data, err)) ||
        (rc = get_str(g, "ncclTopoShape", "gangCoordination.ncclTopoShape", "",
                      &cfg->gang.nccl_topo_shape, err)))
        return rc;
    const char *shape = cfg->gang.nccl_topo_shape;
    if (*shape && strcmp(shape, "ndv4") != 0 && strcmp(shape, "ndv5") != 0)
        return gr_err_set(err, GR_EINVAL,
                          "gangCoordination.ncclTopoShape: must be \"\", \"ndv4\" or \"ndv5\", "
                          "got \"%s\"",
                          shape);
    if (*shape && !*cfg->gang.nccl_topo_configmap) {
        free(cfg->gang.nccl_topo_configmap);
        if (dup_str(DEFAULT_TOPO_CM, &cfg->gang.nccl_topo_configmap, err) != GR_OK)
            return GR_ENOMEM;
    }
    if ((rc = parse_extra_mounts(
             gr_pf_get(g, "extraHostPathMounts"), "gangCoordination.extraHostPathMounts", true,
             &cfg->gang.extra_host_path_mounts, &cfg->gang.n_extra_host_path_mounts, err)) ||
        (rc = parse_extra_mounts(
             gr_pf_get(g, "extraVolumeMounts"), "gangCoordination.extraVolumeMounts", false,
             &cfg->gang.extra_volume_mounts, &cfg->gang.n_extra_volume_mounts, err)))
        return rc;
    return get_bool(g, "mirrorResourceClaims", "gangCoordination.mirrorResourceClaims", true,
                    &cfg->gang.mirror_resource_claims, err);
}

static int parse_gang_discovery(const json_t *d, gr_preflight_config *cfg, gr_err *err)
{
    if (check_object(d, "gangDiscovery", err) != GR_OK)
        return GR_EINVAL;
    cfg->gang_discovery = json_object();
    if (!cfg->gang_discovery)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    if (!d || json_is_null(d))
        return GR_OK;
    static const char *const strs[] = {"name", "minCountExpr"};
    static const char *const lists[] = {"annotationKeys", "labelKeys"};
    bool any = false;
    for (size_t i = 0; i < 2; i++) {
        char *s = NULL;
        char p[64];
        snprintf(p, sizeof p, "gangDiscovery.%s", strs[i]);
        if (get_str(d, strs[i], p, "", &s, err) != GR_OK)
            return err ? err->code : GR_EINVAL;
        any |= *s != 0;
        int rc = json_object_set_new(cfg->gang_discovery, strs[i], json_string(s));
        free(s);
        if (rc)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < 2; i++) {
        gr_preflight_strv sv = {0};
        char p[64];
        snprintf(p, sizeof p, "gangDiscovery.%s", lists[i]);
        int rc = get_strv(d, lists[i], p, NULL, 0, &sv, err);
        json_t *arr = json_array();
        for (size_t j = 0; rc == GR_OK && j < sv.n; j++)
            if (!arr || json_array_append_new(arr, json_string(sv.v[j])))
                rc = gr_err_set(err, GR_ENOMEM, "out of memory");
        any |= sv.n > 0;
        gr_pf_strv_free(&sv);
        if (rc == GR_OK && json_object_set_new(cfg->gang_discovery, lists[i], arr))
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        if (rc != GR_OK) {
            json_decref(arr);
            return rc;
        }
    }
    json_t *gvr = gr_pf_get(d, "podGroupGVR");
    if (check_object(gvr, "gangDiscovery.podGroupGVR", err) != GR_OK)
        return GR_EINVAL;
    json_t *ngvr = json_object();
    if (!ngvr || json_object_set_new(cfg->gang_discovery, "podGroupGVR", ngvr))
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    int ngvr_set = 0;
    static const char *const gk[] = {"group", "version", "resource"};
    for (size_t i = 0; i < 3; i++) {
        char *s = NULL;
        char p[64];
        snprintf(p, sizeof p, "gangDiscovery.podGroupGVR.%s", gk[i]);
        if (get_str(gvr, gk[i], p, "", &s, err) != GR_OK)
            return err ? err->code : GR_EINVAL;
        ngvr_set += *s != 0;
        any |= *s != 0;
        int rc = json_object_set_new(ngvr, gk[i], json_string(s));
        free(s);
        if (rc)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    const char *name = json_string_value(json_object_get(cfg->gang_discovery, "name"));
    bool keys = json_array_size(json_object_get(cfg->gang_discovery, "annotationKeys")) > 0 ||
                json_array_size(json_object_get(cfg->gang_discovery, "labelKeys")) > 0;
    /* Grove (beyond upstream, docs/gang.md § Grove): `{name: grove}` alone
     * means the PodGang label and GVR, as in a PreflightConfig. Filled in
     * here so the offline resolver (`inject`) reads the same block. */
    if (strcmp(name, GR_PREFLIGHT_GROVE_NAME) == 0 && !keys && ngvr_set == 0) {
        json_t *lk = json_array();
        if (!lk || json_array_append_new(lk, json_string(GR_PREFLIGHT_GROVE_LABEL)) ||
            json_object_set_new(cfg->gang_discovery, "labelKeys", lk) ||
            json_object_set_new(ngvr, "group", json_string(GR_PREFLIGHT_GROVE_GROUP)) ||
            json_object_set_new(ngvr, "version", json_string(GR_PREFLIGHT_GROVE_VERSION)) ||
            json_object_set_new(ngvr, "resource", json_string(GR_PREFLIGHT_GROVE_RESOURCE)))
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        keys = true;
        ngvr_set = 3;
    }
    if (!any || !cfg->gang.enabled)
        return GR_OK; /* native discovery (PF-09), or not used */
    /* Complete = name + (annotationKeys|labelKeys) + full GVR; minCountExpr
     * defaults to podGroup.spec.minMember as documented (PF-100, R3) except
     * for Grove's PodGang, which has no minMember (src/gang sums
     * spec.podgroups[].minReplicas instead). */
    if (!*name || !keys || ngvr_set != 3)
        return gr_err_set(err, GR_EINVAL,
                          "invalid gangDiscovery config: name \"%s\" requires "
                          "annotationKeys/labelKeys, podGroupGVR, and minCountExpr",
                          name);
    bool grove =
        strcmp(json_string_value(json_object_get(ngvr, "group")), GR_PREFLIGHT_GROVE_GROUP) == 0;
    if (!grove && !*json_string_value(json_object_get(cfg->gang_discovery, "minCountExpr")) &&
        json_object_set_new(cfg->gang_discovery, "minCountExpr",
                            json_string(GR_PREFLIGHT_GANG_DEFAULT_MIN_EXPR)))
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    return GR_OK;
}

/* -------------------------------------------------------- the rest */

static int parse_token(const json_t *doc, gr_preflight_config *cfg, gr_err *err)
{
    int rc;
    bool has_exp = false;
    if ((rc = get_str(doc, "connectorTokenAudience", "connectorTokenAudience", NULL,
                      &cfg->token_audience, err)) ||
        (rc = get_str(doc, "connectorTokenMountPath", "connectorTokenMountPath", NULL,
                      &cfg->token_mount_path, err)) ||
        (rc = get_int(doc, "connectorTokenExpirationSeconds", "connectorTokenExpirationSeconds", 0,
                      &cfg->token_expiration_seconds, &has_exp, err)))
        return rc;
    /* empty strings / 0 count as unset */
    if (cfg->token_audience && !*cfg->token_audience) {
        free(cfg->token_audience);
        cfg->token_audience = NULL;
    }
    if (cfg->token_mount_path && !*cfg->token_mount_path) {
        free(cfg->token_mount_path);
        cfg->token_mount_path = NULL;
    }
    has_exp = has_exp && cfg->token_expiration_seconds != 0;
    const char *names[3] = {"connectorTokenAudience", "connectorTokenMountPath",
                            "connectorTokenExpirationSeconds"};
    bool set[3] = {cfg->token_audience != NULL, cfg->token_mount_path != NULL, has_exp};
    int nset = set[0] + set[1] + set[2];
    if (nset != 0 && nset != 3) {
        char present[128] = "", missing[128] = "";
        for (int i = 0; i < 3; i++) {
            char *dst = set[i] ? present : missing;
            if (*dst)
                strcat(dst, ", ");
            strcat(dst, names[i]);
        }
        return gr_err_set(err, GR_EINVAL,
                          "connector token settings are all-or-nothing: %s set but %s missing. "
                          "Set connectorTokenAudience, connectorTokenMountPath and "
                          "connectorTokenExpirationSeconds together, or none of them",
                          present, missing);
    }
    if (nset == 0)
        return GR_OK;
    if (cfg->token_expiration_seconds < TOKEN_EXP_MIN ||
        cfg->token_expiration_seconds > TOKEN_EXP_MAX)
        return gr_err_set(err, GR_EINVAL,
                          "connectorTokenExpirationSeconds must be between 600 and 4294967296, "
                          "got %" PRId64 ": the API server refuses projected tokens outside "
                          "this range",
                          cfg->token_expiration_seconds);
    if (cfg->token_mount_path[0] != '/')
        return gr_err_set(err, GR_EINVAL,
                          "connectorTokenMountPath must be an absolute path, got \"%s\"",
                          cfg->token_mount_path);
    return GR_OK;
}

static int parse_pull_secrets(const json_t *v, gr_preflight_config *cfg, gr_err *err)
{
    if (!v || json_is_null(v))
        return GR_OK;
    if (!json_is_array(v))
        return gr_err_set(err, GR_EINVAL, "imagePullSecrets: must be a list of {name: ...}");
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        json_t *n = json_is_object(e) ? gr_pf_get(e, "name") : e;
        if (!json_is_string(n) || json_string_length(n) == 0)
            return gr_err_set(err, GR_EINVAL, "imagePullSecrets[%zu].name must be set", i);
        bool dup = false;
        for (size_t j = 0; j < cfg->image_pull_secrets.n; j++)
            dup |= strcmp(cfg->image_pull_secrets.v[j], json_string_value(n)) == 0;
        if (!dup && strv_push(&cfg->image_pull_secrets, json_string_value(n), err) != GR_OK)
            return GR_ENOMEM;
    }
    return GR_OK;
}

static int parse_publish(const json_t *doc, gr_preflight_config *cfg, gr_err *err)
{
    char *mode = NULL;
    int rc = get_str(doc, "publishTo", "publishTo", "socket", &mode, err);
    if (rc)
        return rc;
    if (strcmp(mode, "socket") == 0 || !*mode) {
        cfg->publish.mode = GR_PREFLIGHT_PUBLISH_SOCKET;
    } else if (strcmp(mode, "deployment") == 0) {
        cfg->publish.mode = GR_PREFLIGHT_PUBLISH_DEPLOYMENT;
    } else {
        gr_err_set(err, GR_EINVAL, "publishTo: must be \"socket\" or \"deployment\", got \"%s\"",
                   mode);
        free(mode);
        return GR_EINVAL;
    }
    free(mode);
    json_t *hp = gr_pf_get(doc, "healthPublish");
    if (check_object(hp, "healthPublish", err) != GR_OK)
        return GR_EINVAL;
    if ((rc = get_str(hp, "target", "healthPublish.target", "", &cfg->publish.target, err)) ||
        (rc = get_bool(hp, "insecure", "healthPublish.insecure", false, &cfg->publish.insecure,
                       err)) ||
        (rc = get_str(hp, "caFile", "healthPublish.caFile", GR_PREFLIGHT_PUBLISH_CA_SRC,
                      &cfg->publish.ca_file, err)))
        return rc;
    if (!*cfg->publish.ca_file)
        return gr_err_set(err, GR_EINVAL,
                          "healthPublish.caFile must not be empty (the CA file the CA bundle sync "
                          "copies; default " GR_PREFLIGHT_PUBLISH_CA_SRC ")");
    json_t *sel = gr_pf_get(hp, "namespaceSelector");
    if (sel && !json_is_null(sel)) {
        if (!json_is_object(sel))
            return gr_err_set(err, GR_EINVAL,
                              "healthPublish.namespaceSelector: must be a label selector "
                              "{matchLabels, matchExpressions} (the webhook's namespaceSelector)");
        cfg->publish.namespace_selector = json_deep_copy(sel);
        if (!cfg->publish.namespace_selector)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    if (cfg->publish.mode != GR_PREFLIGHT_PUBLISH_DEPLOYMENT)
        return GR_OK;
    if (!cfg->token_audience)
        return gr_err_set(err, GR_EINVAL,
                          "publishTo: \"deployment\" requires platform-connector auth: set "
                          "connectorTokenAudience, connectorTokenMountPath and "
                          "connectorTokenExpirationSeconds");
    if (!*cfg->publish.target)
        return gr_err_set(err, GR_EINVAL,
                          "healthPublish.target must be set when publishTo is \"deployment\" "
                          "(host:port of the deployment platform connector Service)");
    return GR_OK;
}

int gr_preflight_config_from_json(const json_t *doc, gr_preflight_warn_fn warn, void *warn_ud,
                                  gr_preflight_config **out, gr_err *err)
{
    *out = NULL;
    if (json_is_null(doc))
        doc = NULL; /* empty file: all defaults */
    if (doc && !json_is_object(doc))
        return gr_err_set(err, GR_EINVAL, "config: the top level must be a mapping");
    gr_preflight_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    int rc;
    static const char *const gpu_default[] = {"nvidia.com/gpu"};
    if ((rc = get_strv(doc, "gpuResourceNames", "gpuResourceNames", gpu_default, 1,
                       &cfg->gpu_resource_names, err)) ||
        (rc = get_strv(doc, "networkResourceNames", "networkResourceNames", NULL, 0,
                       &cfg->network_resource_names, err)) ||
        (rc = get_strv(doc, "ncclEnvPatterns", "ncclEnvPatterns", k_default_env_patterns,
                       sizeof k_default_env_patterns / sizeof *k_default_env_patterns,
                       &cfg->nccl_env_patterns, err)) ||
        (rc = get_strv(doc, "volumeMountPatterns", "volumeMountPatterns", k_default_mount_patterns,
                       sizeof k_default_mount_patterns / sizeof *k_default_mount_patterns,
                       &cfg->volume_mount_patterns, err)) ||
        (rc = get_str(doc, "connectorSocket", "connectorSocket", DEFAULT_SOCKET,
                      &cfg->connector_socket, err)) ||
        (rc = get_str(doc, "processingStrategy", "processingStrategy", DEFAULT_STRATEGY,
                      &cfg->processing_strategy, err)))
        goto fail;
    if (!*cfg->processing_strategy) {
        free(cfg->processing_strategy);
        if ((rc = dup_str(DEFAULT_STRATEGY, &cfg->processing_strategy, err)))
            goto fail;
    }
    if (strcmp(cfg->processing_strategy, "EXECUTE_REMEDIATION") != 0 &&
        strcmp(cfg->processing_strategy, "STORE_ONLY") != 0) {
        rc = gr_err_set(err, GR_EINVAL,
                        "processingStrategy: must be EXECUTE_REMEDIATION or STORE_ONLY, got \"%s\"",
                        cfg->processing_strategy);
        goto fail;
    }
    const gr_preflight_strv *pats[2] = {&cfg->nccl_env_patterns, &cfg->volume_mount_patterns};
    static const char *const patnames[2] = {"ncclEnvPatterns", "volumeMountPatterns"};
    for (size_t p = 0; p < 2; p++)
        for (size_t i = 0; i < pats[p]->n; i++)
            if ((rc = gr_glob_validate(pats[p]->v[i], err)) != GR_OK) {
                gr_err_prefix(err, "%s[%zu]: ", patnames[p], i);
                goto fail;
            }
    if ((rc = parse_token(doc, cfg, err)) ||
        (rc = parse_gang(gr_pf_get(doc, "gangCoordination"), cfg, err)) ||
        (rc = parse_gang_discovery(gr_pf_get(doc, "gangDiscovery"), cfg, err)))
        goto fail;
    char *placement = NULL;
    if ((rc = get_str(doc, "initContainerPlacement", "initContainerPlacement", "append", &placement,
                      err)))
        goto fail;
    if (strcmp(placement, "append") == 0 || !*placement) {
        cfg->placement = GR_PREFLIGHT_APPEND;
    } else if (strcmp(placement, "prepend") == 0) {
        cfg->placement = GR_PREFLIGHT_PREPEND;
    } else {
        rc = gr_err_set(err, GR_EINVAL,
                        "invalid initContainerPlacement \"%s\": must be \"prepend\" or \"append\"",
                        placement);
        free(placement);
        goto fail;
    }
    free(placement);
    if ((rc = parse_pull_secrets(gr_pf_get(doc, "imagePullSecrets"), cfg, err)) ||
        (rc = parse_checks(gr_pf_get(doc, "initContainers"), cfg, err)) ||
        (rc = parse_publish(doc, cfg, err)))
        goto fail;
    if ((rc = gr_pf_compile(cfg, err)))
        goto fail;
    if (doc && warn) {
        const char *k;
        json_t *v;
        json_object_foreach(gr_pf_mut(doc), k, v)
        {
            if (!in_list(k_top_keys, k)) {
                char msg[320];
                snprintf(msg, sizeof msg, "config key \"%.200s\" is not used by preflight; ignored",
                         k);
                warn(warn_ud, msg);
            }
        }
    }
    *out = cfg;
    return GR_OK;
fail:
    gr_preflight_config_free(cfg);
    return rc;
}

int gr_preflight_config_parse(const char *text, size_t len, const char *name,
                              gr_preflight_warn_fn warn, void *warn_ud, gr_preflight_config **out,
                              gr_err *err)
{
    *out = NULL;
    if (len > GR_PREFLIGHT_CONFIG_MAX)
        return gr_err_set(err, GR_ETOOBIG, "%s: config is larger than %zu bytes",
                          name ? name : "config", GR_PREFLIGHT_CONFIG_MAX);
    json_t *doc = NULL;
    int rc = gr_yaml_load_one(text, len, name, &doc, err);
    if (rc != GR_OK)
        return rc;
    rc = gr_preflight_config_from_json(doc, warn, warn_ud, out, err);
    json_decref(doc);
    return rc;
}

static void free_mounts(gr_preflight_extra_mount *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(m[i].name);
        free(m[i].mount_path);
        free(m[i].host_path);
        free(m[i].host_path_type);
    }
    free(m);
}

void gr_preflight_config_free(gr_preflight_config *cfg)
{
    if (!cfg)
        return;
    gr_pf_strv_free(&cfg->gpu_resource_names);
    gr_pf_strv_free(&cfg->network_resource_names);
    gr_pf_strv_free(&cfg->nccl_env_patterns);
    gr_pf_strv_free(&cfg->volume_mount_patterns);
    gr_pf_strv_free(&cfg->image_pull_secrets);
    free(cfg->connector_socket);
    free(cfg->processing_strategy);
    free(cfg->token_audience);
    free(cfg->token_mount_path);
    json_decref(cfg->gang_discovery);
    free(cfg->gang.configmap_mount_path);
    free(cfg->gang.nccl_topo_configmap);
    free(cfg->gang.nccl_topo_data);
    free(cfg->gang.nccl_topo_shape);
    free_mounts(cfg->gang.extra_host_path_mounts, cfg->gang.n_extra_host_path_mounts);
    free_mounts(cfg->gang.extra_volume_mounts, cfg->gang.n_extra_volume_mounts);
    for (size_t i = 0; i < cfg->n_checks; i++) {
        free(cfg->checks[i].name);
        json_decref(cfg->checks[i].container);
    }
    free(cfg->checks);
    free(cfg->publish.target);
    free(cfg->publish.ca_file);
    json_decref(cfg->publish.namespace_selector);
    gr_pf_compiled_free(cfg->compiled);
    free(cfg);
}

/* gr_kube_config.c — kubeconfig and in-cluster configuration. */
#include "gr_kube_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "gr_yaml.h"
#include "kube_internal.h"

void gr_kube_config_free(gr_kube_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->server);
    free(cfg->ca_pem);
    free(cfg->ca_file);
    free(cfg->cert_pem);
    free(cfg->cert_file);
    if (cfg->key_pem) { /* private key material: wipe before release */
        memset(cfg->key_pem, 0, cfg->key_pem_len);
        free(cfg->key_pem);
    }
    free(cfg->key_file);
    free(cfg->token);
    free(cfg->token_file);
    free(cfg->tls_server_name);
    free(cfg->namespace_);
    free(cfg->context);
    free(cfg->user_agent);
    memset(cfg, 0, sizeof *cfg);
}

/* ---- kubeconfig -------------------------------------------------------- */

/* Find the entry named `name` in a kubeconfig list (clusters/users/contexts)
 * and return its inner object (entry[inner]). *index gets its position. */
static int find_named(const json_t *doc, const char *list, const char *inner, const char *name,
                      const char *src, json_t **out, size_t *index, gr_err *err)
{
    json_t *arr = json_object_get(doc, list);
    if (arr && !json_is_array(arr) && !json_is_null(arr))
        return gr_err_set(err, GR_EPARSE, "%s: %s: expected a list", src, list);
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        json_t *n = json_object_get(e, "name");
        if (!json_is_string(n))
            return gr_err_set(err, GR_EPARSE, "%s: %s[%zu].name: expected a string", src, list, i);
        if (strcmp(json_string_value(n), name) == 0) {
            json_t *in = json_object_get(e, inner);
            if (!json_is_object(in))
                return gr_err_set(err, GR_EPARSE, "%s: %s[%zu].%s: expected a mapping", src, list,
                                  i, inner);
            *out = in;
            *index = i;
            return GR_OK;
        }
    }
    return gr_err_set(err, GR_ENOTFOUND, "%s: no %.*s named \"%s\" in %s", src,
                      (int)strlen(list) - 1, list, name, list);
}

/* Optional string member: GR_OK with *out NULL when absent. */
static int opt_str(const json_t *obj, const char *key, const char *src, const char *path,
                   const char **out, gr_err *err)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return GR_OK;
    if (!json_is_string(v))
        return gr_err_set(err, GR_EPARSE, "%s: %s.%s: expected a string", src, path, key);
    *out = json_string_value(v);
    return GR_OK;
}

static int dup_to(char **dst, const char *s, gr_err *err)
{
    if (!s)
        return GR_OK;
    *dst = strdup(s);
    return *dst ? GR_OK : gr_err_set(err, GR_ENOMEM, "out of memory");
}

static int path_to(char **dst, const char *base_dir, const char *p, gr_err *err)
{
    if (!p || !*p)
        return GR_OK;
    if (p[0] == '/' || !base_dir || !*base_dir)
        return dup_to(dst, p, err);
    size_t n = strlen(base_dir) + strlen(p) + 2;
    *dst = malloc(n);
    if (!*dst)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    snprintf(*dst, n, "%s/%s", base_dir, p);
    return GR_OK;
}

static int data_to(char **dst, size_t *dlen, const char *b64, const char *src, const char *field,
                   gr_err *err)
{
    if (!b64)
        return GR_OK;
    int rc = gr_kube_base64_decode(b64, strlen(b64), dst, dlen);
    if (rc == GR_ENOMEM)
        return gr_err_set(err, rc, "out of memory");
    if (rc != GR_OK)
        return gr_err_set(err, GR_EPARSE, "%s: %s: not valid base64", src, field);
    return GR_OK;
}

static int parse_doc(const json_t *doc, const char *src, const char *base_dir, const char *context,
                     gr_kube_config *cfg, gr_err *err)
{
    int rc;
    if (!json_is_object(doc))
        return gr_err_set(err, GR_EPARSE, "%s: expected a kubeconfig mapping at the top level",
                          src);
    const char *ctxname = context;
    if (!ctxname || !*ctxname) {
        if ((rc = opt_str(doc, "current-context", src, "kubeconfig", &ctxname, err)) != GR_OK)
            return rc;
        if (!ctxname || !*ctxname)
            return gr_err_set(err, GR_ENOTFOUND,
                              "%s: current-context is not set; set it (kubectl config "
                              "use-context NAME) or choose a context explicitly",
                              src);
    }
    json_t *ctx = NULL, *cluster = NULL, *user = NULL;
    size_t ci = 0, ki = 0, ui = 0;
    if ((rc = find_named(doc, "contexts", "context", ctxname, src, &ctx, &ci, err)) != GR_OK)
        return rc;
    char path[64];
    snprintf(path, sizeof path, "contexts[%zu].context", ci);
    const char *cname, *uname, *ns;
    if ((rc = opt_str(ctx, "cluster", src, path, &cname, err)) != GR_OK ||
        (rc = opt_str(ctx, "user", src, path, &uname, err)) != GR_OK ||
        (rc = opt_str(ctx, "namespace", src, path, &ns, err)) != GR_OK)
        return rc;
    if (!cname || !*cname)
        return gr_err_set(err, GR_EPARSE, "%s: %s.cluster: required", src, path);
    if ((rc = find_named(doc, "clusters", "cluster", cname, src, &cluster, &ki, err)) != GR_OK)
        return rc;
    if (uname && *uname &&
        (rc = find_named(doc, "users", "user", uname, src, &user, &ui, err)) != GR_OK)
        return rc;

    /* cluster */
    char cpath[64];
    snprintf(cpath, sizeof cpath, "clusters[%zu].cluster", ki);
    const char *server, *ca, *ca_data, *sni;
    if ((rc = opt_str(cluster, "server", src, cpath, &server, err)) != GR_OK ||
        (rc = opt_str(cluster, "certificate-authority", src, cpath, &ca, err)) != GR_OK ||
        (rc = opt_str(cluster, "certificate-authority-data", src, cpath, &ca_data, err)) != GR_OK ||
        (rc = opt_str(cluster, "tls-server-name", src, cpath, &sni, err)) != GR_OK)
        return rc;
    if (!server || !*server)
        return gr_err_set(err, GR_EPARSE, "%s: %s.server: required (e.g. https://host:6443)", src,
                          cpath);
    if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)
        return gr_err_set(err, GR_EPARSE, "%s: %s.server: \"%s\" must start with https://", src,
                          cpath, server);
    json_t *insecure = json_object_get(cluster, "insecure-skip-tls-verify");
    if (insecure && !json_is_boolean(insecure) && !json_is_null(insecure))
        return gr_err_set(err, GR_EPARSE, "%s: %s.insecure-skip-tls-verify: expected true or false",
                          src, cpath);
    cfg->insecure_skip_tls_verify = json_is_true(insecure);
    if ((rc = dup_to(&cfg->server, server, err)) != GR_OK ||
        (rc = dup_to(&cfg->tls_server_name, sni, err)) != GR_OK)
        return rc;
    /* strip trailing slashes so paths can be appended */
    for (size_t l = strlen(cfg->server); l > 0 && cfg->server[l - 1] == '/'; l--)
        cfg->server[l - 1] = '\0';
    char fpath[96];
    snprintf(fpath, sizeof fpath, "%s.certificate-authority-data", cpath);
    if ((rc = data_to(&cfg->ca_pem, &cfg->ca_pem_len, ca_data, src, fpath, err)) != GR_OK)
        return rc;
    if (!ca_data && (rc = path_to(&cfg->ca_file, base_dir, ca, err)) != GR_OK)
        return rc;

    /* user */
    if (user) {
        char upath[64];
        snprintf(upath, sizeof upath, "users[%zu].user", ui);
        if (json_object_get(user, "exec") && !json_is_null(json_object_get(user, "exec")))
            return gr_err_set(err, GR_EUNSUPPORTED,
                              "%s: %s.exec: exec credential plugins are not supported by "
                              "gpuready; use a token, tokenFile or client certificate (or run "
                              "in-cluster)",
                              src, upath);
        if (json_object_get(user, "auth-provider") &&
            !json_is_null(json_object_get(user, "auth-provider")))
            return gr_err_set(err, GR_EUNSUPPORTED,
                              "%s: %s.auth-provider: auth-provider plugins are not supported by "
                              "gpuready; use a token, tokenFile or client certificate",
                              src, upath);
        const char *cert, *cert_data, *key, *key_data, *token, *token_file;
        if ((rc = opt_str(user, "client-certificate", src, upath, &cert, err)) != GR_OK ||
            (rc = opt_str(user, "client-certificate-data", src, upath, &cert_data, err)) != GR_OK ||
            (rc = opt_str(user, "client-key", src, upath, &key, err)) != GR_OK ||
            (rc = opt_str(user, "client-key-data", src, upath, &key_data, err)) != GR_OK ||
            (rc = opt_str(user, "token", src, upath, &token, err)) != GR_OK ||
            (rc = opt_str(user, "tokenFile", src, upath, &token_file, err)) != GR_OK)
            return rc;
        snprintf(fpath, sizeof fpath, "%s.client-certificate-data", upath);
        if ((rc = data_to(&cfg->cert_pem, &cfg->cert_pem_len, cert_data, src, fpath, err)) != GR_OK)
            return rc;
        snprintf(fpath, sizeof fpath, "%s.client-key-data", upath);
        if ((rc = data_to(&cfg->key_pem, &cfg->key_pem_len, key_data, src, fpath, err)) != GR_OK)
            return rc;
        if (!cert_data && (rc = path_to(&cfg->cert_file, base_dir, cert, err)) != GR_OK)
            return rc;
        if (!key_data && (rc = path_to(&cfg->key_file, base_dir, key, err)) != GR_OK)
            return rc;
        if ((cfg->cert_pem || cfg->cert_file) != (cfg->key_pem || cfg->key_file))
            return gr_err_set(err, GR_EPARSE,
                              "%s: %s: client-certificate and client-key must be given together",
                              src, upath);
        if (token && *token && (rc = dup_to(&cfg->token, token, err)) != GR_OK)
            return rc;
        if ((rc = path_to(&cfg->token_file, base_dir, token_file, err)) != GR_OK)
            return rc;
    }
    if ((rc = dup_to(&cfg->namespace_, ns && *ns ? ns : "default", err)) != GR_OK ||
        (rc = dup_to(&cfg->context, ctxname, err)) != GR_OK)
        return rc;
    return GR_OK;
}

int gr_kube_config_parse(const char *text, size_t len, const char *name, const char *base_dir,
                         const char *context, gr_kube_config *cfg, gr_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    const char *src = name ? name : "kubeconfig";
    if (len > GR_KUBE_CONFIG_MAX_BYTES)
        return gr_err_set(err, GR_ETOOBIG, "%s: larger than the %zu-byte limit", src,
                          GR_KUBE_CONFIG_MAX_BYTES);
    json_t *doc = NULL;
    int rc = gr_yaml_load_one(text, len, src, &doc, err);
    if (rc != GR_OK)
        return rc;
    rc = parse_doc(doc, src, base_dir, context, cfg, err);
    json_decref(doc);
    if (rc != GR_OK)
        gr_kube_config_free(cfg);
    return rc;
}

static int read_pem(const char *path, const char *what, char **out, size_t *len, gr_err *err)
{
    int rc = gr_kube_read_file(path, GR_KUBE_PEM_MAX_BYTES, out, len, err);
    if (rc != GR_OK)
        gr_err_prefix(err, "%s: ", what);
    return rc;
}

int gr_kube_config_resolve_files(gr_kube_config *cfg, gr_err *err)
{
    int rc;
    if (cfg->ca_file && !cfg->ca_pem &&
        (rc = read_pem(cfg->ca_file, "certificate-authority", &cfg->ca_pem, &cfg->ca_pem_len,
                       err)) != GR_OK)
        return rc;
    if (cfg->cert_file && !cfg->cert_pem &&
        (rc = read_pem(cfg->cert_file, "client-certificate", &cfg->cert_pem, &cfg->cert_pem_len,
                       err)) != GR_OK)
        return rc;
    if (cfg->key_file && !cfg->key_pem &&
        (rc = read_pem(cfg->key_file, "client-key", &cfg->key_pem, &cfg->key_pem_len, err)) !=
            GR_OK)
        return rc;
    return GR_OK;
}

int gr_kube_config_load_file(const char *path, const char *context, gr_kube_config *cfg,
                             gr_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    char *text = NULL;
    size_t len = 0;
    int rc = gr_kube_read_file(path, GR_KUBE_CONFIG_MAX_BYTES, &text, &len, err);
    if (rc != GR_OK)
        return rc;
    char *dir = strdup(path);
    if (!dir) {
        free(text);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    rc = gr_kube_config_parse(text, len, path, slash ? dir : ".", context, cfg, err);
    free(text);
    free(dir);
    if (rc == GR_OK && (rc = gr_kube_config_resolve_files(cfg, err)) != GR_OK)
        gr_kube_config_free(cfg);
    return rc;
}

/* ---- in-cluster -------------------------------------------------------- */

int gr_kube_config_in_cluster_at(const char *sa_dir, const char *host, const char *port,
                                 gr_kube_config *cfg, gr_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    if (!host || !*host || !port || !*port)
        return gr_err_set(err, GR_ENOTFOUND,
                          "not running in a cluster: KUBERNETES_SERVICE_HOST and "
                          "KUBERNETES_SERVICE_PORT must both be set");
    char buf[512];
    int v6 = strchr(host, ':') != NULL && host[0] != '[';
    snprintf(buf, sizeof buf, v6 ? "https://[%s]:%s" : "https://%s:%s", host, port);
    int rc = dup_to(&cfg->server, buf, err);
    snprintf(buf, sizeof buf, "%s/token", sa_dir);
    if (rc == GR_OK)
        rc = dup_to(&cfg->token_file, buf, err);
    if (rc == GR_OK && access(buf, R_OK) != 0)
        rc = gr_err_set(err, GR_EIO, "in-cluster: service-account token %s: %s", buf,
                        strerror(errno));
    snprintf(buf, sizeof buf, "%s/ca.crt", sa_dir);
    if (rc == GR_OK && (rc = dup_to(&cfg->ca_file, buf, err)) == GR_OK)
        rc = read_pem(buf, "in-cluster CA", &cfg->ca_pem, &cfg->ca_pem_len, err);
    if (rc == GR_OK) {
        snprintf(buf, sizeof buf, "%s/namespace", sa_dir);
        char *ns = NULL;
        size_t nl = 0;
        if (gr_kube_read_file(buf, 256, &ns, &nl, NULL) == GR_OK) {
            while (nl > 0 && (ns[nl - 1] == '\n' || ns[nl - 1] == ' ' || ns[nl - 1] == '\r'))
                ns[--nl] = '\0';
            if (nl)
                cfg->namespace_ = ns;
            else
                free(ns);
        }
        if (!cfg->namespace_)
            rc = dup_to(&cfg->namespace_, "default", err);
    }
    if (rc != GR_OK)
        gr_kube_config_free(cfg);
    return rc;
}

int gr_kube_config_in_cluster(gr_kube_config *cfg, gr_err *err)
{
    return gr_kube_config_in_cluster_at(GR_KUBE_SA_DIR, getenv("KUBERNETES_SERVICE_HOST"),
                                        getenv("KUBERNETES_SERVICE_PORT"), cfg, err);
}

static int exists(const char *p)
{
    struct stat st;
    return p && *p && stat(p, &st) == 0;
}

int gr_kube_config_load(const char *kubeconfig_flag, const char *context, gr_kube_config *cfg,
                        gr_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    if (kubeconfig_flag && *kubeconfig_flag)
        return gr_kube_config_load_file(kubeconfig_flag, context, cfg, err);
    const char *env = getenv("KUBECONFIG");
    if (env && *env) {
        char *list = strdup(env);
        if (!list)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        char *save = NULL;
        for (char *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
            if (exists(p)) {
                int rc = gr_kube_config_load_file(p, context, cfg, err);
                free(list);
                return rc;
            }
        }
        free(list);
    }
    const char *h = getenv("KUBERNETES_SERVICE_HOST"), *p = getenv("KUBERNETES_SERVICE_PORT");
    if (h && *h && p && *p)
        return gr_kube_config_in_cluster(cfg, err);
    const char *home = getenv("HOME");
    char path[4096];
    if (home && *home) {
        snprintf(path, sizeof path, "%s/.kube/config", home);
        if (exists(path))
            return gr_kube_config_load_file(path, context, cfg, err);
    }
    return gr_err_set(err, GR_ENOTFOUND,
                      "no Kubernetes configuration found: tried --kubeconfig (not given), "
                      "$KUBECONFIG (%s), in-cluster ($KUBERNETES_SERVICE_HOST unset) and "
                      "~/.kube/config; pass --kubeconfig PATH",
                      env && *env ? "no listed file exists" : "unset");
}

int gr_kube_config_bearer(const gr_kube_config *cfg, char **out, gr_err *err)
{
    *out = NULL;
    if (cfg->token_file) {
        char *t = NULL;
        size_t n = 0;
        int rc = gr_kube_read_file(cfg->token_file, GR_KUBE_TOKEN_MAX_BYTES, &t, &n, err);
        if (rc != GR_OK)
            return gr_err_prefix(err, "bearer token file: ");
        while (n > 0 && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' '))
            t[--n] = '\0';
        if (n == 0) {
            free(t);
            return gr_err_set(err, GR_EINVAL, "bearer token file %s is empty", cfg->token_file);
        }
        *out = t;
        return GR_OK;
    }
    if (cfg->token) {
        *out = strdup(cfg->token);
        if (!*out)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    return GR_OK;
}

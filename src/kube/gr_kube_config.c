/* gr_kube_config.c — kubeconfig and in-cluster configuration. */
#include "gr_kube_config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "gr_base64.h"
#include "gr_buf.h"
#include "gr_file.h"
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

/* One kubeconfig document of a (possibly merged) configuration. */
typedef struct kc_doc {
    json_t *doc;          /* the parsed file (JSON null for an empty file) */
    const char *name;     /* labels messages */
    const char *base_dir; /* relative paths of this file's entries resolve here */
} kc_doc;

/* Find the entry named `name` in a kubeconfig list (clusters/users/contexts)
 * across docs[0..n), in order: the FIRST document that defines the name wins
 * (client-go's merge rule; the whole entry is used, fields are not merged).
 * *out gets its inner object (entry[inner]), *di the document, *index its
 * position in that document's list. `label` names the set for "not found". */
static int find_named(const kc_doc *docs, size_t n, const char *label, const char *list,
                      const char *inner, const char *name, json_t **out, size_t *di, size_t *index,
                      gr_err *err)
{
    for (size_t d = 0; d < n; d++) {
        json_t *arr = json_object_get(docs[d].doc, list);
        if (arr && !json_is_array(arr) && !json_is_null(arr))
            return gr_err_set(err, GR_EPARSE, "%s: %s: expected a list", docs[d].name, list);
        size_t i;
        json_t *e;
        json_array_foreach(arr, i, e)
        {
            json_t *nm = json_object_get(e, "name");
            if (!json_is_string(nm))
                return gr_err_set(err, GR_EPARSE, "%s: %s[%zu].name: expected a string",
                                  docs[d].name, list, i);
            if (strcmp(json_string_value(nm), name) == 0) {
                json_t *in = json_object_get(e, inner);
                if (!json_is_object(in))
                    return gr_err_set(err, GR_EPARSE, "%s: %s[%zu].%s: expected a mapping",
                                      docs[d].name, list, i, inner);
                *out = in;
                *di = d;
                *index = i;
                return GR_OK;
            }
        }
    }
    return gr_err_set(err, GR_ENOTFOUND, "%s: no %.*s named \"%s\" in %s", label,
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
    size_t n = strlen(b64);
    gr_buf b = GR_BUF_INIT(n + 1); /* decoded data is shorter than its text */
    gr_err e;
    int rc = gr_base64_decode(b64, n, &b, &e);
    if (rc == GR_OK && !(*dst = gr_buf_steal(&b, dlen)))
        rc = GR_ENOMEM;
    gr_buf_free(&b);
    if (rc == GR_ENOMEM)
        return gr_err_set(err, rc, "out of memory");
    if (rc != GR_OK)
        return gr_err_set(err, GR_EPARSE, "%s: %s: not valid base64 (%s)", src, field,
                          strncmp(e.msg, "base64: ", 8) == 0 ? e.msg + 8 : e.msg);
    return GR_OK;
}

/* A whole file, at most max bytes (gr_file_read); a missing file is GR_EIO
 * like any other unreadable one (the kubeconfig contract). */
static int read_file(const char *path, size_t max, char **out, size_t *len, gr_err *err)
{
    int rc = gr_file_read(path, max, out, len, err);
    if (rc == GR_ENOTFOUND) {
        rc = GR_EIO;
        if (err)
            err->code = GR_EIO;
    }
    return rc;
}

static int parse_docs(const kc_doc *docs, size_t n, const char *label, const char *context,
                      gr_kube_config *cfg, gr_err *err)
{
    int rc;
    for (size_t d = 0; d < n; d++)
        if (!json_is_object(docs[d].doc) && !json_is_null(docs[d].doc))
            return gr_err_set(err, GR_EPARSE, "%s: expected a kubeconfig mapping at the top level",
                              docs[d].name);
    const char *ctxname = context;
    if (!ctxname || !*ctxname) {
        /* current-context: the first file that sets it (non-empty) wins */
        for (size_t d = 0; d < n && (!ctxname || !*ctxname); d++)
            if ((rc = opt_str(docs[d].doc, "current-context", docs[d].name, "kubeconfig", &ctxname,
                              err)) != GR_OK)
                return rc;
        if (!ctxname || !*ctxname)
            return gr_err_set(err, GR_ENOTFOUND,
                              "%s: current-context is not set; set it (kubectl config "
                              "use-context NAME) or choose a context explicitly",
                              label);
    }
    json_t *ctx = NULL, *cluster = NULL, *user = NULL;
    size_t ci = 0, ki = 0, ui = 0, cd = 0, kd = 0, ud = 0;
    if ((rc = find_named(docs, n, label, "contexts", "context", ctxname, &ctx, &cd, &ci, err)) !=
        GR_OK)
        return rc;
    const char *src = docs[cd].name;
    char path[64];
    snprintf(path, sizeof path, "contexts[%zu].context", ci);
    const char *cname, *uname, *ns;
    if ((rc = opt_str(ctx, "cluster", src, path, &cname, err)) != GR_OK ||
        (rc = opt_str(ctx, "user", src, path, &uname, err)) != GR_OK ||
        (rc = opt_str(ctx, "namespace", src, path, &ns, err)) != GR_OK)
        return rc;
    if (!cname || !*cname)
        return gr_err_set(err, GR_EPARSE, "%s: %s.cluster: required", src, path);
    if ((rc = find_named(docs, n, label, "clusters", "cluster", cname, &cluster, &kd, &ki, err)) !=
        GR_OK)
        return rc;
    if (uname && *uname &&
        (rc = find_named(docs, n, label, "users", "user", uname, &user, &ud, &ui, err)) != GR_OK)
        return rc;
    const char *base_dir = docs[kd].base_dir;
    src = docs[kd].name;

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
        src = docs[ud].name; /* the user entry may come from another file */
        base_dir = docs[ud].base_dir;
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

int gr_kube_config_parse_merged(const gr_kube_config_src *srcs, size_t n, const char *context,
                                gr_kube_config *cfg, gr_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    if (n == 0 || !srcs)
        return gr_err_set(err, GR_ENOTFOUND, "kubeconfig: no files to load");
    if (n > GR_KUBE_CONFIG_MAX_FILES)
        return gr_err_set(err, GR_ETOOBIG,
                          "kubeconfig: %zu files given; at most %d may be merged (shorten "
                          "$KUBECONFIG)",
                          n, GR_KUBE_CONFIG_MAX_FILES);
    kc_doc docs[GR_KUBE_CONFIG_MAX_FILES];
    memset(docs, 0, sizeof docs);
    char label[512];
    size_t used = 0;
    label[0] = '\0';
    int rc = GR_OK;
    size_t loaded = 0;
    for (size_t i = 0; i < n && rc == GR_OK; i++) {
        const char *src = srcs[i].name ? srcs[i].name : "kubeconfig";
        if (used < sizeof label) {
            int w = snprintf(label + used, sizeof label - used, "%s%s", i ? ", " : "", src);
            used += w > 0 ? (size_t)w : 0;
        }
        docs[i].name = src;
        docs[i].base_dir = srcs[i].base_dir;
        if (srcs[i].len > GR_KUBE_CONFIG_MAX_BYTES) {
            rc = gr_err_set(err, GR_ETOOBIG, "%s: larger than the %zu-byte limit", src,
                            GR_KUBE_CONFIG_MAX_BYTES);
            break;
        }
        json_t *doc = NULL;
        rc = gr_yaml_load_one(srcs[i].text ? srcs[i].text : "", srcs[i].text ? srcs[i].len : 0, src,
                              &doc, err);
        docs[i].doc = doc;
        loaded = i + 1;
    }
    if (rc == GR_OK)
        rc = parse_docs(docs, n, label, context, cfg, err);
    for (size_t i = 0; i < loaded; i++)
        json_decref(docs[i].doc);
    if (rc != GR_OK)
        gr_kube_config_free(cfg);
    return rc;
}

int gr_kube_config_parse(const char *text, size_t len, const char *name, const char *base_dir,
                         const char *context, gr_kube_config *cfg, gr_err *err)
{
    gr_kube_config_src one = {text, len, name ? name : "kubeconfig", base_dir};
    return gr_kube_config_parse_merged(&one, 1, context, cfg, err);
}

static int read_pem(const char *path, const char *what, char **out, size_t *len, gr_err *err)
{
    int rc = read_file(path, GR_KUBE_PEM_MAX_BYTES, out, len, err);
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

/* The directory of `path` ("." when it has none; "/" for "/x"). Caller frees. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    return strndup(path, n);
}

/* A ':'-separated list (as $KUBECONFIG) → its non-empty entries, duplicates
 * dropped (client-go deduplicates). *out holds pointers into *copy. */
static int split_list(const char *list, char **copy, const char **out, size_t *n, gr_err *err)
{
    *n = 0;
    *copy = strdup(list);
    if (!*copy)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    char *save = NULL;
    for (char *p = strtok_r(*copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        bool dup = false;
        for (size_t i = 0; i < *n && !dup; i++)
            dup = strcmp(out[i], p) == 0;
        if (dup)
            continue;
        if (*n == GR_KUBE_CONFIG_MAX_FILES)
            return gr_err_set(err, GR_ETOOBIG,
                              "$KUBECONFIG: more than %d files listed; merge some of them "
                              "(kubectl config view --flatten)",
                              GR_KUBE_CONFIG_MAX_FILES);
        out[(*n)++] = p;
    }
    return GR_OK;
}

/* Read every path that exists (missing ones are skipped and listed in
 * *missing), merge, resolve files. *all_missing is set when none exists. */
static int load_paths(const char *const *paths, size_t n, bool skip_missing, const char *context,
                      gr_kube_config *cfg, bool *all_missing, gr_buf *missing, gr_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    *all_missing = false;
    if (n > GR_KUBE_CONFIG_MAX_FILES)
        return gr_err_set(err, GR_ETOOBIG, "kubeconfig: at most %d files may be merged",
                          GR_KUBE_CONFIG_MAX_FILES);
    gr_kube_config_src srcs[GR_KUBE_CONFIG_MAX_FILES];
    char *texts[GR_KUBE_CONFIG_MAX_FILES], *dirs[GR_KUBE_CONFIG_MAX_FILES];
    size_t k = 0;
    int rc = GR_OK;
    for (size_t i = 0; i < n && rc == GR_OK; i++) {
        const char *p = paths[i];
        if (!p || !*p)
            continue;
        struct stat sb;
        if (skip_missing && stat(p, &sb) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
            /* a missing file is skipped (client-go); explicit paths are
             * checked by the caller */
            if (missing && gr_buf_printf(missing, "%s%s", missing->len ? ", " : "", p) != GR_OK)
                gr_buf_puts(missing, ", ..."); /* the list is informational */
            continue;
        }
        texts[k] = NULL;
        dirs[k] = NULL;
        size_t len = 0;
        rc = read_file(p, GR_KUBE_CONFIG_MAX_BYTES, &texts[k], &len, err);
        if (rc == GR_OK && !(dirs[k] = dir_of(p))) {
            free(texts[k]);
            rc = gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        if (rc != GR_OK)
            break;
        srcs[k] = (gr_kube_config_src){texts[k], len, p, dirs[k]};
        k++;
    }
    if (rc == GR_OK && k == 0) {
        *all_missing = true;
        rc = gr_err_set(err, GR_ENOTFOUND, "kubeconfig: no listed file exists (%s)",
                        missing ? gr_buf_cstr(missing) : "");
    }
    if (rc == GR_OK)
        rc = gr_kube_config_parse_merged(srcs, k, context, cfg, err);
    if (rc == GR_OK && (rc = gr_kube_config_resolve_files(cfg, err)) != GR_OK)
        gr_kube_config_free(cfg);
    for (size_t i = 0; i < k; i++) {
        free(texts[i]);
        free(dirs[i]);
    }
    return rc;
}

int gr_kube_config_load_list(const char *const *paths, size_t n, const char *context,
                             gr_kube_config *cfg, gr_err *err)
{
    bool all_missing;
    gr_buf missing = GR_BUF_INIT(2048);
    int rc = load_paths(paths, n, true, context, cfg, &all_missing, &missing, err);
    gr_buf_free(&missing);
    return rc;
}

int gr_kube_config_load_file(const char *path, const char *context, gr_kube_config *cfg,
                             gr_err *err)
{
    bool all_missing;
    return load_paths(&path, 1, false, context, cfg, &all_missing, NULL, err);
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
        if (read_file(buf, 256, &ns, &nl, NULL) == GR_OK) {
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
    if (kubeconfig_flag && *kubeconfig_flag) /* must exist; never merged */
        return gr_kube_config_load_file(kubeconfig_flag, context, cfg, err);
    const char *env = getenv("KUBECONFIG");
    gr_buf missing = GR_BUF_INIT(2048);
    if (env && *env) {
        char *copy = NULL;
        const char *paths[GR_KUBE_CONFIG_MAX_FILES];
        size_t n = 0;
        bool all_missing = false;
        int rc = split_list(env, &copy, paths, &n, err);
        if (rc == GR_OK)
            rc = load_paths(paths, n, true, context, cfg, &all_missing, &missing, err);
        free(copy);
        if (!all_missing || rc == GR_OK) {
            if (rc != GR_OK && rc != GR_ENOMEM)
                gr_err_prefix(err, "$KUBECONFIG: ");
            gr_buf_free(&missing);
            return rc;
        }
        /* nothing listed exists: in-cluster, as client-go; ~/.kube/config
         * is not consulted while $KUBECONFIG is set */
    }
    const char *h = getenv("KUBERNETES_SERVICE_HOST"), *p = getenv("KUBERNETES_SERVICE_PORT");
    if (h && *h && p && *p) {
        gr_buf_free(&missing);
        return gr_kube_config_in_cluster(cfg, err);
    }
    if (env && *env) {
        gr_err_set(err, GR_ENOTFOUND,
                   "no Kubernetes configuration found: tried --kubeconfig (not given), "
                   "$KUBECONFIG (no listed file exists: %s) and in-cluster "
                   "($KUBERNETES_SERVICE_HOST unset); ~/.kube/config is not read while "
                   "$KUBECONFIG is set; fix $KUBECONFIG or pass --kubeconfig PATH",
                   gr_buf_cstr(&missing));
        gr_buf_free(&missing);
        return GR_ENOTFOUND;
    }
    gr_buf_free(&missing);
    const char *home = getenv("HOME");
    char path[4096];
    if (home && *home) {
        snprintf(path, sizeof path, "%s/.kube/config", home);
        if (exists(path))
            return gr_kube_config_load_file(path, context, cfg, err);
    }
    return gr_err_set(err, GR_ENOTFOUND,
                      "no Kubernetes configuration found: tried --kubeconfig (not given), "
                      "$KUBECONFIG (unset), in-cluster ($KUBERNETES_SERVICE_HOST unset) and "
                      "~/.kube/config; pass --kubeconfig PATH");
}

int gr_kube_config_bearer(const gr_kube_config *cfg, char **out, gr_err *err)
{
    *out = NULL;
    if (cfg->token_file) {
        char *t = NULL;
        size_t n = 0;
        int rc = read_file(cfg->token_file, GR_KUBE_TOKEN_MAX_BYTES, &t, &n, err);
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

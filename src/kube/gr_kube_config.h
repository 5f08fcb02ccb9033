/*
 * gr_kube_config.h — how to reach and authenticate to a Kubernetes API
 * server: kubeconfig files and in-cluster service-account configuration.
 *
 * Sources, in the order gr_kube_config_load() tries them (the first that
 * applies wins, as kubectl/client-go do):
 *   1. an explicit path (a --kubeconfig flag),
 *   2. $KUBECONFIG (a ':'-separated list: the first file that exists is used;
 *      files are not merged),
 *   3. in-cluster, when $KUBERNETES_SERVICE_HOST and _PORT are set,
 *   4. ~/.kube/config.
 *
 * kubeconfig support: current-context (or an explicit context), cluster
 * server / certificate-authority(-data) / insecure-skip-tls-verify /
 * tls-server-name, user client-certificate(-data) / client-key(-data) /
 * token / tokenFile, context namespace. Relative file paths are resolved
 * against the kubeconfig's directory. `exec` credential plugins and
 * `auth-provider` are rejected with a clear "not supported" error.
 *
 * In-cluster: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, CA
 * from <sa>/ca.crt, namespace from <sa>/namespace, and the token FILE
 * <sa>/token, which the client re-reads on every request because projected
 * service-account tokens rotate (<sa> = /var/run/secrets/kubernetes.io/
 * serviceaccount).
 *
 * Ownership: a gr_kube_config owns every string in it; release it with
 * gr_kube_config_free(). Errors: GR_EPARSE (malformed YAML or wrong types;
 * the message names the field, e.g. "users[0].user.token: expected a
 * string"), GR_ENOTFOUND (no such context/cluster/user, or no configuration
 * found at all; the message lists what was tried), GR_EUNSUPPORTED (exec,
 * auth-provider), GR_EIO (a referenced file cannot be read), GR_ETOOBIG.
 */
#ifndef GR_KUBE_CONFIG_H
#define GR_KUBE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "gr_err.h"

#define GR_KUBE_SA_DIR           "/var/run/secrets/kubernetes.io/serviceaccount"
#define GR_KUBE_CONFIG_MAX_BYTES ((size_t)4 * 1024 * 1024) /* kubeconfig file cap */
#define GR_KUBE_PEM_MAX_BYTES    ((size_t)1024 * 1024)     /* CA / cert / key file cap */
#define GR_KUBE_TOKEN_MAX_BYTES  ((size_t)64 * 1024)       /* token file cap */

typedef struct gr_kube_config {
    char *server; /* "https://host:port" (required) */
    char *ca_pem; /* CA bundle, PEM (NULL: system trust store) */
    size_t ca_pem_len;
    char *ca_file;  /* where ca_pem came from (informational) */
    char *cert_pem; /* client certificate, PEM */
    size_t cert_pem_len;
    char *cert_file; /* path to read into cert_pem (see resolve) */
    char *key_pem;   /* client private key, PEM */
    size_t key_pem_len;
    char *key_file;
    char *token;      /* static bearer token */
    char *token_file; /* bearer token file, re-read on every request */
    int insecure_skip_tls_verify;
    char *tls_server_name; /* SNI / verification name override */
    char *namespace_;      /* default namespace ("default" when unset) */
    char *context;         /* the context used (NULL in-cluster) */
    char *user_agent;      /* NULL: "gpuready/<version>" */
    double qps;            /* client-side rate limit; 0 = default 5 (client-go), < 0 = none */
    int burst;             /* 0 = default 10 (client-go) */
    int64_t timeout_ms;    /* per-request timeout; 0 = default 30 s */
    int http2;             /* negotiate HTTP/2 over TLS (default 0: HTTP/1.1) */
} gr_kube_config;

void gr_kube_config_free(gr_kube_config *cfg);

/* Pure: parse kubeconfig YAML/JSON text. Selects `context` (NULL = the
 * file's current-context). File paths are resolved against base_dir (NULL =
 * leave relative) but NOT read; *_data fields are base64-decoded. `name`
 * (borrowed) labels messages. On error *cfg is left empty. */
int gr_kube_config_parse(const char *text, size_t len, const char *name, const char *base_dir,
                         const char *context, gr_kube_config *cfg, gr_err *err);

/* Read the files named by ca_file / cert_file / key_file into the PEM fields
 * where those are still empty (token_file stays a path). GR_EIO names the
 * file and the field. */
int gr_kube_config_resolve_files(gr_kube_config *cfg, gr_err *err);

/* Read + parse + resolve one kubeconfig file. */
int gr_kube_config_load_file(const char *path, const char *context, gr_kube_config *cfg,
                             gr_err *err);

/* In-cluster configuration from explicit inputs (testable): sa_dir holds
 * token, ca.crt and (optionally) namespace. host may be an IPv6 literal. */
int gr_kube_config_in_cluster_at(const char *sa_dir, const char *host, const char *port,
                                 gr_kube_config *cfg, gr_err *err);
/* In-cluster configuration from the environment and GR_KUBE_SA_DIR. */
int gr_kube_config_in_cluster(gr_kube_config *cfg, gr_err *err);

/* The precedence described above. kubeconfig_flag and context may be NULL. */
int gr_kube_config_load(const char *kubeconfig_flag, const char *context, gr_kube_config *cfg,
                        gr_err *err);

/* Read the current bearer token (token_file first, else token) into a
 * malloc'd string the caller frees; *out = NULL when there is none. */
int gr_kube_config_bearer(const gr_kube_config *cfg, char **out, gr_err *err);

#endif

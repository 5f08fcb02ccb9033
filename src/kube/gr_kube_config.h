/*
 * gr_kube_config.h — how to reach and authenticate to a Kubernetes API
 * server: kubeconfig files and in-cluster service-account configuration.
 *
 * Sources, in the order gr_kube_config_load() tries them (the first that
 * applies wins, as kubectl/client-go do):
 *   1. an explicit path (a --kubeconfig flag),
 *   2. $KUBECONFIG: a ':'-separated list of files, MERGED with client-go's
 *      loading rules (clientcmd.ClientConfigLoadingRules.Load):
 *        - empty entries and repeated paths are ignored; files that do not
 *          exist are skipped; a file that exists but cannot be read or
 *          parsed is an error naming it;
 *        - clusters, users and contexts are looked up by name, and the FIRST
 *          file that defines a name wins (the whole entry: fields of a later
 *          file's entry of the same name are never mixed in);
 *        - current-context comes from the first file that sets it;
 *        - relative paths in an entry resolve against the directory of the
 *          file that entry came from;
 *        - when no listed file exists, in-cluster is tried (as client-go) and
 *          otherwise GR_ENOTFOUND lists the missing files; ~/.kube/config is
 *          not read while $KUBECONFIG is set (as kubectl),
 *   3. in-cluster, when $KUBERNETES_SERVICE_HOST and _PORT are set,
 *   4. ~/.kube/config.
 *   An explicit path (1) and ~/.kube/config are single files, never merged;
 *   the explicit path must exist.
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
#define GR_KUBE_CONFIG_MAX_FILES 32 /* files merged from one $KUBECONFIG list */

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

/* One already-loaded kubeconfig file for gr_kube_config_parse_merged().
 * Everything is borrowed for the duration of the call. */
typedef struct gr_kube_config_src {
    const char *text;     /* YAML/JSON; need not be NUL-terminated; empty = no entries */
    size_t len;           /* at most GR_KUBE_CONFIG_MAX_BYTES (else GR_ETOOBIG) */
    const char *name;     /* labels messages (the file's path); NULL = "kubeconfig" */
    const char *base_dir; /* relative paths of THIS file's entries resolve here (NULL = leave) */
} gr_kube_config_src;

/* Pure: merge srcs[0..n) (n <= GR_KUBE_CONFIG_MAX_FILES) with client-go's
 * rules above (first definition of a name wins, first current-context wins)
 * and select `context` (NULL = the merged current-context). Paths are
 * resolved against the base_dir of the file each entry came from, not read.
 * Messages name the file an entry came from ("b.yaml: users[0].user.token:
 * expected a string"), or all of them ("a, b: no context named "x" in
 * contexts"). On error *cfg is left empty. gr_kube_config_parse() is this
 * with one file. */
int gr_kube_config_parse_merged(const gr_kube_config_src *srcs, size_t n, const char *context,
                                gr_kube_config *cfg, gr_err *err);

/* Read the files named by ca_file / cert_file / key_file into the PEM fields
 * where those are still empty (token_file stays a path). GR_EIO names the
 * file and the field. */
int gr_kube_config_resolve_files(gr_kube_config *cfg, gr_err *err);

/* Read + parse + resolve one kubeconfig file (it must exist: GR_EIO). */
int gr_kube_config_load_file(const char *path, const char *context, gr_kube_config *cfg,
                             gr_err *err);

/* Read, merge (rules above) and resolve paths[0..n) (borrowed). Empty
 * entries and files that do not exist are skipped; GR_ENOTFOUND when none
 * exists (the message lists them); GR_ETOOBIG past GR_KUBE_CONFIG_MAX_FILES. */
int gr_kube_config_load_list(const char *const *paths, size_t n, const char *context,
                             gr_kube_config *cfg, gr_err *err);

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

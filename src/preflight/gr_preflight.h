/*
 * gr_preflight.h — the pure half of the preflight admission webhook.
 *
 * Contract: ../shared/spec/nvsentinel-preflight.md (reference page) and
 * ../shared/notes/preflight-upstream-facts.md §2 (order of operations, error
 * strings, patch shape, config keys). Nothing here does I/O: the config comes
 * in as text, a Pod comes in as JSON, a JSON Patch (or a denial) comes out.
 * The HTTPS server lives in gr_preflight_server.h, gang discovery (issue 7)
 * plugs in through gr_preflight_gang_ops.
 *
 * Ownership: gr_preflight_config_parse() returns a config the caller frees
 * with gr_preflight_config_free(); a config is immutable afterwards and may be
 * shared by any number of threads. json_t values returned through out
 * parameters are new references owned by the caller. Every `const json_t *`
 * parameter is borrowed.
 *
 * Errors: GR_EINVAL with a message naming the config key
 * ("gangCoordination.timeout: time: unknown unit ...") for config problems;
 * GR_EINVAL with the contract's denial text for admission rejections
 * (gr_preflight_inject); GR_ENOMEM.
 */
#ifndef GR_PREFLIGHT_H
#define GR_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_err.h"

/* ------------------------------------------------------------ constants */

#define GR_PREFLIGHT_ANNOTATION_CHECKS "nvsentinel.nvidia.com/preflight-checks"
#define GR_PREFLIGHT_LABEL_HEALTH_PUB  "nvsentinel.nvidia.com/health-publisher"
#define GR_PREFLIGHT_VOL_SOCKET        "nvsentinel-socket"
#define GR_PREFLIGHT_VOL_TOKEN         "nvsentinel-connector-token"
#define GR_PREFLIGHT_VOL_GANG          "nvsentinel-preflight-gang-config"
#define GR_PREFLIGHT_VOL_DSHM          "dshm"
#define GR_PREFLIGHT_VOL_NCCL_TOPO     "nccl-topo"
#define GR_PREFLIGHT_VOL_PUBLISH_CA    "nvsentinel-platform-connector-ca"
#define GR_PREFLIGHT_PUBLISH_CA_CM     "nvsentinel-platform-connector-ca"
#define GR_PREFLIGHT_PUBLISH_CA_DIR    "/etc/nvsentinel/platform-connector-deployment-ca"
#define GR_PREFLIGHT_PUBLISH_CA_FILE   GR_PREFLIGHT_PUBLISH_CA_DIR "/ca.crt"
/* Default healthPublish.caFile: where the webhook Deployment mounts the CA
 * Secret of the deployment platform connector (the CA bundle sync's source). */
#define GR_PREFLIGHT_PUBLISH_CA_SRC  "/etc/preflight-ca/ca.crt"
#define GR_PREFLIGHT_SOCKET_HOST_DIR "/var/run/nvsentinel"
#define GR_PREFLIGHT_NCCL_TOPO_DIR   "/etc/nccl"

/* Largest config file accepted (bytes). */
#define GR_PREFLIGHT_CONFIG_MAX ((size_t)4 * 1024 * 1024)

/* ------------------------------------------------------------- config */

typedef enum gr_preflight_placement {
    GR_PREFLIGHT_APPEND = 0, /* default */
    GR_PREFLIGHT_PREPEND = 1,
} gr_preflight_placement;

typedef enum gr_preflight_publish {
    GR_PREFLIGHT_PUBLISH_SOCKET = 0, /* default: node-local platform connector */
    GR_PREFLIGHT_PUBLISH_DEPLOYMENT = 1,
} gr_preflight_publish;

typedef struct gr_preflight_strv {
    char **v; /* n strings, owned */
    size_t n;
} gr_preflight_strv;

/* gangCoordination.extraHostPathMounts[] / extraVolumeMounts[] entry. */
typedef struct gr_preflight_extra_mount {
    char *name;
    char *mount_path;
    char *host_path;      /* extraHostPathMounts only, else NULL */
    char *host_path_type; /* "" when unset; validated at load */
    bool read_only;       /* default true */
} gr_preflight_extra_mount;

typedef struct gr_preflight_check {
    char *name;
    json_t *container; /* corev1.Container template (preflight keys removed,
                          `image` rendered to a string); owned */
    bool default_enabled;
    bool inherit_env;
    bool inherit_mounts;
} gr_preflight_check;

typedef struct gr_preflight_config {
    gr_preflight_strv gpu_resource_names;     /* default ["nvidia.com/gpu"] */
    gr_preflight_strv network_resource_names; /* default [] */
    gr_preflight_strv nccl_env_patterns;      /* Go path.Match globs */
    gr_preflight_strv volume_mount_patterns;
    char *connector_socket;    /* "" ⇒ no socket env / volume */
    char *processing_strategy; /* default EXECUTE_REMEDIATION */
    /* connector token: all-or-nothing; audience NULL ⇒ off */
    char *token_audience;
    char *token_mount_path;
    int64_t token_expiration_seconds;
    json_t *gang_discovery; /* the raw `gangDiscovery` object ({} by default); owned */
    struct {
        bool enabled;
        int64_t timeout_ns;         /* default 10m */
        int64_t master_port;        /* default 29500 */
        char *configmap_mount_path; /* default /etc/preflight */
        char *nccl_topo_configmap;  /* "" ⇒ none */
        char *nccl_topo_data;
        char *nccl_topo_shape;
        gr_preflight_extra_mount *extra_host_path_mounts;
        size_t n_extra_host_path_mounts;
        gr_preflight_extra_mount *extra_volume_mounts;
        size_t n_extra_volume_mounts;
        bool mirror_resource_claims; /* default true */
    } gang;
    gr_preflight_placement placement;
    gr_preflight_strv image_pull_secrets;
    gr_preflight_check *checks;
    size_t n_checks;
    struct {
        gr_preflight_publish mode;
        char *target;               /* healthPublish.target, required in deployment mode */
        bool insecure;              /* healthPublish.insecure: no CA bundle */
        char *ca_file;              /* healthPublish.caFile: CA source of the CA bundle sync
                                       (default GR_PREFLIGHT_PUBLISH_CA_SRC) */
        json_t *namespace_selector; /* healthPublish.namespaceSelector: the
                          webhook's namespaceSelector (a metav1.LabelSelector,
                          owned); NULL = {matchLabels:
                          {nvsentinel.nvidia.com/preflight: enabled}} */
    } publish;
    /* private: the parts of every injected object that do not depend on the
     * pod (init-container templates taken apart, pre-serialised JSON,
     * compiled globs), built once by gr_preflight_config_from_json(). */
    struct gr_pf_compiled *compiled;
} gr_preflight_config;

/* Parse and validate config.yaml text (at most GR_PREFLIGHT_CONFIG_MAX
 * bytes). Keys are matched case-insensitively like upstream; unknown
 * top-level keys are reported through `warn` (may be NULL; called once per
 * key with a message naming it) and otherwise ignored. `name` is used in
 * parse messages. On success *out is owned by the caller. */
typedef void (*gr_preflight_warn_fn)(void *ud, const char *msg);
int gr_preflight_config_parse(const char *text, size_t len, const char *name,
                              gr_preflight_warn_fn warn, void *warn_ud, gr_preflight_config **out,
                              gr_err *err);

/* Same, from an already parsed JSON document (borrowed). */
int gr_preflight_config_from_json(const json_t *doc, gr_preflight_warn_fn warn, void *warn_ud,
                                  gr_preflight_config **out, gr_err *err);

void gr_preflight_config_free(gr_preflight_config *cfg);

/* --------------------------------------------------------- gang hook */

/* What gang discovery tells the injector about one admitted pod. */
typedef struct gr_preflight_gang_ctx {
    char *gang_id;          /* full gang id, e.g. "volcano-team-a-myjob"; owned */
    char *configmap_name;   /* gang ConfigMap mounted into the checks; owned */
    int64_t expected_count; /* minCount when known at admission, else 0 */
} gr_preflight_gang_ctx;

void gr_preflight_gang_ctx_clear(gr_preflight_gang_ctx *ctx);

/*
 * Gang discovery hook (implemented by issue 7 on top of the kube client).
 *
 * resolve(): called once per eligible pod when gangCoordination.enabled.
 *   `pod` is the Pod from the AdmissionReview (borrowed; read anchors such
 *   as spec.workloadRef from it — the Pod does not exist in the API yet),
 *   `ns` its namespace. Return GR_OK and fill *ctx (strings malloc'ed) for a
 *   gang member, GR_ENOTFOUND for "not a gang member", any other code with a
 *   message in err to reject admission ("failed to inject init containers:
 *   <msg>").
 * admitted(): optional; called after a pod is admitted WITH a patch and a
 *   gang context (not for dry-run requests). Registers the gang ConfigMap.
 *   Errors are logged only. `ctx` and `pod` are borrowed.
 * Both may run concurrently from several server threads.
 */
typedef struct gr_preflight_gang_ops {
    int (*resolve)(void *ud, const json_t *pod, const char *ns, gr_preflight_gang_ctx *ctx,
                   gr_err *err);
    void (*admitted)(void *ud, const json_t *pod, const char *ns, const char *pod_name,
                     const gr_preflight_gang_ctx *ctx);
    /* injected(): optional; called after every admission WITH a patch (gang
     * member or not; not for dry-run requests), before admitted(). The CA
     * bundle sync of publishTo: deployment ensures the namespace's
     * nvsentinel-platform-connector-ca ConfigMap here (PF-172). Errors are
     * logged only. Arguments are borrowed. */
    void (*injected)(void *ud, const json_t *pod, const char *ns, const char *pod_name);
    void *ud;
} gr_preflight_gang_ops;

/* A resolver that needs no API server: derives the gang id from the
 * admission object alone — native `spec.schedulingGroup.podGroupName`
 * ("kubernetes-<ns>-<group>"), native `spec.workloadRef.{name,podGroup}`
 * ("kubernetes-<ns>-<workload>[-<podGroup>]", read from the admission JSON:
 * the fix for upstream's lookup of a Pod that does not exist yet), or the
 * configured PodGroup discoverer's annotationKeys/labelKeys
 * ("<name>-<ns>-<group>"). expected_count stays 0; admitted is NULL.
 * `cfg` is borrowed and must outlive the returned ops. Used by the offline
 * `inject` command and by the server when gang coordination is off (with it
 * on, the server uses src/gang's gr_gang_service_ops()). */
gr_preflight_gang_ops gr_preflight_gang_static_ops(const gr_preflight_config *cfg);

/* Gang naming (facts §3.6) and gangDiscovery defaults: the one home of these
 * constants and functions; src/gang (which builds on this library) uses
 * them, never a copy. */
#define GR_PREFLIGHT_GANG_CM_PREFIX "preflight-"
#define GR_PREFLIGHT_GANG_NAME_MAX  63

/* gangDiscovery defaults. A PodGroup CRD block without minCountExpr gets
 * GR_PREFLIGHT_GANG_DEFAULT_MIN_EXPR (PF-100) unless it is Grove's PodGang
 * (beyond upstream, docs/gang.md § Grove): `{name: grove}` alone is
 * shorthand for labelKeys [GR_PREFLIGHT_GROVE_LABEL] and the PodGang GVR. */
#define GR_PREFLIGHT_GANG_NATIVE_NAME      "kubernetes" /* discoverer name of the native APIs */
#define GR_PREFLIGHT_GANG_DEFAULT_MIN_EXPR "podGroup.spec.minMember"
#define GR_PREFLIGHT_GROVE_NAME            "grove"
#define GR_PREFLIGHT_GROVE_LABEL           "grove.io/podgang"
#define GR_PREFLIGHT_GROVE_GROUP           "scheduler.grove.io"
#define GR_PREFLIGHT_GROVE_VERSION         "v1alpha1"
#define GR_PREFLIGHT_GROVE_RESOURCE        "podgangs"

/* sanitize(): lowercase, [^a-z0-9-] → '-', runs of '-' collapsed, '-'
 * trimmed; empty → the first 63 hex of sha256(s); longer than 63 → cut with
 * '-' + an 8-hex sha256(s) suffix. NULL s = "". Caller frees; NULL on ENOMEM. */
char *gr_preflight_gang_sanitize(const char *s);

/* The gang id "<discoverer>-<namespace>-<group>[-<sub>]" (PF-109, PF-151;
 * sub NULL or "" leaves it out), the one derivation: the static resolver
 * and src/gang's anchors use it. Caller frees; NULL on ENOMEM. */
char *gr_preflight_gang_id(const char *discoverer, const char *ns, const char *group,
                           const char *sub);

/* What a pod names as its gang (facts §3.2–§3.4), read from the pod alone;
 * the one implementation for the static resolver and src/gang's anchors.
 * Returned strings are borrowed from `pod`; NULL when the pod names none.
 *  - native 1.36: spec.schedulingGroup.podGroupName;
 *  - native 1.35: spec.workloadRef.name, with *pod_group (may be NULL) set
 *    to spec.workloadRef.podGroup (read from the admission object: the
 *    Pod does not exist in the API yet, upstream risk R2);
 *  - a PodGroup CRD discoverer: the first non-empty annotation of
 *    annotation_keys, else the first non-empty label of label_keys (PF-96,
 *    PF-97). */
const char *gr_preflight_gang_native_podgroup(const json_t *pod);
const char *gr_preflight_gang_native_workload(const json_t *pod, const char **pod_group);
const char *gr_preflight_gang_keyed_group(const json_t *pod, const char *const *annotation_keys,
                                          size_t n_annotation_keys, const char *const *label_keys,
                                          size_t n_label_keys);

/* Gang ConfigMap name for a gang id: "preflight-" + sanitize(id), truncated
 * with an 8-hex sha256 suffix to at most 63 characters (PF-113, PF-153).
 * Caller frees; NULL on ENOMEM. */
char *gr_preflight_gang_configmap_name(const char *gang_id);

/* --------------------------------------------------------- injection */

typedef enum gr_preflight_outcome {
    GR_PREFLIGHT_SKIPPED = 0,  /* not eligible or nothing selected: no patch */
    GR_PREFLIGHT_INJECTED = 1, /* patch produced */
} gr_preflight_outcome;

typedef struct gr_preflight_result {
    gr_preflight_outcome outcome;
    json_t *patch;              /* JSON Patch array when INJECTED, else NULL; owned */
    gr_preflight_gang_ctx gang; /* filled when the pod is a gang member */
    size_t n_injected;          /* init containers added */
} gr_preflight_result;

void gr_preflight_result_clear(gr_preflight_result *res);

/* Compute the mutation for `pod` (borrowed Pod JSON; its namespace is
 * metadata.namespace or, when empty, `ns`). `gang` may be NULL (no gang
 * discovery; treated as "not a member"). Returns GR_OK with res->outcome, or
 * GR_EINVAL with the denial message in err (without the
 * "failed to inject init containers: " prefix), or the resolver's error. */
int gr_preflight_inject(const gr_preflight_config *cfg, const gr_preflight_gang_ops *gang,
                        const json_t *pod, const char *ns, gr_preflight_result *res, gr_err *err);

/* Same as gr_preflight_inject(), but the JSON Patch is appended to `patch`
 * as compact JSON text (what the webhook sends) and res->patch stays NULL.
 * The text is written straight from the parts serialised at config load,
 * without building JSON values; it is byte for byte
 * json_dumps(patch, JSON_COMPACT) of gr_preflight_inject()'s patch. Nothing
 * is appended unless res->outcome is GR_PREFLIGHT_INJECTED. GR_ETOOBIG when
 * the patch would exceed patch->max (patch is left as it was). */
int gr_preflight_inject_text(const gr_preflight_config *cfg, const gr_preflight_gang_ops *gang,
                             const json_t *pod, const char *ns, gr_buf *patch,
                             gr_preflight_result *res, gr_err *err);

/* Check selection, the one implementation (facts §4.2), as the gang
 * coordinator records it in a peer line: the names the
 * nvsentinel.nvidia.com/preflight-checks annotation selects, in its order
 * (unknown names dropped; a duplicate selects nothing), else every
 * defaultEnabled check in config order; joined by ','. Admission
 * (gr_preflight_inject) applies the same selection strictly: unknown or
 * duplicate names deny the pod (PF-33, PF-34). cfg NULL ⇒ "". Caller frees;
 * NULL on ENOMEM. */
char *gr_preflight_check_names(const gr_preflight_config *cfg, const json_t *pod);

/* Type-check the parts of a Pod the injector reads; GR_EINVAL with the
 * path ("spec.containers[0].env: must be a list"). gr_preflight_admit()
 * denies such a Pod with "failed to unmarshal pod: <msg>". */
int gr_preflight_pod_check(const json_t *pod, gr_err *err);

/* ------------------------------------------------------ admission */

typedef enum gr_preflight_admit_result {
    GR_PREFLIGHT_ADMIT_INJECTED = 0, /* allowed with a patch */
    GR_PREFLIGHT_ADMIT_SKIPPED,      /* allowed, no patch */
    GR_PREFLIGHT_ADMIT_DENIED,       /* allowed:false with a message */
    GR_PREFLIGHT_ADMIT_ERROR,        /* HTTP 400: body is not an AdmissionReview */
    GR_PREFLIGHT_ADMIT__COUNT
} gr_preflight_admit_result;

/* Metric label of a result: "injected", "skipped", "denied", "error". */
const char *gr_preflight_admit_result_name(gr_preflight_admit_result r);

typedef struct gr_preflight_admission {
    int http_status; /* 200, or 400 for an unreadable review */
    char *body;      /* response body (JSON, or a text error); owned */
    size_t body_len;
    const char *content_type; /* static */
    gr_preflight_admit_result result;
    char *pod_name; /* for logs: name or generateName; may be NULL; owned */
    char *ns;       /* may be NULL; owned */
    size_t n_injected;
    char msg[GR_ERR_MSG_MAX + 128]; /* denial / error text for logs */
} gr_preflight_admission;

void gr_preflight_admission_clear(gr_preflight_admission *a);

/* Handle one POST /mutate body (admission.k8s.io/v1 AdmissionReview). Never
 * fails for bad input: the outcome is in *out (HTTP 400 + text for an
 * unparsable review; allowed:false + message for a bad Pod or a denial).
 * Returns GR_ENOMEM only. `gang` may be NULL. Thread-safe given a shared
 * immutable cfg. */
int gr_preflight_admit(const gr_preflight_config *cfg, const gr_preflight_gang_ops *gang,
                       const char *body, size_t len, gr_preflight_admission *out);

/* ------------------------------------------------------------ output */

/* Append `v` (borrowed) as block-style YAML to `out` (capped). Strings a
 * YAML reader would not read back as strings are JSON-quoted. GR_ENOMEM /
 * GR_ETOOBIG. */
int gr_preflight_yaml_emit(const json_t *v, gr_buf *out);

#endif

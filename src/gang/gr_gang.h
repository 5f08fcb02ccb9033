/*
 * gr_gang.h — the pure half of preflight gang discovery and coordination.
 *
 * Contract: ../shared/spec/nvsentinel-preflight.md ("Gang discovery",
 * "Per-namespace gang discovery", "Gang coordination", "Gang coordination
 * Pod cache") and ../shared/notes/preflight-upstream-facts.md §3–§5.
 * Nothing here does I/O: gang IDs, ConfigMap names, peer lines, ranks,
 * minCount extraction (native PodGroup / Workload / CEL), the trimmed Pod
 * cache transform, the coordinator's ConfigMap update and the PreflightConfig
 * precedence are computed from JSON objects handed in. The controllers that
 * talk to the API server live in gr_gang_ctl.h.
 *
 * Ownership: strings returned through `char **` are the caller's (free());
 * json_t results are new references; every `const json_t *` parameter is
 * borrowed. A gr_gang_discoverer is reference counted (atomic) so a resolver
 * may swap it while admissions still use the old one.
 *
 * Errors: GR_EINVAL with a message naming the field (contract texts are the
 * GR_GANG_MSG_* constants below, reproduced byte for byte), GR_EPARSE for
 * malformed peer lines (line number in the message), GR_ENOTFOUND for "not a
 * gang member" / "no minCount in this object", GR_ETOOBIG past the caps,
 * GR_ENOMEM.
 */
#ifndef GR_GANG_H
#define GR_GANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_err.h"
#include "gr_preflight.h"

/* ------------------------------------------------------------ constants */

#define GR_GANG_LABEL_MANAGED_BY "nvsentinel.nvidia.com/managed-by"
#define GR_GANG_MANAGED_BY_VALUE "preflight"
#define GR_GANG_LABEL_GANG_ID    "nvsentinel.nvidia.com/gang-id"
#define GR_GANG_KEY_EXPECTED     "expected_count"
#define GR_GANG_KEY_PEERS        "peers"
#define GR_GANG_KEY_MASTER_ADDR  "master_addr"
#define GR_GANG_KEY_MASTER_PORT  "master_port"
#define GR_GANG_KEY_GANG_ID      "gang_id"
/* Grove (beyond upstream, #1354): the PodGang kind; its name, label and API
 * (GR_PREFLIGHT_GROVE_*), the ConfigMap prefix and name cap
 * (GR_PREFLIGHT_GANG_CM_PREFIX, _NAME_MAX), the native discoverer name and
 * the default minCountExpr (GR_PREFLIGHT_GANG_NATIVE_NAME, _DEFAULT_MIN_EXPR)
 * live in gr_preflight.h, their one home. */
#define GR_GANG_GROVE_KIND "PodGang"
#define GR_GANG_NS_LABEL   "nvsentinel.nvidia.com/preflight"
/* Where the admission-time ConfigMap remembers its gang anchor (JSON), so the
 * coordinator can read minCount and backfill the ownerReference when the
 * PodGroup appears after the pods (our annotation; not read by checks). */
#define GR_GANG_ANNOT_ANCHOR "preflight.nvsentinel.nvidia.com/gang-anchor"

#define GR_GANG_PFC_GROUP    "preflight.nvsentinel.nvidia.com"
#define GR_GANG_PFC_VERSION  "v1alpha1"
#define GR_GANG_PFC_RESOURCE "preflightconfigs"
#define GR_GANG_PFC_KIND     "PreflightConfig"

/* Caps on data read back from the API (a ConfigMap is at most 1 MiB). */
#define GR_GANG_PEERS_MAX_BYTES ((size_t)1024 * 1024)
#define GR_GANG_PEERS_MAX       100000

/* Contract messages (facts §3.1, §5). */
#define GR_GANG_MSG_NATIVE_UNAVAILABLE \
    "kubernetes native gang API not available (requires K8s 1.35 Workload or K8s 1.36+ PodGroup)"
#define GR_GANG_MSG_RESOLVER_PREFIX "failed to create gang discoverer resolver: "
#define GR_GANG_MSG_DEFAULT_PREFIX  "failed to create default gang discoverer: "
#define GR_GANG_REASON_ACTIVE       "DiscovererActive"
#define GR_GANG_REASON_INVALID      "InvalidOrConflicting"
#define GR_GANG_MSG_ACTIVE          "discoverer active"

/* ---------------------------------------------------------------- naming */

/* ConfigMap names, the gang-id label value and the gang id itself come from
 * the webhook's naming (gr_preflight_gang_configmap_name(),
 * gr_preflight_gang_sanitize(), gr_preflight_gang_id() in gr_preflight.h,
 * facts §3.6): one implementation for both. */

/* ----------------------------------------------------------------- peers */

typedef struct gr_gang_peer {
    char *name;
    char *ip;
    long rank;    /* -1 when the line carried none */
    char *checks; /* 4th field, "" when absent */
} gr_gang_peer;

typedef struct gr_gang_peers {
    gr_gang_peer *v;
    size_t n;
} gr_gang_peers;

void gr_gang_peers_free(gr_gang_peers *p);

/* Parse the `peers` value: lines `podName;podIP;rank[;checkNames]`
 * (PF-148), surrounding blanks trimmed, blank lines skipped, at least
 * `name;ip`; the split stops at the 4th field so IPv6 addresses and check
 * lists pass through. GR_EPARSE ("peers line 3: ..."), GR_ETOOBIG past
 * GR_GANG_PEERS_MAX_BYTES / GR_GANG_PEERS_MAX. */
int gr_gang_peers_parse(const char *text, gr_gang_peers *out, gr_err *err);

/* Append a peer (strings copied). */
int gr_gang_peers_add(gr_gang_peers *p, const char *name, const char *ip, const char *checks);

/* Deterministic ranks: sort by pod name (bytewise ascending), rank = index
 * (PF-145, PF-149: rank 0 is the master). */
void gr_gang_peers_assign_ranks(gr_gang_peers *p);

/* Serialize as `name;ip;rank` lines, with `;checks` when checks is
 * non-empty (the 4-field form upstream writes), joined by '\n' without a
 * trailing newline. */
int gr_gang_peers_format(const gr_gang_peers *p, gr_buf *out);

/* ------------------------------------------------------------- discovery */

typedef enum gr_gang_mode {
    GR_GANG_NATIVE_PODGROUP = 0, /* 1.36 spec.schedulingGroup.podGroupName */
    GR_GANG_NATIVE_WORKLOAD,     /* 1.35 spec.workloadRef.{name,podGroup} */
    GR_GANG_CRD,                 /* configurable PodGroup CRD */
    GR_GANG_GROVE,               /* Grove PodGang (hierarchical; docs/gang.md) */
} gr_gang_mode;

/* A parsed `gangDiscovery` block (Helm value or PreflightConfig spec). */
typedef struct gr_gang_spec {
    bool native; /* the empty block {} */
    char *name;
    char **annotation_keys;
    size_t n_annotation_keys;
    char **label_keys;
    size_t n_label_keys;
    char *group, *version, *resource;
    char *min_count_expr; /* defaulted to GR_PREFLIGHT_GANG_DEFAULT_MIN_EXPR (PF-100);
                             Grove: NULL = the built-in PodGang rule */
    bool grove;           /* a Grove block (see gr_gang_spec_parse) */
} gr_gang_spec;

/* Parse and classify (facts §3.1): every field empty ⇒ native; name +
 * (annotationKeys or labelKeys) + complete podGroupGVR ⇒ CRD, with
 * minCountExpr defaulting to "podGroup.spec.minMember"; Grove (beyond
 * upstream): `name: grove` with no keys and no podGroupGVR, or any named
 * block whose podGroupGVR is scheduler.grove.io/<v>/podgangs ⇒ grove = true,
 * labelKeys defaulting to ["grove.io/podgang"], podGroupGVR to
 * scheduler.grove.io/v1alpha1/podgangs, minCountExpr left NULL (the built-in
 * sum of spec.podgroups[].minReplicas) unless given (the generic default
 * "podGroup.spec.minMember" also means the built-in rule: a PodGang has no
 * minMember); anything else ⇒
 * GR_EINVAL `invalid gangDiscovery config: name "<n>" requires
 * annotationKeys/labelKeys, podGroupGVR, and minCountExpr`. Wrong JSON types
 * are GR_EINVAL naming the field. gd may be NULL (= {}). */
int gr_gang_spec_parse(const json_t *gd, gr_gang_spec *out, gr_err *err);
void gr_gang_spec_free(gr_gang_spec *s);

typedef struct gr_gang_discoverer gr_gang_discoverer;

/* Build a discoverer from a spec (borrowed; copied). mode must be CRD for a
 * CRD spec, GROVE for a Grove spec and NATIVE_* for a native one. `kind` is the PodGroup kind the
 * REST mapper resolved (CRD; used in ownerReferences), `version` the served
 * version for native modes (NULL: v1alpha2 PodGroup / v1alpha1 Workload).
 * CRD (and Grove with a minCountExpr): compiles minCountExpr with the
 * variable `podGroup` (GR_EINVAL `gangDiscovery.minCountExpr: <cel error>`).
 * Returns a reference. */
int gr_gang_discoverer_new(const gr_gang_spec *spec, gr_gang_mode mode, const char *kind,
                           const char *version, gr_gang_discoverer **out, gr_err *err);
gr_gang_discoverer *gr_gang_discoverer_ref(gr_gang_discoverer *d);
void gr_gang_discoverer_unref(gr_gang_discoverer *d);
/* "kubernetes" for native, the configured name otherwise (borrowed). */
const char *gr_gang_discoverer_name(const gr_gang_discoverer *d);
gr_gang_mode gr_gang_discoverer_mode(const gr_gang_discoverer *d);
/* Label and annotation keys the discoverer reads (borrowed). */
const gr_gang_spec *gr_gang_discoverer_spec(const gr_gang_discoverer *d);

/* Where a pod's gang is anchored. */
typedef struct gr_gang_anchor {
    char *gang_id;                           /* "<discoverer>-<ns>-<group>[-<podGroup>]" */
    char *cm_name;                           /* gr_preflight_gang_configmap_name(gang_id) */
    char *discoverer;                        /* discoverer name */
    char *group, *version, *resource, *kind; /* the anchor object's type */
    char *ns;
    char *name;      /* anchor object name (PodGroup / Workload) */
    char *pod_group; /* Workload podGroup ("" when none) */
} gr_gang_anchor;

void gr_gang_anchor_clear(gr_gang_anchor *a);

/* Read the pod's anchor (PF-89, PF-91, PF-96, PF-97): native PodGroup
 * `spec.schedulingGroup.podGroupName`; Workload `spec.workloadRef` from the
 * admission object itself (risk R2); CRD and Grove: first non-empty
 * annotation of annotationKeys, else first non-empty label of labelKeys
 * (Grove: the PodGang named by label grove.io/podgang). GR_ENOTFOUND when
 * the pod is not a gang member. `ns` is the pod's namespace. */
int gr_gang_anchor_from_pod(const gr_gang_discoverer *d, const json_t *pod, const char *ns,
                            gr_gang_anchor *out, gr_err *err);

/* The anchor as the JSON kept in GR_GANG_ANNOT_ANCHOR, and back. */
json_t *gr_gang_anchor_to_json(const gr_gang_anchor *a);
int gr_gang_anchor_from_json(const json_t *j, gr_gang_anchor *out, gr_err *err);

/* Expected gang size from the anchor object (PF-90, PF-92, PF-99): native
 * PodGroup spec.schedulingPolicy.gang.minCount; Workload
 * spec.podGroups[] (or spec.podGroupTemplates[]) entry named pod_group (the
 * first when pod_group is "") → policy.gang.minCount; CRD: minCountExpr with
 * `podGroup` bound to obj; int, uint and double results are accepted
 * (doubles truncated), anything else is GR_EINVAL `minCountExpr "<e>"
 * returned non-numeric type <t>`. Grove without minCountExpr: the sum of
 * spec.podgroups[].minReplicas of the PodGang (GR_ENOTFOUND without
 * spec.podgroups or with an entry lacking minReplicas; GR_EINVAL for a
 * negative or non-integer value or a sum past INT32_MAX). Negative results
 * are GR_EINVAL. GR_ENOTFOUND when a native object has no minCount. */
int gr_gang_min_count(const gr_gang_discoverer *d, const gr_gang_anchor *a, const json_t *obj,
                      int64_t *out, gr_err *err);

/* ------------------------------------------------------------- pod cache */

/* Does the pod mount a gang ConfigMap? Returns its name (borrowed) or NULL. */
const char *gr_gang_pod_configmap(const json_t *pod);

/* Keys a trimmed pod keeps in metadata.annotations / labels. */
typedef struct gr_gang_trim_keys {
    const char *const *annotations;
    size_t n_annotations;
    const char *const *labels;
    size_t n_labels;
} gr_gang_trim_keys;

/* The cache transform (PF-141, PF-142), in place: a pod that mounts a gang
 * ConfigMap (only the webhook adds that volume, in opted-in namespaces)
 * keeps name, namespace, uid, resourceVersion, creationTimestamp,
 * deletionTimestamp, the listed annotation and label keys plus
 * nvsentinel.nvidia.com/preflight-checks, spec.nodeName, the gang volume
 * (name + configMap.name), spec.schedulingGroup, spec.workloadRef,
 * status.podIP, status.podIPs and status.phase. Any other pod becomes an
 * identity stub (name, namespace, uid, resourceVersion). GR_ENOMEM. */
int gr_gang_pod_trim(json_t **pod, const gr_gang_trim_keys *keys);

/* ------------------------------------------------------------ ConfigMaps */

/* Check names of a pod (the peer line's 4th field): gr_preflight_check_names()
 * in gr_preflight.h, the webhook's own selection. */

/* The admission-time skeleton (PF-110..PF-112, PF-143, PF-150..PF-153):
 * data expected_count ("0" unless expected > 0), master_port, peers "",
 * master_addr "", gang_id; labels managed-by and gang-id; the anchor
 * annotation; ownerReferences [owner] when owner (the anchor object) has a
 * name and uid. New reference; NULL on ENOMEM. */
json_t *gr_gang_cm_skeleton(const gr_gang_anchor *a, int64_t expected, int64_t master_port,
                            const json_t *owner);

/* Add or refresh the ownerReference to `owner` on cm (same apiVersion +
 * kind + name with a new uid replaces the old entry). true when changed. */
bool gr_gang_cm_set_owner(json_t *cm, const json_t *owner);

/* The coordinator's update (PF-145..PF-149), in place on a ConfigMap:
 *  - expected_count is set when it reads 0 and expected > 0 (set once);
 *  - peers = every member pod that is not terminating, whose phase is
 *    Running or Pending (or not reported yet) and that has an IP, ranked by
 *    gr_gang_peers_assign_ranks (stale peers disappear);
 *  - master_addr = IP of rank 0 ("" while no peer).
 * `members` is an array of pods mounting this ConfigMap. *changed says
 * whether anything was modified. GR_EINVAL for a ConfigMap without data of
 * the right type is repaired, not refused; GR_ENOMEM / GR_ETOOBIG. */
int gr_gang_cm_update(json_t *cm, const json_t *members, int64_t expected,
                      const gr_preflight_config *cfg, bool *changed, gr_err *err);

/* --------------------------------------------------------- NCCL topology */

/* The optional NCCL topology ConfigMap (facts §4.1, PF-156, PF-157). */
#define GR_GANG_TOPO_KEY         "topo.xml"
#define GR_GANG_TOPO_LABEL_SHAPE "nvsentinel.nvidia.com/nccl-topo-shape"

/* The bundled topology XML for gangCoordination.ncclTopoShape "ndv4"
 * (Azure ND96asr_v4) or "ndv5" (ND96isr_H100_v5), compiled in from
 * deploy/gang/topology/<shape>.xml; NULL for any other shape. Static. */
const char *gr_gang_topo_builtin(const char *shape);

/* The XML the topology ConfigMap carries: gangCoordination.ncclTopoData when
 * set (the Helm chart inlines its file there), else the bundled file of
 * ncclTopoShape, else NULL (no ConfigMap to create: a pre-existing
 * ncclTopoConfigMap is the user's). Borrowed from cfg or static. */
const char *gr_gang_topo_xml(const gr_preflight_config *cfg);

/* The ConfigMap to create in namespace ns: name, data {"topo.xml": xml},
 * labels app.kubernetes.io/component: nccl-topo, app.kubernetes.io/name:
 * nvsentinel, and GR_GANG_TOPO_LABEL_SHAPE when shape is non-empty. New
 * reference; NULL on ENOMEM. */
json_t *gr_gang_topo_configmap(const char *name, const char *ns, const char *xml,
                               const char *shape);

/* ------------------------------------------------------ PreflightConfig */

/* Order the PreflightConfigs of one namespace: creationTimestamp ascending,
 * ties by name (PF-122, PF-123). Returns a new array of the same (borrowed
 * → incref'd) objects, winner first. */
json_t *gr_gang_pfc_order(const json_t *items);

/* Ready=False message of a loser (PF-124, PF-127, facts §5). */
int gr_gang_pfc_superseded_msg(const char *winner, bool winner_valid, char *buf, size_t n);

/* Put the desired status on `obj` (a PreflightConfig; edited in place):
 * observedGeneration, discoverer, and the Ready condition (lastTransitionTime
 * kept unless the status flips). *changed is false when nothing differs (the
 * caller then skips the write). */
int gr_gang_pfc_set_status(json_t *obj, bool ready, const char *reason, const char *message,
                           const char *discoverer, int64_t now_ns, bool *changed, gr_err *err);

#endif

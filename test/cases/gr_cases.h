/*
 * gr_cases.h — the pure parts of the reconcile-case runner
 * (test/cases/reconcile_cases.c, scripts/reconcile-cases, docs/reconcile-cases.md):
 * the input_config.yaml schema, the snapshot sanitizer, generated node names,
 * metric-text filtering.
 *
 * Nothing here does I/O or reads the clock; the runner does both.
 *
 * Ownership: gr_cases_config_parse() fills a gr_cases_config whose strings
 * and json_t members are BORROWED from the config's own `doc` (one reference
 * held by the config); release everything with gr_cases_config_free().
 * Functions returning json_t * through `out` give new references (caller
 * json_decref()s); char * results are the caller's (free()).
 *
 * Errors: GR_EINVAL for a config that breaks the schema; the message names the
 * file, the key path and the fix ("input_config.yaml: steps[1].patches[0]:
 * unknown key \"patchh\" (known: target, status, patch)"). GR_EPARSE for YAML
 * that does not parse, GR_ETOOBIG past the caps below, GR_ENOMEM.
 */
#ifndef GR_CASES_H
#define GR_CASES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "gr_err.h"

#define GR_CASES_DEFAULT_TIMEOUT_S 30
#define GR_CASES_MAX_TIMEOUT_S     3600
#define GR_CASES_MAX_ITEMS         1000 /* entries in any list of the config */
#define GR_CASES_MAX_NODES         1000 /* generateNodes.count */
#define GR_CASES_MAX_CONFIG_BYTES  ((size_t)1024 * 1024)

/* Placeholders written into expected.json in place of volatile values. */
#define GR_CASES_PH_NAMESPACE "NAMESPACE"
#define GR_CASES_PH_HASH      "xxxxxx"
#define GR_CASES_PH_UID       "UID"
#define GR_CASES_PH_TIME      "TIME"

/* A reference to one object: kind (optionally "Kind.group"), name,
 * namespace (NULL = the case namespace for namespaced kinds). */
typedef struct gr_cases_ref {
    const char *kind;
    const char *name;
    const char *namespace_;
} gr_cases_ref;

typedef struct gr_cases_wait {
    bool set;
    gr_cases_ref ref;
    const char *condition;  /* wait until status.conditions[type=condition].status == "True" */
    const char *reason;     /* ... and that condition's reason equals this */
    long restart_count;     /* wait until status.restartCount >= this (-1: unset) */
    long failed_node_count; /* wait until len(status.failedNodes) >= this (-1: unset) */
} gr_cases_wait;

typedef struct gr_cases_patch {
    gr_cases_ref target;
    bool status;         /* to the status subresource */
    const json_t *patch; /* a JSON merge patch (object) */
} gr_cases_patch;

typedef struct gr_cases_step {
    gr_cases_wait wait; /* may be unset: patches apply at once */
    size_t npatches;
    gr_cases_patch *patches;
} gr_cases_step;

typedef struct gr_cases_expect {
    const char *type;   /* "Normal" | "Warning" | NULL (any) */
    const char *reason; /* required */
} gr_cases_expect;

typedef struct gr_cases_event_case {
    const char *involved_kind;
    const char *involved_name;
    const char *namespace_;
    size_t nexpect;
    gr_cases_expect *expect;
} gr_cases_event_case;

typedef struct gr_cases_delete {
    gr_cases_ref ref;
    bool strip_finalizers;
} gr_cases_delete;

typedef enum gr_cases_frozen_mode {
    GR_CASES_FROZEN_NONE = 0,
    GR_CASES_FROZEN_STRIP,  /* remove the served pod logs, then verify */
    GR_CASES_FROZEN_INTACT, /* keep the logs, verify */
} gr_cases_frozen_mode;

/* The metric families a collect*Metrics key selects (NULL-terminated
 * prefixes; a config may give its own list instead of `true`). */
typedef struct gr_cases_metrics {
    bool set;
    size_t nprefixes;
    const char **prefixes; /* borrowed from the config doc or static */
} gr_cases_metrics;

typedef struct gr_cases_config {
    json_t *doc; /* owned: the parsed YAML document */
    gr_cases_wait wait;
    size_t nsteps;
    gr_cases_step *steps;
    size_t ncollect;
    const char **collect; /* kinds */
    gr_cases_metrics metrics, bandwidth_metrics, job_metrics, topology_metrics;
    size_t nevents;
    gr_cases_event_case *events;
    bool generate_nodes;
    long node_count;
    const json_t *node_labels; /* object of strings, may be NULL */
    const char *provider_id;   /* may be NULL; "{name}" / "{index}" substituted */
    /* status.capacity and status.allocatable of every Node (may be NULL),
     * and per node index ("0", "1", ...) resources laid over it */
    const json_t *node_allocatable, *node_allocatable_of;
    bool verify_spec_immutable;
    gr_cases_frozen_mode frozen_goodput;
    size_t ndelete;
    gr_cases_delete *delete_after_wait;
    bool wait_for_deletion;
    bool reject_workflow_creates;
    bool verify_node_poll_events;
    bool verify_checkpoint_events;
    long timeout_s;
} gr_cases_config;

/* Parse input_config.yaml text (`name` labels messages). An empty file is
 * the empty config (timeout 30 s, nothing else). */
int gr_cases_config_parse(const char *text, size_t len, const char *name, gr_cases_config *cfg,
                          gr_err *err);
void gr_cases_config_free(gr_cases_config *cfg);

/* Whether obj satisfies the wait: status.conditions has an entry of type
 * w->condition with status "True" (and reason w->reason when set),
 * status.restartCount >= w->restart_count, len(status.failedNodes) >=
 * w->failed_node_count (each only when set). With none set: true (the
 * object exists). */
bool gr_cases_wait_met(const gr_cases_wait *w, const json_t *obj);

/* "gen-<hash6>-node-NN": hash6 = first 6 hex digits of SHA-256(seed) (the
 * runner's seed is the case namespace, unique per run), NN = index in
 * decimal, at least two digits. out must hold 32 bytes. */
#define GR_CASES_NODE_NAME_MAX 32
int gr_cases_node_name(const char *seed, long index, char out[GR_CASES_NODE_NAME_MAX], gr_err *err);
/* The 6-hex hash of gr_cases_node_name(). out must hold 7 bytes. */
int gr_cases_node_hash(const char *seed, char out[7], gr_err *err);

/* Sanitize one collected object in place (see docs/reconcile-cases.md):
 * drops metadata.uid/resourceVersion/creationTimestamp/managedFields/
 * generation/selfLink, deletionTimestamp → "TIME", the annotation
 * node.alpha.kubernetes.io/ttl (kube-controller-manager sets it on Nodes at
 * its own pace), the Node taints node.kubernetes.io/not-ready and
 * /unreachable (no kubelet runs; admission and the node lifecycle controller
 * add and remove them), ownerReferences[].uid and every UUID-shaped string → "UID",
 * every RFC 3339 timestamp string anywhere under status (and event times) →
 * "TIME", and in every string: the case namespace → "NAMESPACE" and
 * node_hash (may be NULL) → "xxxxxx". */
int gr_cases_sanitize(json_t *obj, const char *ns, const char *node_hash, gr_err *err);

/* Sort key for collected objects: "<kind>/<namespace>/<name>". Caller frees. */
char *gr_cases_obj_key(const json_t *obj);

/* Filter Prometheus text exposition: keep sample lines whose metric name
 * starts with one of the prefixes and, when ns is not NULL, that carry
 * namespace="<ns>" or no namespace label. The result is an object
 * {"<name>{labels sorted, ns → NAMESPACE}": value-string}. GR_EPARSE for a
 * malformed sample line (the message names the line number). */
int gr_cases_metrics_filter(const char *text, size_t len, const gr_cases_metrics *m, const char *ns,
                            json_t **out, gr_err *err);

#endif

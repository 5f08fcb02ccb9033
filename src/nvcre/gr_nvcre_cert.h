/*
 * gr_nvcre_cert.h — the Certification controller's pure decision logic
 * (fact sheet §1.2): one reconcile step computed from the Certification, the
 * cluster's Nodes and the Workflows of its namespace, with the current time
 * as a parameter. The I/O side (reading, creating the Workflow, writing
 * status, events) applies the plan; nothing here talks to a server.
 *
 * Semantics:
 *  - categories run sequentially, one Workflow at a time, in spec order; a
 *    failed category does not stop later ones;
 *  - every category is looked up in the catalog before anything runs: an
 *    unknown one fails the Certification at once with CategoryNotFound
 *    ("Unknown certification category: d/v") and no Workflow is created
 *    (the spec is immutable, so a typo could never be fixed by waiting);
 *  - node discovery: schedulable Nodes matching spec.target (nodeSelector,
 *    matchExpressions, nodeNames); none → InProgress WaitingForNodes for up
 *    to GR_NVCRE_CERT_NODE_DISCOVERY_NS from the first wait of that
 *    category (the InProgress condition's lastTransitionTime is set when
 *    the wait begins), requeue every 15 s; then the category fails. The
 *    message is written once per wait ("retrying for up to 5m0s more"), not
 *    every 15 s: no status write per requeue, and snapshots stay stable;
 *  - platform from spec.providerID (§2.3) and GPU architecture by majority
 *    of nvidia.com/gpu.product (§2.4), falling back to the target's
 *    nodeSelector; the category fails (BuildFailed) when neither is known;
 *  - Workflow name gr_nvcre_cert_workflow_name(); labels managed-by,
 *    certification, category-domain/variant; annotation
 *    nvcre.nvidia.com/requested-test-scale; controller ownerRef; spec from
 *    gr_nvcre_catalog_render() plus the gang scheduler (schedulerName and
 *    the queue label on every runtime replicatedJob/pod template and on
 *    jobTemplate.spec.workloadMetadata.labels; Run:ai's queueLabelKey too);
 *  - a Workflow of that name not controlled by this Certification fails the
 *    category with WorkflowNameCollision; one it controls is adopted;
 *  - a Workflow that disappears while its category runs fails the category;
 *  - all categories done: Failed WorkflowFailed "One or more certification
 *    categories failed", or Succeeded AllWorkflowsSucceeded "All
 *    certification categories completed successfully".
 *
 * Ownership: inputs are borrowed. gr_nvcre_cert_plan_free() releases what
 * gr_nvcre_cert_step() put into the plan (all new references).
 * Errors: GR_EINVAL (the Certification has no metadata.name/uid or no
 * spec.categories), GR_ENOMEM.
 */
#ifndef GR_NVCRE_CERT_H
#define GR_NVCRE_CERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"
#include "gr_nvcre_catalog.h"

#define GR_NVCRE_CERT_NODE_DISCOVERY_NS (300LL * 1000000000LL) /* 5 min */
#define GR_NVCRE_CERT_REQUEUE_NS        (15LL * 1000000000LL)
#define GR_NVCRE_CERT_MAX_WORKFLOW_NAME 31

/* Messages of §1.2 not in gr_nvcre_types.h. */
#define GR_NVCRE_MSG_CERT_WAITING_FOR_NODES_FMT                                  \
    "No schedulable nodes match %s; retrying for up to %s more. Nodes that are " \
    "cordoned or unschedulable do not count."
#define GR_NVCRE_MSG_CERT_NO_ARCH                                                                  \
    "cannot determine GPU architecture from target nodeSelector (nvidia.com/gpu.product label is " \
    "required)"
#define GR_NVCRE_MSG_CERT_RUNNING_FMT "Running category %s/%s (%d of %d): Workflow %s"
#define GR_NVCRE_MSG_CERT_COLLISION_FMT \
    "Workflow %s exists and is not controlled by Certification %s"
#define GR_NVCRE_MSG_CERT_NO_NODES_FMT "No schedulable nodes matched %s within %s"
/* Every matching node is under capacity (gr_nvcre_detect.h): selector,
 * what one pod needs, time left / the window. */
#define GR_NVCRE_MSG_CERT_WAITING_FOR_CAPACITY_FMT                                         \
    "No schedulable node matching %s has %s allocatable; retrying for up to %s more. Set " \
    "options.gpusPerNode (or options.mlnxPerNode) to what the nodes offer, or add nodes"
#define GR_NVCRE_MSG_CERT_NO_CAPACITY_FMT \
    "No schedulable node matching %s had %s allocatable within %s"
#define GR_NVCRE_MSG_CERT_WF_GONE_FMT "Workflow %s was deleted while category %s/%s ran"

typedef struct {
    const json_t *cert;      /* the Certification object */
    const json_t *nodes;     /* array of every Node (or those the cache holds) */
    const json_t *workflows; /* array of the Workflows in the Certification's namespace */
    const gr_nvcre_catalog *catalog;
    int64_t now_ns; /* Unix ns */
} gr_nvcre_cert_input;

typedef struct {
    json_t *status;           /* the complete new status (write when changed) */
    int status_changed;       /* 1 when status differs from the object's */
    json_t *create;           /* a Workflow to create, or NULL */
    json_t *events;           /* [{type, reason, message}] to record on the Certification */
    int64_t requeue_after_ns; /* 0: no timed requeue */
} gr_nvcre_cert_plan;

int gr_nvcre_cert_step(const gr_nvcre_cert_input *in, gr_nvcre_cert_plan *out, gr_err *err);
void gr_nvcre_cert_plan_free(gr_nvcre_cert_plan *p);

/* Every CategoryOptions field a Certification sets must reach a workload
 * (gr_nvcre_catalog_check_options()), checked before anything is created
 * (the spec is immutable: a misplaced option could never be fixed by
 * waiting): a category's own field its entry cannot use is refused with
 * GR_NVCRE_CATALOG_MSG_UNUSED_OPTION_FMT, a global field that none of the
 * categories uses with GR_NVCRE_MSG_CERT_UNUSED_GLOBAL_FMT; GR_EINVAL with
 * err->msg. The controller fails the Certification with BuildFailed and
 * that message; `gpuready certify` refuses to create it. Categories missing
 * from the catalog are skipped (CategoryNotFound reports them). Usage is
 * found by rendering for the target's nvidia.com/gpu.product (else h100)
 * on onprem: which options an entry reads does not depend on the platform. */
#define GR_NVCRE_MSG_CERT_UNUSED_GLOBAL_FMT                                            \
    "spec.%s: none of this Certification's categories can use it (%s/%s: %s). Remove " \
    "it, or set it in the options of a category that uses it"
int gr_nvcre_cert_check_options(const gr_nvcre_catalog *cat, const json_t *cert_spec, gr_err *err);

/* naming.Truncate("<cert>-<domain>-<variant>" + suffix, 31): suffix
 * "-n<N>" when the category's options set nodesPerJob, then "-mnnvl" /
 * "-nomnnvl" when they set enableMNNVL (per-category options, else global),
 * so one category listed twice with different options gets two Workflows.
 * Names longer than 31 keep name[:25] (trailing '-' trimmed) + "-" + 5 hex
 * of FNV-32a of the full name. out must hold 32 bytes. */
void gr_nvcre_cert_workflow_name(const char *cert, const char *domain, const char *variant,
                                 const json_t *global_opts, const json_t *category_opts,
                                 char out[GR_NVCRE_CERT_MAX_WORKFLOW_NAME + 1]);

/* ApplyResolvedWorkflowTransforms' gang step on a WorkflowSpec (in place):
 * spec.gangScheduler, schedulerName and the queue label (default key
 * kai.scheduler/queue, default queue default-queue) on every TrainingRuntime
 * replicatedJob's Job and pod templates, and on
 * jobTemplate.spec.workloadMetadata.labels unless the user set that key.
 * No-op without schedulerName. GR_ENOMEM. */
int gr_nvcre_cert_apply_gang(json_t *spec, const json_t *gang);

/* Discovery and detection over the schedulable Nodes matching target:
 * *count of them, *platform (first node's; *heterogeneous when they
 * differ), arch by majority of nvidia.com/gpu.product (ties: first seen),
 * else from target.nodeSelector, else "". */
void gr_nvcre_cert_detect(const json_t *nodes, const json_t *target, const char **platform,
                          char *arch, size_t archsz, size_t *count, bool *heterogeneous);

/* The platform of one Node (§2.3: providerID prefix, labels). */
const char *gr_nvcre_cert_node_platform(const json_t *node);

#endif

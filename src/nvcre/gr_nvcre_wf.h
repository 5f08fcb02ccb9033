/*
 * gr_nvcre_wf.h — the NVCRE Workflow controller's pure logic (issue 16):
 * node discovery filters and exclusions, platform and GPU-architecture
 * detection, override matching and merging (strategic merge patch driven by
 * schema, RFC 6902 JSON Patch, dependency merge, orchestration replace),
 * the GPU capacity filter, the gang-scheduling consistency contract,
 * partitioning into groups, Job naming and rendering, timeouts, the final
 * status, and the node-result ConfigMap payloads.
 *
 * No I/O and no clock: everything works on jansson documents (Workflow,
 * Node and Job objects as the apiserver returns them) and takes the current
 * time as a parameter. `gpuready render` and the controller share it.
 *
 * Contract: ../shared/spec/nvcre-workflow-crd.md and
 * ../shared/notes/nvcre-upstream-facts.md §2; user-facing messages are the
 * constants of gr_nvcre_types.h or GR_NVCRE_WF_MSG_* below, byte for byte.
 *
 * Ownership: `json_t **out` results are new references owned by the
 * caller; all inputs are borrowed and never modified. Strings written to
 * caller buffers are NUL-terminated and truncated to the buffer.
 *
 * Errors: GR_EINVAL (bad input; err->msg names the field and the fix),
 * GR_ENOMEM. Functions that decide a Workflow failure return GR_ESTATE and
 * set *reason to the Failed condition reason (static string) with err->msg
 * the condition message.
 */
#ifndef GR_NVCRE_WF_H
#define GR_NVCRE_WF_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_err.h"

/* -------------------------------------------------------------- messages */

#define GR_NVCRE_WF_MSG_HETEROGENEOUS_PLATFORMS_FMT "heterogeneous platforms detected: %s"
#define GR_NVCRE_WF_MSG_CORDONED_EXCLUDED_FMT       "Excluded %d cordoned node(s) from certification: %s"
#define GR_NVCRE_WF_MSG_HETEROGENEOUS_GPU_FMT \
    "Filtered %d/%d nodes to primary GPU architecture %s; excluded: %s"
#define GR_NVCRE_WF_MSG_INSUFFICIENT_GPU_FMT \
    "Excluded %d node(s) with fewer than %d allocatable nvidia.com/gpu: %s"
#define GR_NVCRE_WF_MSG_NO_GPU_CAPACITY_FMT                                                       \
    "No node can supply the %d nvidia.com/gpu the workload requests per node; best available is " \
    "%d"
#define GR_NVCRE_WF_MSG_OVERRIDE_APPLIED_FMT "Override[%d] matched (%s), patching %s"
#define GR_NVCRE_WF_MSG_OVERRIDE_NOOP_FMT \
    "Override[%d] matched (%s) but produced no changes — check field paths"
#define GR_NVCRE_WF_MSG_NO_OVERRIDES_MATCHED_FMT \
    "0 of %d overrides matched (platform=%s, gpuArchitecture=%s)"
#define GR_NVCRE_WF_MSG_NOT_ENOUGH_HINT_FMT \
    "Set nodesPerJob to %d, or narrow the target to one architecture, or lower gpusPerNode"
#define GR_NVCRE_WF_MSG_NUM_NODES_NOT_SET "TrainJob.Trainer.NumNodes not set"
#define GR_NVCRE_WF_MSG_GANG_MISSING_FMT                                                      \
    "gangScheduler is configured with queue \"%s\" but TrainingRuntime \"%s\" replicatedJob " \
    "\"%s\" is missing label \"%s\" on %s"
#define GR_NVCRE_WF_MSG_GANG_SCHEDULER_FMT                                              \
    "gangScheduler is configured with schedulerName \"%s\" but TrainingRuntime \"%s\" " \
    "replicatedJob \"%s\" sets schedulerName \"%s\" on template.spec.template.spec.schedulerName"
#define GR_NVCRE_WF_MSG_GANG_RUNTIME_REF_FMT                                                   \
    "gangScheduler is configured but runtimeRef %s \"%s\" is not a TrainingRuntime among the " \
    "Workflow's dependencies, so its queue label and scheduler name cannot be checked"
#define GR_NVCRE_WF_MSG_GANG_SHAPE_FMT                               \
    "gangScheduler is configured but TrainingRuntime \"%s\" has no " \
    "spec.template.spec.replicatedJobs, so its queue label and scheduler name cannot be checked"
#define GR_NVCRE_WF_MSG_DEP_COLLISION_FMT                                                         \
    "dependency %s \"%s\" already exists and is not owned by Workflow \"%s\"; refusing to adopt " \
    "it"
#define GR_NVCRE_WF_MSG_JOB_COLLISION_FMT                                                      \
    "Job \"%s\" already exists in namespace \"%s\" and is not controlled by Workflow \"%s\"; " \
    "refusing to adopt it"
#define GR_NVCRE_WF_EVENT_CORDONED          "CordonedNodesExcluded"
#define GR_NVCRE_WF_EVENT_HETEROGENEOUS_GPU "HeterogeneousGPU"
#define GR_NVCRE_WF_EVENT_INSUFFICIENT_GPU  "InsufficientGPUCapacity"
#define GR_NVCRE_WF_EVENT_OVERRIDE_APPLIED  "OverrideApplied"
#define GR_NVCRE_WF_EVENT_OVERRIDE_NOOP     "OverrideNoOp"
#define GR_NVCRE_WF_EVENT_NO_OVERRIDES      "NoOverridesMatched"
/* Ours (upstream's reason for these is not known, see docs/nvcre-workflow.md). */
#define GR_NVCRE_WF_EVENT_JOB_DELETED            "JobDeleted"
#define GR_NVCRE_WF_REASON_JOB_CREATION_REJECTED "JobCreationRejected"
#define GR_NVCRE_WF_MSG_JOB_DELETED_RELAUNCH_FMT                                                 \
    "Job \"%s\" of group %s was deleted before it finished; relaunching the group (retry %d of " \
    "%d)"
#define GR_NVCRE_WF_MSG_JOB_DELETED_FAILED_FMT \
    "Job \"%s\" of group %s was deleted before it finished; the group failed (no retries left)"
#define GR_NVCRE_WF_MSG_SCHEDULING_BLOCKED_SUFFIX_FMT "; job %s scheduling blocked: %s"
#define GR_NVCRE_WF_MSG_CREATION_REJECTED_SUFFIX_FMT  "; job %s workload creation rejected: %s"
/* Unpinned placement (ADR-089). */
#define GR_NVCRE_WF_PLACEMENT_UNPINNED "Unpinned"
#define GR_NVCRE_WF_MSG_UNPINNED_PARTITIONED_FMT \
    "Discovered %d nodes, running 1 unpinned job of %d nodes (%d target nodes not exercised)"
#define GR_NVCRE_WF_MSG_UNPINNED_HINT_FMT                                                  \
    "Unpinned runs the requested job size exactly, so make %d qualifying nodes available " \
    "rather than lowering nodesPerJob"
#define GR_NVCRE_WF_MSG_UNPINNED_NO_SIZE                                                       \
    "Unpinned placement runs one job of an explicit size: set "                                \
    "spec.jobTemplate.spec.workload.trainJob.trainer.numNodes to 1 or more, or use placement " \
    "Pinned"
#define GR_NVCRE_WF_MSG_UNPINNED_DIAGNOSE                                                       \
    "orchestration.diagnose needs Pinned placement; remove it or set orchestration.placement: " \
    "Pinned"
#define GR_NVCRE_WF_MSG_UNPINNED_STRICT_DOMAIN                                      \
    "orchestration.topology.strictDomain needs Pinned placement; remove it or set " \
    "orchestration.placement: Pinned"

#define GR_NVCRE_WF_LABEL_HOSTNAME    "kubernetes.io/hostname"
#define GR_NVCRE_WF_LABEL_GPU_PRESENT "nvidia.com/gpu.present"
#define GR_NVCRE_WF_LABEL_GPU_PRODUCT "nvidia.com/gpu.product"
#define GR_NVCRE_WF_RESOURCE_GPU      "nvidia.com/gpu"
#define GR_NVCRE_WF_PATCH_MANAGER     "nvcre.nvidia.com/controller"

/* Caps on outside input. */
#define GR_NVCRE_WF_MAX_NODES        100000
#define GR_NVCRE_WF_MAX_OVERRIDES    1024
#define GR_NVCRE_WF_MAX_DEPENDENCIES 256

/* ---------------------------------------------------------------- naming */

/* pkg/naming Truncate: names longer than `max` become name[:max-6] with
 * trailing '-' trimmed + '-' + 5 hex digits of FNV-32a(name). */
void gr_nvcre_wf_truncate(const char *name, size_t max, char *out, size_t outsz);
/* The trailing 5-character segment of a (truncated) name, "" if none. */
void gr_nvcre_wf_extract_hash(const char *name, char out[6]);
/* Job name: "<wf>-job" when single (no diagnose, ≤1 iteration, ≤1 group),
 * else "<wf>-<group>-iter-<n>"; truncated to GR_NVCRE_MAX_JOB_NAME_LEN. */
void gr_nvcre_wf_job_name(const char *wf, const char *group, int iteration, int single, char *out,
                          size_t outsz);

/* ------------------------------------------------------------- detection */

/* Platform of one Node (§2.3 table). Static string. */
const char *gr_nvcre_wf_node_platform(const json_t *node);
/* gpu.ParseProduct: "NVIDIA-H100-80GB-HBM3" → "h100"; NULL/"" → "unknown". */
void gr_nvcre_wf_parse_product(const char *product, char *out, size_t outsz);

/* -------------------------------------------------------------- overrides */

/* The context overrides match against. */
typedef struct gr_nvcre_wf_ctx {
    const char *platform;      /* "" when unknown */
    const char *gpu_arch;      /* "" when unknown */
    const char *workload_kind; /* "TrainJob" */
    const char *topology_mode; /* "simple" | "topology" */
    int64_t domain_count;
} gr_nvcre_wf_ctx;

/* Does `when` match? (AND of platform, gpuArchitecture, workloadKind,
 * topology.mode, topology.domainCount, expression; NULL/{} always.)
 * *match 0/1. GR_EINVAL for a bad CEL expression or non-bool result. */
int gr_nvcre_wf_when_match(const json_t *when, const gr_nvcre_wf_ctx *ctx, int *match, gr_err *err);
/* "gpuArchitecture=h100, platform=in [aws,gcp]" or "<always>"; caller frees. */
char *gr_nvcre_wf_when_summary(const json_t *when);

/* Apply every matching override of spec.overrides in order to a copy of
 * `spec` (a WorkflowSpec) and return the effective spec in *out. When
 * `tracking` is not NULL it receives the appliedOverrides array
 * ({index, when, patches, noOp}) and `events` (may be NULL) the events
 * ({type, reason, message}). GR_ESTATE with *reason OverrideError and the
 * documented message on a merge/patch/evaluation error. */
int gr_nvcre_wf_apply_overrides(const json_t *spec, const gr_nvcre_wf_ctx *ctx, json_t **out,
                                json_t **tracking, json_t *events, const char **reason,
                                gr_err *err);

/* Dependency merge of one override dependency into `base` (recursive map
 * merge, null deletes, lists of named objects merge by name, other lists
 * replace). Exposed for tests. *out owned by caller. */
int gr_nvcre_wf_merge_dependency(const json_t *base, const json_t *patch, json_t **out,
                                 gr_err *err);

/* ------------------------------------------------------------- discovery */

/* Discovery (§2.2–2.4, §2.6) over all `nodes` (a JSON array of Node
 * objects) for the effective spec. *out: {"nodes": [names], "platform",
 * "gpuArchitecture", "domainCount", "excluded": [{"name","reason"}]} and
 * events appended to `events`. GR_ESTATE with *reason NodeDiscoveryError /
 * HeterogeneousPlatform. */
int gr_nvcre_wf_discover(const json_t *spec, const json_t *nodes, json_t **out, json_t *events,
                         const char **reason, gr_err *err);

/* The target's nodeSelector as discovery sees it (the target after the
 * overrides that match before detection, as gr_nvcre_wf_plan() computes
 * it), for narrowing the Node list the plan is given: a Node list
 * filtered by these labels on the server yields the same plan as the
 * full one, since discovery keeps only nodes that carry them. *out NULL
 * when every Node must be read: target.nodeNames set (they replace the
 * selector), no nodeSelector or an empty one, a value that is not a
 * string, or overrides that fail (the plan fails the same way on any
 * Node list). Keys and values are not checked against the label grammar:
 * the caller does before it sends them. *out owned by the caller. */
int gr_nvcre_wf_target_labels(const json_t *workflow, json_t **out, gr_err *err);

/* Largest nvidia.com/gpu request/limit anywhere in the effective
 * jobTemplate and dependencies (0 when none). */
int64_t gr_nvcre_wf_gpus_per_node(const json_t *spec);

/* Capacity filter (§2.6): drops names from disc["nodes"] whose allocatable
 * nvidia.com/gpu is 0 < n < gpus; records exclusions and the event.
 * GR_ESTATE PartitionError when none is left. */
int gr_nvcre_wf_capacity_filter(json_t *disc, const json_t *nodes, int64_t gpus, json_t *events,
                                const char **reason, gr_err *err);

/* ----------------------------------------------------------- gang contract */

/* §2.7 on the effective spec (after overrides): workload label restore or
 * conflict; runtime labels and scheduler names (runtimePatches folded in);
 * runtimeRef among the dependencies; checkable shape. `spec` is the working
 * copy: a removed workload queue label is restored in it (never in the
 * stored Workflow). `deps` is the effective dependency list (NULL: the
 * spec's). GR_ESTATE with *reason GangSchedulingConflict. No
 * gangScheduler: workload-label validation only. */
int gr_nvcre_wf_gang_check(json_t *spec, const json_t *deps, const char **reason, gr_err *err);

/* ------------------------------------------------------------ dependencies */

/* Scopes (§2.8): *out = ["workflow"|"job", ...], one per
 * spec.dependencies entry. A dependency is job-scoped when its name appears
 * as a string value in spec.jobTemplate.spec (not in workloadMetadata nor in
 * runtime-patch labels/annotations), or when it is tied to a job-scoped one
 * (either names the other, or both carry the same hyphenated resource-name
 * string); Cluster* kinds never are. GR_EINVAL past
 * GR_NVCRE_WF_MAX_DEPENDENCIES. */
int gr_nvcre_wf_dep_scopes(const json_t *spec, json_t **out, gr_err *err);
/* Creation order of `deps` (indices): one that carries another's name
 * comes after it; otherwise list order. Deletion is the reverse. */
int gr_nvcre_wf_dep_order(const json_t *deps, json_t **out, gr_err *err);
/* The workflow-scoped dependencies of `spec` in creation order (copies). */
int gr_nvcre_wf_workflow_deps(const json_t *spec, json_t **out, gr_err *err);
/* The rename suffix of job-scoped dependencies: "-<wfHash>-job" (single)
 * or "-<wfHash>-<group>-iter-<n>"; wfHash is the Workflow name's trailing
 * 5-character segment, or the first 5 hex digits of FNV-32a of the name
 * when it has none. */
void gr_nvcre_wf_dep_suffix(const char *wf, const char *group, int iteration, int single, char *out,
                            size_t outsz);
/* One Job's view of the effective spec (prepareJobDependencies): job-scoped
 * dependencies renamed with the suffix (truncated to 63), cross-references
 * carried by two or more of them renamed too, and every string value equal
 * to an old name replaced in the Job spec (not in workloadMetadata nor in
 * runtime-patch labels/annotations) and in the dependencies.
 * *job_spec: the rewritten spec whose "dependencies" are the effective ones
 * (workflow-scoped + renamed, creation order); *job_deps: the renamed
 * job-scoped ones in creation order. Both owned by the caller. */
int gr_nvcre_wf_prepare_job(const json_t *workflow, const json_t *spec, const char *group,
                            int iteration, int single, json_t **job_spec, json_t **job_deps,
                            gr_err *err);

/* ------------------------------------------------------------ partitioning */

/* The checkpoint guard (§2.1 step 4): with jobTemplate.spec.checkpoint, a
 * v1 PersistentVolumeClaim named checkpoint.pvcName must be among the
 * dependencies. GR_ESTATE CheckpointPVCMissing
 * ("Checkpoint requires PVC \"x\" in dependencies") otherwise. */
int gr_nvcre_wf_checkpoint_check(const json_t *spec, const char **reason, gr_err *err);

/* orchestration.placement is Unpinned (ADR-089): one Job of exactly
 * trainer.numNodes nodes, placed by the scheduler within the target. */
int gr_nvcre_wf_unpinned(const json_t *spec);

/* nodesPerJob: orchestration-independent, from trainer.numNodes; < 1 → all.
 * GR_ESTATE PartitionError when it exceeds the nodes available. */
int gr_nvcre_wf_nodes_per_job(const json_t *spec, int available, int *out, const char **reason,
                              gr_err *err);

/* Partition (§2.9): simple chunks, or by topology.topologyKey (fewest
 * domains; strictDomain = one group per domain). `nodes` = all Node objects
 * (for labels), `names` = the discovered names. *out = [{"name", "nodes",
 * "domains", "overflow"}]. */
int gr_nvcre_wf_partition(const json_t *spec, const json_t *nodes, const json_t *names,
                          int nodes_per_job, json_t **out, gr_err *err);

/* Render the Job for `group` in `iteration` (1-based) from the effective
 * spec: name, namespace, labels, group-nodes annotation, controller
 * ownerRef (when the Workflow has a uid), thresholds, numNodes, hostname
 * affinity, tolerations, default node-health monitor. */
int gr_nvcre_wf_render_job(const json_t *workflow, const json_t *spec, const json_t *group,
                           int iteration, int single, json_t **out, gr_err *err);

/* The object the controller creates for one dependency (workflow-scoped,
 * or job-scoped after gr_nvcre_wf_prepare_job renamed it): a copy of `dep`
 * without `when`, labelled nvcre.nvidia.com/workflow=<wf> and annotated
 * nvcre.nvidia.com/workflow-uid=<uid>; unless its kind starts with
 * "Cluster", in the Workflow's namespace with a controller ownerReference
 * to the Workflow. The Workflow controller and `gpuready render` both use
 * it. *out is the caller's. GR_EINVAL (dep or its metadata is not an
 * object), GR_ENOMEM. */
int gr_nvcre_wf_dependency_object(const json_t *workflow, const json_t *dep, json_t **out,
                                  gr_err *err);

/* ------------------------------------------------------------------- plan */

/* discoverAndPartition as one pure function: discovery, detection,
 * tracked overrides, capacity filter, gang contract, nodesPerJob, groups,
 * and the iteration-1 Jobs. *out: {"platform", "gpuArchitecture",
 * "totalNodes", "nodesPerJob", "excludedNodes", "exclusionReason",
 * "appliedOverrides", "events", "spec" (effective), "groups", "jobs",
 * "dependencies", "message"}; with orchestration.diagnose the groups and
 * Jobs are diagnose round 1 and "diagnose" the initial state
 * (gr_nvcre_wf_diag.h). On a Workflow failure GR_ESTATE with
 * *reason, err->msg the condition message, and *out still set to what was
 * computed (events, detection). */
int gr_nvcre_wf_plan(const json_t *workflow, const json_t *nodes, json_t **out, const char **reason,
                     gr_err *err);

/* ---------------------------------------------------------------- tracking */

/* isJobTimedOut (§2.10, ADR-083): blocked/queued time does not count.
 * `job` is the NVCRE Job (status read), `group_start_ns` the group's
 * startTime (0 unknown), `timeout_ns` > 0. *out 0/1, *blocked 1 when the
 * timeout happened while its pods were unschedulable. */
int gr_nvcre_wf_job_timed_out(const json_t *job, int64_t group_start_ns, int64_t timeout_ns,
                              int64_t now_ns, int *out, int *blocked);

/* isJobAwaitingThresholdEvaluation (§2.10): 1 when the NVCRE Job has a
 * non-empty spec.thresholds, is Succeeded and has no ValidationFailed
 * condition yet; its group stays running until the verdict. */
int gr_nvcre_wf_job_awaiting_thresholds(const json_t *job);

/* The Job's InProgress reason is relayed to the Workflow
 * (WorkloadSchedulingBlocked, ADR-083; WorkloadCreationRejected, JOB-85). */
int gr_nvcre_wf_job_relayed(const json_t *job);
/* The running Workflow's InProgress reason (static) and message: JobRunning
 * "Iteration i/n: k groups running", or with `relay_job` (a relayed Job,
 * may be NULL) JobSchedulingBlocked + "; job <name> scheduling blocked:
 * <its InProgress message>" or JobCreationRejected + "; job <name> workload
 * creation rejected: <message>". */
const char *gr_nvcre_wf_running_condition(int iteration, int iterations, int running,
                                          const json_t *relay_job, char *msg, size_t msgsz);
/* ADR-053, for a PersistentVolume whose claim this Workflow deleted:
 * GR_NVCRE_WF_PV_SET_DELETE when it is Released with policy Retain (set
 * the policy to Delete), GR_NVCRE_WF_PV_WAIT while it is still Bound with
 * Retain, GR_NVCRE_WF_PV_DONE otherwise. */
enum { GR_NVCRE_WF_PV_DONE = 0, GR_NVCRE_WF_PV_WAIT = 1, GR_NVCRE_WF_PV_SET_DELETE = 2 };
int gr_nvcre_wf_pv_reclaim(const json_t *pv);
/* Pod-drain barrier before a retry (upstream #121): 1 while any of `pods`
 * (the failed attempt's Pods) is not Succeeded/Failed, unless the wait that
 * began at since_ns (0: not yet) has lasted GR_NVCRE_WF_DRAIN_MAX_NS. */
#define GR_NVCRE_WF_DRAIN_MAX_NS (5LL * 60LL * 1000000000LL)
int gr_nvcre_wf_drain_wait(const json_t *pods, int64_t since_ns, int64_t now_ns);
/* The distinct nodes (sorted) that the pods in `pods` (a JSON array of Pod
 * objects) were placed on; pods being deleted do not count. *out owned by
 * the caller. GR_ETOOBIG past GR_NVCRE_WF_MAX_NODES pods. */
int gr_nvcre_wf_placed_nodes(const json_t *pods, json_t **out, gr_err *err);

/* setFinalStatus reason/message over failed groups (current + history).
 * failed_groups, hardware (any HardwareFailed), validation_only (every
 * failure was a threshold miss), iterations. */
const char *gr_nvcre_wf_final_reason(int failed_groups, int hardware, int validation_only,
                                     int iterations, char *msg, size_t msgsz);

/* ------------------------------------------------------------ node results */

/* Deterministic gzip (mtime 0, no name, OS 255, level 9) of data[0..len). */
int gr_nvcre_wf_gzip(const void *data, size_t len, gr_buf *out, gr_err *err);
/* Succeeded nodes: sorted, deduplicated, comma-joined, gzipped, base64
 * (the ConfigMap binaryData value). Caller frees *b64. */
int gr_nvcre_wf_succeeded_payload(const json_t *names, char **b64, gr_err *err);
/* Failed nodes [{name,reason,message}] deduplicated by (name, reason),
 * sorted by name then reason, as a JSON array, gzipped, base64. */
int gr_nvcre_wf_failed_payload(const json_t *failed, char **b64, gr_err *err);
/* "succeeded-nodes-<uid8>" / "failed-nodes-<uid8>". */
void gr_nvcre_wf_result_cm_name(const char *prefix, const char *uid, char *out, size_t outsz);

#endif

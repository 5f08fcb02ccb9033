/*
 * gr_nvcre_job.h — the pure half of the NVCRE Job controller (issue 15):
 * everything the controller decides, as functions of the Job, what it
 * observed, and the current time. No I/O, no clock reads, no globals; the
 * controller in src/cmd (gpuready-manager) does the API calls and feeds the
 * results in. ../shared/spec/nvcre-job-crd.md is the contract; docs/nvcre-job.md
 * describes the behaviour.
 *
 *   naming     gr_nvcre_job_truncate_name()   pkg/naming Truncate (FNV rule)
 *   workload   gr_nvcre_workload_adapter       adapter interface (TrainJob today)
 *              gr_nvcre_job_build_workload()   the workload object for a Job
 *   status     gr_nvcre_job_step()             one reconcile's status transition
 *              gr_nvcre_job_set_exclusive()    InProgress/Succeeded/Failed
 *   clocks     gr_nvcre_job_timed_out()        timeoutPerJob incl. blocked episodes
 *              gr_nvcre_job_stall_check()      startup / training stall
 *              gr_nvcre_job_backoff_ns()       create retry backoff
 *   health     gr_nvcre_node_health_*()        CEL over Node objects
 *              gr_nvcre_job_mark_hardware_failed()
 *   failure    gr_nvcre_job_failure_pick(), gr_nvcre_job_log_tail(),
 *              gr_nvcre_job_failure_log()
 *   metrics    gr_nvcre_job_metrics_render()
 *   measure    gr_nvcre_job_build_measurement()  <job>-goodput / <job>-bandwidth
 *              gr_nvcre_job_stall_from()         stall inputs from the GoodputMeasurement
 *              gr_nvcre_job_thresholds_step()    ValidationFailed from the thresholds
 *
 * Times. Every function takes `now_ns` (nanoseconds since the Unix epoch).
 * Status timestamps are metav1.Time (RFC 3339, whole seconds), so the clock
 * arithmetic is done in whole seconds exactly as it will read back.
 *
 * Ownership. Functions that take a `json_t *status` modify it in place
 * (the caller owns it); every other JSON argument is borrowed. Functions that
 * return JSON through `json_t **out` give the caller a new reference.
 *
 * Errors: GR_OK, GR_EINVAL (malformed input; the message names the field),
 * GR_ENOMEM, GR_ETOOBIG (a cap below was exceeded).
 */
#ifndef GR_NVCRE_JOB_H
#define GR_NVCRE_JOB_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_cel.h"
#include "gr_err.h"
#include "gr_measure.h"

#define GR_NVCRE_NS_PER_S INT64_C(1000000000)

/* Defaults (fact sheet §1.2, §3.4–3.8, §6.1). */
#define GR_NVCRE_JOB_REQUEUE_NS             (15 * GR_NVCRE_NS_PER_S)
#define GR_NVCRE_JOB_REQUEUE_IMMEDIATE_NS   (50 * INT64_C(1000000))
#define GR_NVCRE_JOB_CREATION_DEADLINE_NS   (600 * GR_NVCRE_NS_PER_S)
#define GR_NVCRE_JOB_BACKOFF_MIN_NS         (1 * GR_NVCRE_NS_PER_S)
#define GR_NVCRE_JOB_BACKOFF_MAX_NS         (60 * GR_NVCRE_NS_PER_S)
#define GR_NVCRE_JOB_SAMPLE_INTERVAL_NS     (60 * GR_NVCRE_NS_PER_S)
#define GR_NVCRE_JOB_RESTART_MIN_REQUEUE_NS (30 * GR_NVCRE_NS_PER_S)
#define GR_NVCRE_FAILURE_LOG_MAX_LINES      800
#define GR_NVCRE_FAILURE_LOG_MAX_BYTES      (32 * 1024)
#define GR_NVCRE_EVENT_NOTE_MAX             1024
#define GR_NVCRE_EVENT_TRUNCATED_SUFFIX     "... [truncated]"

/* The runtimePatch manager name of the TrainJob adapter. */
#define GR_NVCRE_RUNTIME_PATCH_MANAGER "nvcre.nvidia.com/controller"
#define GR_NVCRE_DEFAULT_WORKER_TARGET "node"
#define GR_NVCRE_LAUNCHER_TARGET       "launcher"

/* Messages this module adds where the contract is silent ([unverified]
 * upstream; docs/nvcre-job.md lists them). */
#define GR_NVCRE_MSG_CREATE_FAILED_FMT "Failed to create %s/%s: %s" /* ns, name, error */
#define GR_NVCRE_MSG_CREATION_DEADLINE_FMT \
    "Workload %s/%s creation was rejected for longer than the workload creation deadline (%s): %s"
#define GR_NVCRE_MSG_NO_WORKLOAD_TYPE         "no workload type specified in WorkloadSpec"
#define GR_NVCRE_FAILURE_REASON_NO_TERMINATED "NoTerminatedContainer"
#define GR_NVCRE_FAILURE_REASON_POD_NOT_FOUND "PodNotFound"
#define GR_NVCRE_FAILURE_TAIL_POD_NOT_FOUND_FMT                                        \
    "No pods labelled nvcre.nvidia.com/job=%s exist: none were created, or they were " \
    "deleted before the failure was recorded"
#define GR_NVCRE_FAILURE_TAIL_NO_TERMINATED \
    "No container of this Job's pods terminated with a non-zero exit code"
#define GR_NVCRE_FAILURE_TAIL_LOGS_GONE_FMT "Logs of container %s are no longer available: %s"

/* ------------------------------------------------------------ naming */

/* pkg/naming Truncate: a name longer than `max` becomes name[:max-6] with
 * trailing '-' trimmed, then '-' and the first 5 hex digits of the zero-
 * padded FNV-32a hash of the full name. Shorter names are copied. `out` must
 * hold max+1 bytes (max ≥ 7). GR_EINVAL if max < 7 or outsz too small. */
int gr_nvcre_job_truncate_name(const char *name, size_t max, char *out, size_t outsz);

/* "<job>-workload" truncated to GR_NVCRE_MAX_WORKLOAD_NAME_LEN (44).
 * out: GR_NVCRE_MAX_WORKLOAD_NAME_LEN + 1 bytes. */
int gr_nvcre_job_workload_name(const char *job, char out[45]);

/* ---------------------------------------------------- workload adapters */

typedef enum gr_nvcre_wl_phase {
    GR_NVCRE_WL_PENDING = 0, /* exists, not running (e.g. suspended by Kueue) */
    GR_NVCRE_WL_RUNNING,
    GR_NVCRE_WL_SUCCEEDED,
    GR_NVCRE_WL_FAILED,
    GR_NVCRE_WL_GONE, /* confirmed deleted by an uncached read */
} gr_nvcre_wl_phase;

typedef struct gr_nvcre_wl_status {
    gr_nvcre_wl_phase phase;
    char reason[128];   /* the workload's own reason ("Suspended", …) or "" */
    char message[1024]; /* detail for the Job message, or "" */
} gr_nvcre_wl_status;

/*
 * A workload kind. The controller is written against this interface only:
 * create = POST build()'s object to group/version/plural in the Job's
 * namespace; get status = GET it and call status(); list pods = pods with
 * label GR_NVCRE_LABEL_JOB=<job> (every adapter makes its pods carry it).
 * Adding a kind means one more table entry in gr_nvcre_workload_adapter_for().
 */
typedef struct gr_nvcre_workload_adapter {
    const char *field;       /* its WorkloadSpec field: "trainJob" */
    const char *api_version; /* "trainer.kubeflow.org/v1alpha1" */
    const char *group, *version, *kind, *plural;
    /* The kind-specific spec from the Job's spec.workload.<field> (borrowed),
     * with the pod label `job_label_value` patched in. *out is the caller's. */
    int (*build_spec)(const json_t *field_spec, const char *job_name, json_t **out, gr_err *err);
    /* Phase of a live object (borrowed). Never fails. */
    void (*status)(const json_t *obj, gr_nvcre_wl_status *out);
} gr_nvcre_workload_adapter;

/* The adapter selected by a Job spec's `workload` union (borrowed; static).
 * No field set → NULL and err->msg GR_NVCRE_MSG_NO_WORKLOAD_TYPE; an unknown
 * field → NULL and err->msg names it. */
const gr_nvcre_workload_adapter *gr_nvcre_workload_adapter_for(const json_t *job_spec, gr_err *err);

/* The TrainJob adapter's status mapping (§3.2): Failed=True → FAILED (reason,
 * message of the condition); Complete=True → SUCCEEDED; spec.suspend → PENDING
 * with reason "Suspended" and GR_NVCRE_MSG_SUSPENDED[; managed by <managedBy>];
 * else RUNNING. Terminal conditions win over suspend. */
void gr_nvcre_trainjob_status(const json_t *trainjob, gr_nvcre_wl_status *out);

/*
 * The complete workload object for `job` (a Job as read from the API: needs
 * metadata.name, namespace, uid and spec.workload): apiVersion, kind,
 * metadata {name = gr_nvcre_job_workload_name(), namespace, labels =
 * spec.workloadMetadata.labels ∪ {managed-by: nvcre, nvcre.nvidia.com/job:
 * <job>}, ownerReferences = [controller ref to the Job]}, spec from the
 * adapter. Job labels are never copied. GR_EINVAL with the reason (the
 * caller reports it as GR_NVCRE_MSG_BUILD_WORKLOAD_FAILED_FMT); *adapter
 * (optional) receives the adapter used.
 */
int gr_nvcre_job_build_workload(const json_t *job, const gr_nvcre_workload_adapter **adapter,
                                json_t **out, gr_err *err);

/* 1 when `obj` has a controller ownerReference to the Job with uid `uid`. */
int gr_nvcre_job_owns(const json_t *obj, const char *uid);

/* ------------------------------------------------------- conditions */

/* Set the exclusive set: `type` True with reason/message, the other two
 * False/NotApplicable; keeps conditions ordered InProgress, Succeeded,
 * Failed, then the additive ones. lastTransitionTime changes only when a
 * condition's status changes; observedGeneration is set on all three.
 * Returns 1 when the True exclusive condition changed type (the phase
 * transition that gets an Event), 0 otherwise, negative on error. */
int gr_nvcre_job_set_exclusive(json_t *status, const char *type, const char *reason,
                               const char *message, int64_t generation, int64_t now_ns);

/* Set one additive condition (HardwareFailed, ValidationFailed). */
int gr_nvcre_job_set_additive(json_t *status, const char *type, int is_true, const char *reason,
                              const char *message, int64_t generation, int64_t now_ns);

/* The True exclusive condition of `status` (borrowed type string) or NULL. */
const char *gr_nvcre_job_phase(const json_t *status);
/* 1 when Succeeded or Failed is True (the Job is finished). */
int gr_nvcre_job_terminal(const json_t *status);
/* Condition `type` of `status` (borrowed) or NULL. */
const json_t *gr_nvcre_job_condition(const json_t *status, const char *type);

/* ------------------------------------------------------------ clocks */

/* A status time field in ns (0 when absent or unparsable). */
int64_t gr_nvcre_job_time(const json_t *status, const char *field);

/* Workflow-side timeoutPerJob (§2.10, ADR-083): with schedulingBlockedSince
 * set, timed out iff now − blockedSince > timeout or (start set and
 * blockedSince − start > timeout); else with workloadStartTime set,
 * now − start > timeout; else with workloadRef set, not timed out; else
 * now − fallback_start_ns > timeout (fallback 0 = never). *blocked is 1 when
 * the timeout happened in a blocked episode (message
 * GR_NVCRE_MSG_JOB_TIMED_OUT_BLOCKED). */
int gr_nvcre_job_timed_out(const json_t *status, int64_t timeout_ns, int64_t fallback_start_ns,
                           int64_t now_ns, int *blocked);

/* Inputs of stall detection (§3.5), from the Job spec and its
 * GoodputMeasurement. stall_multiplier 0 = inactive. Times 0 = unset. */
typedef struct gr_nvcre_job_stall_in {
    double stall_multiplier;
    int64_t startup_timeout_s;  /* 0 → 1200 */
    int64_t sample_interval_ns; /* 0 → 60 s */
    int64_t app_start_ns, gm_start_ns, last_step_ns;
    double avg_step_s; /* 0 = empty */
    int64_t log_interval;
} gr_nvcre_job_stall_in;

typedef enum gr_nvcre_stall {
    GR_NVCRE_STALL_NONE = 0,
    GR_NVCRE_STALL_STARTUP,
    GR_NVCRE_STALL_TRAINING,
} gr_nvcre_stall;

/* Startup stall when no step was seen: anchor = app start else GM start,
 * clamped ≥ start_ns and ≥ resumed_ns; limit startup timeout + 2 × sample
 * interval. Training stall: threshold = multiplier × avg × max(logInterval,
 * 1) + 2 × sample interval from max(last step, resumed). An anchor of 0
 * (nothing known yet) never stalls. */
gr_nvcre_stall gr_nvcre_job_stall_check(const gr_nvcre_job_stall_in *in, int64_t start_ns,
                                        int64_t resumed_ns, int64_t now_ns);

/* Create retry backoff after `failures` consecutive failures (≥ 1):
 * 1 s doubling to 60 s, never past `remaining_ns` when that is > 0. */
int64_t gr_nvcre_job_backoff_ns(unsigned failures, int64_t remaining_ns);

/* -------------------------------------------------- the status machine */

typedef enum gr_nvcre_create {
    GR_NVCRE_CREATE_NONE = 0,         /* no create attempted this reconcile */
    GR_NVCRE_CREATE_OK,               /* 201 */
    GR_NVCRE_CREATE_ADOPTED,          /* 409, live read shows our controller ref */
    GR_NVCRE_CREATE_FOREIGN,          /* 409, someone else's object */
    GR_NVCRE_CREATE_FOREIGN_DELETING, /* 409, someone else's, being deleted */
    GR_NVCRE_CREATE_REJECTED,         /* admission/quota/validation denial (400/403/422) */
    GR_NVCRE_CREATE_RBAC_DENIED,      /* 403 and the SSAR says we may not create */
    GR_NVCRE_CREATE_TRANSIENT,        /* timeouts, throttling, 5xx */
    GR_NVCRE_CREATE_BUILD_ERROR,      /* gr_nvcre_job_build_workload() failed */
    GR_NVCRE_CREATE_UNSUPPORTED,      /* no adapter for spec.workload */
} gr_nvcre_create;

typedef struct gr_nvcre_job_obs {
    int64_t now_ns;
    int64_t generation; /* metadata.generation → observedGeneration */
    const char *ns;     /* the Job's namespace */
    const char *workload_name;
    const char *api_version, *kind; /* of the workload (workloadRef) */

    /* Without status.workloadRef: the outcome of this reconcile's create. */
    gr_nvcre_create create;
    const char *create_msg;       /* API error / build error text */
    unsigned create_failures;     /* consecutive failed creates incl. this one */
    int64_t creation_deadline_ns; /* 0 → 10 min */

    /* With status.workloadRef: the workload's phase. */
    gr_nvcre_wl_status wl;

    /* Pods (label nvcre.nvidia.com/job): 1 when one is blocked
     * (gr_nvcre_job_pod_blocked()), with the first blocked pod's
     * PodScheduled message. */
    int pods_blocked;
    const char *blocked_msg;
    int64_t grace_ns; /* spec.schedulingStallGraceSeconds; < 0 → 300 s */

    /* Stall detection inputs; NULL = inactive (no stallMultiplier or no GM). */
    const gr_nvcre_job_stall_in *stall;

    /* Checkpoint restarts: 1 when spec.checkpoint ∧ restartCount <
     * maxRestarts ∧ GM.lastCheckpointStep > 0 (gr_nvcre_job_restart_eligible()). */
    int restart_eligible;
    int max_restarts;

    /* nvcre.nvidia.com/group-nodes annotation (comma list) or NULL: on
     * WorkloadFailed/WorkloadStalled these nodes enter failedNodes. */
    const char *group_nodes;
} gr_nvcre_job_obs;

typedef struct gr_nvcre_job_out {
    int changed;        /* status was modified */
    int phase_event;    /* emit an Event for the new True exclusive condition */
    char event_type[8]; /* "Normal" | "Warning" */
    char event_reason[64];
    char event_msg[GR_NVCRE_EVENT_NOTE_MAX + 1];
    int warn_create; /* Warning event WorkloadCreationError, text in warn_msg */
    char warn_msg[GR_NVCRE_EVENT_NOTE_MAX + 1];
    int want_failure_log; /* just became Failed without status.failureLog */
    int delete_workload;  /* checkpoint restart: delete the workload now */
    int created;          /* a workload was created (metric) */
    int64_t requeue_ns;   /* 0 = no requeue */
} gr_nvcre_job_out;

/*
 * One reconcile of a non-deleting Job: apply `obs` to `status` (modified in
 * place; an empty object for a new Job). A finished Job (Succeeded or Failed
 * True, including the Workflow's JobTimedOut) is left unchanged. Without
 * status.workloadRef the create outcome drives the state; with it the
 * workload phase, the pods' scheduling state and the stall clocks do. See
 * docs/nvcre-job.md for the full table. GR_OK, GR_EINVAL (obs incomplete),
 * GR_ENOMEM.
 */
int gr_nvcre_job_step(const json_t *spec, json_t *status, const gr_nvcre_job_obs *obs,
                      gr_nvcre_job_out *out, gr_err *err);

/* 1 when `pod` is blocked (ADR-083): spec.nodeName empty and PodScheduled
 * False with reason Unschedulable; *msg (optional) borrows its message. */
int gr_nvcre_job_pod_blocked(const json_t *pod, const char **msg);

/* Restart eligibility (§3.6). */
int gr_nvcre_job_restart_eligible(const json_t *spec, const json_t *status,
                                  int64_t last_checkpoint_step);

/* ------------------------------------------------------- node health */

/* Compile a node-health expression (NULL/"" → the default,
 * GR_NVCRE_DEFAULT_NODE_HEALTH_EXPRESSION) with the variable `node`.
 * *out is the caller's (gr_cel_program_free()). */
int gr_nvcre_node_health_compile(const char *expr, gr_cel_program **out, gr_err *err);

/* Evaluate over a Node object (borrowed) with the documented defaults filled
 * in (metadata.labels/annotations {}, spec.taints [], spec.unschedulable
 * false, status.conditions/addresses [], capacity/allocatable {}). *matched
 * = the bool result. GR_EINVAL when the result is not a bool. */
int gr_nvcre_node_health_eval(const gr_cel_program *prog, const json_t *node, int *matched,
                              gr_err *err);

/* Merge `nodes` (n names) into status.failedNodes by (name,
 * HardwareFailureDetected) with GR_NVCRE_MSG_HARDWARE_FAILURE_NODE and set
 * HardwareFailed=True/HardwareFailureDetected with
 * "Hardware failure detected on node(s): [a b]" (the names given, sorted,
 * de-duplicated). Returns the number of nodes newly added to failedNodes
 * (≥ 0) or a negative error. n == 0 does nothing. */
int gr_nvcre_job_mark_hardware_failed(json_t *status, const char *const *nodes, size_t n,
                                      int64_t generation, int64_t now_ns);

/* ------------------------------------------------------- failure log */

typedef struct gr_nvcre_failure_pick {
    int found; /* 0: no pods (PodNotFound) or no terminated container */
    int pods;  /* number of pods seen */
    char pod[254];
    char node[254];
    char container[254];
    int exit_code;
    char reason[128]; /* the container's termination reason ("OOMKilled", "Error") */
} gr_nvcre_failure_pick;

/* The first container (init containers included) of `pods` (a JSON array of
 * Pods, borrowed) that terminated with a non-zero exit code, preferring one
 * that was OOMKilled. Pods are considered in name order. */
void gr_nvcre_job_failure_pick(const json_t *pods, gr_nvcre_failure_pick *out);

/* Offset into log[0..len) where the tail starts: at most 800 lines and
 * 32 KiB, cut at a line start (or a UTF-8 character start when a single line
 * is longer than the cap). */
size_t gr_nvcre_job_log_tail(const char *log, size_t len);

/* status.failureLog for `pick`. log/log_len: the container's log (NULL =
 * not available, log_err then says why). job_name names the label in the
 * PodNotFound text. *out is the caller's. Invalid UTF-8 in the log is
 * replaced by U+FFFD. */
int gr_nvcre_job_failure_log(const gr_nvcre_failure_pick *pick, const char *job_name,
                             const char *log, size_t log_len, const char *log_err, json_t **out);

/* ----------------------------------------------------------- metrics */

typedef struct gr_nvcre_job_metric_row {
    const char *ns, *job, *workflow; /* workflow: label nvcre.nvidia.com/workflow or "" */
    const json_t *status;            /* borrowed */
} gr_nvcre_job_metric_row;

#define GR_NVCRE_RECONCILE_BUCKETS 12 /* 0.01 s × 2^k, k = 0..11 (→ 20.48 s) */
#define GR_NVCRE_HEALTH_BUCKETS    15 /* 0.001 s × 2^k, k = 0..14 (→ 16.384 s) */

typedef struct gr_nvcre_job_counters {
    uint64_t reconcile_success, reconcile_error, reconcile_requeue;
    uint64_t workload_created;
    uint64_t hardware_failed_jobs;
    uint64_t nodes_evaluated;
    uint64_t reconcile_bucket[GR_NVCRE_RECONCILE_BUCKETS];
    uint64_t reconcile_count;
    double reconcile_sum_s;
    uint64_t health_bucket[GR_NVCRE_HEALTH_BUCKETS];
    uint64_t health_count;
    double health_sum_s;
} gr_nvcre_job_counters;

/* Record one duration into a histogram of the counters. */
void gr_nvcre_job_observe_reconcile(gr_nvcre_job_counters *c, double seconds);
void gr_nvcre_job_observe_health(gr_nvcre_job_counters *c, double seconds);

/* "in_progress" | "succeeded" | "failed" from the conditions (terminal
 * outranks InProgress, ADR-086); NULL when no exclusive condition is True. */
const char *gr_nvcre_job_metric_state(const json_t *status);

/* Prometheus text exposition (0.0.4) of the Job metrics of fact sheet §6.3:
 * nvcre_job_status (one series per state, 1 for the current one),
 * nvcre_job_failed_nodes, and the counters/histograms. Appends to `out`
 * (GR_ETOOBIG at its cap). Label values are escaped. */
int gr_nvcre_job_metrics_render(const gr_nvcre_job_metric_row *rows, size_t n,
                                const gr_nvcre_job_counters *c, gr_buf *out);

/* ------------------------------------------------------- measurements
 * (issue 18, gr_nvcre_job_meas.c; docs/measurements.md § For the Job
 * controller). */

typedef enum gr_nvcre_meas_kind {
    GR_NVCRE_MEAS_GOODPUT = 0,
    GR_NVCRE_MEAS_BANDWIDTH,
} gr_nvcre_meas_kind;

/* "<job>-goodput" / "<job>-bandwidth" truncated to 63 (gr_nvcre_truncate_name,
 * §1.2). GR_EINVAL for an empty or absurdly long job name. */
int gr_nvcre_job_measurement_name(const char *job, gr_nvcre_meas_kind k, char out[64]);
/* The Job spec field that asks for it: "goodputMeasurement" | "bandwidthMeasurement". */
const char *gr_nvcre_job_measurement_field(gr_nvcre_meas_kind k);

/*
 * The GoodputMeasurement / BandwidthMeasurement the Job `job` (borrowed; as
 * read from the API: metadata.name, namespace, uid) asks for with
 * spec.goodputMeasurement / spec.bandwidthMeasurement (§1.2, §3.11): name
 * gr_nvcre_job_measurement_name(), the Job's namespace, labels
 * {app.kubernetes.io/managed-by: nvcre, nvcre.nvidia.com/job: <job>}, one
 * controller ownerReference to the Job's controlling Workflow when it has one,
 * else to the Job; spec {jobRef {apiGroup nvcre.nvidia.com, kind Job, name},
 * logProfileRef, sampleInterval (when set), testType (bandwidth, when set)}.
 * *out is the caller's; NULL (with GR_OK) when the spec does not ask for it.
 * GR_EINVAL names the field; GR_ENOMEM.
 */
int gr_nvcre_job_build_measurement(const json_t *job, gr_nvcre_meas_kind k, json_t **out,
                                   gr_err *err);

/* 1 when measurement `m` (borrowed) has spec.jobRef naming Job `job`. */
int gr_nvcre_job_measurement_for(const json_t *m, const char *job);

/* Stall-detection inputs (§3.5) from the Job spec (stallMultiplier,
 * startupStallTimeoutSeconds) and its GoodputMeasurement's view (v NULL or
 * !v->exists: inactive, stall_multiplier 0). The sample interval is filled
 * whenever the GoodputMeasurement exists (the restart requeue uses it). */
void gr_nvcre_job_stall_from(const json_t *spec, const gr_measure_gm_view *v,
                             gr_nvcre_job_stall_in *out);

/* 1 when the Job awaits its threshold verdict: spec.thresholds non-empty,
 * Succeeded True and no ValidationFailed condition yet. */
int gr_nvcre_job_thresholds_pending(const json_t *spec, const json_t *status);

typedef struct gr_nvcre_job_verdict {
    int changed;        /* status was modified (ValidationFailed set) */
    int pending;        /* data missing within measurementTimeout: requeue */
    int event;          /* record an Event: */
    char event_type[8]; /* "Normal" (ThresholdsMet) | "Warning" */
    char event_reason[64];
    char event_msg[GR_NVCRE_EVENT_NOTE_MAX + 1];
    int64_t requeue_ns; /* pending: when to look again */
} gr_nvcre_job_verdict;

/*
 * The threshold verdict of a Succeeded Job (§3.9) when
 * gr_nvcre_job_thresholds_pending(); otherwise nothing. gm / bm: the Job's
 * measurements (borrowed, NULL when none); only Complete=True ones count
 * (#404), so a running measurement keeps the verdict pending. Missing data
 * is pending until the Succeeded condition's lastTransitionTime is older
 * than spec.measurementTimeout (default 5m), then
 * ValidationFailed=True/MeasurementTimeout. Pass → ValidationFailed=False/
 * ThresholdsMet; a violated threshold, unknown key or invalid expression →
 * ValidationFailed=True with the §3.9 reason and message, and the nodes of
 * `group_nodes` (the nvcre.nvidia.com/group-nodes annotation, may be NULL)
 * enter failedNodes with reason ThresholdViolation. `status` is modified in
 * place. GR_EINVAL (spec.measurementTimeout unparsable), GR_ENOMEM.
 */
int gr_nvcre_job_thresholds_step(const json_t *spec, json_t *status, const json_t *gm,
                                 const json_t *bm, const char *group_nodes, int64_t generation,
                                 int64_t now_ns, gr_nvcre_job_verdict *out, gr_err *err);

#endif

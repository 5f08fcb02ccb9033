/*
 * gr_nvcre_types.h — the NVCRE API (group nvcre.nvidia.com, version v1alpha1)
 * as constants and small pure checks, so that no controller spells a field
 * name, condition type, reason or user-facing message by hand.
 *
 * The API itself (schemas, defaults, CEL validation) is served by the
 * kube-apiserver from the CRDs in deploy/crds/; docs/nvcre-api.md describes
 * it. The strings below are the contract of ../shared/spec/nvcre-*-crd.md and
 * ../shared/notes/nvcre-upstream-facts.md and are reproduced byte for byte.
 * test/nvcre/test_nvcre_crds.c checks that every validation message in the
 * CRDs equals the constant here and that gr_nvcre_label_*_check() accept
 * exactly what the CRD patterns accept.
 *
 * Message constants ending in _FMT are printf formats; the arguments are
 * documented next to each.
 *
 * Conditions: controllers keep status.conditions ordered with the exclusive
 * set first (InProgress, Succeeded, Failed, in that order) and additive
 * conditions after them. The printer columns in the CRDs show the type and
 * reason of the first condition whose status is "True"; with this order that
 * is always the execution state.
 *
 * Ownership: every function here only reads its arguments and allocates
 * nothing. Errors: GR_EINVAL with err->msg naming the field and the rule.
 */
#ifndef GR_NVCRE_TYPES_H
#define GR_NVCRE_TYPES_H

#include <stddef.h>

#include <jansson.h>

#include "gr_err.h"

/* ------------------------------------------------------------------ API */

#define GR_NVCRE_GROUP       "nvcre.nvidia.com"
#define GR_NVCRE_VERSION     "v1alpha1"
#define GR_NVCRE_API_VERSION "nvcre.nvidia.com/v1alpha1"

#define GR_NVCRE_KIND_JOB                   "Job"
#define GR_NVCRE_KIND_WORKFLOW              "Workflow"
#define GR_NVCRE_KIND_CERTIFICATION         "Certification"
#define GR_NVCRE_KIND_WORKLOAD_RUN          "WorkloadRun"
#define GR_NVCRE_KIND_GOODPUT_MEASUREMENT   "GoodputMeasurement"
#define GR_NVCRE_KIND_BANDWIDTH_MEASUREMENT "BandwidthMeasurement"
#define GR_NVCRE_KIND_LOG_PROFILE           "LogProfile"

#define GR_NVCRE_PLURAL_JOBS                   "jobs"
#define GR_NVCRE_PLURAL_WORKFLOWS              "workflows"
#define GR_NVCRE_PLURAL_CERTIFICATIONS         "certifications"
#define GR_NVCRE_PLURAL_WORKLOAD_RUNS          "workloadruns"
#define GR_NVCRE_PLURAL_GOODPUT_MEASUREMENTS   "goodputmeasurements"
#define GR_NVCRE_PLURAL_BANDWIDTH_MEASUREMENTS "bandwidthmeasurements"

/* `kubectl get nvcre` lists every NVCRE resource. */
#define GR_NVCRE_CATEGORY "nvcre"

/* The workload adapter (ADR-066: TrainJob is the only one). */
#define GR_NVCRE_TRAINER_GROUP                 "trainer.kubeflow.org"
#define GR_NVCRE_TRAINER_API_VERSION           "trainer.kubeflow.org/v1alpha1"
#define GR_NVCRE_KIND_TRAIN_JOB                "TrainJob"
#define GR_NVCRE_KIND_TRAINING_RUNTIME         "TrainingRuntime"
#define GR_NVCRE_KIND_CLUSTER_TRAINING_RUNTIME "ClusterTrainingRuntime"

/* ------------------------------------------------------- field names */

/* JobSpec (Job .spec and Workflow .spec.jobTemplate.spec). */
#define GR_NVCRE_F_WORKLOAD                       "workload"
#define GR_NVCRE_F_TRAIN_JOB                      "trainJob"
#define GR_NVCRE_F_WORKLOAD_METADATA              "workloadMetadata"
#define GR_NVCRE_F_LABELS                         "labels"
#define GR_NVCRE_F_NODE_HEALTH_MONITOR            "nodeHealthMonitor"
#define GR_NVCRE_F_CEL                            "cel"
#define GR_NVCRE_F_EXPRESSION                     "expression"
#define GR_NVCRE_F_CHECKPOINT                     "checkpoint"
#define GR_NVCRE_F_PVC_NAME                       "pvcName"
#define GR_NVCRE_F_MAX_RESTARTS                   "maxRestarts"
#define GR_NVCRE_F_STALL_MULTIPLIER               "stallMultiplier"
#define GR_NVCRE_F_STARTUP_STALL_TIMEOUT_SECONDS  "startupStallTimeoutSeconds"
#define GR_NVCRE_F_SCHEDULING_STALL_GRACE_SECONDS "schedulingStallGraceSeconds"
#define GR_NVCRE_F_GOODPUT_MEASUREMENT            "goodputMeasurement"
#define GR_NVCRE_F_BANDWIDTH_MEASUREMENT          "bandwidthMeasurement"
#define GR_NVCRE_F_LOG_PROFILE_REF                "logProfileRef"
#define GR_NVCRE_F_SAMPLE_INTERVAL                "sampleInterval"
#define GR_NVCRE_F_TEST_TYPE                      "testType"
#define GR_NVCRE_F_THRESHOLDS                     "thresholds"
#define GR_NVCRE_F_MEASUREMENT_TIMEOUT            "measurementTimeout"

/* JobStatus. */
#define GR_NVCRE_F_CONDITIONS                       "conditions"
#define GR_NVCRE_F_FAILED_NODES                     "failedNodes"
#define GR_NVCRE_F_WORKLOAD_REF                     "workloadRef"
#define GR_NVCRE_F_WORKLOAD_START_TIME              "workloadStartTime"
#define GR_NVCRE_F_SCHEDULING_BLOCKED_SINCE         "schedulingBlockedSince"
#define GR_NVCRE_F_SCHEDULING_RESUMED_TIME          "schedulingResumedTime"
#define GR_NVCRE_F_WORKLOAD_CREATION_REJECTED_SINCE "workloadCreationRejectedSince"
#define GR_NVCRE_F_RESTART_COUNT                    "restartCount"
#define GR_NVCRE_F_FAILURE_LOG                      "failureLog"

/* WorkflowSpec. */
#define GR_NVCRE_F_NAMESPACE          "namespace"
#define GR_NVCRE_F_JOB_TEMPLATE       "jobTemplate"
#define GR_NVCRE_F_JOB_TEMPLATE_PATCH "jobTemplatePatch"
#define GR_NVCRE_F_ORCHESTRATION      "orchestration"
#define GR_NVCRE_F_DEPENDENCIES       "dependencies"
#define GR_NVCRE_F_OVERRIDES          "overrides"
#define GR_NVCRE_F_VALIDATION         "validation"
#define GR_NVCRE_F_GANG_SCHEDULER     "gangScheduler"
#define GR_NVCRE_F_WHEN               "when"

/* GangSchedulerSpec. */
#define GR_NVCRE_F_SCHEDULER_NAME  "schedulerName"
#define GR_NVCRE_F_QUEUE           "queue"
#define GR_NVCRE_F_QUEUE_LABEL_KEY "queueLabelKey"

/* WorkflowStatus. */
#define GR_NVCRE_F_SUCCEEDED_NODES_REF       "succeededNodesRef"
#define GR_NVCRE_F_FAILED_NODES_REF          "failedNodesRef"
#define GR_NVCRE_F_DEPENDENCY_REFS           "dependencyRefs"
#define GR_NVCRE_F_COMPLETED_ITERATIONS      "completedIterations"
#define GR_NVCRE_F_CURRENT_ITERATION         "currentIteration"
#define GR_NVCRE_F_TOTAL_NODES               "totalNodes"
#define GR_NVCRE_F_NODES_PER_JOB             "nodesPerJob"
#define GR_NVCRE_F_TOTAL_GROUPS              "totalGroups"
#define GR_NVCRE_F_DETECTED_GPU_ARCHITECTURE "detectedGPUArchitecture"
#define GR_NVCRE_F_DETECTED_PLATFORM         "detectedPlatform"
#define GR_NVCRE_F_APPLIED_OVERRIDES         "appliedOverrides"
#define GR_NVCRE_F_GROUPS                    "groups"
#define GR_NVCRE_F_ITERATION_HISTORY         "iterationHistory"
#define GR_NVCRE_F_EXCLUDED_NODES            "excludedNodes"
#define GR_NVCRE_F_EXCLUSION_REASON          "exclusionReason"

/* Field paths used in messages. */
#define GR_NVCRE_PATH_JOB_WORKLOAD_LABELS      "spec.workloadMetadata.labels"
#define GR_NVCRE_PATH_WORKFLOW_WORKLOAD_LABELS "spec.jobTemplate.spec.workloadMetadata.labels"

/* ------------------------------------------------------- conditions */

/* Exclusive set: exactly one is True once a controller has reconciled. */
#define GR_NVCRE_COND_IN_PROGRESS "InProgress"
#define GR_NVCRE_COND_SUCCEEDED   "Succeeded"
#define GR_NVCRE_COND_FAILED      "Failed"
/* Additive. */
#define GR_NVCRE_COND_HARDWARE_FAILED   "HardwareFailed"
#define GR_NVCRE_COND_VALIDATION_FAILED "ValidationFailed"

/* Reason of an inactive exclusive condition (status False). WorkloadRun uses
 * Superseded instead. */
#define GR_NVCRE_REASON_NOT_APPLICABLE "NotApplicable"
#define GR_NVCRE_REASON_SUPERSEDED     "Superseded"

/* Job — InProgress. */
#define GR_NVCRE_REASON_WORKLOAD_CREATED            "WorkloadCreated"
#define GR_NVCRE_REASON_WORKLOAD_ADOPTED            "WorkloadAdopted"
#define GR_NVCRE_REASON_WORKLOAD_PENDING            "WorkloadPending"
#define GR_NVCRE_REASON_WORKLOAD_RUNNING            "WorkloadRunning"
#define GR_NVCRE_REASON_WORKLOAD_SCHEDULING_BLOCKED "WorkloadSchedulingBlocked"
#define GR_NVCRE_REASON_WORKLOAD_CREATION_REJECTED  "WorkloadCreationRejected"
#define GR_NVCRE_REASON_WORKLOAD_RESTARTING         "WorkloadRestarting"
/* Job — Succeeded. */
#define GR_NVCRE_REASON_WORKLOAD_COMPLETED "WorkloadCompleted"
/* Job — Failed (JobTimedOut is written by the Workflow controller). */
#define GR_NVCRE_REASON_WORKLOAD_FAILED         "WorkloadFailed"
#define GR_NVCRE_REASON_WORKLOAD_STALLED        "WorkloadStalled"
#define GR_NVCRE_REASON_WORKLOAD_CREATION_ERROR "WorkloadCreationError"
#define GR_NVCRE_REASON_JOB_TIMED_OUT           "JobTimedOut"
/* Job — HardwareFailed. */
#define GR_NVCRE_REASON_HARDWARE_FAILURE_DETECTED "HardwareFailureDetected"
/* Job — ValidationFailed (True reasons, then the False one). */
#define GR_NVCRE_REASON_THRESHOLD_VIOLATED           "ThresholdViolated"
#define GR_NVCRE_REASON_UNKNOWN_THRESHOLD_KEY        "UnknownThresholdKey"
#define GR_NVCRE_REASON_INVALID_THRESHOLD_EXPRESSION "InvalidThresholdExpression"
#define GR_NVCRE_REASON_MEASUREMENT_TIMEOUT          "MeasurementTimeout"
#define GR_NVCRE_REASON_THRESHOLDS_MET               "ThresholdsMet"

/* FailedNode.reason (note: ThresholdViolation, not ThresholdViolated). */
#define GR_NVCRE_NODE_REASON_HARDWARE_FAILURE_DETECTED "HardwareFailureDetected"
#define GR_NVCRE_NODE_REASON_THRESHOLD_VIOLATION       "ThresholdViolation"
#define GR_NVCRE_NODE_REASON_WORKLOAD_FAILED           "WorkloadFailed"

/* Workflow — InProgress. */
#define GR_NVCRE_REASON_GROUPS_PARTITIONED     "GroupsPartitioned"
#define GR_NVCRE_REASON_JOB_CREATED            "JobCreated"
#define GR_NVCRE_REASON_JOB_RUNNING            "JobRunning"
#define GR_NVCRE_REASON_JOB_SCHEDULING_BLOCKED "JobSchedulingBlocked"
#define GR_NVCRE_REASON_ITERATION_COMPLETED    "IterationCompleted"
/* Workflow — Succeeded. */
#define GR_NVCRE_REASON_JOB_COMPLETED "JobCompleted"
/* Workflow — Failed (JobValidationFailed is also the additive ValidationFailed reason). */
#define GR_NVCRE_REASON_ITERATIONS_FAILED         "IterationsFailed"
#define GR_NVCRE_REASON_JOB_HARDWARE_FAILED       "JobHardwareFailed"
#define GR_NVCRE_REASON_JOB_VALIDATION_FAILED     "JobValidationFailed"
#define GR_NVCRE_REASON_JOB_FAILED                "JobFailed"
#define GR_NVCRE_REASON_NODE_DISCOVERY_ERROR      "NodeDiscoveryError"
#define GR_NVCRE_REASON_PARTITION_ERROR           "PartitionError"
#define GR_NVCRE_REASON_DEPENDENCY_CREATION_ERROR "DependencyCreationError"
#define GR_NVCRE_REASON_DEPENDENCY_NAME_COLLISION "DependencyNameCollision"
#define GR_NVCRE_REASON_JOB_NAME_COLLISION        "JobNameCollision"
#define GR_NVCRE_REASON_JOB_CREATION_ERROR        "JobCreationError"
#define GR_NVCRE_REASON_GANG_SCHEDULING_CONFLICT  "GangSchedulingConflict"
#define GR_NVCRE_REASON_HETEROGENEOUS_PLATFORM    "HeterogeneousPlatform"
#define GR_NVCRE_REASON_OVERRIDE_ERROR            "OverrideError"
#define GR_NVCRE_REASON_CHECKPOINT_PVC_MISSING    "CheckpointPVCMissing"

/* Certification. */
#define GR_NVCRE_REASON_WAITING_FOR_NODES          "WaitingForNodes"
#define GR_NVCRE_REASON_WORKFLOW_CREATED           "WorkflowCreated"
#define GR_NVCRE_REASON_WORKFLOW_RUNNING           "WorkflowRunning"
#define GR_NVCRE_REASON_CATEGORY_NOT_FOUND         "CategoryNotFound"
#define GR_NVCRE_REASON_WORKFLOW_VALIDATION_FAILED "WorkflowValidationFailed"
#define GR_NVCRE_REASON_BUILD_FAILED               "BuildFailed"
#define GR_NVCRE_REASON_WORKFLOW_NAME_COLLISION    "WorkflowNameCollision"
#define GR_NVCRE_REASON_WORKFLOW_FAILED            "WorkflowFailed"
#define GR_NVCRE_REASON_ALL_WORKFLOWS_SUCCEEDED    "AllWorkflowsSucceeded"
/* WorkloadRun (also WorkflowValidationFailed, WorkflowFailed). */
#define GR_NVCRE_REASON_WORKFLOW_DELETED    "WorkflowDeleted"
#define GR_NVCRE_REASON_WORKFLOW_SUCCEEDED  "WorkflowSucceeded"
#define GR_NVCRE_REASON_THRESHOLD_VIOLATION "ThresholdViolation"

/* Workflow group phases (status.orchestration.groups[].phase). */
#define GR_NVCRE_PHASE_PENDING   "Pending"
#define GR_NVCRE_PHASE_RUNNING   "Running"
#define GR_NVCRE_PHASE_SUCCEEDED "Succeeded"
#define GR_NVCRE_PHASE_FAILED    "Failed"

/* -------------------------------------------- labels, annotations, names */

#define GR_NVCRE_LABEL_MANAGED_BY         "app.kubernetes.io/managed-by"
#define GR_NVCRE_MANAGED_BY_VALUE         "nvcre"
#define GR_NVCRE_RESERVED_PREFIX          "nvcre.nvidia.com/"
#define GR_NVCRE_LABEL_JOB                "nvcre.nvidia.com/job"
#define GR_NVCRE_LABEL_WORKFLOW           "nvcre.nvidia.com/workflow"
#define GR_NVCRE_LABEL_GROUP              "nvcre.nvidia.com/group"
#define GR_NVCRE_LABEL_CERTIFICATION      "nvcre.nvidia.com/certification"
#define GR_NVCRE_LABEL_CATEGORY_DOMAIN    "nvcre.nvidia.com/category-domain"
#define GR_NVCRE_LABEL_CATEGORY_VARIANT   "nvcre.nvidia.com/category-variant"
#define GR_NVCRE_LABEL_WORKLOAD_RUN       "nvcre.nvidia.com/workload-run"
#define GR_NVCRE_ANN_GROUP_NODES          "nvcre.nvidia.com/group-nodes"
#define GR_NVCRE_ANN_WORKFLOW_UID         "nvcre.nvidia.com/workflow-uid"
#define GR_NVCRE_ANN_REQUESTED_TEST_SCALE "nvcre.nvidia.com/requested-test-scale"

#define GR_NVCRE_FINALIZER_JOB           "nvcre.nvidia.com/finalizer"
#define GR_NVCRE_FINALIZER_WORKFLOW      "nvcre.nvidia.com/workflow-finalizer"
#define GR_NVCRE_FINALIZER_CERTIFICATION "nvcre.nvidia.com/certification-finalizer"

/* Child-name length caps (pkg/naming). */
#define GR_NVCRE_MAX_K8S_NAME_LEN      63
#define GR_NVCRE_MAX_WORKLOAD_NAME_LEN 44
#define GR_NVCRE_MAX_JOB_NAME_LEN      35
#define GR_NVCRE_MAX_WORKFLOW_NAME_LEN 31

/* ---------------------------------------------------------- defaults */

/* GangSchedulerSpec: also CRD defaults; an explicit "" resolves to these. */
#define GR_NVCRE_DEFAULT_QUEUE           "default-queue"
#define GR_NVCRE_DEFAULT_QUEUE_LABEL_KEY "kai.scheduler/queue"
#define GR_NVCRE_RUNAI_QUEUE_LABEL_KEY   "runai/queue"

#define GR_NVCRE_DEFAULT_SCHEDULING_STALL_GRACE_SECONDS 300  /* also a CRD default */
#define GR_NVCRE_DEFAULT_STARTUP_STALL_TIMEOUT_SECONDS  1200 /* controller default */
#define GR_NVCRE_DEFAULT_MEASUREMENT_TIMEOUT            "5m"
#define GR_NVCRE_DEFAULT_SAMPLE_INTERVAL                "60s"
#define GR_NVCRE_DEFAULT_TIMEOUT_PER_JOB                "1h"
#define GR_NVCRE_DEFAULT_WORKLOAD_CREATION_DEADLINE     "10m"
#define GR_NVCRE_DEFAULT_NODE_HEALTH_EXPRESSION         "node.spec.unschedulable == true"
#define GR_NVCRE_MPI_IMPLEMENTATION_OPENMPI             "OpenMPI"

/* ------------------------------------------------------------ limits */

#define GR_NVCRE_MAX_WORKLOAD_LABELS      32
#define GR_NVCRE_MAX_LABEL_NAME_LEN       63
#define GR_NVCRE_MAX_LABEL_PREFIX_LEN     253
#define GR_NVCRE_MAX_LABEL_VALUE_LEN      63
#define GR_NVCRE_MAX_QUEUE_LABEL_KEY_LEN  317
#define GR_NVCRE_MAX_NODE_HEALTH_EXPR_LEN 2048
#define GR_NVCRE_MAX_CATEGORIES           64

/* ------------------------------------ admission (CRD validation) messages */

/* x-kubernetes-validations messages, byte for byte (the apiserver reports
 * them as `Invalid value: "<type>": <message>` on the rule's field). */
#define GR_NVCRE_MSG_WORKLOAD_IMMUTABLE              "workload is immutable"
#define GR_NVCRE_MSG_WORKLOAD_METADATA_IMMUTABLE     "workloadMetadata is immutable"
#define GR_NVCRE_MSG_NODE_HEALTH_MONITOR_IMMUTABLE   "nodeHealthMonitor is immutable"
#define GR_NVCRE_MSG_GOODPUT_MEASUREMENT_IMMUTABLE   "goodputMeasurement is immutable"
#define GR_NVCRE_MSG_BANDWIDTH_MEASUREMENT_IMMUTABLE "bandwidthMeasurement is immutable"
#define GR_NVCRE_MSG_GANG_SCHEDULER_IMMUTABLE        "gangScheduler is immutable"
#define GR_NVCRE_MSG_WORKLOAD_METADATA_PRESENCE \
    "workloadMetadata cannot be added or removed after creation"
#define GR_NVCRE_MSG_NODE_HEALTH_MONITOR_PRESENCE \
    "nodeHealthMonitor cannot be added or removed after creation"
#define GR_NVCRE_MSG_GOODPUT_MEASUREMENT_PRESENCE \
    "goodputMeasurement cannot be added or removed after creation"
#define GR_NVCRE_MSG_BANDWIDTH_MEASUREMENT_PRESENCE \
    "bandwidthMeasurement cannot be added or removed after creation"
#define GR_NVCRE_MSG_GANG_SCHEDULER_PRESENCE \
    "gangScheduler cannot be added or removed after creation"
#define GR_NVCRE_MSG_SPEC_IMMUTABLE "spec is immutable after creation"
#define GR_NVCRE_MSG_LABELS_RESERVED                                                         \
    "labels must not set the controller-owned keys app.kubernetes.io/managed-by or any key " \
    "under the nvcre.nvidia.com/ prefix"
#define GR_NVCRE_MSG_LABEL_KEY_INVALID                                                       \
    "each label key must be a valid Kubernetes label key: an optional DNS-subdomain prefix " \
    "followed by '/', then a name of at most 63 characters beginning and ending with an "    \
    "alphanumeric character"
#define GR_NVCRE_MSG_LABEL_KEY_PREFIX_TOO_LONG \
    "each label key prefix must be at most 253 characters"
#define GR_NVCRE_MSG_QUEUE_LABEL_KEY_PREFIX_TOO_LONG \
    "queueLabelKey prefix must be at most 253 characters"
#define GR_NVCRE_MSG_QUEUE_LABEL_KEY_RESERVED                                                  \
    "queueLabelKey must not use the controller-owned key app.kubernetes.io/managed-by or any " \
    "key under the nvcre.nvidia.com/ prefix"
#define GR_NVCRE_MSG_TORCH_SCRIPT_MODULE_EXCLUSIVE "script and module are mutually exclusive"
#define GR_NVCRE_MSG_TORCH_SCRIPT_OR_MODULE        "either script or module must be set"
#define GR_NVCRE_MSG_CONFIG_EXCLUSIVE              "inline and configMapRef are mutually exclusive"
#define GR_NVCRE_MSG_NIC_RESOURCE_NAME_RESERVED \
    "nicResourceName must not use the reserved kubernetes.io or k8s.io domains"
#define GR_NVCRE_MSG_RESOURCES_CPU_REQUEST_LE_LIMIT "requests.cpu must not exceed limits.cpu"
#define GR_NVCRE_MSG_RESOURCES_MEMORY_REQUEST_LE_LIMIT \
    "requests.memory must not exceed limits.memory"
#define GR_NVCRE_MSG_CPU_NON_NEGATIVE    "cpu must be a non-negative quantity"
#define GR_NVCRE_MSG_MEMORY_NON_NEGATIVE "memory must be a non-negative quantity"

/* Messages of the C-side checks below where the apiserver reports an OpenAPI
 * pattern or a list bound instead of a CEL message. */
#define GR_NVCRE_MSG_LABEL_VALUE_INVALID                                                    \
    "each label value must be empty or at most 63 characters beginning and ending with an " \
    "alphanumeric character, with '-', '_', '.' or alphanumerics between"
#define GR_NVCRE_MSG_TOO_MANY_LABELS_FMT "Too many: %zu: must have at most %d items"

/* The label-value and key patterns of the CRD schema (OpenAPI `pattern` and
 * the CEL `matches()` argument). */
#define GR_NVCRE_LABEL_VALUE_PATTERN "^$|^[a-zA-Z0-9]([-a-zA-Z0-9_.]{0,61}[a-zA-Z0-9])?$"
#define GR_NVCRE_LABEL_KEY_PATTERN                                          \
    "^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?" \
    "[a-zA-Z0-9]([-a-zA-Z0-9_.]{0,61}[a-zA-Z0-9])?$"

/* ------------------------------------------------ controller messages */

/* Job. */
#define GR_NVCRE_MSG_WORKLOAD_CREATED_FMT "Workload %s/%s created and is starting" /* ns, name */
#define GR_NVCRE_MSG_WORKLOAD_ADOPTED_FMT \
    "Workload %s/%s was already created by this Job and has been adopted"          /* ns, name */
#define GR_NVCRE_MSG_WORKLOAD_PENDING_FMT          "Workload %s/%s is pending"     /* ns, name */
#define GR_NVCRE_MSG_WORKLOAD_PENDING_DETAIL_FMT   "Workload %s/%s is pending: %s" /* + detail */
#define GR_NVCRE_MSG_WORKLOAD_RUNNING_FMT          "Workload %s/%s is running"     /* ns, name */
#define GR_NVCRE_MSG_WORKLOAD_COMPLETED_FMT        "Workload %s/%s completed successfully"
#define GR_NVCRE_MSG_WORKLOAD_COMPLETED_DETAIL_FMT "Workload %s/%s completed: %s"
#define GR_NVCRE_MSG_WORKLOAD_FAILED_FMT           "Workload %s/%s has failed"
#define GR_NVCRE_MSG_WORKLOAD_FAILED_DETAIL_FMT    "Workload %s/%s failed: %s"
#define GR_NVCRE_MSG_WORKLOAD_DELETED_FMT          "Workload %s/%s was deleted"
#define GR_NVCRE_MSG_WORKLOAD_NOT_OWNED_FMT \
    "Workload %s/%s already exists and is not owned by this Job" /* ns, name */
#define GR_NVCRE_MSG_BUILD_WORKLOAD_FAILED_FMT "Failed to build workload: %s"
#define GR_NVCRE_MSG_UNSUPPORTED_WORKLOAD_FMT  "Unsupported workload type: %s"
#define GR_NVCRE_MSG_SCHEDULING_BLOCKED_FMT    "Workload pods are unschedulable: %s" /* pod msg */
#define GR_NVCRE_MSG_RESTARTING_FMT \
    "Restarting workload from checkpoint (restart %d/%d)" /* count, max */
#define GR_NVCRE_MSG_STARTUP_STALL \
    "Workload stalled: no training step observed within startup timeout"
#define GR_NVCRE_MSG_TRAINING_STALL \
    "Workload stalled: no training step within the configured threshold"
#define GR_NVCRE_MSG_SUSPENDED \
    "TrainJob is suspended (spec.suspend=true), waiting for it to be resumed"
#define GR_NVCRE_MSG_HARDWARE_FAILURE_FMT  "Hardware failure detected on node(s): %s" /* [a b] */
#define GR_NVCRE_MSG_HARDWARE_FAILURE_NODE "Hardware failure detected by node health check"
#define GR_NVCRE_MSG_JOB_TIMED_OUT         "Job exceeded timeoutPerJob"
#define GR_NVCRE_MSG_JOB_TIMED_OUT_BLOCKED \
    "Job exceeded timeoutPerJob while its pods were unschedulable"
#define GR_NVCRE_MSG_THRESHOLDS_MET "All performance thresholds satisfied"
/* Upstream formats with Go's %q; the "\"%s\"" below equals it for the
 * printable, quote-free strings these are used with. */
#define GR_NVCRE_MSG_THRESHOLD_VIOLATED_FMT \
    "Threshold \"%s\" violated: measured %.4f, expression: %s" /* key, value, expr */
#define GR_NVCRE_MSG_UNKNOWN_THRESHOLD_KEY_FMT "Unknown threshold key \"%s\""
#define GR_NVCRE_MSG_INVALID_THRESHOLD_FMT     "Threshold \"%s\": %s" /* key, error */
/* duration, keys as a Go slice ("[a b]"). */
#define GR_NVCRE_MSG_MEASUREMENT_TIMEOUT_FMT "Measurement data not available within %s for keys: %s"

/* Workflow. */
#define GR_NVCRE_MSG_GROUPS_PARTITIONED_FMT \
    "Discovered %d nodes, partitioned into %d groups (%d nodes/job)"
#define GR_NVCRE_MSG_JOBS_RUNNING_FMT        "Iteration %d/%d: %d groups running"
#define GR_NVCRE_MSG_ITERATION_COMPLETED_FMT "Iteration %d/%d completed, starting next"
#define GR_NVCRE_MSG_ALL_ITERATIONS_OK_FMT   "All %d iterations completed successfully"
#define GR_NVCRE_MSG_GROUPS_FAILED_FMT       "%d groups failed across %d iterations"
#define GR_NVCRE_MSG_HARDWARE_SUFFIX         "; hardware failures occurred on one or more nodes"
#define GR_NVCRE_MSG_JOB_VALIDATION_FAILED \
    "One or more Jobs failed performance threshold validation"
#define GR_NVCRE_MSG_NO_TARGET_NODES            "No target nodes found matching orchestration target"
#define GR_NVCRE_MSG_NODE_DISCOVERY_FAILED_FMT  "Node discovery failed: %s"
#define GR_NVCRE_MSG_OVERRIDE_ERROR_FMT         "Failed to apply overrides: %s"
#define GR_NVCRE_MSG_CHECKPOINT_PVC_MISSING_FMT "Checkpoint requires PVC \"%s\" in dependencies"
#define GR_NVCRE_MSG_NOT_ENOUGH_NODES_FMT       "Not enough schedulable nodes: need %d, found %d"
/* Gang-scheduling conflict on the workload object label: path, key, got, want. */
#define GR_NVCRE_MSG_GANG_LABEL_CONFLICT_FMT \
    "%s[\"%s\"]: conflicting label value \"%s\", expected \"%s\""
/* queue, runtime, replicatedJob, key, value, where (e.g. template.metadata.labels). */
#define GR_NVCRE_MSG_GANG_RUNTIME_CONFLICT_FMT                                                \
    "gangScheduler is configured with queue \"%s\" but TrainingRuntime \"%s\" replicatedJob " \
    "\"%s\" sets label \"%s\" to \"%s\" on %s"

/* Certification / WorkloadRun. */
#define GR_NVCRE_MSG_CERT_WORKFLOW_CREATED_FMT "Created Workflow for category %s/%s (%d of %d)"
#define GR_NVCRE_MSG_CERT_UNKNOWN_CATEGORY_FMT "Unknown certification category: %s/%s"
#define GR_NVCRE_MSG_CERT_FAILED               "One or more certification categories failed"
#define GR_NVCRE_MSG_CERT_SUCCEEDED            "All certification categories completed successfully"
#define GR_NVCRE_MSG_RUN_WORKFLOW_DELETED      "Workflow was deleted"
#define GR_NVCRE_MSG_RUN_WORKFLOW_SUCCEEDED    "Workflow completed successfully"

/* ------------------------------------------------------ pure checks */

/* Which resource a reason table applies to. */
typedef enum gr_nvcre_kind {
    GR_NVCRE_JOB = 0,
    GR_NVCRE_WORKFLOW,
    GR_NVCRE_CERTIFICATION,
    GR_NVCRE_WORKLOAD_RUN,
} gr_nvcre_kind;

/* 1 when `type` is one of the exclusive execution-state conditions
 * (InProgress, Succeeded, Failed), else 0. NULL → 0. */
int gr_nvcre_condition_is_exclusive(const char *type);

/* 1 when `reason` is a documented reason for condition `type` on `kind`
 * with that `status` ("True" or "False"); NotApplicable (Superseded on a
 * WorkloadRun) is the reason of every inactive exclusive condition. 0 for
 * anything else, including NULL arguments. */
int gr_nvcre_reason_known(gr_nvcre_kind kind, const char *type, const char *status,
                          const char *reason);

/* 1 for a documented FailedNode.reason, else 0. */
int gr_nvcre_failed_node_reason_known(const char *reason);

/* Kubernetes qualified-name label key: optional DNS-subdomain prefix (≤253)
 * and '/', then a name of 1..63 characters, alphanumeric at both ends with
 * [-_.a-zA-Z0-9] inside. `key` need not be NUL-terminated. GR_OK or
 * GR_EINVAL; the message is the CRD's (GR_NVCRE_MSG_LABEL_KEY_*). */
int gr_nvcre_label_key_check(const char *key, size_t len, gr_err *err);

/* Kubernetes label value: empty, or 1..63 characters alphanumeric at both
 * ends with [-_.a-zA-Z0-9] inside. GR_OK or GR_EINVAL. */
int gr_nvcre_label_value_check(const char *value, size_t len, gr_err *err);

/* 1 when `key` is controller-owned: app.kubernetes.io/managed-by or any key
 * under nvcre.nvidia.com/. */
int gr_nvcre_label_key_reserved(const char *key, size_t len);

/* The full admission rule set of WorkloadMetadata.labels applied to a JSON
 * object (as the controllers see it after overrides): at most 32 entries,
 * every key and value valid, no reserved key. `labels` NULL or JSON null →
 * GR_OK. `path` (e.g. GR_NVCRE_PATH_WORKFLOW_WORKLOAD_LABELS) prefixes the
 * message; keys are named in it. GR_OK or GR_EINVAL. */
int gr_nvcre_workload_labels_check(const json_t *labels, const char *path, gr_err *err);

/* GangSchedulerSpec.queue: "" (resolves to the default) or a label value. */
int gr_nvcre_queue_check(const char *queue, gr_err *err);

/* GangSchedulerSpec.queueLabelKey: "" (resolves to the default) or a label
 * key (≤317) that is not controller-owned. */
int gr_nvcre_queue_label_key_check(const char *key, gr_err *err);

/* Effective queue / queue label key: the value, or the default when NULL or
 * "". Borrowed: returns `v` itself or a static string. */
const char *gr_nvcre_effective_queue(const char *v);
const char *gr_nvcre_effective_queue_label_key(const char *v);

/* Upstream's pkg/naming Truncate, the one implementation every controller
 * uses for generated names (Job, Workflow, Certification): a name of at
 * most `max` bytes is copied; a longer one keeps its first max-6 bytes
 * (trailing '-' dropped), then "-" and the first 5 hex digits of the
 * zero-padded FNV-1a 32 hash of the whole name. max < 7 copies the name
 * as it is (truncated to outsz-1). `out` gets at most outsz-1 bytes + NUL;
 * outsz 0 writes nothing. Pure, thread-safe. */
void gr_nvcre_truncate_name(const char *name, size_t max, char *out, size_t outsz);

#endif

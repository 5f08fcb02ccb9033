/*
 * gr_nvcre_wlrun.h — the WorkloadRun controller's pure logic (fact sheet
 * §1.1, §1.2): the one Workflow a WorkloadRun synthesises, and its status
 * mirrored from that Workflow.
 *
 * gr_nvcre_wlrun_build(): a Workflow named like the run (labels managed-by,
 * nvcre.nvidia.com/workload-run; controller ownerRef) whose dependencies
 * are a TrainingRuntime `<run>-runtime` for the framework (torch: torchrun
 * on gpusPerNode processes; mpi: an OpenMPI launcher + `node` workers, the
 * trainer runs `mpirunPath mpiArgs… binary args…`; exec: the command), the
 * optional ConfigMap `<run>-config` (config.inline; configMapRef uses the
 * named one) mounted at /config with mode 0755, the optional checkpoint PVC
 * `<run>-checkpoint` (jobTemplate.spec.checkpoint.pvcName) and, with MNNVL
 * (default on gb200/gb300), a ComputeDomain. Platform settings come from
 * the catalog's platform files (NIC resources, NCCL env, tolerations, pod
 * annotations, hostNetwork) and are applied to the runtime; the run's own
 * `overrides` are appended to spec.overrides for the Workflow's engine.
 * orchestration.testScale intra-node ⇒ one node per job; timeoutPerJob
 * defaults to 1h; the gang scheduler is applied as for Certifications.
 *
 * gr_nvcre_wlrun_mirror(): the run's status from its Workflow (NULL: it is
 * gone): Succeeded WorkflowSucceeded "Workflow completed successfully";
 * Failed WorkflowValidationFailed when the Workflow failed with
 * JobValidationFailed, else WorkflowFailed (the Workflow's message); a
 * Workflow that disappeared after creation: Failed WorkflowDeleted "Workflow
 * was deleted"; otherwise InProgress with the Workflow's InProgress reason
 * and message (before it has one: WorkflowCreated "Created Workflow <name>",
 * what the controller wrote when it created it). ValidationFailed is mirrored with reason
 * ThresholdViolation. Inactive exclusive conditions carry reason Superseded.
 *
 * Ownership: inputs borrowed; *out values are new references.
 * Errors: GR_EINVAL (spec.image, spec.framework with exactly one of torch /
 * mpi / exec, or spec.numNodes ≥ 1 missing: message names the field),
 * GR_ENOMEM.
 */
#ifndef GR_NVCRE_WLRUN_H
#define GR_NVCRE_WLRUN_H

#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"
#include "gr_nvcre_catalog.h"

#define GR_NVCRE_MSG_WLRUN_DELETED   "Workflow was deleted"
#define GR_NVCRE_MSG_WLRUN_SUCCEEDED "Workflow completed successfully"

int gr_nvcre_wlrun_build(const json_t *run, const gr_nvcre_catalog *cat, const char *platform,
                         const char *arch, json_t **workflow, gr_err *err);

int gr_nvcre_wlrun_mirror(const json_t *run, const json_t *workflow, int64_t now_ns,
                          json_t **status, gr_err *err);

#endif

#!/usr/bin/env python3
"""Generate the Workflow controller's reconcile cases (test/cases/workflow/<case>/).
Each case: input_crd_* symlinks, input_client_objects.yaml, input_config.yaml.
expected.json comes from `scripts/reconcile-cases --update test/cases/workflow`
and is reviewed. Rerun after editing; cases are plain data."""
import os, json, copy

HERE = os.path.dirname(os.path.abspath(__file__))
CRDS = {"input_crd_nvcre_workflows.yaml": "../../../../deploy/crds/nvcre.nvidia.com_workflows.yaml",
        "input_crd_nvcre_jobs.yaml": "../../../../deploy/crds/nvcre.nvidia.com_jobs.yaml",
        "input_crd_trainer.yaml": "../../../fixtures/crds/kubeflow-trainer.yaml"}
H100 = "NVIDIA-H100-80GB-HBM3"

def y(v):
    return json.dumps(v)  # JSON is YAML

def cond(t, status, reason, msg="set by the case"):
    return {"type": t, "status": status, "reason": reason, "message": msg,
            "lastTransitionTime": "2026-01-01T00:00:00Z"}

def job_status(*conds, **extra):
    s = {"conditions": list(conds)}
    s.update(extra)
    return {"status": s}

def runtime(queue=None, sched=None):
    tmpl = {"metadata": {"labels": {}}, "spec": {"template": {"metadata": {"labels": {}}, "spec": {}}}}
    if queue:
        tmpl["metadata"]["labels"]["kai.scheduler/queue"] = queue
        tmpl["spec"]["template"]["metadata"]["labels"]["kai.scheduler/queue"] = queue
    if sched:
        tmpl["spec"]["template"]["spec"]["schedulerName"] = sched
    tmpl["spec"]["template"]["spec"]["containers"] = [{"name": "node", "image": "nccl:1"}]
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
            "metadata": {"name": "nccl-runtime"},
            "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": tmpl}]}}}}

def workflow(case, num_nodes=2, iterations=1, gang=None, overrides=None, deps=None, execution=None,
             target_extra=None, wl_labels=None):
    target = {"nodeSelector": {"gpuready.test/case": case}}
    if target_extra:
        target.update(target_extra)
    spec = {"jobTemplate": {"metadata": {"labels": {"team": "infra"}},
                            "spec": {"workload": {"trainJob": {
                                "runtimeRef": {"kind": "TrainingRuntime", "name": "nccl-runtime"},
                                "trainer": {"image": "nccl:1", "numNodes": num_nodes,
                                            "env": [{"name": "NCCL_DEBUG", "value": "INFO"}]}}}}},
            "orchestration": {"target": target, "iterations": iterations}}
    if wl_labels:
        spec["jobTemplate"]["spec"]["workloadMetadata"] = {"labels": wl_labels}
    if gang:
        spec["gangScheduler"] = gang
    if overrides:
        spec["overrides"] = overrides
    if deps is not None:
        spec["dependencies"] = deps
    if execution:
        spec["orchestration"]["execution"] = execution
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
            "metadata": {"name": "wf"}, "spec": spec}

cases = {}

def with_validation(wf):
    wf["spec"]["validation"] = {"performance": {"enabled": True, "measurementTimeout": "5m",
                                                "thresholds": {"thresholds": {"busBandwidthGBps": "value >= 400"}}}}
    return wf

def case(name, comment, objects, config):
    cases[name] = (comment, objects, config)

def nodes(case_name, count, product=H100, pid="aws:///us-east-1a/{name}"):
    return {"count": count, "labels": {"gpuready.test/case": case_name, "nvidia.com/gpu.product": product},
            "providerID": pid}

def done_steps(jobs, status):
    return [{"waitFor": {"kind": "Job", "name": j},
             "patches": [{"target": {"kind": "Job", "name": j}, "status": True, "patch": status}]} for j in jobs]

OK = job_status(cond("Succeeded", "True", "WorkloadCompleted"))
FAILED = job_status(cond("Failed", "True", "WorkloadFailed"))

# --- happy paths (WF-69, WF-70, WF-03, WF-10, WF-60..65)
case("wf-single-job-succeeds", "WF-69 WF-70: one group, one iteration: Job <wf>-job; Succeeded/JobCompleted",
     [workflow("wf-single-job-succeeds", deps=[runtime()])],
     {"generateNodes": nodes("wf-single-job-succeeds", 2), "steps": done_steps(["wf-job"], OK),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Succeeded", "reason": "JobCompleted"},
      "events": [{"involvedKind": "Workflow", "involvedName": "wf",
                  "expect": [{"type": "Normal", "reason": "GroupsPartitioned"}, {"type": "Normal", "reason": "JobCompleted"}]}],
      "collect": ["Job", "TrainingRuntime"]})
case("wf-two-groups", "WF-65 WF-10: 4 nodes, 2 per Job: two groups, same workload labels",
     [workflow("wf-two-groups", wl_labels={"team": "a"}, deps=[runtime()])],
     {"generateNodes": nodes("wf-two-groups", 4),
      "steps": done_steps(["wf-group-0-iter-1", "wf-group-1-iter-1"], OK),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Succeeded", "reason": "JobCompleted"},
      "collect": ["Job"]})
case("wf-max-concurrent", "maxConcurrent 1: the second group waits for the first",
     [workflow("wf-max-concurrent", num_nodes=1, execution={"maxConcurrent": 1}, deps=[runtime()])],
     {"generateNodes": nodes("wf-max-concurrent", 2),
      "steps": done_steps(["wf-group-0-iter-1", "wf-group-1-iter-1"], OK),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Succeeded", "reason": "JobCompleted"},
      "collect": ["Job"]})
case("wf-overflow-group", "3 nodes, 2 per Job: group-1-overflow borrows a node and waits for group-0",
     [workflow("wf-overflow-group", deps=[runtime()])],
     {"generateNodes": nodes("wf-overflow-group", 3),
      "steps": done_steps(["wf-group-0-iter-1", "wf-group-1-overflow-iter-1"], OK),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Succeeded", "reason": "JobCompleted"},
      "collect": ["Job"]})
case("wf-iteration-history", "WF-58 WF-59: two iterations; history kept; All 2 iterations completed",
     [workflow("wf-iteration-history", iterations=2, deps=[runtime()])],
     {"generateNodes": nodes("wf-iteration-history", 2),
      "steps": done_steps(["wf-group-0-iter-1"], OK) + done_steps(["wf-group-0-iter-2"], OK),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Succeeded", "reason": "JobCompleted"},
      "events": [{"involvedKind": "Workflow", "involvedName": "wf",
                  "expect": [{"type": "Normal", "reason": "IterationCompleted"}]}],
      "collect": ["Job"]})
# --- failures from Jobs
case("wf-job-failed", "a failed Job fails the Workflow: IterationsFailed",
     [workflow("wf-job-failed", deps=[runtime()])],
     {"generateNodes": nodes("wf-job-failed", 2), "steps": done_steps(["wf-job"], FAILED),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "IterationsFailed"},
      "events": [{"involvedKind": "Workflow", "involvedName": "wf", "expect": [{"type": "Warning", "reason": "IterationsFailed"}]}]})
case("wf-hardware-failed", "HardwareFailed on a Job: JobHardwareFailed",
     [workflow("wf-hardware-failed", deps=[runtime()])],
     {"generateNodes": nodes("wf-hardware-failed", 2),
      "steps": done_steps(["wf-job"], job_status(cond("Failed", "True", "WorkloadFailed"),
                                                 cond("HardwareFailed", "True", "HardwareFailureDetected"))),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "JobHardwareFailed"}})
case("wf-validation-failed", "WF-51 WF-52 WF-54: threshold miss only: Failed JobValidationFailed + ValidationFailed",
     [workflow("wf-validation-failed", deps=[runtime()])],
     {"generateNodes": nodes("wf-validation-failed", 2),
      "steps": done_steps(["wf-job"], job_status(cond("Succeeded", "True", "WorkloadCompleted"),
                                                 cond("ValidationFailed", "True", "ThresholdViolated"))),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "ValidationFailed", "reason": "JobValidationFailed"}})
case("wf-job-timeout", "timeoutPerJob from workloadStartTime: JobTimedOut on the Job, never retried",
     [workflow("wf-job-timeout", execution={"timeoutPerJob": "10m", "retryFailedGroups": 2}, deps=[runtime()])],
     {"generateNodes": nodes("wf-job-timeout", 2),
      "steps": done_steps(["wf-job"], job_status(cond("InProgress", "True", "WorkloadRunning"),
                                                 workloadStartTime="2026-01-01T00:00:00Z")),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "IterationsFailed"},
      "events": [{"involvedKind": "Job", "involvedName": "wf-job", "expect": [{"type": "Warning", "reason": "JobTimedOut"}]}]})
# timeoutPerJob 10m here, in wf-job-timeout and in wf-job-timeout-blocked: until the status patch lands, the
# group's own start is the clock, and a 1 s timeout could fire first under
# load (CI saw "Job exceeded timeoutPerJob" without the unschedulable part).
# After the patch the verdict does not depend on it: a blocked episode since
# 2026-01-01 is far past 10m, and a queued Job never times out.
case("wf-job-queued-no-timeout", "ADR-083: a queued Job (workloadRef, no start) does not time out",
     [workflow("wf-job-queued-no-timeout", execution={"timeoutPerJob": "10m"}, deps=[runtime()])],
     {"generateNodes": nodes("wf-job-queued-no-timeout", 2),
      "steps": done_steps(["wf-job"], job_status(cond("InProgress", "True", "WorkloadPending"),
                                                 workloadRef={"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "w"})),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobRunning"},
      "collect": ["Job"]})
# --- discovery / detection / partition failures
case("wf-no-target-nodes", "no node matches: NodeDiscoveryError",
     [workflow("wf-no-target-nodes")],
     {"waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "NodeDiscoveryError"},
      "collect": ["Job"]})
case("wf-not-enough-nodes", "numNodes 3 on 2 nodes: PartitionError with the hint",
     [workflow("wf-not-enough-nodes", num_nodes=3)],
     {"generateNodes": nodes("wf-not-enough-nodes", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "PartitionError"}})
hetero_node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "wfcase-hetero-gcp", "labels": {
    "gpuready.test/case": "wf-heterogeneous-platform", "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.product": H100, "kubernetes.io/hostname": "wfcase-hetero-gcp"}},
    "spec": {"providerID": "gce://p/z/wfcase-hetero-gcp"}}
case("wf-heterogeneous-platform", "aws + gcp nodes: HeterogeneousPlatform instead of hanging (upstream #82)",
     [hetero_node, workflow("wf-heterogeneous-platform")],
     {"generateNodes": nodes("wf-heterogeneous-platform", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "HeterogeneousPlatform"}})
a100 = copy.deepcopy(hetero_node)
a100["metadata"]["name"] = "wfcase-hetero-gpu-a100"
a100["metadata"]["labels"].update({"gpuready.test/case": "wf-heterogeneous-gpu", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
                                   "kubernetes.io/hostname": "wfcase-hetero-gpu-a100"})
a100["spec"]["providerID"] = "aws:///x/wfcase-hetero-gpu-a100"
case("wf-heterogeneous-gpu", "majority architecture h100: the a100 node is excluded with an event",
     [a100, workflow("wf-heterogeneous-gpu", deps=[runtime()])],
     {"generateNodes": nodes("wf-heterogeneous-gpu", 2), "steps": done_steps(["wf-job"], OK),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Succeeded", "reason": "JobCompleted"},
      "events": [{"involvedKind": "Workflow", "involvedName": "wf", "expect": [{"type": "Warning", "reason": "HeterogeneousGPU"}]}],
      "collect": ["Job"]})
cord = copy.deepcopy(hetero_node)
cord["metadata"]["name"] = "wfcase-cordoned"
cord["metadata"]["labels"].update({"gpuready.test/case": "wf-cordoned-excluded", "kubernetes.io/hostname": "wfcase-cordoned"})
cord["spec"] = {"providerID": "aws:///x/wfcase-cordoned", "unschedulable": True}
case("wf-cordoned-excluded", "a cordoned GPU node is excluded: CordonedNodesExcluded",
     [cord, workflow("wf-cordoned-excluded", deps=[runtime()])],
     {"generateNodes": nodes("wf-cordoned-excluded", 2), "steps": done_steps(["wf-job"], OK),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Succeeded", "reason": "JobCompleted"},
      "events": [{"involvedKind": "Workflow", "involvedName": "wf", "expect": [{"type": "Warning", "reason": "CordonedNodesExcluded"}]}]})
# --- overrides
aws_env = [{"when": {"platform": {"equals": "aws"}},
            "jobTemplate": {"spec": {"workload": {"trainJob": {"trainer": {"env": [{"name": "FI_PROVIDER", "value": "efa"}]}}}}}},
           {"when": {"platform": {"equals": "gcp"}}, "jobTemplate": {"spec": {"stallMultiplier": 9}}}]
case("wf-overrides-aws", "WF-43 WF-64 WF-68: the aws override applies (env replaced), the gcp one does not",
     [workflow("wf-overrides-aws", overrides=aws_env, deps=[runtime()])],
     {"generateNodes": nodes("wf-overrides-aws", 2),
      "waitFor": {"kind": "Job", "name": "wf-job"},
      "events": [{"involvedKind": "Workflow", "involvedName": "wf", "expect": [{"type": "Normal", "reason": "OverrideApplied"}]}],
      "collect": ["Job"]})
case("wf-overrides-gcp", "same Workflow on gcp nodes: the gcp override applies",
     [workflow("wf-overrides-gcp", overrides=aws_env, deps=[runtime()])],
     {"generateNodes": nodes("wf-overrides-gcp", 2, pid="gce://p/z/{name}"),
      "waitFor": {"kind": "Job", "name": "wf-job"}, "collect": ["Job"]})
case("wf-override-noop", "an override that changes nothing: OverrideNoOp warning",
     [workflow("wf-override-noop", overrides=[{"when": {}, "jobTemplate": {"spec": {"workload": {"trainJob": {"trainer": {"image": "nccl:1"}}}}}}], deps=[runtime()])],
     {"generateNodes": nodes("wf-override-noop", 2), "waitFor": {"kind": "Job", "name": "wf-job"},
      "events": [{"involvedKind": "Workflow", "involvedName": "wf", "expect": [{"type": "Warning", "reason": "OverrideNoOp"}]}]})
case("wf-no-overrides-matched", "no override matches: NoOverridesMatched",
     [workflow("wf-no-overrides-matched", overrides=[aws_env[1]], deps=[runtime()])],
     {"generateNodes": nodes("wf-no-overrides-matched", 2), "waitFor": {"kind": "Job", "name": "wf-job"},
      "events": [{"involvedKind": "Workflow", "involvedName": "wf", "expect": [{"type": "Normal", "reason": "NoOverridesMatched"}]}]})
case("wf-override-error", "a failing JSON Patch test: OverrideError",
     [workflow("wf-override-error", overrides=[{"when": {}, "jobTemplatePatch": [{"op": "test", "path": "/spec/workload/trainJob/trainer/image", "value": "other"}]}])],
     {"generateNodes": nodes("wf-override-error", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "OverrideError"}})
# --- gang contract
GANG = {"schedulerName": "kai-scheduler", "queue": "team-a", "queueLabelKey": "kai.scheduler/queue"}
case("wf-gang-consistent", "WF-13 WF-22: a consistent gang setup creates the Job with the queue label",
     [workflow("wf-gang-consistent", gang=GANG, wl_labels={"kai.scheduler/queue": "team-a"}, deps=[runtime("team-a", "kai-scheduler")])],
     {"generateNodes": nodes("wf-gang-consistent", 2), "waitFor": {"kind": "Job", "name": "wf-job"}, "collect": ["Job"]})
case("wf-gang-label-removed-restored", "WF-25 WF-45 WF-39: a removed workload queue label is restored on the Job",
     [workflow("wf-gang-label-removed-restored", gang=GANG, wl_labels={"kai.scheduler/queue": "team-a"},
               overrides=[{"when": {"platform": {"equals": "aws"}}, "jobTemplatePatch": [
                   {"op": "remove", "path": "/spec/workloadMetadata/labels/kai.scheduler~1queue"}]}],
               deps=[runtime("team-a", "kai-scheduler")])],
     {"generateNodes": nodes("wf-gang-label-removed-restored", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobRunning"},
      "collect": ["Job", "Workflow"]})
case("wf-gang-conflict-workload-label", "WF-23 WF-24 WF-38 WF-46 WF-47: changed queue label: GangSchedulingConflict, no children",
     [workflow("wf-gang-conflict-workload-label", gang=GANG, wl_labels={"kai.scheduler/queue": "team-a"},
               overrides=[{"when": {"platform": {"equals": "aws"}}, "jobTemplate": {"spec": {"workloadMetadata": {"labels": {"kai.scheduler/queue": "team-b"}}}}}],
               deps=[runtime("team-a", "kai-scheduler")])],
     {"generateNodes": nodes("wf-gang-conflict-workload-label", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "GangSchedulingConflict"},
      "collect": ["Job", "TrainingRuntime"]})
case("wf-gang-conflict-runtime-label", "WF-48 WF-49 WF-33: runtime queue label rewritten by a dependency override",
     [workflow("wf-gang-conflict-runtime-label", gang=GANG, wl_labels={"kai.scheduler/queue": "team-a"},
               overrides=[{"when": {"platform": {"equals": "aws"}}, "dependencies": [
                   {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "metadata": {"name": "nccl-runtime"},
                    "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"metadata": {"labels": {"kai.scheduler/queue": "team-b"}}}}]}}}}]}],
               deps=[runtime("team-a", "kai-scheduler")])],
     {"generateNodes": nodes("wf-gang-conflict-runtime-label", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "GangSchedulingConflict"},
      "collect": ["Job", "TrainingRuntime"]})
case("wf-gang-runtime-label-absent", "WF-31: the runtime lacks the queue label: GangSchedulingConflict",
     [workflow("wf-gang-runtime-label-absent", gang=GANG, deps=[runtime(None, "kai-scheduler")])],
     {"generateNodes": nodes("wf-gang-runtime-label-absent", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "GangSchedulingConflict"}})
case("wf-no-gang-passthrough", "WF-40 WF-41: no gangScheduler: labels pass through, no queue checks",
     [workflow("wf-no-gang-passthrough", wl_labels={"kai.scheduler/queue": "anything"}, deps=[runtime("other", "default-scheduler")])],
     {"generateNodes": nodes("wf-no-gang-passthrough", 2), "waitFor": {"kind": "Job", "name": "wf-job"}, "collect": ["Job"]})
# --- dependencies, collisions, deletion
NCCL_ENV = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nccl-env"}, "data": {"NCCL_DEBUG": "WARN"}}
foreign_cm = copy.deepcopy(NCCL_ENV)
case("wf-dependency-collision", "a foreign ConfigMap named like a workflow-scoped dependency: DependencyNameCollision",
     [foreign_cm, workflow("wf-dependency-collision", deps=[runtime(), NCCL_ENV])],
     {"generateNodes": nodes("wf-dependency-collision", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "DependencyNameCollision"}})
foreign_job = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "metadata": {"name": "wf-job"},
               "spec": {"workload": {"trainJob": {"runtimeRef": {"kind": "TrainingRuntime", "name": "x"}}}}}
case("wf-job-name-collision", "a foreign Job named wf-job: JobNameCollision",
     [foreign_job, workflow("wf-job-name-collision", deps=[runtime()])],
     {"generateNodes": nodes("wf-job-name-collision", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "JobNameCollision"}})
case("wf-deletion", "deleting the Workflow deletes its Jobs and owned dependencies, then drops the finalizer",
     [workflow("wf-deletion", deps=[runtime()])],
     # deleted once its status records the job-scoped runtime (JobRunning), which the
     # controller then deletes itself; before that only the garbage collector would, later
     {"generateNodes": nodes("wf-deletion", 2), "steps": [{"waitFor": {"kind": "Job", "name": "wf-job"}}],
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobRunning"},
      "deleteAfterWait": [{"kind": "Workflow", "name": "wf"}], "waitForDeletion": True,
      "collect": ["Job", "TrainingRuntime", "Workflow"]})
case("wf-job-deleted", "a Job deleted while running fails its group (no retries left): JobDeleted, IterationsFailed",
     [workflow("wf-job-deleted", deps=[runtime()])],
     {"generateNodes": nodes("wf-job-deleted", 2), "waitFor": {"kind": "Job", "name": "wf-job"},
      "deleteAfterWait": [{"kind": "Job", "name": "wf-job"}], "waitForDeletion": True,
      "events": [{"involvedKind": "Workflow", "involvedName": "wf",
                  "expect": [{"type": "Warning", "reason": "JobDeleted"}, {"type": "Warning", "reason": "IterationsFailed"}]}],
      "collect": ["Job"]})
# --- deleted-Job relaunch (§2.10): a deletion is a failure of the group, relaunched while retries are left
case("wf-job-deleted-relaunch", "JOB-92: a deleted Job is relaunched as a retry (retries 1), the replacement starts with an empty status; JobDeleted event",
     [workflow("wf-job-deleted-relaunch", execution={"retryFailedGroups": 1}, deps=[runtime()])],
     {"generateNodes": nodes("wf-job-deleted-relaunch", 2),
      "steps": [{"waitFor": {"kind": "Job", "name": "wf-job"},
                 "patches": [{"target": {"kind": "Job", "name": "wf-job"}, "status": True,
                              "patch": job_status(cond("InProgress", "True", "WorkloadRunning"))}]}],
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobRunning"},
      "deleteAfterWait": [{"kind": "Job", "name": "wf-job"}],
      "events": [{"involvedKind": "Workflow", "involvedName": "wf", "expect": [{"type": "Warning", "reason": "JobDeleted"}]}],
      "collect": ["Job", "TrainingRuntime", "Workflow"]})
# --- dependency scopes (§2.8): the runtime named by runtimeRef is job-scoped, renamed per Job and owned by it
case("wf-job-scoped-deps", "job-scoped TrainingRuntime renamed per group (-<hash>-<group>-iter-1), owned by its Job; the unnamed ConfigMap stays workflow-scoped",
     [workflow("wf-job-scoped-deps", num_nodes=1, deps=[runtime(), NCCL_ENV])],
     {"generateNodes": nodes("wf-job-scoped-deps", 2),
      "steps": [{"waitFor": {"kind": "Job", "name": "wf-group-0-iter-1"}}, {"waitFor": {"kind": "Job", "name": "wf-group-1-iter-1"}},
                {"waitFor": {"kind": "TrainingRuntime", "name": "nccl-runtime-5947a-group-1-iter-1"}}],
      # the status written after both groups launched and their runtimes were handed to their Jobs
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobRunning"},
      "collect": ["ConfigMap", "Job", "TrainingRuntime", "Workflow"]})
case("wf-job-scoped-deps-cleanup", "a finished group's job-scoped dependencies are deleted; its Job is kept for reports",
     [workflow("wf-job-scoped-deps-cleanup", deps=[runtime()])],
     {"generateNodes": nodes("wf-job-scoped-deps-cleanup", 2), "steps": done_steps(["wf-job"], OK),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Succeeded", "reason": "JobCompleted"},
      "collect": ["Job", "TrainingRuntime"]})
foreign_job_rt = runtime()
foreign_job_rt["metadata"]["name"] = "nccl-runtime-5947a-job"
case("wf-job-scoped-dep-collision", "a foreign object with a job-scoped dependency's per-Job name: DependencyNameCollision, no Job",
     [foreign_job_rt, workflow("wf-job-scoped-dep-collision", deps=[runtime()])],
     {"generateNodes": nodes("wf-job-scoped-dep-collision", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "DependencyNameCollision"},
      "collect": ["Job", "Workflow"]})


# --- overrides per platform (detection from providerID and labels, WF-63)
PLATFORMS = [("azure", "azure:///subscriptions/s/{name}", {}), ("oci", "ocid1.instance.oc1..{name}", {}),
             ("onprem", "openstack:///{name}", {}), ("nscale", "nscale://{name}", {}),
             ("mistral", "metal3://{name}", {}), ("togetherai", "kubevirt://{name}", {"node-role.together.ai/worker": ""}),
             ("forge", None, {"nke.nvidia.com/site-name": "site-1"}), ("onprem-kubevirt", "kubevirt://{name}", {})]
for plat, pid, extra in PLATFORMS:
    name = "wf-platform-" + plat
    detected = plat.split("-")[0]
    ov = [{"when": {"platform": {"equals": detected}},
           "jobTemplate": {"spec": {"workload": {"trainJob": {"trainer": {"env": [{"name": "PLATFORM", "value": detected}]}}}}}},
          {"when": {"platform": {"notIn": [detected]}}, "jobTemplate": {"spec": {"stallMultiplier": 7}}}]
    gn = nodes(name, 2, pid=pid)
    if pid is None:
        del gn["providerID"]
    gn["labels"].update(extra)
    case(name, "WF-63 WF-68: platform %s detected; only its override applies" % detected,
         [workflow(name, overrides=ov, deps=[runtime()])],
         {"generateNodes": gn, "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobRunning"},
          "collect": ["Job", "Workflow"]})
# --- GPU architecture overrides (WF-62)
for arch, product in [("gb200", "NVIDIA-GB200-NVL72"), ("h100", H100), ("rtxpro6000", "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition")]:
    name = "wf-arch-" + arch
    ov = [{"when": {"gpuArchitecture": {"in": ["gb200", "gb300"]}},
           "jobTemplatePatch": [{"op": "add", "path": "/spec/workload/trainJob/trainer/env/-", "value": {"name": "MNNVL", "value": "1"}}]},
          {"when": {"gpuArchitecture": {"equals": "rtxpro6000"}}, "jobTemplate": {"spec": {"workload": {"trainJob": {"trainer": {"image": "rtx:1"}}}}}}]
    case(name, "WF-62: architecture %s from nvidia.com/gpu.product drives gpuArchitecture overrides" % arch,
         [workflow(name, overrides=ov, deps=[runtime()])],
         {"generateNodes": nodes(name, 2, product=product),
          "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobRunning"},
          "collect": ["Job", "Workflow"]})
# --- more override kinds
case("wf-override-expression", "CEL when.expression over platform, gpuArchitecture, domainCount",
     [workflow("wf-override-expression", overrides=[{"when": {"expression": "platform == 'aws' && gpuArchitecture == 'h100' && workloadKind == 'TrainJob'"},
                                                     "jobTemplate": {"spec": {"stallMultiplier": 4}}}], deps=[runtime()])],
     {"generateNodes": nodes("wf-override-expression", 2), "waitFor": {"kind": "Job", "name": "wf-job"}, "collect": ["Job"]})
case("wf-override-iterations", "orchestration override replaces iterations: per-iteration Job names",
     [workflow("wf-override-iterations", overrides=[{"when": {}, "orchestration": {"iterations": 2}}], deps=[runtime()])],
     {"generateNodes": nodes("wf-override-iterations", 2), "waitFor": {"kind": "Job", "name": "wf-group-0-iter-1"}, "collect": ["Job"]})
case("wf-override-dependency-append", "a dependencies override appends a ConfigMap, created workflow-scoped",
     [workflow("wf-override-dependency-append", overrides=[{"when": {}, "dependencies": [
         {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nccl-env"}, "data": {"NCCL_DEBUG": "WARN"}}]}], deps=[runtime()])],
     {"generateNodes": nodes("wf-override-dependency-append", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobRunning"}, "collect": ["ConfigMap", "TrainingRuntime"]})
case("wf-override-dependency-merge", "a dependencies override merges into the TrainingRuntime by name",
     [workflow("wf-override-dependency-merge", overrides=[{"when": {}, "dependencies": [
         {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "metadata": {"name": "nccl-runtime"},
          "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
              "containers": [{"name": "node", "image": "nccl:2"}]}}}}}]}}}}]}], deps=[runtime()])],
     {"generateNodes": nodes("wf-override-dependency-merge", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobRunning"}, "collect": ["TrainingRuntime"]})
case("wf-override-trainer-env-strategic", "jobTemplate SMP: trainer.env replaces, metadata labels merge",
     [workflow("wf-override-trainer-env-strategic", overrides=[{"when": {}, "jobTemplate": {"metadata": {"labels": {"extra": "1", "team": None}},
         "spec": {"workload": {"trainJob": {"trainer": {"env": [{"name": "ONLY", "value": "1"}]}}}}}}], deps=[runtime()])],
     {"generateNodes": nodes("wf-override-trainer-env-strategic", 2), "waitFor": {"kind": "Job", "name": "wf-job"}, "collect": ["Job"]})
# --- partitioning and launching
case("wf-all-nodes-one-job", "numNodes 0: one Job over all nodes (WF-61)",
     [workflow("wf-all-nodes-one-job", num_nodes=0, deps=[runtime()])],
     {"generateNodes": nodes("wf-all-nodes-one-job", 3), "waitFor": {"kind": "Job", "name": "wf-job"}, "collect": ["Job"]})
case("wf-four-groups-concurrent-two", "4 groups, maxConcurrent 2: two Jobs at a time",
     [workflow("wf-four-groups-concurrent-two", num_nodes=1, execution={"maxConcurrent": 2}, deps=[runtime()])],
     {"generateNodes": nodes("wf-four-groups-concurrent-two", 4),
      "steps": done_steps(["wf-group-0-iter-1", "wf-group-1-iter-1", "wf-group-2-iter-1", "wf-group-3-iter-1"], OK),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Succeeded", "reason": "JobCompleted"}, "collect": ["Job"]})
case("wf-target-match-expressions", "target.matchExpressions select the nodes",
     [workflow("wf-target-match-expressions", target_extra={"nodeSelector": {}, "matchExpressions": [
         {"key": "gpuready.test/case", "operator": "In", "values": ["wf-target-match-expressions"]}]}, deps=[runtime()])],
     {"generateNodes": nodes("wf-target-match-expressions", 2), "waitFor": {"kind": "Job", "name": "wf-job"}, "collect": ["Job"]})
case("wf-thresholds-copied", "validation.performance thresholds and measurementTimeout reach the Job",
     [with_validation(workflow("wf-thresholds-copied", deps=[runtime()]))],
     {"generateNodes": nodes("wf-thresholds-copied", 2), "waitFor": {"kind": "Job", "name": "wf-job"}, "collect": ["Job"]})
case("wf-job-timeout-blocked", "timeout during a scheduling-blocked episode: the unschedulable message",
     [workflow("wf-job-timeout-blocked", execution={"timeoutPerJob": "10m"}, deps=[runtime()])],
     {"generateNodes": nodes("wf-job-timeout-blocked", 2),
      "steps": done_steps(["wf-job"], job_status(cond("InProgress", "True", "WorkloadSchedulingBlocked"),
                                                 schedulingBlockedSince="2026-01-01T00:00:00Z")),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "IterationsFailed"},
      "collect": ["Job"]})
case("wf-iteration-failure-then-success", "a failure in iteration 1 and success in 2: IterationsFailed, 1 group failed across 2 iterations",
     [workflow("wf-iteration-failure-then-success", iterations=2, deps=[runtime()])],
     {"generateNodes": nodes("wf-iteration-failure-then-success", 2),
      "steps": done_steps(["wf-group-0-iter-1"], FAILED) + done_steps(["wf-group-0-iter-2"], OK),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "IterationsFailed"}})

# --- more of the gang contract (WF-28..36)
case("wf-gang-scheduler-mismatch", "WF-28: the runtime's pod schedulerName differs: GangSchedulingConflict",
     [workflow("wf-gang-scheduler-mismatch", gang=GANG, wl_labels={"kai.scheduler/queue": "team-a"}, deps=[runtime("team-a", "default-scheduler")])],
     {"generateNodes": nodes("wf-gang-scheduler-mismatch", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "GangSchedulingConflict"}})
case("wf-gang-runtimeref-outside-deps", "WF-34: runtimeRef repointed at a runtime outside the dependencies",
     [workflow("wf-gang-runtimeref-outside-deps", gang=GANG, wl_labels={"kai.scheduler/queue": "team-a"},
               overrides=[{"when": {}, "jobTemplate": {"spec": {"workload": {"trainJob": {"runtimeRef": {"name": "elsewhere"}}}}}}],
               deps=[runtime("team-a", "kai-scheduler")])],
     {"generateNodes": nodes("wf-gang-runtimeref-outside-deps", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "GangSchedulingConflict"}})
shape = runtime("team-a", "kai-scheduler")
shape["spec"] = {"mlPolicy": {"numNodes": 1}}
case("wf-gang-runtime-shape", "WF-35: a runtime without replicatedJobs cannot be checked: GangSchedulingConflict",
     [workflow("wf-gang-runtime-shape", gang=GANG, wl_labels={"kai.scheduler/queue": "team-a"}, deps=[shape])],
     {"generateNodes": nodes("wf-gang-runtime-shape", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "GangSchedulingConflict"}})
case("wf-gang-runtime-patch-folded", "WF-29 WF-30: a TrainJob runtimePatch rewriting the pod queue label is folded in and fails",
     [workflow("wf-gang-runtime-patch-folded", gang=GANG, wl_labels={"kai.scheduler/queue": "team-a"},
               overrides=[{"when": {}, "jobTemplate": {"spec": {"workload": {"trainJob": {"runtimePatches": [
                   {"manager": "example.com/tuning", "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
                       {"name": "node", "template": {"spec": {"template": {"metadata": {"labels": {"kai.scheduler/queue": "team-c"}}}}}}]}}}}]}}}}}],
               deps=[runtime("team-a", "kai-scheduler")])],
     {"generateNodes": nodes("wf-gang-runtime-patch-folded", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "GangSchedulingConflict"}})
case("wf-gang-two-groups", "WF-10 WF-36: the contract is re-checked per group; both Jobs carry the queue label",
     [workflow("wf-gang-two-groups", num_nodes=1, gang=GANG, wl_labels={"kai.scheduler/queue": "team-a"}, deps=[runtime("team-a", "kai-scheduler")])],
     {"generateNodes": nodes("wf-gang-two-groups", 2),
      "steps": done_steps(["wf-group-0-iter-1", "wf-group-1-iter-1"], OK),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Succeeded", "reason": "JobCompleted"}, "collect": ["Job"]})
case("wf-gang-default-queue", "WF-14 WF-15: queue and key left empty resolve to default-queue / kai.scheduler/queue (label restored)",
     [workflow("wf-gang-default-queue", gang={"schedulerName": "kai-scheduler"}, deps=[runtime("default-queue", "kai-scheduler")])],
     {"generateNodes": nodes("wf-gang-default-queue", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobRunning"}, "collect": ["Job"]})
# --- discovery details
nogpu = copy.deepcopy(hetero_node)
nogpu["metadata"]["name"] = "wfcase-no-gpu-present"
nogpu["metadata"]["labels"] = {"gpuready.test/case": "wf-no-gpu-present", "kubernetes.io/hostname": "wfcase-no-gpu-present"}
nogpu["spec"] = {"providerID": "aws:///x/wfcase-no-gpu-present"}
case("wf-no-gpu-present", "a matching node without nvidia.com/gpu.present=true does not count: NodeDiscoveryError",
     [nogpu, workflow("wf-no-gpu-present")],
     {"waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "NodeDiscoveryError"}})
case("wf-override-gpu-notin", "gpuArchitecture notIn: applies on h100 when the list names only gb200",
     [workflow("wf-override-gpu-notin", overrides=[{"when": {"gpuArchitecture": {"notIn": ["gb200"]}, "platform": {"in": ["aws", "gcp"]}},
                                                    "jobTemplate": {"spec": {"stallMultiplier": 5}}}], deps=[runtime()])],
     {"generateNodes": nodes("wf-override-gpu-notin", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobRunning"}, "collect": ["Job", "Workflow"]})

BLOCKED_MSG = "Workload pods are unschedulable: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
# --- Unpinned placement (ADR-089): one Job of the exact size, no hostname pinning, nodes back-filled from its pods
def plain_node(name, case_name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "gpuready.test/case": case_name, "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": H100, "kubernetes.io/hostname": name}},
        "spec": {"providerID": "aws:///x/" + name}}
def placed_pod(name, job, node):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"nvcre.nvidia.com/job": job}},
            "spec": {"nodeName": node, "automountServiceAccountToken": False,
                     "containers": [{"name": "node", "image": "nccl:1"}]}}
def unpinned(wf):
    wf["spec"]["orchestration"]["placement"] = "Unpinned"
    return wf
un_nodes = [plain_node("wfcase-unpinned-%d" % i, "wf-unpinned") for i in range(3)]
pending_pod = placed_pod("wf-job-node-1", "wf-job", None)
del pending_pod["spec"]["nodeName"]
case("wf-unpinned", "ADR-089: Unpinned runs 1 job of 2 of 3 nodes, target as affinity; the group's nodes are back-filled from the pods placed so far (1 of 2, the other unschedulable)",
     un_nodes + [placed_pod("wf-job-node-0", "wf-job", "wfcase-unpinned-2"), pending_pod,
                 unpinned(workflow("wf-unpinned", deps=[runtime()]))],
     {"steps": done_steps(["wf-job"], job_status(cond("InProgress", "True", "WorkloadSchedulingBlocked", BLOCKED_MSG),
                                                 schedulingBlockedSince="2026-01-01T00:00:00Z")),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobSchedulingBlocked"},
      "events": [{"involvedKind": "Workflow", "involvedName": "wf", "expect": [{"type": "Normal", "reason": "GroupsPartitioned"}]}],
      "collect": ["Job", "Workflow"]})
case("wf-unpinned-insufficient-nodes", "ADR-089: Unpinned needs the exact size: PartitionError with the Unpinned hint",
     [unpinned(workflow("wf-unpinned-insufficient-nodes", num_nodes=3))],
     {"generateNodes": nodes("wf-unpinned-insufficient-nodes", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "PartitionError"}})
case("wf-unpinned-no-job-size", "ADR-089: Unpinned without trainer.numNodes is rejected: PartitionError",
     [unpinned(workflow("wf-unpinned-no-job-size", num_nodes=0))],
     {"generateNodes": nodes("wf-unpinned-no-job-size", 2),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "PartitionError"}})
# --- ADR-083 / JOB-85: the Job's blocked or rejected state relayed on the Workflow's InProgress
case("wf-job-scheduling-blocked", "ADR-083: a scheduling-blocked Job: Workflow InProgress JobSchedulingBlocked with the Job's message",
     [workflow("wf-job-scheduling-blocked", deps=[runtime()])],
     {"generateNodes": nodes("wf-job-scheduling-blocked", 2),
      "steps": done_steps(["wf-job"], job_status(cond("InProgress", "True", "WorkloadSchedulingBlocked", BLOCKED_MSG),
                                                 schedulingBlockedSince="2026-01-01T00:00:00Z",
                                                 workloadRef={"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "wf-job-workload"})),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobSchedulingBlocked"},
      "collect": ["Workflow"]})
case("wf-job-creation-rejected", "JOB-85: a Job whose workload create is rejected: Workflow InProgress JobCreationRejected with the rejection",
     [workflow("wf-job-creation-rejected", deps=[runtime()])],
     {"generateNodes": nodes("wf-job-creation-rejected", 2),
      "steps": done_steps(["wf-job"], job_status(cond("InProgress", "True", "WorkloadCreationRejected",
                                                      "admission webhook \"quota.example.com\" denied the request: exceeded quota"),
                                                 workloadCreationRejectedSince="2026-01-01T00:00:00Z")),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress", "reason": "JobCreationRejected"},
      "collect": ["Workflow"]})

# --- WF-11 WF-12: overrides stay editable; a Job's metadata is fixed when it is created
case("wf-overrides-edited-midflight", "WF-11 WF-12: overrides edited after group-0's Job exists are accepted and reach group-1's Job only",
     [workflow("wf-overrides-edited-midflight", num_nodes=1, execution={"maxConcurrent": 1}, deps=[runtime()])],
     {"generateNodes": nodes("wf-overrides-edited-midflight", 2),
      "steps": [{"waitFor": {"kind": "Job", "name": "wf-group-0-iter-1"},
                 "patches": [{"target": {"kind": "Workflow", "name": "wf"},
                              "patch": {"spec": {"overrides": [{"when": {}, "jobTemplate": {"metadata": {"labels": {"edited": "yes"}}}}]}}},
                             {"target": {"kind": "Job", "name": "wf-group-0-iter-1"}, "status": True, "patch": OK}]}]
               + done_steps(["wf-group-1-iter-1"], OK),
      "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Succeeded", "reason": "JobCompleted"},
      "collect": ["Job"]})

ckpt = workflow("wf-checkpoint-pvc-missing", deps=[runtime()])
ckpt["spec"]["jobTemplate"]["spec"]["checkpoint"] = {"pvcName": "ckpt", "maxRestarts": 1}
case("wf-checkpoint-pvc-missing", "the checkpoint guard: checkpoint.pvcName without that PVC among the dependencies: CheckpointPVCMissing",
     [ckpt], {"generateNodes": nodes("wf-checkpoint-pvc-missing", 2),
              "waitFor": {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "CheckpointPVCMissing"}})

# --- ADR-053: deleting the Workflow deletes its claim and lets the volume go (Retain → Delete once Released)
pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "wfcase-pv-reclaim"},
      "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain",
               "storageClassName": "", "hostPath": {"path": "/tmp/wfcase-pv-reclaim"}}}
pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "scratch"},
       "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": "wfcase-pv-reclaim",
                "resources": {"requests": {"storage": "1Gi"}}}}
case("wf-pvc-reclaim", "ADR-053: Workflow deletion deletes the owned claim bound to a Retain volume, flips the volume to Delete once Released (unit-tested: gr_nvcre_wf_pv_reclaim) and completes",
     [pv, workflow("wf-pvc-reclaim", deps=[runtime(), pvc])],
     {"generateNodes": nodes("wf-pvc-reclaim", 2), "waitFor": {"kind": "Job", "name": "wf-job"},
      "deleteAfterWait": [{"kind": "Workflow", "name": "wf"}], "waitForDeletion": True,
      "collect": ["PersistentVolumeClaim", "Workflow"]})

# Terminal failures: pin the whole Workflow (status, messages byte for byte).
# --- diagnose mode (§2.14; docs/nvcre-workflow.md § Diagnose mode)
BM_CRD = {"input_crd_nvcre_bandwidthmeasurements.yaml": "../../../../deploy/crds/nvcre.nvidia.com_bandwidthmeasurements.yaml"}
def diagnose(wf, min_group=None, key=None):
    d = {}
    if min_group is not None:
        d["minGroupSize"] = min_group
    if key:
        d["topologyKey"] = key
    wf["spec"]["orchestration"]["diagnose"] = d
    return wf
def rack_node(name, case_name, rack):
    n = plain_node(name, case_name)
    n["metadata"]["labels"]["gpuready.test/rack"] = rack
    return n
def bm(job, status=None):
    o = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "BandwidthMeasurement",
         "metadata": {"name": job + "-bandwidth"},
         "spec": {"jobRef": {"apiGroup": "nvcre.nvidia.com", "kind": "Job", "name": job},
                  "logProfileRef": "nccl-tests"}}
    if status is not None:
        o["status"] = status
    return o
def bm_done(*busbw):
    return {"conditions": [cond("Complete", "True", "MeasurementComplete")],
            "results": [{"sizeBytes": 1 << (20 + i), "algBW": b, "busBW": b, "samples": 1}
                        for i, b in enumerate(busbw)]}
WORKFLOW_DONE_OK = {"kind": "Workflow", "name": "wf", "condition": "Succeeded", "reason": "JobCompleted"}
WORKFLOW_DONE_FAILED = {"kind": "Workflow", "name": "wf", "condition": "Failed", "reason": "IterationsFailed"}
racks = [rack_node("wfcase-diag-%d" % i, "wf-diagnose-all-healthy", "r%d" % (i // 2)) for i in range(4)]
case("wf-diagnose-all-healthy", "diagnose: two racks screened (intra-r0, intra-r1), then one representative each (inter-domain): Succeeded 'All domains healthy, no faults detected'",
     racks + [diagnose(workflow("wf-diagnose-all-healthy", deps=[runtime()]), key="gpuready.test/rack")],  # Nodes before the Workflow: its first pass lists them
     {"steps": done_steps(["wf-intra-r0-iter-1", "wf-intra-r1-iter-1"], OK) + done_steps(["wf-inter-domain-iter-2"], OK),
      "collect": ["Job"], "waitFor": WORKFLOW_DONE_OK,
      "events": [{"involvedKind": "Workflow", "involvedName": "wf",
                  "expect": [{"type": "Normal", "reason": "IterationCompleted"}, {"type": "Normal", "reason": "JobCompleted"}]}]})
case("wf-diagnose-no-topology", "diagnose without a topology key: one domain screened, bisected to one node, confirmed with a healthy reference: Failed 'Diagnosis complete: 1 faulty nodes confirmed'",
     [diagnose(workflow("wf-diagnose-no-topology", deps=[runtime()]), min_group=1)],
     {"generateNodes": nodes("wf-diagnose-no-topology", 2),
      "steps": done_steps(["wf-intra-default-iter-1"], FAILED) + done_steps(["wf-bisect-0-h0-iter-2"], FAILED)
               + done_steps(["wf-bisect-0-h1-iter-2"], OK) + done_steps(["wf-confirm-0-iter-3"], FAILED),
      "collect": ["Job"], "waitFor": WORKFLOW_DONE_FAILED,
      "events": [{"involvedKind": "Workflow", "involvedName": "wf", "expect": [{"type": "Warning", "reason": "IterationsFailed"}]}]})
def diag_bw(name, bm_status):
    return with_validation(diagnose(workflow(name, deps=[runtime()])))
case("wf-diagnose-threshold-pass", "diagnose with busBandwidthGBps 'value >= 400': the group's BandwidthMeasurement max busBW 450 keeps it Succeeded",
     [diag_bw("wf-diagnose-threshold-pass", None), bm("wf-intra-default-iter-1", bm_done("120", "450"))],
     {"generateNodes": nodes("wf-diagnose-threshold-pass", 2),
      "steps": done_steps(["wf-intra-default-iter-1"], OK), "waitFor": WORKFLOW_DONE_OK})
case("wf-diagnose-threshold-fail", "diagnose: max busBW 120 < 400 reclassifies the succeeded group as failed; no healthy reference: 'No healthy reference node; 2 suspects marked failed'",
     [diag_bw("wf-diagnose-threshold-fail", None), bm("wf-intra-default-iter-1", bm_done("80", "120"))],
     {"generateNodes": nodes("wf-diagnose-threshold-fail", 2),
      "steps": done_steps(["wf-intra-default-iter-1"], OK), "waitFor": WORKFLOW_DONE_FAILED})
case("wf-diagnose-threshold-pending", "diagnose: the BandwidthMeasurement is not Complete when the Job succeeds: the round waits (requeue), then passes",
     [diag_bw("wf-diagnose-threshold-pending", None), bm("wf-intra-default-iter-1")],
     {"generateNodes": nodes("wf-diagnose-threshold-pending", 2),
      "steps": done_steps(["wf-intra-default-iter-1"], OK)
               + [{"waitFor": {"kind": "Workflow", "name": "wf", "condition": "InProgress"},
                   "patches": [{"target": {"kind": "BandwidthMeasurement", "name": "wf-intra-default-iter-1-bandwidth"},
                                "status": True, "patch": {"status": bm_done("410")}}]}],
      "waitFor": WORKFLOW_DONE_OK})
case("wf-diagnose-threshold-nodata", "diagnose: a Complete BandwidthMeasurement without results cannot vouch for the group: failed, no healthy reference",
     [diag_bw("wf-diagnose-threshold-nodata", None),
      bm("wf-intra-default-iter-1", {"conditions": [cond("Complete", "True", "MeasurementComplete")]})],
     {"generateNodes": nodes("wf-diagnose-threshold-nodata", 2),
      "steps": done_steps(["wf-intra-default-iter-1"], OK), "waitFor": WORKFLOW_DONE_FAILED})
DIAG_BM_CASES = ["wf-diagnose-threshold-pass", "wf-diagnose-threshold-fail", "wf-diagnose-threshold-pending",
                 "wf-diagnose-threshold-nodata"]

for name in ["wf-no-target-nodes", "wf-not-enough-nodes", "wf-heterogeneous-platform", "wf-override-error",
             "wf-gang-conflict-workload-label", "wf-gang-conflict-runtime-label", "wf-gang-runtime-label-absent",
             "wf-dependency-collision", "wf-job-name-collision", "wf-gang-scheduler-mismatch",
             "wf-gang-runtimeref-outside-deps", "wf-gang-runtime-shape", "wf-gang-runtime-patch-folded",
             "wf-unpinned-insufficient-nodes", "wf-unpinned-no-job-size", "wf-checkpoint-pvc-missing"]:
    cfg = cases[name][2]
    cfg["collect"] = sorted(set(cfg.get("collect", []) + ["Workflow"]))

for name, (comment, objects, config) in cases.items():
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    for link, target in list(CRDS.items()) + (list(BM_CRD.items()) if name in DIAG_BM_CASES else []):
        p = os.path.join(d, link)
        if not os.path.islink(p):
            os.symlink(target, p)
    with open(os.path.join(d, "input_client_objects.yaml"), "w") as f:
        f.write("# %s\n" % comment)
        f.write("\n---\n".join(y(o) for o in objects) + "\n")
    config.setdefault("timeoutSeconds", 60)
    with open(os.path.join(d, "input_config.yaml"), "w") as f:
        f.write("# %s\n%s\n" % (comment, y(config)))
print(len(cases), "cases")

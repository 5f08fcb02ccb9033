#!/usr/bin/env python3
"""Generate the Certification reconcile cases (docs/reconcile-cases.md).

Each case: the Certification and Workflow CRDs (links to deploy/crds),
generated GPU Nodes, a Certification, steps that finish the Workflows it
creates (the Workflow controller is simulated: these cases pin the
Certification controller alone), a final waitFor and the snapshot of
Certifications and Workflows. Run from this folder; then
scripts/reconcile-cases --update test/cases/certification writes the
expected.json files. Checklist IDs: Certification itself is not in
shared/spec/checklist.md; the Workflows it creates are. WF-66: every
snapshot names its Workflows <certificationName>-<domain>-<variant> (e.g.
certification-aws-h100-nccl: c-communication-nccl-all-reduce; wf_name()
below). WF-67: each snapshot's Workflow spec is the catalog's for that
{domain, variant} (also test/nvcre/test_catalog_goldens.sh)."""
import json, os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
CRDS = {"input_crd_certifications.yaml": "nvcre.nvidia.com_certifications.yaml",
        "input_crd_workflows.yaml": "nvcre.nvidia.com_workflows.yaml",
        "input_crd_workloadruns.yaml": "nvcre.nvidia.com_workloadruns.yaml"}
PRODUCTS = {"h100": "NVIDIA-H100-80GB-HBM3", "gb200": "NVIDIA-GB200-NVL72", "l40s": "NVIDIA-L40S",
            "gb300": "NVIDIA-GB300-NVL72", "rtxpro6000": "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition",
            "zz9": "NVIDIA-ZZ9-PROTO"}
PROVIDERS = {"aws": "aws:///us-east-1a/i-{index}", "gcp": "gce://proj/us-central1-a/{name}",
             "azure": "azure:///subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/virtualMachines/{name}",
             "oci": "ocid1.instance.oc1.iad.{name}", "onprem": "openstack:///{name}"}


def fnv1a32(s):
    h = 0x811c9dc5
    for b in s.encode():
        h ^= b
        h = (h * 0x01000193) & 0xffffffff
    return h


def wf_name(cert, d, v, opts=None):
    full = f"{cert}-{d}-{v}"
    opts = opts or {}
    if "nodesPerJob" in opts:
        full += f"-n{opts['nodesPerJob']}"
    if "enableMNNVL" in opts:
        full += "-mnnvl" if opts["enableMNNVL"] else "-nomnnvl"
    if len(full) <= 31:
        return full
    keep = full[:25].rstrip("-")
    return f"{keep}-{fnv1a32(full):08x}"[:len(keep) + 6]


import re
PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9_./-]*$")


def key(k):
    return k if PLAIN.match(k) else json.dumps(k)


def yaml_dump(obj, ind=0):
    """Tiny YAML writer (block style, JSON scalars)."""
    pad = "  " * ind
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{key(k)}:")
                out.append(yaml_dump(v, ind + 1))
            else:
                out.append(f"{pad}{key(k)}: {json.dumps(v)}")
    else:
        for v in obj:
            if isinstance(v, (dict, list)) and v:
                sub = yaml_dump(v, ind + 1).split("\n")
                out.append(f"{pad}- {sub[0].strip()}")
                out.extend(sub[1:])
            else:
                out.append(f"{pad}- {json.dumps(v)}")
    return "\n".join(out)


def cert(name, cats, **spec):
    s = {"target": spec.pop("target", {"nodeSelector": {"nvidia.com/gpu.present": "true"}}),
         "categories": [dict(domain=d, variant=v, **({"options": o} if o else {})) for d, v, o in cats]}
    s.update(spec)
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification",
            "metadata": {"name": name}, "spec": s}


def finish(wf, ok):
    cond = {"type": "Succeeded" if ok else "Failed", "status": "True",
            "reason": "JobCompleted" if ok else "JobFailed",
            "message": "simulated", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    ref = ({"succeededNodesRef": {"kind": "ConfigMap", "name": "succeeded-nodes-0000"}} if ok
           else {"failedNodesRef": {"kind": "ConfigMap", "name": "failed-nodes-0000"}})
    return {"target": {"kind": "Workflow", "name": wf}, "status": True,
            "patch": {"status": dict(conditions=[cond], **ref)}}


CASES = {}


def case(name, objs, config, comment):
    CASES[name] = (objs, config, comment)


def nodes(platform="aws", arch="h100", count=2, allocatable=None, allocatable_of=None):
    g = {"count": count, "labels": {"nvidia.com/gpu.product": PRODUCTS[arch]}}
    if platform:
        g["providerID"] = PROVIDERS[platform]
    if allocatable:
        g["allocatable"] = allocatable
    if allocatable_of:
        g["allocatableOf"] = allocatable_of
    return g


C2 = [("communication", "nccl-all-reduce", None), ("diagnostics", "dcgm-level2", None)]
W1, W2 = wf_name("c", "communication", "nccl-all-reduce"), wf_name("c", "diagnostics", "dcgm-level2")
COLLECT = ["Certification", "Workflow"]

case("certification-sequential-create", [cert("c", C2)],
     {"generateNodes": nodes(), "waitFor": {"kind": "Certification", "name": "c", "condition": "InProgress", "reason": "WorkflowRunning"},
      "collect": COLLECT},
     "first category: one Workflow (WorkflowCreated, then WorkflowRunning 1 of 2), second Pending")
case("certification-sequential-progress", [cert("c", C2)],
     {"generateNodes": nodes(), "steps": [{"waitFor": {"kind": "Workflow", "name": W1}, "patches": [finish(W1, True)]}],
      "waitFor": {"kind": "Workflow", "name": W2}, "collect": ["Workflow"]},
     "the second Workflow only after the first succeeded (the Certification's status is pinned by the terminal cases)")
case("certification-sequential-fail-continue", [cert("c", C2)],
     {"generateNodes": nodes(), "steps": [{"waitFor": {"kind": "Workflow", "name": W1}, "patches": [finish(W1, False)]},
                                          {"waitFor": {"kind": "Workflow", "name": W2}, "patches": [finish(W2, True)]}],
      "waitFor": {"kind": "Certification", "name": "c", "condition": "Failed", "reason": "WorkflowFailed"},
      "collect": COLLECT},
     "a failed category does not stop the next; the Certification fails at the end")
case("certification-sequential-all-succeed", [cert("c", C2)],
     {"generateNodes": nodes(), "steps": [{"waitFor": {"kind": "Workflow", "name": W1}, "patches": [finish(W1, True)]},
                                          {"waitFor": {"kind": "Workflow", "name": W2}, "patches": [finish(W2, True)]}],
      "waitFor": {"kind": "Certification", "name": "c", "condition": "Succeeded", "reason": "AllWorkflowsSucceeded"},
      "collect": COLLECT},
     "every category succeeded: AllWorkflowsSucceeded, node refs copied")
case("certification-unknown-category",
     [cert("c", [("diagnostics", "dcgm-level1", None), ("communication", "nccl-bogus", None)])],
     {"generateNodes": nodes(), "waitFor": {"kind": "Certification", "name": "c", "condition": "Failed", "reason": "CategoryNotFound"},
      "collect": COLLECT},
     "an unknown category fails the Certification before anything runs")
case("certification-option-unused-category",
     [cert("c", [("communication", "nccl-all-reduce", None), ("diagnostics", "dcgm-level1", {"maxBytes": "8G"})])],
     {"generateNodes": nodes(), "waitFor": {"kind": "Certification", "name": "c", "condition": "Failed", "reason": "BuildFailed"},
      "collect": COLLECT},
     "a category's own option its entry cannot use (maxBytes on DCGM) fails the Certification before anything runs")
case("certification-option-unused-global",
     [cert("c", C2, maxSteps=10)],
     {"generateNodes": nodes(), "waitFor": {"kind": "Certification", "name": "c", "condition": "Failed", "reason": "BuildFailed"},
      "collect": COLLECT},
     "a global option no category can use (maxSteps: training only) fails the Certification before anything runs")
foreign = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow", "metadata": {"name": W1},
           "spec": {"jobTemplate": {"spec": {"workload": {"trainJob": {"runtimeRef": {"name": "x"}}}}},
                    "orchestration": {"iterations": 1}}}
case("certification-workflow-collision-foreign", [foreign, cert("c", C2)],
     {"generateNodes": nodes(), "waitFor": {"kind": "Certification", "name": "c", "condition": "InProgress", "reason": "WorkflowRunning"},
      "collect": COLLECT},
     "a Workflow of the same name owned by nobody: that category fails, the next runs")
case("certification-waiting-for-nodes", [cert("c", C2, target={"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-B300"}})],
     {"generateNodes": nodes(), "waitFor": {"kind": "Certification", "name": "c", "condition": "InProgress", "reason": "WaitingForNodes"},
      "collect": COLLECT},
     "no node matches: InProgress WaitingForNodes with the retry window")
cordoned = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "rc-cert-cordoned-0", "labels": {"nvidia.com/gpu.present": "true", "gpuready.test/cordoned": "true",
                                                                   "nvidia.com/gpu.product": PRODUCTS["h100"]}},
            "spec": {"unschedulable": True}}
case("certification-cordoned-nodes-do-not-count",
     [cordoned, cert("c", C2, target={"nodeSelector": {"gpuready.test/cordoned": "true"}})],
     {"waitFor": {"kind": "Certification", "name": "c", "condition": "InProgress", "reason": "WaitingForNodes"},
      "collect": COLLECT},
     "a cordoned node does not count as a match")
case("certification-spec-immutable", [cert("c", C2, testScale="full-scale")],
     {"generateNodes": nodes(), "waitFor": {"kind": "Certification", "name": "c", "condition": "InProgress", "reason": "WorkflowRunning"},
      "verifySpecImmutable": True, "collect": ["Certification"]},
     "spec is immutable after creation (CRD CEL)")
case("certification-delete-removes-workflows", [cert("c", C2)],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": W1},
      "deleteAfterWait": [{"kind": "Certification", "name": "c"}], "waitForDeletion": True, "collect": COLLECT},
     "deleting the Certification deletes its Workflows before the finalizer goes")

for plat, arch, d, v in [("aws", "h100", "communication", "nccl-all-reduce"), ("aws", "gb200", "communication", "nccl-all-reduce"),
                         ("gcp", "h100", "communication", "nccl-all-gather"), ("gcp", "gb200", "communication", "nccl-alltoall"),
                         ("azure", "h100", "communication", "nccl-all-reduce"), ("oci", "l40s", "communication", "nccl-loopback"),
                         ("oci", "gb200", "communication", "nccl-loopback-nvswitch"), ("onprem", "h100", "diagnostics", "dcgm-level1"),
                         ("onprem", "gb200", "communication", "nccl-all-reduce"), ("aws", "l40s", "diagnostics", "dcgm-level3"),
                         ("gcp", "l40s", "diagnostics", "dcgm-level4"), ("azure", "l40s", "communication", "nccl-loopback"),
                         ("onprem", "gb300", "communication", "nccl-all-reduce"), ("oci", "h100", "communication", "nccl-all-gather")]:
    short = {"nccl-all-reduce": "nccl", "nccl-all-gather": "allgather", "nccl-alltoall": "alltoall", "nccl-loopback": "loopback",
             "nccl-loopback-nvswitch": "loopback-nvswitch"}.get(v, v)
    wf = wf_name("c", d, v)
    case(f"certification-{plat}-{arch}-{short}", [cert("c", [(d, v, None)])],
         {"generateNodes": nodes(plat, arch), "waitFor": {"kind": "Workflow", "name": wf}, "collect": ["Workflow"]},
         f"full render of {d}/{v} on {plat} {arch}: platform and architecture detected from the Nodes")

GANG = [("communication", "nccl-all-reduce", None)]
case("certification-gangscheduler-nccl", [cert("c", GANG, gangScheduler={"schedulerName": "kai-scheduler"})],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": W1}, "collect": ["Workflow"]},
     "KAI: schedulerName and kai.scheduler/queue=default-queue on the runtime and the workload object")
case("certification-workload-labels-runai",
     [cert("c", GANG, gangScheduler={"schedulerName": "runai-scheduler", "queue": "team-a", "queueLabelKey": "runai/queue"})],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": W1}, "collect": ["Workflow"]},
     "Run:ai: the runai/queue key")
case("certification-workload-labels-merged",
     [cert("c", [("communication", "nccl-all-reduce", {"workloadMetadata": {"labels": {"team": "b"}}})],
           workloadMetadata={"labels": {"team": "a", "cost-center": "42"}})],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": W1}, "collect": ["Workflow"]},
     "workloadMetadata merges per key: per-category team wins, global cost-center stays")
case("certification-image-override-nccl", [cert("c", GANG, image="registry.local/mirror/nccl-tests:1")],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": W1}, "collect": ["Workflow"]},
     "image (air-gap mirror) reaches the trainer and the runtime")
case("certification-mlnx-override-nccl", [cert("c", [("communication", "nccl-all-reduce", {"mlnxPerNode": 4})], mlnxPerNode=0)],
     {"generateNodes": nodes("onprem"), "waitFor": {"kind": "Workflow", "name": W1}, "collect": ["Workflow"]},
     "per-category mlnxPerNode wins over the global 0")
case("certification-resources-override",
     [cert("c", GANG, resources={"limits": {"cpu": "16", "memory": "128Gi"}, "requests": {"cpu": "8", "memory": "64Gi"}})],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": W1}, "collect": ["Workflow"]},
     "CategoryOptions resources reach the workload container beside GPUs and EFA")
case("certification-startup-stall-window-override", [cert("c", GANG, startupStallTimeoutSeconds=1800)],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": W1}, "collect": ["Workflow"]},
     "startupStallTimeoutSeconds reaches the jobTemplate")
case("certification-intra-node", [cert("c", GANG, testScale="intra-node")],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": W1}, "collect": ["Workflow"]},
     "testScale intra-node: one node per job, annotation requested-test-scale")
case("certification-thresholds-validation",
     [cert("c", GANG, thresholds={"busBandwidthGBps": "value >= 350"}, measurementTimeout="10m")],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": W1}, "collect": ["Workflow"]},
     "thresholds: validation.performance.thresholds.thresholds (the CRD nests the map) with measurementTimeout")
case("certification-per-category-options-win",
     [cert("c", [("communication", "nccl-all-reduce", {"maxBytes": "8G", "numIterations": 20})], maxBytes="1G", numIterations=5)],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": W1}, "collect": ["Workflow"]},
     "per-category options win over the global ones")
WN = wf_name("c", "communication", "nccl-all-reduce", {"nodesPerJob": 4})
case("certification-nodes-per-job-name-suffix",
     [cert("c", [("communication", "nccl-all-reduce", {"nodesPerJob": 4})])],
     {"generateNodes": nodes(count=4), "waitFor": {"kind": "Workflow", "name": WN}, "collect": ["Workflow"]},
     "nodesPerJob in the options: -n4 in the (truncated) Workflow name")
case("certification-node-names-target",
     [cert("c", [("diagnostics", "dcgm-level1", None)], target={"nodeNames": ["rc-cert-names-0"]})],
     {"waitFor": {"kind": "Workflow", "name": wf_name("c", "diagnostics", "dcgm-level1")}, "collect": ["Workflow"]},
     "target.nodeNames: exactly the named node, its product decides the architecture")
case("certification-no-architecture-fails",
     [cert("c", [("diagnostics", "dcgm-level1", None)], target={"nodeSelector": {"gpuready.test/noarch": "true"}})],
     {"waitFor": {"kind": "Certification", "name": "c", "condition": "Failed", "reason": "WorkflowFailed"}, "collect": COLLECT},
     "no gpu.product anywhere: the category fails (BuildFailed event), then the Certification")
case("certification-mixed-arch-majority", [cert("c", [("communication", "nccl-loopback", None)])],
     {"generateNodes": nodes("oci", "l40s", 3), "waitFor": {"kind": "Workflow", "name": wf_name("c", "communication", "nccl-loopback")},
      "collect": ["Workflow"]},
     "OCI L40S: 4 GPUs per node from the platform's GPU defaults")
case("certification-three-categories-second-fails",
     [cert("c", [("diagnostics", "dcgm-level1", None), ("communication", "nccl-loopback", None), ("diagnostics", "dcgm-level2", None)])],
     {"generateNodes": nodes(), "steps": [
         {"waitFor": {"kind": "Workflow", "name": wf_name("c", "diagnostics", "dcgm-level1")}, "patches": [finish(wf_name("c", "diagnostics", "dcgm-level1"), True)]},
         {"waitFor": {"kind": "Workflow", "name": wf_name("c", "communication", "nccl-loopback")}, "patches": [finish(wf_name("c", "communication", "nccl-loopback"), False)]},
         {"waitFor": {"kind": "Workflow", "name": W2}, "patches": [finish(W2, True)]}],
      "waitFor": {"kind": "Certification", "name": "c", "condition": "Failed", "reason": "WorkflowFailed"}, "collect": COLLECT},
     "three categories: statuses Succeeded, Failed, Succeeded")
# ---- node-allocatable auto-detection (gr_nvcre_detect.h, docs/certification.md)
NCCL = [("communication", "nccl-all-reduce", None)]


def cert_events(*expect):
    return [{"involvedKind": "Certification", "involvedName": "c",
             "expect": [{"type": t, "reason": r} for t, r in expect]}]


case("certification-onprem-h100-nccl-autodetect", [cert("c", NCCL)],
     {"generateNodes": nodes("onprem", "h100", allocatable={"nvidia.com/gpu": "8", "nvidia.com/mlnxnics": "4"}),
      "waitFor": {"kind": "Workflow", "name": W1},
      "events": cert_events(("Normal", "GPUCountDetected"), ("Normal", "NICDetected"), ("Normal", "WorkflowCreated")),
      "collect": ["Workflow"]},
     "on-prem nodes offer nvidia.com/mlnxnics, not the default rdma/rdma_shared_device_a: the workload requests 4 of them (NICDetected)")
case("certification-onprem-gb300-nccl-ambiguous", [cert("c", NCCL)],
     {"generateNodes": nodes("onprem", "gb300", allocatable={"nvidia.com/gpu": "4", "nvidia.com/mlnxnics": "8", "rdma/ib": "1k"}),
      "waitFor": {"kind": "Workflow", "name": W1},
      "events": cert_events(("Warning", "NICDetectionAmbiguous"), ("Normal", "WorkflowCreated")),
      "collect": ["Workflow"]},
     "two NIC resources and not the default: Warning naming both and options.nicResourceName; no NIC request")
case("certification-gcp-h100-nccl-gke-networks", [cert("c", NCCL)],
     {"generateNodes": nodes("gcp", "h100", allocatable={"nvidia.com/gpu": "8", "networking.gke.io.networks/vpc1": "1",
                                                          "networking.gke.io.networks/vpc2": "1"}),
      "waitFor": {"kind": "Workflow", "name": W1},
      "events": cert_events(("Normal", "GPUCountDetected"), ("Normal", "WorkflowCreated")),
      "collect": ["Workflow"]},
     "GKE: NICs through multi-networking annotations; the networking.gke.io.networks resources are not requested")
case("certification-gcp-h100-nccl-gke-networks-under-capacity", [cert("c", NCCL)],
     {"generateNodes": nodes("gcp", "h100", count=3, allocatable={"nvidia.com/gpu": "8", "networking.gke.io.networks/vpc1": "1"},
                             allocatable_of={"2": {"nvidia.com/gpu": "4"}}),
      "waitFor": {"kind": "Workflow", "name": W1},
      "events": cert_events(("Warning", "GPUCountMismatch"), ("Warning", "InsufficientNodeCapacity"), ("Normal", "WorkflowCreated")),
      "collect": ["Workflow"]},
     "one node has 4 of 8 GPUs allocatable: dropped (target.nodeNames lists the other two), Warning naming it")
case("certification-gcp-rtxpro6000-default-eight-gpus", [cert("c", NCCL)],
     {"generateNodes": nodes("gcp", "rtxpro6000", allocatable={"nvidia.com/gpu": "8"}),
      "waitFor": {"kind": "Workflow", "name": W1}, "collect": ["Workflow"]},
     "RTX PRO 6000 servers with 8 GPUs: the catalog default fits, 8 GPUs per pod")
case("certification-gcp-rtxpro6000-four-gpus-require-explicit-count", [cert("c", NCCL)],
     {"generateNodes": nodes("gcp", "rtxpro6000", allocatable={"nvidia.com/gpu": "4"}),
      "waitFor": {"kind": "Certification", "name": "c", "condition": "Failed", "reason": "WorkflowFailed"},
      "events": cert_events(("Warning", "BuildFailed")),
      "collect": COLLECT},
     "RTX PRO 6000 servers with 4 GPUs: the count is not guessed, the category fails naming options.gpusPerNode")
case("certification-unknown-arch-fallback-event", [cert("c", NCCL)],
     {"generateNodes": nodes("onprem", "zz9"),
      "waitFor": {"kind": "Workflow", "name": W1},
      "events": cert_events(("Warning", "UnknownGPUArchitecture"), ("Normal", "WorkflowCreated")),
      "collect": ["Workflow"]},
     "a GPU product of no known architecture: the catalog's fallback defaults (4 GPUs, no NIC) and a Warning")
case("certification-under-capacity-waits", [cert("c", NCCL, gpusPerNode=8)],
     {"generateNodes": nodes("aws", "h100", allocatable={"nvidia.com/gpu": "4", "vpc.amazonaws.com/efa": "32"}),
      "waitFor": {"kind": "Certification", "name": "c", "condition": "InProgress", "reason": "WaitingForNodes"},
      "events": cert_events(("Warning", "InsufficientNodeCapacity")),
      "collect": COLLECT},
     "gpusPerNode 8 but every node has 4 allocatable: no Workflow, WaitingForNodes saying what is missing")
# ---- WorkloadRun -> Workflow synthesis and status mirror


def run(name="r1", **spec):
    s = {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}}, "image": "registry.local/app:1", "numNodes": 2}
    s.update(spec)
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "WorkloadRun", "metadata": {"name": name}, "spec": s}


RCOL = ["WorkloadRun", "Workflow"]
EXEC = {"exec": {"command": ["nvidia-smi"]}}
case("workloadrun-exec-aws-h100", [run(framework=EXEC)],
     {"generateNodes": nodes("aws", "h100"), "waitFor": {"kind": "WorkloadRun", "name": "r1", "condition": "InProgress", "reason": "WorkflowCreated"},
      "collect": RCOL},
     "exec framework on AWS H100: runtime with EFA, Workflow owned by the run, status detected platform")
case("workloadrun-mpi-aws-gb200",
     [run(framework={"mpi": {"binary": "all_reduce_perf", "args": ["-b", "8", "-e", "8G"], "mpiArgs": ["--allow-run-as-root"],
                             "mpirunPath": "/usr/bin/mpirun"}})],
     {"generateNodes": nodes("aws", "gb200"), "waitFor": {"kind": "Workflow", "name": "r1"}, "collect": ["Workflow"]},
     "MPI on AWS GB200: launcher + workers, ComputeDomain")
case("workloadrun-torch-config-checkpoint",
     [run(framework={"torch": {"script": "train.py", "args": ["--steps", "100"]}},
          config={"inline": {"train.yaml": "lr: 0.1"}}, checkpoint={"storageSize": "100Gi", "maxRestarts": 2})],
     {"generateNodes": nodes("onprem", "h100"), "waitFor": {"kind": "Workflow", "name": "r1"}, "collect": ["Workflow"]},
     "torch with an inline config (ConfigMap r1-config at /config) and a checkpoint PVC")
case("workloadrun-intra-node", [run(framework=EXEC, numNodes=4, orchestration={"testScale": "intra-node"})],
     {"generateNodes": nodes("gcp", "h100"), "waitFor": {"kind": "Workflow", "name": "r1"}, "collect": ["Workflow"]},
     "testScale intra-node: one node per job")
case("workloadrun-gangscheduler-runai-explicit-queue",
     [run(framework=EXEC, gangScheduler={"schedulerName": "runai-scheduler", "queue": "team-a", "queueLabelKey": "runai/queue"})],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": "r1"}, "collect": ["Workflow"]},
     "Run:ai queue key on the runtime and the workload object")
case("workloadrun-gangscheduler-kai-default-queue",
     [run(framework=EXEC, gangScheduler={"schedulerName": "kai-scheduler"})],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": "r1"}, "collect": ["Workflow"]},
     "KAI default queue")
case("workloadrun-user-overrides-appended",
     [run(framework=EXEC, overrides=[{"when": {"platform": {"equals": "aws"}}, "jobTemplatePatch": [
         {"op": "add", "path": "/spec/startupStallTimeoutSeconds", "value": 900}]}])],
     {"generateNodes": nodes(), "waitFor": {"kind": "Workflow", "name": "r1"}, "collect": ["Workflow"]},
     "the run's overrides go into spec.overrides after the generated platform settings")
case("workloadrun-mirror-succeeded", [run(framework=EXEC)],
     {"generateNodes": nodes(), "steps": [{"waitFor": {"kind": "Workflow", "name": "r1"}, "patches": [finish("r1", True)]}],
      "waitFor": {"kind": "WorkloadRun", "name": "r1", "condition": "Succeeded", "reason": "WorkflowSucceeded"}, "collect": RCOL},
     "Succeeded mirrored (WorkflowSucceeded, Workflow completed successfully); others Superseded")
fail_validation = finish("r1", False)
fail_validation["patch"]["status"]["conditions"][0]["reason"] = "JobValidationFailed"
case("workloadrun-mirror-validation-failed", [run(framework=EXEC)],
     {"generateNodes": nodes(), "steps": [{"waitFor": {"kind": "Workflow", "name": "r1"}, "patches": [fail_validation]}],
      "waitFor": {"kind": "WorkloadRun", "name": "r1", "condition": "Failed", "reason": "WorkflowValidationFailed"}, "collect": RCOL},
     "a Workflow failed on thresholds: WorkflowValidationFailed")
case("workloadrun-waiting-for-nodes",
     [run(framework=EXEC, target={"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-B300"}})],
     {"generateNodes": nodes(), "waitFor": {"kind": "WorkloadRun", "name": "r1", "condition": "InProgress", "reason": "WaitingForNodes"},
      "collect": RCOL},
     "no node matches: no Workflow yet")

# nodes without product for the fallback / noarch cases
EXTRA = {
    "certification-node-names-target": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "rc-cert-names-0", "labels": {
        "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-L40S"}}},
    "certification-no-architecture-fails": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "rc-cert-noarch-0", "labels": {
        "nvidia.com/gpu.present": "true", "gpuready.test/noarch": "true"}}},
}

for name, (objs, config, comment) in CASES.items():
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    for link, crd in CRDS.items():
        p = os.path.join(d, link)
        if os.path.lexists(p):
            os.remove(p)
        os.symlink(f"../../../../deploy/crds/{crd}", p)
    if name in EXTRA:
        objs = [EXTRA[name]] + objs
    with open(os.path.join(d, "input_client_objects.yaml"), "w") as f:
        f.write(f"# {comment}\n# Generated by ../gen_cases.py.\n")
        f.write("\n---\n".join(yaml_dump(o) for o in objs) + "\n")
    with open(os.path.join(d, "input_config.yaml"), "w") as f:
        f.write("# Generated by ../gen_cases.py.\n" + yaml_dump(config) + "\n")
print(len(CASES), "cases")

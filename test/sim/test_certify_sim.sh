#!/usr/bin/env bash
# e2e test of the whole NVCRE chain on the simulated GPU cluster (issue 19;
# docs/demo.md):
#
#   test_certify_sim.sh GPUREADY_SIM GPUREADY GPUREADY_MANAGER
#
# One 13-node H100 cluster (AWS shapes) with test/sim/data/certify-faults.yaml,
# the umbrella chart installed with `helm install` (CRDs, LogProfiles,
# ServiceAccount, ClusterRole and Lease Role from charts/nvcre; the preflight
# subchart stays off, as by default) and gpuready-manager run with the
# chart's Deployment args under the chart's ServiceAccount (a TokenRequest
# token, as helm_install_nvcre does: on KWOK nodes the Deployment's pod would
# only be a fake one, so the chart is installed with manager.replicas=0 and
# the test plays the kubelet's part); Certification → Workflow → Job →
# TrainJob (real Trainer) → JobSet → Jobs → pods bound by the real scheduler
# on KWOK nodes → simulator logs → status → report. Cases, sharing the cluster:
#  (a) a clean certification of gpu-node-01..08 (dcgm-level1 + nccl-all-reduce)
#      succeeds, every node passed in both categories; during it (c) the
#      manager is killed with SIGKILL once the first Jobs exist and started
#      again: the run finishes and no NVCRE Job, TrainJob or JobSet is
#      duplicated (one TrainJob and one JobSet per Job, one Job per group);
#  (b) a certification of gpu-node-01..11 catches the injected faults: DCGM fails
#      on gpu-node-09 (reason and the diagnostic's failure log in the report),
#      gpu-node-11 cordoned mid-run fails the DCGM category, and the slow
#      gpu-node-10 fails nccl-all-reduce alone with ThresholdViolation (a
#      busBandwidthGBps threshold on its BandwidthMeasurement, the measured
#      value in the message); its NCCL log (read through the API server)
#      reports the low bus bandwidth;
#  (d) deleting a Certification while its pods run removes every pod, Job,
#      TrainJob and Workflow it started;
#  (e) a check pod that can never be placed (the fault spec's `unschedulable`
#      entry): a Workflow (hand-authored from the catalog, its pod labelled
#      for that entry, grace 5 s, timeoutPerJob 90s) on gpu-node-12 reports
#      its Job WorkloadSchedulingBlocked with the scheduler's reason and
#      relays JobSchedulingBlocked, then times the Job out (JobTimedOut,
#      "... while its pods were unschedulable") and fails gpu-node-12;
#  (f) a TrainJob that fails (every TrainJob pod on gpu-node-13 exits 3): a
#      certification of gpu-node-13 fails it with WorkloadFailed naming the
#      TrainJob, and the Job's failureLog has the pod's node, exit code and
#      log. (e) and (f) run beside (b).
# Every case runs with the chart's RBAC only: the API server audits every
# request of the manager's ServiceAccount and enforces
# OwnerReferencesPermissionEnforcement; at the end any 403 answered to it
# fails the test, naming the verb and resource the chart's ClusterRole lacks.
# Exit 77 (skipped) with GR_SKIP_INTEGRATION=1 or GR_SKIP_E2E=1.
set -euo pipefail
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND exited $?" >&2' ERR

helper=${1:?usage: test_certify_sim.sh GPUREADY_SIM GPUREADY GPUREADY_MANAGER}
gpuready=${2:?gpuready}
manager=${3:?gpuready-manager}
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)

for v in GR_SKIP_INTEGRATION GR_SKIP_E2E; do
  case ${!v:-0} in
    1|true|TRUE|yes|YES|on|ON) echo "SKIPPED: e2e tests disabled by $v"; exit 77 ;;
  esac
done

# Waits bound a hang only; scaled for a loaded machine (HACKING.md § Tests).
scale=${GR_TEST_TIMEOUT_SCALE:-1}
[[ $scale =~ ^[1-9][0-9]*$ ]] || scale=1
W=$((600 * scale))

work=$(mktemp -d "${TMPDIR:-/tmp}/gr-certify-e2e.XXXXXX")
dir=$work/cluster
failures=0
mgr_pid=
fail() { printf 'FAIL: %s\n' "$*" >&2; failures=$((failures + 1)); }
pass() { printf 'ok: %s\n' "$*"; }

SA_USER=system:serviceaccount:nvcre:nvcre-manager
# "count verb group/resource[/subresource]", one line per kind of request of
# the manager the API server forbade (the rule the chart's ClusterRole lacks).
forbidden_summary() {
  [[ -s $work/audit.log ]] || return 0
  jq -r 'select(.responseStatus.code == 403) | "\(.verb) \(.objectRef.apiGroup // "core")/\(.objectRef.resource)\(if .objectRef.subresource then "/" + .objectRef.subresource else "" end)"' \
    "$work/audit.log" | sort | uniq -c
}

dump() {
  echo "==== state for debugging ====" >&2
  "$KUBECTL" get certifications,workflows,jobs.nvcre.nvidia.com,trainjobs,jobsets,pods -A -o wide >&2 2>&1 || true
  "$KUBECTL" get events -A --sort-by=.lastTimestamp 2>&1 | tail -n 40 >&2 || true
  local f
  for f in "$dir"/logs/*.log; do
    [[ -s $f ]] || continue
    printf '==== %s (last 30 lines) ====\n' "$f" >&2
    tail -n 30 "$f" >&2
  done
}

stop_manager() {
  if [[ -n $mgr_pid ]]; then
    kill "$mgr_pid" 2>/dev/null || true
    wait "$mgr_pid" 2>/dev/null || true
    mgr_pid=
  fi
}

cleanup() {
  local rc=$?
  if ((rc != 0 || failures != 0)) && [[ -d $dir ]]; then dump; fi
  stop_manager
  "$root/scripts/cluster" down "$dir" >/dev/null 2>&1 || true
  rm -rf -- "$work"
  exit "$rc"
}
trap cleanup EXIT

KUBECTL=kubectl
if [[ -z ${GR_HELM:-} ]]; then
  GR_HELM=$("$root/scripts/build-k8s" helm --print-bindir)/helm
fi
export HELM_CACHE_HOME=$work/helm/cache HELM_CONFIG_HOME=$work/helm/config HELM_DATA_HOME=$work/helm/data
# The audit log of the manager's ServiceAccount (the RBAC check at the end).
cat >"$work/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    users: ["$SA_USER"]
  - level: None
EOF
GR_APISERVER_ARGS="--audit-policy-file=$work/audit-policy.yaml --audit-log-path=$work/audit.log --audit-log-maxbackup=1 --enable-admission-plugins=OwnerReferencesPermissionEnforcement ${GR_APISERVER_ARGS:-}" \
GR_SIM_HELPER=$helper "$root/scripts/cluster" up --ttl $((1800 * scale)) --timeout $W \
  --gpu-nodes 13 --platform aws --gpu h100 --fault-spec "$here/data/certify-faults.yaml" "$dir"
eval "$("$root/scripts/cluster" env "$dir")"
KUBECTL=$GR_KUBECTL
k() { "$KUBECTL" "$@"; }
g() { local cmd=$1; shift; "$gpuready" "$cmd" --kubeconfig "$GR_KUBECONFIG_ADMIN" "$@"; }

# wait_for SECONDS DESCRIPTION COMMAND...: poll until COMMAND succeeds.
wait_for() {
  local secs=$1 what=$2 end=$((SECONDS + $1))
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= end)); then fail "$what (not within ${secs}s)"; return 1; fi
    sleep 1
  done
  pass "$what"
}

# The chart: CRDs, built-in LogProfiles, ServiceAccount, RBAC (docs/nvcre-chart.md).
k create namespace nvcre >/dev/null
"$GR_HELM" --kubeconfig "$GR_KUBECONFIG_ADMIN" install gpuready "$root/deploy/helm/gpuready" -n nvcre \
  --set nvcre.manager.replicas=0 >"$work/helm.out" 2>&1 || { cat "$work/helm.out" >&2; fail "helm install"; exit 1; }
pass "helm install of the umbrella chart (nvcre subchart, manager.replicas=0)"
crds_established() {
  k wait --for=condition=Established --timeout=5s crd certifications.nvcre.nvidia.com \
    workflows.nvcre.nvidia.com jobs.nvcre.nvidia.com logprofiles.nvcre.nvidia.com \
    bandwidthmeasurements.nvcre.nvidia.com goodputmeasurements.nvcre.nvidia.com
}
wait_for $W "NVCRE CRDs established" crds_established
got=$(k get logprofiles.nvcre.nvidia.com -o jsonpath='{range .items[*]}{.metadata.name}{","}{end}')
[[ $got == *nccl-all-reduce,* ]] || { fail "the chart's LogProfiles: '$got'"; exit 1; }

# The kubelet's part: the Deployment's container (its args, env) as the
# Deployment's ServiceAccount, with a TokenRequest token.
k -n nvcre get deploy nvcre-manager -o json >"$work/deploy.json"
sa=$(jq -r '.spec.template.spec.serviceAccountName' "$work/deploy.json")
[[ "system:serviceaccount:nvcre:$sa" == "$SA_USER" ]] || { fail "the Deployment's ServiceAccount is $sa"; exit 1; }
token=$(k -n nvcre create token "$sa" --duration=2h)
cat >"$work/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$GR_APISERVER_URL", certificate-authority: "$GR_CA_CERT"}}]
users: [{name: sa, user: {token: "$token"}}]
contexts: [{name: c, context: {cluster: c, user: sa}}]
current-context: c
EOF
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
probe=$(free_port)
metrics=$(free_port)
mgr_args=()
while IFS= read -r a; do
  case $a in
    --health-probe-bind-address=*) a=--health-probe-bind-address=127.0.0.1:$probe ;;
    --metrics-bind-address=0) ;;
    --metrics-bind-address=*) a=--metrics-bind-address=127.0.0.1:$metrics ;;
  esac
  mgr_args+=("$a")
done < <(jq -r '.spec.template.spec.containers[0].args[]' "$work/deploy.json")
mgr_n=0
start_manager() {
  mgr_n=$((mgr_n + 1))
  POD_NAMESPACE=nvcre POD_NAME=nvcre-manager-$mgr_n "$manager" "${mgr_args[@]}" --kubeconfig "$work/kubeconfig" \
    >>"$dir/logs/gpuready-manager.log" 2>&1 &
  mgr_pid=$!
  wait_for $W "gpuready-manager ready as $SA_USER ($1)" curl -sf "http://127.0.0.1:$probe/readyz"
}
start_manager "first start"

# cert_state NS NAME: the True condition's type (Succeeded, Failed, InProgress)
cert_state() {
  k -n "$1" get certification "$2" \
    -o 'jsonpath={range .status.conditions[?(@.status=="True")]}{.type}{end}' 2>/dev/null
}
cert_done() { local s; s=$(cert_state "$1" "$2"); [[ $s == Succeeded || $s == Failed ]]; }
count() { k -n "$1" get "$2" ${3:+-l "$3"} -o name 2>/dev/null | grep -c . || true; }

# ---- (a) clean run of gpu-node-01..08, (c) with a SIGKILL of the manager mid-run
ns=e2e-clean
k create namespace "$ns" >/dev/null
k -n "$ns" apply -f - >/dev/null <<'EOF'
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata:
  name: clean
spec:
  target:
    nodeNames: [gpu-node-01, gpu-node-02, gpu-node-03, gpu-node-04,
                gpu-node-05, gpu-node-06, gpu-node-07, gpu-node-08]
  testScale: intra-node
  categories:
  - {domain: diagnostics, variant: dcgm-level1}
  - {domain: communication, variant: nccl-all-reduce}
EOF
have_jobs() { (($(count "$ns" jobs.nvcre.nvidia.com) > 0)); }
wait_for $W "(c) the clean run's first NVCRE Jobs exist" have_jobs
kill -9 "$mgr_pid"
wait "$mgr_pid" 2>/dev/null || true
mgr_pid=
pass "(c) gpuready-manager killed with SIGKILL mid-run ($(count "$ns" jobs.nvcre.nvidia.com) Jobs, $(count "$ns" pods) pods)"
start_manager "after SIGKILL"
wait_for $W "(a) the clean certification finished" cert_done "$ns" clean
state=$(cert_state "$ns" clean)
[[ $state == Succeeded ]] && pass "(a) clean 8-node certification Succeeded" \
  || fail "(a) clean certification: $state, want Succeeded"
report=$(g report -n "$ns" clean -o json)
passed=$(jq '[.categories[] | .nodes[]? | select(.result == "Succeeded")] | length' <<<"$report")
cats=$(jq -r '[.categories[] | "\(.domain)/\(.variant)=\(.status)"] | join(" ")' <<<"$report")
[[ $passed == 16 ]] && pass "(a) report: 8 nodes passed in each of 2 categories ($cats)" \
  || fail "(a) report: $passed node results passed, want 16 ($cats)"
# (c) no duplicates: one Job per group of each Workflow, one TrainJob and one
# JobSet per Job, every TrainJob named after its Job.
dups=0
for wf in $(k -n "$ns" get workflows -o jsonpath='{.items[*].metadata.name}'); do
  groups=$(k -n "$ns" get workflow "$wf" -o jsonpath='{.status.orchestration.totalGroups}')
  jobs=$(count "$ns" jobs.nvcre.nvidia.com "nvcre.nvidia.com/workflow=$wf")
  [[ -n $groups && $jobs == "$groups" ]] || { fail "(c) Workflow $wf: $jobs Jobs for ${groups:-?} groups"; dups=1; }
done
njobs=$(count "$ns" jobs.nvcre.nvidia.com)
ntj=$(count "$ns" trainjobs)
njs=$(count "$ns" jobsets)
[[ $njobs == 16 && $ntj == "$njobs" && $njs == "$njobs" ]] || {
  fail "(c) $njobs NVCRE Jobs, $ntj TrainJobs, $njs JobSets (want 16 each)"
  dups=1
}
for j in $(k -n "$ns" get jobs.nvcre.nvidia.com -o jsonpath='{.items[*].metadata.name}'); do
  n=$(k -n "$ns" get trainjobs -o json | jq --arg j "$j" \
    '[.items[] | select(.metadata.ownerReferences[]?.name == $j)] | length')
  [[ $n == 1 ]] || { fail "(c) NVCRE Job $j owns $n TrainJobs"; dups=1; }
done
((dups)) || pass "(c) after the restart: 16 Jobs, 16 TrainJobs, 16 JobSets, one per group"

# ---- (e) a check pod that stays Unschedulable, (f) a TrainJob that fails:
# started now, checked after (b), so their waits overlap (b)'s run.
# (e): a hand-authored Workflow from the catalog's dcgm-level1 on gpu-node-12
# whose check pod carries the label the fault spec's `unschedulable` entry
# selects (the simulator's admission policy gives it a nodeSelector no node
# has), grace 5 s, timeoutPerJob 90s.
k create namespace e2e-blocked >/dev/null
spec=$("$gpuready" catalog show diagnostics/dcgm-level1 --platform aws --gpu h100 -o json)
jq '{apiVersion: "nvcre.nvidia.com/v1alpha1", kind: "Workflow", metadata: {name: "blocked"},
     spec: (.orchestration.target = {nodeNames: ["gpu-node-12"]}
            | .orchestration.execution.timeoutPerJob = "90s"
            | .jobTemplate.spec.schedulingStallGraceSeconds = 5
            | .dependencies[0].spec.template.spec.replicatedJobs[0].template.spec.template.metadata.labels["sim.gpuready.io/stuck"] = "true")}' \
  <<<"$spec" | k -n e2e-blocked apply -f - >/dev/null
# (f): a certification of gpu-node-13, whose TrainJob pods exit 3.
k create namespace e2e-trainfail >/dev/null
k -n e2e-trainfail apply -f - >/dev/null <<'EOF'
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata:
  name: trainfail
spec:
  target:
    nodeNames: [gpu-node-13]
  testScale: intra-node
  categories:
  - {domain: diagnostics, variant: dcgm-level1}
EOF

# ---- (b) gpu-node-01..11, faults injected
ns=e2e-faults
k create namespace "$ns" >/dev/null
# busBandwidthGBps: the max over sizes of the Job's BandwidthMeasurement
# (healthy H100 ~480 GB/s in the simulator, gpu-node-10 100 GB/s).
k -n "$ns" apply -f - >/dev/null <<'EOF'
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata:
  name: faults
spec:
  target:
    nodeNames: [gpu-node-01, gpu-node-02, gpu-node-03, gpu-node-04, gpu-node-05, gpu-node-06,
                gpu-node-07, gpu-node-08, gpu-node-09, gpu-node-10, gpu-node-11]
  testScale: intra-node
  thresholds: {busBandwidthGBps: "value >= 300"}
  categories:
  - {domain: diagnostics, variant: dcgm-level1}
  - {domain: communication, variant: nccl-all-reduce}
EOF
wait_for $W "(b) the faulty-cluster certification finished" cert_done "$ns" faults
state=$(cert_state "$ns" faults)
[[ $state == Failed ]] && pass "(b) certification Failed" || fail "(b) certification: $state, want Failed"
report=$(g report -n "$ns" faults -o json)
node_result() { # category node -> "result reason"
  jq -r --arg c "$1" --arg n "$2" \
    '.categories[] | select("\(.domain)/\(.variant)" == $c) | .nodes[]? | select(.node == $n) | "\(.result) \(.reason) \(.message)"' \
    <<<"$report"
}
# JOB-76: a failed node's reason is WorkloadFailed (its workload failed) or
# HardwareFailureDetected (the node health monitor: cordoned mid-run).
r=$(node_result diagnostics/dcgm-level1 gpu-node-09)
[[ $r == "Failed WorkloadFailed "* ]] && pass "(b) DCGM failure caught on gpu-node-09: ${r:0:160}" \
  || fail "(b) gpu-node-09 in dcgm-level1: '$r', want Failed WorkloadFailed"
jq -e '.categories[] | select(.variant == "dcgm-level1") | .failureLogs[]?.tail | tostring
       | select(contains("Page Retirement/Row Remap"))' <<<"$report" >/dev/null \
  && pass "(b) the report carries the DCGM failure log (Page Retirement/Row Remap)" \
  || fail "(b) no DCGM failure log naming Page Retirement/Row Remap in the report"
r=$(node_result diagnostics/dcgm-level1 gpu-node-11)
[[ $r == "Failed HardwareFailureDetected "* ]] && pass "(b) gpu-node-11 cordoned mid-run fails dcgm-level1: ${r:0:160}" \
  || fail "(b) gpu-node-11 (cordoned mid-run) in dcgm-level1: '$r', want Failed HardwareFailureDetected"
bad=$(jq -r '[.categories[] | select(.variant == "dcgm-level1") | .nodes[]?
              | select(.result != "Succeeded") | .node] | sort | join(" ")' <<<"$report")
[[ $bad == "gpu-node-09 gpu-node-11" ]] && pass "(b) dcgm-level1 failed exactly gpu-node-09 and gpu-node-11" \
  || fail "(b) dcgm-level1 failed nodes: '$bad', want 'gpu-node-09 gpu-node-11'"
r=$(node_result communication/nccl-all-reduce gpu-node-11)
[[ -z $r ]] && pass "(b) nccl-all-reduce left the cordoned gpu-node-11 out" \
  || fail "(b) nccl-all-reduce ran on cordoned gpu-node-11: '$r'"
# JOB-76 JOB-100 WF-54: the slow node fails nccl-all-reduce on the
# threshold (its BandwidthMeasurement read from the MPI launcher's log), with
# the measured value in the message; no other node fails it.
r=$(node_result communication/nccl-all-reduce gpu-node-10)
measured=$(sed -n 's/^Failed ThresholdViolation Threshold "busBandwidthGBps" violated: measured \([0-9.]*\), expression: value >= 300$/\1/p' <<<"$r")
if [[ -n $measured ]] && awk -v m="$measured" 'BEGIN { exit !(m > 0 && m < 300) }'; then
  pass "(b) slow gpu-node-10 fails nccl-all-reduce: ${r:0:160}"
else
  fail "(b) gpu-node-10 in nccl-all-reduce: '$r', want Failed ThresholdViolation with a measured busBandwidthGBps < 300"
fi
bad=$(jq -r '[.categories[] | select(.variant == "nccl-all-reduce") | .nodes[]?
              | select(.result != "Succeeded") | .node] | sort | join(" ")' <<<"$report")
[[ $bad == "gpu-node-10" ]] && pass "(b) nccl-all-reduce failed exactly gpu-node-10" \
  || fail "(b) nccl-all-reduce failed nodes: '$bad', want 'gpu-node-10'"
r=$(jq -r '.categories[] | select(.variant == "nccl-all-reduce") | .reason' <<<"$report")
[[ $r == JobValidationFailed ]] && pass "(b) nccl-all-reduce Workflow failed with JobValidationFailed" \
  || fail "(b) nccl-all-reduce Workflow reason: '$r', want JobValidationFailed"
# Its NCCL run's log, read through the API server and KWOK, reports the low
# bus bandwidth too.
avg_bw() { # node -> the "# Avg bus bandwidth" of the launcher of that node's NCCL Job
  local job pod
  job=$(k -n "$ns" get jobs.nvcre.nvidia.com -l nvcre.nvidia.com/catalog-test=all_reduce -o json |
    jq -r --arg n "$1" '.items[] | select(.metadata.annotations["nvcre.nvidia.com/group-nodes"] == $n) | .metadata.name')
  pod=$(k -n "$ns" get pods -l "jobset.sigs.k8s.io/jobset-name=$job-workload,jobset.sigs.k8s.io/replicatedjob-name=launcher" \
    -o jsonpath='{.items[0].metadata.name}')
  k -n "$ns" logs "$pod" | sed -n 's/^# Avg bus bandwidth *: *\([0-9.]*\).*/\1/p'
}
slow=$(avg_bw gpu-node-10 || true)
ok=$(avg_bw gpu-node-01 || true)
if [[ -n $slow && -n $ok ]] && awk -v s="$slow" -v o="$ok" 'BEGIN { exit !(s > 0 && s < 100 && o > 3 * s) }'; then
  pass "(b) slow gpu-node-10: all_reduce avg busbw $slow GB/s vs $ok GB/s on gpu-node-01"
else
  fail "(b) avg busbw: gpu-node-10 '$slow', gpu-node-01 '$ok' (want < 100 and a third of the healthy one)"
fi

# ---- (e) the Unschedulable path
ns=e2e-blocked
job_cond() { # JOB TYPE -> "status|reason|message" of the Job's condition TYPE
  k -n "$ns" get jobs.nvcre.nvidia.com "$1" \
    -o "jsonpath={range .status.conditions[?(@.type==\"$2\")]}{.status}|{.reason}|{.message}{end}" 2>/dev/null
}
wf_cond() { # TYPE -> "status|reason|message" of the Workflow's condition TYPE
  k -n "$ns" get workflow blocked \
    -o "jsonpath={range .status.conditions[?(@.type==\"$1\")]}{.status}|{.reason}|{.message}{end}" 2>/dev/null
}
bjob=
seen=
wf_failed() { [[ $(wf_cond Failed) == True\|* ]]; }
blocked_seen() {
  bjob=$(k -n "$ns" get jobs.nvcre.nvidia.com -l nvcre.nvidia.com/workflow=blocked \
    -o jsonpath='{.items[0].metadata.name}' 2>/dev/null) || return 1
  [[ -n $bjob ]] || return 1
  local c w
  c=$(job_cond "$bjob" InProgress)
  w=$(wf_cond InProgress)
  [[ $c == "True|WorkloadSchedulingBlocked|"* && $w == "True|JobSchedulingBlocked|"* ]] || return 1
  seen=1
}
# stops early when the Workflow already failed (then the blocked state was missed)
blocked_or_failed() { blocked_seen || wf_failed; }
wait_for $W "(e) the blocked Job and its Workflow report scheduling blocked (or the Workflow failed)" \
  blocked_or_failed || true
[[ -n $seen ]] || fail "(e) never saw the Job WorkloadSchedulingBlocked and the Workflow JobSchedulingBlocked"
if [[ -n $seen ]]; then
  c=$(job_cond "$bjob" InProgress)
  # JOB-61 JOB-81: past the 5 s grace the Job reports WorkloadSchedulingBlocked;
  # JOB-80: its message relays the scheduler's diagnosis (PodScheduled).
  [[ $c == "True|WorkloadSchedulingBlocked|Workload pods are unschedulable: "*"didn't match Pod's node affinity/selector"* ]] \
    && pass "(e) Job $bjob: ${c:0:200}" \
    || fail "(e) Job $bjob InProgress: '$c', want WorkloadSchedulingBlocked relaying the scheduler's node affinity/selector message"
  # JOB-57: schedulingBlockedSince is set while blocked.
  since=$(k -n "$ns" get jobs.nvcre.nvidia.com "$bjob" -o 'jsonpath={.status.schedulingBlockedSince}')
  [[ -n $since ]] && pass "(e) schedulingBlockedSince $since" || fail "(e) no schedulingBlockedSince on Job $bjob"
  w=$(wf_cond InProgress)
  [[ $w == "True|JobSchedulingBlocked|"*"; job $bjob scheduling blocked: Workload pods are unschedulable: "* ]] \
    && pass "(e) Workflow relays it: ${w:0:200}" \
    || fail "(e) Workflow InProgress: '$w', want JobSchedulingBlocked naming job $bjob"
fi
wait_for $W "(e) the blocked Workflow failed (timeoutPerJob)" wf_failed || true
if [[ -n $bjob ]]; then
  # JOB-49 JOB-62: the Workflow times the never-scheduled Job out.
  c=$(job_cond "$bjob" Failed)
  [[ $c == "True|JobTimedOut|Job exceeded timeoutPerJob while its pods were unschedulable" ]] \
    && pass "(e) Job $bjob Failed: JobTimedOut, while its pods were unschedulable" \
    || fail "(e) Job $bjob Failed: '$c', want JobTimedOut while its pods were unschedulable"
fi
# JOB-76: the node is recorded failed with a FailedNode reason.
r=$(k -n "$ns" get workflow blocked -o json | jq -r '.status.nodeResults["gpu-node-12"] | "\(.result) \(.reason)"')
[[ $r == "Failed WorkloadFailed" ]] && pass "(e) gpu-node-12 Failed WorkloadFailed" \
  || fail "(e) gpu-node-12 in the Workflow's nodeResults: '$r', want Failed WorkloadFailed"

# ---- (f) a failing TrainJob
ns=e2e-trainfail
wait_for $W "(f) the gpu-node-13 certification finished" cert_done "$ns" trainfail
state=$(cert_state "$ns" trainfail)
[[ $state == Failed ]] && pass "(f) certification Failed" || fail "(f) certification: $state, want Failed"
report=$(g report -n "$ns" trainfail -o json)
r=$(node_result diagnostics/dcgm-level1 gpu-node-13)
# JOB-76: the failed TrainJob fails its node with WorkloadFailed, the
# message naming the workload.
[[ $r == "Failed WorkloadFailed Workload $ns/"*" failed"* ]] && pass "(f) gpu-node-13: ${r:0:200}" \
  || fail "(f) gpu-node-13 in dcgm-level1: '$r', want Failed WorkloadFailed naming the TrainJob"
tj=$(k -n "$ns" get trainjobs -o jsonpath='{.items[0].metadata.name}')
tjf=$(k -n "$ns" get trainjob "$tj" -o 'jsonpath={.status.conditions[?(@.type=="Failed")].status}')
[[ $tjf == True ]] && pass "(f) TrainJob $tj Failed" || fail "(f) TrainJob '$tj' Failed condition: '$tjf', want True"
# JOB-74: the failureLog names the pod's node, its exit code and log tail.
fl=$(k -n "$ns" get jobs.nvcre.nvidia.com -o json | jq -r '.items[0].status.failureLog
     | "\(.nodeName) \(.exitCode) \(.tail | tostring | contains("NCCL WARN socketStartConnect"))"')
[[ $fl == "gpu-node-13 3 true" ]] && pass "(f) failureLog: gpu-node-13, exit code 3, the injected NCCL WARN" \
  || fail "(f) failureLog: '$fl', want 'gpu-node-13 3 true'"

# ---- (d) deleting a Certification removes every pod it started
ns=e2e-delete
k create namespace "$ns" >/dev/null
g certify -n "$ns" --name del --category diagnostics/dcgm-level1 --set testScale=intra-node >/dev/null
have_running() { (($(k -n "$ns" get pods --field-selector=status.phase=Running -o name | grep -c .) > 0)); }
wait_for $W "(d) the certification's pods run" have_running
pass "(d) deleting it with $(count "$ns" pods) pods, $(count "$ns" jobs.nvcre.nvidia.com) Jobs"
k -n "$ns" delete certification del --wait=false >/dev/null
gone() {
  [[ $(count "$ns" certifications) == 0 && $(count "$ns" workflows) == 0 &&
     $(count "$ns" jobs.nvcre.nvidia.com) == 0 && $(count "$ns" trainjobs) == 0 &&
     $(count "$ns" jobsets) == 0 && $(count "$ns" jobs.batch) == 0 && $(count "$ns" pods) == 0 ]]
}
wait_for $W "(d) the Certification, its Workflows, Jobs, TrainJobs, JobSets and every pod are gone" gone

# ---- RBAC: nothing the manager asked for in (a)-(f) was forbidden.
stop_manager
if [[ ! -s $work/audit.log ]]; then
  fail "no audit log (the API server's --audit-log-path)"
else
  n=$(jq -s 'length' "$work/audit.log")
  forbidden_summary >"$work/forbidden"
  if ((n < 100)); then
    fail "only $n audited requests of $SA_USER: the manager did not run as the chart's ServiceAccount"
  elif [[ -s $work/forbidden ]]; then
    cat "$work/forbidden" >&2
    fail "the chart's RBAC forbade $(wc -l <"$work/forbidden") kind(s) of request of the manager (above): grant them in charts/nvcre/templates/rbac.yaml"
  else
    pass "RBAC: $n requests of $SA_USER audited, none answered 403"
  fi
fi
if grep -qi 'forbidden' "$dir/logs/gpuready-manager.log"; then
  grep -i -m 5 'forbidden' "$dir/logs/gpuready-manager.log" >&2 || true
  fail "the manager logged a Forbidden answer"
fi

((failures == 0)) || { echo "$failures check(s) failed" >&2; exit 1; }
echo "all checks passed"

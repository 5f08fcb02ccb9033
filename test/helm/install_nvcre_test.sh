#!/usr/bin/env bash
# test/helm/install_nvcre_test.sh MANAGER_BIN — `helm install` of the umbrella
# chart with NVCRE (on by default) into a real control plane, gpuready-manager
# run from the chart's rendered Deployment under the chart's ServiceAccount,
# and a Certification reconciled end to end with the chart's RBAC only.
#
# The local control plane has no kubelet, so the test plays the kubelet's
# part and nothing else: it runs the Deployment's container here (MANAGER_BIN
# in place of the image's program, with the Deployment's args and env) as two
# replicas, each with a token of the Deployment's ServiceAccount
# (system:serviceaccount:<ns>:nvcre-manager), so the chart's ClusterRole and
# leader-election Role are all the manager has. There is no Trainer
# controller either: the test marks each TrainJob the manager creates
# Complete, as the Trainer would.
#
# The RBAC check: the API server writes an audit log of every request of
# that ServiceAccount and enforces OwnerReferencesPermissionEnforcement (an
# owner reference with blockOwnerDeletion needs update on the owner's
# finalizers, as on OpenShift). Any 403 answered to the manager fails the
# test with the verb and resource it lacked, so a controller that starts
# using a verb the chart does not grant fails here.
#
# Exercised: leader election (one Lease holder, the other replica ready as a
# follower), the Certification, Workflow, Job and measurement controllers
# (finalizers, status, dependencies, TrainJobs, node-result ConfigMaps,
# events, pod logs), and deletion of the Certification down to its TrainJobs.
#
# Its own cluster (scripts/cluster up in a temp dir), removed at exit.
set -euo pipefail

ROOT=${GR_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=test/harness/gr_harness.sh
source "$ROOT/test/harness/gr_harness.sh"
gr_skip_if_disabled

BIN=${1:?usage: install_nvcre_test.sh MANAGER_BIN}
[[ -x $BIN ]] || { echo "install_nvcre_test: $BIN is not executable" >&2; exit 1; }
CHART=$ROOT/deploy/helm/gpuready
NS=nvcre
RELEASE=gpuready
TEAM=team-a
CERT=c
WF=$CERT-communication-nccl-all-reduce

die() {
  printf 'install_nvcre_test: FAIL: %s\n' "$*" >&2
  exit 1
}
say() { printf 'install_nvcre_test: %s\n' "$*"; }

for t in jq yq curl ss; do command -v "$t" >/dev/null || die "$t not found"; done
if [[ -z ${GR_HELM:-} ]]; then
  GR_HELM=$("$ROOT/scripts/build-k8s" helm --print-bindir)/helm
fi
crds=$(bash "$ROOT/test/nvcre/trainer_crds.sh") || {
  rc=$?
  [[ $rc == 77 ]] && { echo "SKIPPED: the Kubeflow Trainer v2.2.1 CRDs are not available (see above)"; exit 77; }
  die "trainer_crds.sh exited $rc"
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gr-helm-nvcre.XXXXXX")
export HELM_CACHE_HOME=$WORK/helm/cache HELM_CONFIG_HOME=$WORK/helm/config HELM_DATA_HOME=$WORK/helm/data
DIR=$WORK/cluster
pids=() passed=0
cleanup() {
  local rc=$?
  set +eu
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  if ((!passed)) && [[ -f $DIR/cluster.env ]]; then
    if [[ -s $WORK/audit.log ]]; then
      echo "---- requests of the manager the API server forbade (audit log)" >&2
      forbidden_summary >&2
    fi
    for i in 0 1; do
      echo "---- manager $i log" >&2
      tail -n 30 "$WORK/manager-$i.log" >&2 2>/dev/null || true
    done
    gr_kubectl -n "$TEAM" get certifications,workflows,jobs.nvcre.nvidia.com,trainjobs,bandwidthmeasurements -o yaml >&2 2>/dev/null | tail -n 120 >&2
    gr_dump_state "$NS" || true
  fi
  "$ROOT/scripts/cluster" down "$DIR" >/dev/null 2>&1 || true
  rm -rf -- "$WORK"
  exit "$rc"
}
trap cleanup EXIT

SA_USER="system:serviceaccount:$NS:nvcre-manager"
# verb group/resource[/subresource] ns/name: message, one line per kind of
# forbidden request, with its count.
forbidden_summary() {
  jq -r 'select(.responseStatus.code == 403) | "\(.verb) \(.objectRef.apiGroup // "core")/\(.objectRef.resource)\(if .objectRef.subresource then "/" + .objectRef.subresource else "" end) \(.objectRef.namespace // "-")/\(.objectRef.name // "-"): \(.responseStatus.message // "" | .[0:200])"' \
    "$WORK/audit.log" | sort | uniq -c
}
cat >"$WORK/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    users: ["$SA_USER"]
  - level: None
EOF
GR_APISERVER_ARGS="--audit-policy-file=$WORK/audit-policy.yaml --audit-log-path=$WORK/audit.log --audit-log-maxbackup=1 --enable-admission-plugins=OwnerReferencesPermissionEnforcement ${GR_APISERVER_ARGS:-}" \
  "$ROOT/scripts/cluster" up --ttl 1800 "$DIR" >"$WORK/cluster.log" 2>&1 ||
  { cat "$WORK/cluster.log" >&2; die "scripts/cluster up"; }
GR_CLUSTER_DIR=$DIR gr_cluster_open || die "cluster not ready"
helm() { "$GR_HELM" --kubeconfig "$GR_KUBECONFIG_ADMIN" "$@"; }
k() { gr_kubectl "$@"; }

# --- install with the defaults: NVCRE is on.
k create namespace "$NS" >/dev/null
helm install "$RELEASE" "$CHART" -n "$NS" >"$WORK/helm.out" 2>&1 || { cat "$WORK/helm.out"; die "helm install (defaults)"; }
grep -q 'NVCRE (the readiness engine) is installed' "$WORK/helm.out" || { cat "$WORK/helm.out"; die "NOTES do not mention NVCRE"; }
for crd in certifications workflows jobs workloadruns logprofiles goodputmeasurements bandwidthmeasurements; do
  gr_wait "" "crd/$crd.nvcre.nvidia.com" condition=Established 60 >/dev/null || die "CRD $crd.nvcre.nvidia.com not Established"
done
got=$(k get logprofiles.nvcre.nvidia.com -o jsonpath='{range .items[*]}{.metadata.name}{","}{end}')
[[ $got == megatron,nccl-all-gather,nccl-all-reduce,nccl-alltoall,nccl-loopback, ]] || die "built-in LogProfiles: '$got'"
k -n "$NS" get deploy/nvcre-manager sa/nvcre-manager svc/nvcre-manager-metrics role/nvcre-leader-election \
  rolebinding/nvcre-leader-election >/dev/null || die "nvcre objects missing"
k get clusterrole/"$RELEASE-nvcre-manager" clusterrolebinding/"$RELEASE-nvcre-manager" >/dev/null || die "ClusterRole missing"
say "helm install: 7 CRDs, 5 LogProfiles, Deployment, ServiceAccount, RBAC, metrics Service"

# The Trainer's CRDs (the cluster's, not the chart's) and two GPU nodes.
k apply --server-side -f "$crds/trainer.kubeflow.org_trainjobs.yaml" -f "$crds/trainer.kubeflow.org_trainingruntimes.yaml" \
  -f "$crds/trainer.kubeflow.org_clustertrainingruntimes.yaml" >/dev/null || die "Trainer CRDs"
gr_wait "" crd/trainjobs.trainer.kubeflow.org condition=Established 60 >/dev/null || die "TrainJob CRD not Established"
for i in 0 1; do
  k apply -f - >/dev/null <<EOF || die "node $i"
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-$i
  labels: {kubernetes.io/hostname: gpu-node-$i, nvidia.com/gpu.present: "true", nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
spec: {providerID: "aws:///us-east-1a/i-0$i"}
EOF
done

# --- the kubelet's part: the Deployment's container, twice, as its ServiceAccount.
k -n "$NS" get deploy nvcre-manager -o json >"$WORK/deploy.json"
c='.spec.template.spec.containers[0]'
cmd=$(jq -r "$c.command[0]" "$WORK/deploy.json")
[[ $cmd == "$(basename "$BIN")" ]] || die "the Deployment runs '$cmd', not $(basename "$BIN")"
[[ $(jq -r '.spec.replicas' "$WORK/deploy.json") == 2 ]] || die "the Deployment does not ask for 2 replicas"
sa=$(jq -r '.spec.template.spec.serviceAccountName' "$WORK/deploy.json")
[[ "system:serviceaccount:$NS:$sa" == "$SA_USER" ]] || die "ServiceAccount $sa"
token=$(k -n "$NS" create token "$sa" --duration=1h)
cat >"$WORK/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$GR_APISERVER_URL", certificate-authority: "$GR_CA_CERT"}}]
users: [{name: sa, user: {token: "$token"}}]
contexts: [{name: c, context: {cluster: c, user: sa}}]
current-context: c
EOF
[[ $(k auth can-i create workflows.nvcre.nvidia.com -n "$TEAM" --as "$SA_USER") == yes ]] || die "the ServiceAccount cannot create Workflows"
[[ $(k auth can-i get secrets -n "$NS" --as "$SA_USER" 2>/dev/null || true) == no ]] || die "the ServiceAccount can read Secrets"

free_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 12000))
    ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return 0; }
  done
  return 1
}
mapfile -t args0 < <(jq -r "$c.args[]" "$WORK/deploy.json")
probe_ports=()
for i in 0 1; do
  pp=$(free_port) && mp=$(free_port) || die "no free port"
  probe_ports+=("$pp")
  args=()
  for a in "${args0[@]}"; do
    case $a in
      --health-probe-bind-address=*) a=--health-probe-bind-address=127.0.0.1:$pp ;;
      --metrics-bind-address=*) a=--metrics-bind-address=127.0.0.1:$mp ;;
    esac
    args+=("$a")
  done
  envs=()
  while IFS=$'\t' read -r name val; do envs+=("$name=$val"); done < <(jq -r --arg ns "$NS" --arg pod "nvcre-manager-$i" \
    "$c.env[] | \"\(.name)\t\(if .value then .value elif .valueFrom.fieldRef.fieldPath == \"metadata.namespace\" then \$ns elif .valueFrom.fieldRef.fieldPath == \"metadata.name\" then \$pod else \"\" end)\"" \
    "$WORK/deploy.json")
  # GR_WORKFLOW_REQUEUE: the Workflow's periodic requeue, 15 s in a pod,
  # shortened so that the test does not wait on it.
  env "${envs[@]}" GR_WORKFLOW_REQUEUE=1s "$BIN" "${args[@]}" --kubeconfig "$WORK/kubeconfig" >"$WORK/manager-$i.log" 2>&1 &
  pids+=($!)
done
# Readiness, as the pod's probe: GET /readyz on the probe port (a leader is known).
probe_path=$(jq -r "$c.readinessProbe.httpGet.path" "$WORK/deploy.json")
for i in 0 1; do
  ready=0
  for _ in $(seq "$(gr_tries 60 200)"); do
    kill -0 "${pids[i]}" 2>/dev/null || die "manager $i exited: $(tail -n 5 "$WORK/manager-$i.log")"
    if curl -sf --max-time 2 "http://127.0.0.1:${probe_ports[i]}$probe_path" >/dev/null 2>&1; then ready=1; break; fi
    sleep 0.2
  done
  ((ready)) || die "manager $i never answered its readiness probe ($probe_path)"
done
holder=$(k -n "$NS" get lease 240fe9c6.nvidia.com -o jsonpath='{.spec.holderIdentity}')
[[ $holder == nvcre-manager-[01]_* ]] || die "Lease 240fe9c6.nvidia.com held by '$holder'"
say "two replicas ready as $SA_USER; leader ${holder%%_*} [${SECONDS}s]"

# --- a Certification, reconciled by the chart's manager.
k create namespace "$TEAM" >/dev/null
k -n "$TEAM" apply -f - >/dev/null <<EOF || die "create Certification"
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: $CERT}
spec:
  target:
    nodeSelector: {nvidia.com/gpu.present: "true"}
  categories:
    - domain: communication
      variant: nccl-all-reduce
EOF
# Drive it: each TrainJob the Job controller creates completes (the
# Trainer's part). A launcher pod per Job (the JobSet's part) gives the
# measurement controller, reconciling the BandwidthMeasurement the Job
# controller created, a log to read while the Job runs (the read fails
# without a kubelet, which is not an RBAC matter: the API server authorizes
# it first); only then does the TrainJob complete.
log_reads() { jq -s '[.[] | select(.verb == "get" and .objectRef.subresource == "log")] | length' "$WORK/audit.log" 2>/dev/null || echo 0; }
true_cond() { k -n "$TEAM" get "$1" "$2" -o jsonpath='{.status.conditions[?(@.status=="True")].type}' 2>/dev/null || true; }
declare -A done_tj=() done_bm=()
state=""
for _ in $(seq "$(gr_tries 240 500)"); do
  state=$(true_cond certifications.nvcre.nvidia.com "$CERT")
  [[ $state == *Succeeded* || $state == *Failed* ]] && break
  for j in $(k -n "$TEAM" get jobs.nvcre.nvidia.com -o jsonpath='{.items[*].metadata.name}' 2>/dev/null); do
    [[ -n ${done_bm[$j]:-} ]] && continue
    k -n "$TEAM" apply -f - >/dev/null <<EOF && done_bm[$j]=1
apiVersion: v1
kind: Pod
metadata:
  name: $j-launcher-0-0
  labels: {nvcre.nvidia.com/job: $j, jobset.sigs.k8s.io/replicatedjob-name: launcher}
spec:
  nodeName: gpu-node-0
  containers: [{name: main, image: busybox}]
EOF
  done
  for tj in $(k -n "$TEAM" get trainjobs -o jsonpath='{.items[*].metadata.name}' 2>/dev/null); do
    [[ -n ${done_tj[$tj]:-} ]] && continue
    # Let the measurement controller read the running Job's launcher first.
    (($(log_reads) > 0)) || continue
    k -n "$TEAM" patch trainjobs "$tj" --subresource=status --type=merge -p \
      '{"status":{"conditions":[{"type":"Complete","status":"True","reason":"JobsCompleted","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}' \
      >/dev/null && done_tj[$tj]=1
  done
  sleep 0.5
done
[[ $state == *Succeeded* || $state == *Failed* ]] || die "the Certification did not finish (True conditions: '$state')"
[[ ${#done_tj[@]} -ge 1 ]] || die "no TrainJob was created"
reason=$(k -n "$TEAM" get certifications.nvcre.nvidia.com "$CERT" -o jsonpath='{.status.conditions[?(@.status=="True")].reason}')
say "Certification $CERT finished: $state ($reason) after ${#done_tj[@]} TrainJob(s) [${SECONDS}s]"
[[ $(true_cond workflows.nvcre.nvidia.com "$WF") == *Succeeded* ]] || die "Workflow $WF did not succeed: $(true_cond workflows.nvcre.nvidia.com "$WF")"
cms=$(k -n "$TEAM" get configmaps -l "nvcre.nvidia.com/workflow=$WF" -o name)
[[ $cms == *succeeded-nodes* && $cms == *failed-nodes* ]] || {
  jq -c 'select(.objectRef.resource == "configmaps")' "$WORK/audit.log" >&2
  die "no node-result ConfigMaps from the Workflow (got: $cms)"
}
# The manager records Events under the chart's RBAC (which NVCRE object gets
# one depends on the path taken: a catalog Workflow without overrides or
# excluded nodes has none of its own).
nev=$(k -n "$TEAM" get events -o json |
  jq '[.items[] | select(.involvedObject.apiVersion // "" | startswith("nvcre.nvidia.com/"))] | length')
((nev > 0)) || die "no Events on any NVCRE object"
(($(log_reads) > 0)) || die "the measurement controller read no pod log"
[[ -n $(k -n "$TEAM" get bandwidthmeasurements -o name) ]] || die "the Job controller created no BandwidthMeasurement"

# --- deletion: finalizers down to the TrainJobs.
# The Job controller waits for the workload's pods to be gone; the launcher
# pods are the test's (no JobSet owns them, no kubelet confirms their
# deletion), so the test removes them, as the garbage collector and kubelet
# would once the TrainJob is deleted.
k -n "$TEAM" delete certifications.nvcre.nvidia.com "$CERT" --wait=false >/dev/null || die "delete the Certification"
left=""
for _ in $(seq "$(gr_tries 120 500)"); do
  if [[ -z $(k -n "$TEAM" get trainjobs -o name 2>/dev/null) ]]; then
    k -n "$TEAM" delete pods --all --grace-period=0 --force >/dev/null 2>&1 || true
  fi
  left=$(k -n "$TEAM" get certifications.nvcre.nvidia.com,workflows.nvcre.nvidia.com,jobs.nvcre.nvidia.com,trainjobs -o name 2>/dev/null || true)
  [[ -z $left ]] && break
  sleep 0.5
done
[[ -z $left ]] || die "left after deleting the Certification: $left"
say "deleting the Certification removed its Workflow, Jobs and TrainJobs (finalizers) [${SECONDS}s]"

# --- RBAC: nothing the manager asked for was forbidden.
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()
[[ -s $WORK/audit.log ]] || die "no audit log (the API server's --audit-log-path)"
n=$(jq -s 'length' "$WORK/audit.log")
((n > 50)) || die "only $n audited requests of $SA_USER: the manager did not run as the ServiceAccount"
forbidden_summary >"$WORK/forbidden"
if [[ -s $WORK/forbidden ]]; then
  cat "$WORK/forbidden" >&2
  die "the chart's RBAC forbade $(wc -l <"$WORK/forbidden") kind(s) of request of the manager (above): grant them in charts/nvcre/templates/rbac.yaml"
fi
if grep -qi 'forbidden' "$WORK"/manager-*.log; then
  grep -i 'forbidden' "$WORK"/manager-*.log | head -n 5 >&2
  die "the manager logged a Forbidden answer"
fi
verbs=$(jq -r '"\(.verb) \(.objectRef.resource)\(if .objectRef.subresource then "/" + .objectRef.subresource else "" end)"' "$WORK/audit.log" | sort -u | tr '\n' ',')
say "RBAC: $n requests of $SA_USER audited, none forbidden ($verbs)"

# Every NVCRE example values file installs on this control plane: the API
# server accepts every object (the ServiceMonitor with a stand-in for the
# prometheus-operator CRD).
k apply -f - >/dev/null <<'EOF' || die "ServiceMonitor CRD stand-in"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: servicemonitors.monitoring.coreos.com}
spec:
  group: monitoring.coreos.com
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
EOF
gr_wait "" crd/servicemonitors.monitoring.coreos.com condition=Established 60 >/dev/null || die "ServiceMonitor CRD not Established"
n=0
for f in "$ROOT"/test/helm/values/nvcre-*.yaml; do
  name=$(basename "$f" .yaml)
  helm upgrade "$RELEASE" "$CHART" -n "$NS" -f "$f" >"$WORK/helm.out" 2>&1 || { cat "$WORK/helm.out"; die "$name does not install"; }
  case $name in
    nvcre-off) [[ -z $(k -n "$NS" get deploy -o name) ]] || die "$name: a Deployment is left" ;;
    nvcre-upstream-keys) k -n "$NS" get servicemonitor nvcre-metrics-monitor >/dev/null || die "$name: no ServiceMonitor" ;;
    *) k -n "$NS" get deploy/nvcre-manager >/dev/null || die "$name: no Deployment" ;;
  esac
  n=$((n + 1))
done
say "$n NVCRE example values files installed [${SECONDS}s]"

helm uninstall "$RELEASE" -n "$NS" >/dev/null
[[ -z $(k get logprofiles.nvcre.nvidia.com -o name) ]] || die "LogProfiles left after uninstall"
k get crd certifications.nvcre.nvidia.com >/dev/null || die "the CRDs were removed by uninstall (Helm keeps crds/)"
passed=1
say "ok"

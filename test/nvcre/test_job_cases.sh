#!/usr/bin/env bash
# CTest driver for the Job controller's reconcile cases (issue 15; label
# integration, fixture gr_cluster; docs/nvcre-job.md):
#   test_job_cases.sh RUNNER MANAGER
# Installs the pinned Kubeflow Trainer v2.2.1 CRDs (trainer_crds.sh) and the
# NVCRE Job CRD, then runs every case under test/cases/job with
# gpuready-manager as the child (--workload-creation-deadline=8s, so the
# deadline cases finish in seconds) and requires "N passed, 0 failed".
# Then test/cases/job-rbac runs with the manager as the cluster's user
# gr-lowpriv (job_lowpriv_rbac.yaml: everything but creating TrainJobs), so
# that a real RBAC denial meets the SelfSubjectAccessReview.
# Last, a manager restart: a Job runs under one manager, the manager stops,
# the status loses its workloadRef (what a crash between the create and the
# status write leaves), and a new manager adopts the existing TrainJob
# (InProgress WorkloadAdopted, still one TrainJob), then completes the Job.
set -uo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
runner=${1:?runner}
manager=${2:?manager}

case ${GR_SKIP_INTEGRATION:-0} in
  1|true|TRUE|yes|YES|on|ON) echo "SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION"; exit 77 ;;
esac
set -a
# shellcheck disable=SC1091
source "${GR_CLUSTER_DIR:?}/cluster.env"
set +a
kc() { "$GR_KUBECTL" --kubeconfig "$GR_KUBECONFIG_ADMIN" "$@"; }

crds=$(bash "$here/trainer_crds.sh")
rc=$?
if [[ $rc -eq 77 ]]; then
  echo "SKIPPED: the Kubeflow Trainer v2.2.1 CRDs are not available (see above)"
  exit 77
fi
[[ $rc -eq 0 ]] || { echo "FAIL: trainer_crds.sh exited $rc"; exit 1; }
kc apply --server-side --force-conflicts -f "$crds/trainer.kubeflow.org_trainjobs.yaml" \
  -f "$crds/trainer.kubeflow.org_trainingruntimes.yaml" \
  -f "$crds/trainer.kubeflow.org_clustertrainingruntimes.yaml" \
  -f "$root/deploy/crds/nvcre.nvidia.com_jobs.yaml" >/dev/null || { echo "FAIL: CRD install"; exit 1; }
# kubectl wait gives up at once while a new CRD has no status.conditions yet
# ("accessor error"): that only means "not yet", so it is retried.
established=0
for _ in $(seq 300); do
  if out=$(kc wait --for condition=Established --timeout=60s crd/trainjobs.trainer.kubeflow.org \
      crd/jobs.nvcre.nvidia.com 2>&1); then
    established=1
    break
  fi
  [[ $out == *"accessor error"* ]] || break
  sleep 0.2
done
((established)) || { echo "FAIL: CRDs not Established: $out"; exit 1; }

# The gr-lowpriv rights this test grants are taken back before it ends (also
# on failure), and it waits until the API server's RBAC cache agrees, so the
# next test that asserts what gr-lowpriv may not do (label lowpriv) sees the
# cluster as it was.
revoke_lowpriv() {
  kc delete -f "$here/job_lowpriv_rbac.yaml" --ignore-not-found >/dev/null 2>&1
  local i
  for ((i = 0; i < 300; i++)); do
    "$GR_KUBECTL" --kubeconfig "$GR_KUBECONFIG_LOWPRIV" auth can-i list pods -A >/dev/null 2>&1 || return 0
    sleep 0.2
  done
  echo "FAIL: gr-lowpriv can still list pods 60 s after its ClusterRoleBinding was deleted"
  return 1
}
out=$(mktemp)
trap 'revoke_lowpriv; rm -f "$out"' EXIT
GR_SOURCE_DIR=$root "$runner" --manager "exec '$manager' --controllers=job --workload-creation-deadline=8s \
--metrics-bind-address 127.0.0.1:\$GR_METRICS_PORT --health-probe-bind-address 127.0.0.1:\$GR_HEALTH_PORT" \
  "$root/test/cases/job" >"$out" 2>&1
rc=$?
cat "$out"
n=$(find "$root/test/cases/job" -name input_config.yaml | wc -l)
last=$(tail -n 1 "$out")
[[ $rc -eq 0 && $last == "$n passed, 0 failed" ]] || { echo "FAIL: runner exited $rc; last line '$last', want '$n passed, 0 failed'"; exit 1; }

kc apply -f "$here/job_lowpriv_rbac.yaml" >/dev/null || { echo "FAIL: RBAC for gr-lowpriv"; exit 1; }
GR_SOURCE_DIR=$root "$runner" --manager "exec '$manager' --controllers=job --kubeconfig '$GR_KUBECONFIG_LOWPRIV' \
--workload-creation-deadline=8s --metrics-bind-address 127.0.0.1:\$GR_METRICS_PORT \
--health-probe-bind-address 127.0.0.1:\$GR_HEALTH_PORT" "$root/test/cases/job-rbac" >"$out" 2>&1
rc=$?
cat "$out"
n=$(find "$root/test/cases/job-rbac" -name input_config.yaml | wc -l)
last=$(tail -n 1 "$out")
[[ $rc -eq 0 && $last == "$n passed, 0 failed" ]] || { echo "FAIL: (gr-lowpriv) runner exited $rc; last line '$last', want '$n passed, 0 failed'"; exit 1; }
revoke_lowpriv || exit 1

# ---- adoption across a manager restart
ns=job-restart-$$-$RANDOM
mgr_pid=
mlog=$(mktemp)
stop_mgr() {
  if [[ -n $mgr_pid ]]; then kill -TERM "$mgr_pid" 2>/dev/null; wait "$mgr_pid" 2>/dev/null; mgr_pid=; fi
}
start_mgr() {
  "$manager" --controllers=job --kubeconfig "$GR_KUBECONFIG_ADMIN" --namespace "$ns" --metrics-bind-address 0 \
    --health-probe-bind-address 0 >>"$mlog" 2>&1 &
  mgr_pid=$!
}
bye() { stop_mgr; kc delete namespace "$ns" --wait=false >/dev/null 2>&1; revoke_lowpriv; rm -f "$out" "$mlog"; }
trap bye EXIT
restart_fail() { echo "FAIL (restart): $*"; kc -n "$ns" get jobs.nvcre.nvidia.com,trainjobs -o yaml; tail -20 "$mlog"; exit 1; }
reason() { kc -n "$ns" get jobs.nvcre.nvidia.com my-job -o jsonpath='{.status.conditions[?(@.type=="InProgress")].reason}{.status.conditions[?(@.status=="True")].type}'; }
wait_reason() {
  for _ in $(seq 1 300); do [[ $(reason) == "$1" ]] && return 0; sleep 0.1; done
  restart_fail "the Job never read '$1' (last: '$(reason)')"
}
kc create namespace "$ns" >/dev/null || restart_fail "namespace"
start_mgr
kc -n "$ns" apply -f - >/dev/null <<YAML || restart_fail "create Job"
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Job
metadata: {name: my-job}
spec:
  workload:
    trainJob:
      runtimeRef: {kind: TrainingRuntime, name: nccl-all-reduce-runtime}
YAML
wait_reason WorkloadRunningInProgress
stop_mgr
kc -n "$ns" patch jobs.nvcre.nvidia.com my-job --subresource=status --type=merge \
  -p '{"status":{"workloadRef":null,"conditions":null,"workloadStartTime":null}}' >/dev/null ||
  restart_fail "status patch"
start_mgr
for _ in $(seq 1 300); do
  [[ -n $(kc -n "$ns" get events --field-selector reason=WorkloadAdopted -o name) ]] && break
  sleep 0.1
done
[[ -n $(kc -n "$ns" get events --field-selector reason=WorkloadAdopted -o name) ]] ||
  restart_fail "no WorkloadAdopted Event after the restart"
wait_reason WorkloadRunningInProgress
[[ $(kc -n "$ns" get trainjobs -o name | wc -l) -eq 1 ]] || restart_fail "want exactly one TrainJob"
kc -n "$ns" patch trainjobs my-job-workload --subresource=status --type=merge -p \
  '{"status":{"conditions":[{"type":"Complete","status":"True","reason":"JobsCompleted","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}' \
  >/dev/null || restart_fail "TrainJob status patch"
wait_reason NotApplicableSucceeded
kc -n "$ns" delete jobs.nvcre.nvidia.com my-job --timeout=60s >/dev/null || restart_fail "Job deletion (finalizer)"
echo "restart: the new manager adopted my-job-workload (WorkloadAdopted), then the Job Succeeded and was deleted"

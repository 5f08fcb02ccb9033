#!/usr/bin/env bash
# CTest driver for the Job's side of the measurements (issue 18; label
# integration, fixture gr_cluster; docs/measurements.md § Job integration):
#   test_job_measure_cases.sh RUNNER MANAGER
# Runs every case under test/cases/job-measure with gpuready-manager as the
# child running the job and workflow controllers (the measurement
# controllers stay off: the cases write the measurements' status themselves),
# then test/cases/job-measure-e2e with the job and measurement controllers
# (real logs → measurements → the Job's verdict); each set must end
# "N passed, 0 failed". Each case installs the CRDs it needs
# (input_crd_*: NVCRE Job/Workflow/measurements, the Trainer fixture).
set -uo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
runner=${1:?runner}
manager=${2:?manager}
case ${GR_SKIP_INTEGRATION:-0} in
  1|true|TRUE|yes|YES|on|ON) echo "SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION"; exit 77 ;;
esac
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# run_set DIR CONTROLLERS: every case of DIR must pass.
run_set() {
  local dir=$1 controllers=$2
  GR_SOURCE_DIR=$root "$runner" --manager "exec '$manager' --controllers=$controllers \
--metrics-bind-address 127.0.0.1:\$GR_METRICS_PORT --health-probe-bind-address 127.0.0.1:\$GR_HEALTH_PORT" \
    "$dir" >"$out" 2>&1
  local rc=$?
  cat "$out"
  local n last
  n=$(find "$dir" -name input_client_objects.yaml | wc -l)
  last=$(tail -n 1 "$out")
  [[ $rc -eq 0 && $last == "$n passed, 0 failed" ]] || { echo "FAIL ($dir): runner exited $rc; last line '$last', want '$n passed, 0 failed'"; exit 1; }
}
run_set "$root/test/cases/job-measure" job,workflow
run_set "$root/test/cases/job-measure-e2e" job,measurement

# ---- no duplicate measurement across a manager restart: a Job runs under one
# manager (which creates train-goodput / train-bandwidth), the manager stops,
# a new one takes over and the Job completes; still exactly one of each, and
# no MeasurementCreationError Event. (The CRDs are installed by the cases above.)
set -a
# shellcheck disable=SC1091
source "${GR_CLUSTER_DIR:?}/cluster.env"
set +a
# shellcheck disable=SC1091
source "$root/test/harness/gr_harness.sh" # gr_tries
kc() { "$GR_KUBECTL" --kubeconfig "$GR_KUBECONFIG_ADMIN" "$@"; }
ns=jm-restart-$$-$RANDOM
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
bye() { stop_mgr; kc delete namespace "$ns" --wait=false >/dev/null 2>&1; rm -f "$out" "$mlog"; }
trap bye EXIT
restart_fail() { echo "FAIL (restart): $*"; kc -n "$ns" get jobs.nvcre.nvidia.com,goodputmeasurements,bandwidthmeasurements,events -o yaml | tail -80; tail -20 "$mlog"; exit 1; }
wait_for() { # DESCRIPTION COMMAND...: until COMMAND succeeds (load-scaled bound)
  local what=$1; shift
  for _ in $(seq 1 "$(gr_tries 30 100)"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  restart_fail "timed out waiting for $what"
}
phase() { kc -n "$ns" get jobs.nvcre.nvidia.com train -o jsonpath='{.status.conditions[?(@.status=="True")].type}/{.status.conditions[?(@.type=="InProgress")].reason}'; }
kc create namespace "$ns" >/dev/null || restart_fail "namespace"
start_mgr
kc -n "$ns" apply -f - >/dev/null <<YAML || restart_fail "create Job"
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Job
metadata: {name: train}
spec:
  workload:
    trainJob:
      runtimeRef: {kind: TrainingRuntime, name: megatron-runtime}
  goodputMeasurement: {logProfileRef: megatron}
  bandwidthMeasurement: {logProfileRef: nccl-all-reduce, testType: all_reduce}
YAML
wait_for "train-goodput" kc -n "$ns" get goodputmeasurements train-goodput
wait_for "train-bandwidth" kc -n "$ns" get bandwidthmeasurements train-bandwidth
stop_mgr
start_mgr
kc -n "$ns" patch trainjobs train-workload --subresource=status --type=merge -p \
  '{"status":{"conditions":[{"type":"Complete","status":"True","reason":"JobsCompleted","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}' \
  >/dev/null || restart_fail "TrainJob status patch"
succeeded() { [[ $(phase) == Succeeded/* ]]; }
wait_for "the Job to succeed under the new manager" succeeded
[[ $(kc -n "$ns" get goodputmeasurements -o name | wc -l) -eq 1 ]] || restart_fail "want exactly one GoodputMeasurement"
[[ $(kc -n "$ns" get bandwidthmeasurements -o name | wc -l) -eq 1 ]] || restart_fail "want exactly one BandwidthMeasurement"
if [[ -n $(kc -n "$ns" get events --field-selector reason=MeasurementCreationError -o name) ]]; then
  restart_fail "MeasurementCreationError after the restart"
fi
echo "restart: one train-goodput and one train-bandwidth across a manager restart, no MeasurementCreationError"

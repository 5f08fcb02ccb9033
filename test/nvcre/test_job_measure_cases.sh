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

#!/usr/bin/env bash
# CTest driver: the measurement reconcile cases (test/cases/measure) with
# gpuready-manager as the child; every case must pass. Label integration,
# fixture gr_cluster. Usage: run_cases.sh RUNNER CASES_DIR
set -uo pipefail
case ${GR_SKIP_INTEGRATION:-0} in
  1|true|TRUE|yes|YES|on|ON) echo "SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION"; exit 77 ;;
esac
runner=${1:?runner}
dir=${2:?cases dir}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$runner" "$dir" >"$out" 2>&1
rc=$?
cat "$out"
n=$(find "$dir" -name input_client_objects.yaml | wc -l)
last=$(tail -n 1 "$out")
if [[ $rc -ne 0 || $last != "$n passed, 0 failed" ]]; then
  echo "FAIL: runner exited $rc, last line '$last', want '$n passed, 0 failed'"
  exit 1
fi

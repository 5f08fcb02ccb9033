#!/usr/bin/env bash
# workflow_reconcile_cases (integration): every reconcile case under
# test/cases/workflow passes with gpuready-manager (the Workflow controller)
# as the runner's child; the last line must be "N passed, 0 failed".
# Usage: test_workflow_cases.sh RUNNER MANAGER
set -uo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
runner=${1:?runner}
manager=${2:?manager}
case ${GR_SKIP_INTEGRATION:-0} in
  1|true|TRUE|yes|YES|on|ON) echo "SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION"; exit 77 ;;
esac
dir=$here/../cases/workflow
n=$(find "$dir" -name input_config.yaml -exec dirname {} \; | sort -u | wc -l)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$runner" --manager "exec '$manager' --metrics-bind-address 127.0.0.1:\$GR_METRICS_PORT --health-probe-bind-address 127.0.0.1:\$GR_HEALTH_PORT" \
  "$dir" >"$out" 2>&1
rc=$?
cat "$out"
last=$(tail -n 1 "$out")
[[ $rc -eq 0 && $last == "$n passed, 0 failed" ]] || { echo "FAIL: runner rc=$rc, last line '$last', want '$n passed, 0 failed'"; exit 1; }

#!/usr/bin/env bash
# CTest driver (label integration, fixture gr_cluster):
#   test_reconcile_cases.sh good|broken RUNNER [runner options]
# good:   every case under test/cases/reconcile passes; the last line is
#         "N passed, 0 failed".
# broken: the deliberately broken case under test/cases/broken fails, the
#         runner exits 1 and prints a unified diff naming the differing field
#         (data.mode: "slow" expected, "fast" seen).
set -uo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
which=${1:?good|broken}
runner=${2:?runner}
shift 2

case ${GR_SKIP_INTEGRATION:-0} in
  1|true|TRUE|yes|YES|on|ON) echo "SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION"; exit 77 ;;
esac

out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; echo "--- runner output:"; cat "$out"; exit 1; }

if [[ $which == good ]]; then
  "$runner" "$@" "$here/reconcile" >"$out" 2>&1
  rc=$?
  cat "$out"
  [[ $rc -eq 0 ]] || fail "runner exited $rc"
  ncases=$(find "$here/reconcile" -name input_config.yaml -o -name input_client_objects.yaml |
           xargs -n1 dirname | sort -u | wc -l)
  last=$(tail -n 1 "$out")
  [[ $last == "$ncases passed, 0 failed" ]] || fail "last line is '$last', want '$ncases passed, 0 failed'"
  exit 0
fi

"$runner" "$@" "$here/broken" >"$out" 2>&1
rc=$?
cat "$out"
[[ $rc -eq 1 ]] || fail "runner exited $rc, want 1 (a failing case)"
grep -q '^FAIL configmap-wrong-value' "$out" || fail "no FAIL line for configmap-wrong-value"
grep -q '^@@ ' "$out" || fail "no unified diff hunk"
grep -q '^-        "mode": "slow"' "$out" || fail "the diff does not show the expected data.mode"
grep -q '^+        "mode": "fast"' "$out" || fail "the diff does not show the actual data.mode"
[[ $(tail -n 1 "$out") == "0 passed, 1 failed" ]] || fail "last line is '$(tail -n 1 "$out")'"
exit 0

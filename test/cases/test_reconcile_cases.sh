#!/usr/bin/env bash
# CTest driver for the reconcile-case runner (label integration, fixture
# gr_cluster; docs/reconcile-cases.md):
#   test_reconcile_cases.sh good|broken|manager RUNNER [runner options]
# good:    every case under test/cases/reconcile passes and the last line is
#          "N passed, 0 failed"; then nvcre-reject-workflow-creates is rerun
#          with --keep and a Workflow create by another client must be
#          refused with 403 Forbidden by the case's admission policy.
# broken:  the deliberately broken cases under test/cases/broken fail, the
#          runner exits 1, prints a unified diff naming the differing field
#          (data.mode: "slow" expected, "fast" seen) and says that a mutable
#          spec field was accepted, and that a wait timed out (with what it
#          last saw); the last line is "0 passed, 3 failed".
# manager: test/cases/with-manager runs with fake_manager.py as the manager
#          child: input_logs_<pod>.txt reach it and its /metrics reach the
#          snapshot.
set -uo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
which=${1:?good|broken|manager}
runner=${2:?runner}
shift 2

case ${GR_SKIP_INTEGRATION:-0} in
  1|true|TRUE|yes|YES|on|ON) echo "SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION"; exit 77 ;;
esac

out=$(mktemp)
kept=
cleanup() {
  rm -f "$out"
  if [[ -n $kept ]]; then
    "$GR_KUBECTL" --kubeconfig "$GR_KUBECONFIG_ADMIN" delete --wait=false namespace "$kept" \
      validatingadmissionpolicybinding "reconcile-cases-reject-workflows-$kept" \
      validatingadmissionpolicy "reconcile-cases-reject-workflows-$kept" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- runner output:"; cat "$out"; exit 1; }
ncases() {
  find "$1" \( -name input_config.yaml -o -name input_client_objects.yaml \) -exec dirname {} \; |
    sort -u | wc -l
}

case $which in
  good)
    "$runner" "$@" "$here/reconcile" >"$out" 2>&1
    rc=$?
    cat "$out"
    [[ $rc -eq 0 ]] || fail "runner exited $rc"
    n=$(ncases "$here/reconcile")
    last=$(tail -n 1 "$out")
    [[ $last == "$n passed, 0 failed" ]] || fail "last line is '$last', want '$n passed, 0 failed'"

    # rejectWorkflowCreates: another client's Workflow create is refused.
    set -a
    # shellcheck disable=SC1091
    source "${GR_CLUSTER_DIR:?}/cluster.env"
    set +a
    "$runner" "$@" --keep "$here/reconcile/nvcre-reject-workflow-creates" >"$out" 2>&1 ||
      fail "nvcre-reject-workflow-creates with --keep"
    kept=$(sed -n 's/.*: kept namespace \(.*\)$/\1/p' "$out")
    [[ -n $kept ]] || fail "the runner did not name the kept namespace"
    sed 's/name: seeded/name: by-someone-else/' \
      "$here/reconcile/nvcre-reject-workflow-creates/input_client_objects.yaml" |
      "$GR_KUBECTL" --kubeconfig "$GR_KUBECONFIG_ADMIN" -n "$kept" create -f - >"$out" 2>&1 &&
      fail "a Workflow create by kubectl was accepted under rejectWorkflowCreates"
    grep -q 'Forbidden' "$out" || fail "the Workflow create was refused, but not as Forbidden"
    echo "rejectWorkflowCreates: kubectl's Workflow create refused: $(cat "$out")"
    ;;
  broken)
    "$runner" "$@" "$here/broken" >"$out" 2>&1
    rc=$?
    cat "$out"
    [[ $rc -eq 1 ]] || fail "runner exited $rc, want 1 (failing cases)"
    grep -q '^FAIL configmap-wrong-value' "$out" || fail "no FAIL line for configmap-wrong-value"
    grep -q '^@@ ' "$out" || fail "no unified diff hunk"
    grep -q '^-        "mode": "slow"' "$out" || fail "the diff does not show the expected data.mode"
    grep -q '^+        "mode": "fast"' "$out" || fail "the diff does not show the actual data.mode"
    grep -q '^FAIL spec-mutable-node' "$out" || fail "no FAIL line for spec-mutable-node"
    grep -q 'changing spec.unschedulable of Node/reconcile-cases-mutable-node was accepted' "$out" ||
      fail "verifySpecImmutable did not name the accepted field"
    grep -q '^waitFor ConfigMap/never-ready: timed out after [0-9]\+ s waiting for condition Ready; last status: null$' "$out" ||
      fail "the timed-out wait does not say what it waited for and saw"
    [[ $(tail -n 1 "$out") == "0 passed, 3 failed" ]] || fail "last line is '$(tail -n 1 "$out")'"
    ;;
  manager)
    command -v python3 >/dev/null || { echo "SKIPPED: python3 (for fake_manager.py) is missing; scripts/install-deps installs it"; exit 77; }
    "$runner" --manager "exec python3 '$here/fake_manager.py'" "$here/with-manager" >"$out" 2>&1
    rc=$?
    cat "$out"
    [[ $rc -eq 0 ]] || fail "runner exited $rc"
    [[ $(tail -n 1 "$out") == "$(ncases "$here/with-manager") passed, 0 failed" ]] ||
      fail "last line is '$(tail -n 1 "$out")'"
    ;;
  *) echo "usage: test_reconcile_cases.sh good|broken|manager RUNNER [options]"; exit 2 ;;
esac
exit 0

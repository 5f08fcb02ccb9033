#!/usr/bin/env bash
# gpuready-manager's command line: help, version, and clear failures for bad
# flags (exit 2, the message names the flag). Needs no cluster.
set -euo pipefail
MGR=${1:?usage: test_cli.sh PATH-TO-gpuready-manager}
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$MGR" --help) || fail "--help exited $?"
for f in --metrics-bind-address --health-probe-bind-address --leader-elect \
         --leader-election-namespace --leader-elect-lease-duration --leader-elect-renew-deadline \
         --leader-elect-retry-period --max-concurrent-reconciles \
         --measurement-max-concurrent-reconciles --namespace --kubeconfig --zap-log-level \
         --workload-creation-deadline; do
  [[ $out == *"$f"* ]] || fail "--help does not mention $f"
done
[[ $("$MGR" -h) == "$out" ]] || fail "-h differs from --help"
[[ $("$MGR" --version) == "gpuready-manager "* ]] || fail "--version"

expect_usage() { # expect_usage WANT-SUBSTRING ARGS...
  local want=$1 rc=0 err
  shift
  err=$("$MGR" "$@" 2>&1 >/dev/null) || rc=$?
  ((rc == 2)) || fail "$* exited $rc, want 2"
  [[ $err == *"$want"* ]] || fail "$*: message \"$err\" lacks \"$want\""
}
expect_usage 'unknown flag: --metrics-addr' --metrics-addr=:8080
expect_usage 'unknown flag: --bogus' --leader-elect --bogus
expect_usage '--controllers: unknown controller "jobs"' --controllers=job,jobs
expect_usage '--controllers: unknown controller "-"' --controllers=-
expect_usage 'flag needs an argument: --namespace' --namespace
expect_usage '--namespace given twice ("a" and "b"): a manager watches one namespace or all of them' \
  --namespace a --namespace=b
expect_usage 'invalid value "ten" for --max-concurrent-reconciles' --max-concurrent-reconciles ten
expect_usage 'invalid value "0" for --measurement-max-concurrent-reconciles' \
  --measurement-max-concurrent-reconciles=0
expect_usage 'invalid value "15" for --leader-elect-lease-duration' --leader-elect-lease-duration 15
expect_usage 'invalid value "maybe" for --leader-elect' --leader-elect=maybe
expect_usage 'renew-deadline must be shorter' --leader-elect --leader-elect-renew-deadline=20s
expect_usage '--health-probe-bind-address' --health-probe-bind-address 8081
expect_usage '--metrics-bind-address' --metrics-bind-address=host.example:1
expect_usage 'invalid value "loud" for --zap-log-level' --zap-log-level=loud
expect_usage 'unexpected argument "serve"' serve
expect_usage 'invalid value "soon" for --workload-creation-deadline' --workload-creation-deadline=soon

# No API server to talk to: a clear startup failure, exit 1 (not a hang).
rc=0
err=$(KUBECONFIG=/nonexistent/kubeconfig KUBERNETES_SERVICE_HOST= HOME=/nonexistent \
      "$MGR" --health-probe-bind-address=0 2>&1) || rc=$?
((rc == 1)) || fail "without a kubeconfig: exit $rc, want 1 ($err)"
[[ $err == *"unable to load the Kubernetes client configuration"* ]] || fail "message: $err"
echo "PASS: manager_cli"

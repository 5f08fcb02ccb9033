#!/usr/bin/env bash
# bench_job_real.sh — gpuready-manager's resident memory and CPU with N Jobs
# on the real control plane (scripts/cluster): N Jobs are created in one
# namespace, the manager (watching only that namespace) creates their
# TrainJobs and brings every Job to WorkloadRunning; then every TrainJob is
# patched Complete and the run ends when every Job Succeeded. Prints one
# "name: value unit" line per figure.
#   GR_CLUSTER_DIR=<dir> bench/nvcre/bench_job_real.sh MANAGER [N=2000]
# Needs the Trainer CRDs installed (test/nvcre/test_job_cases.sh does it).
set -euo pipefail
manager=${1:?manager binary}
n=${2:-2000}
set -a
# shellcheck disable=SC1091
source "${GR_CLUSTER_DIR:?}/cluster.env"
set +a
kc() { "$GR_KUBECTL" --kubeconfig "$GR_KUBECONFIG_ADMIN" "$@"; }
ns=bench-job-$$
work=$(mktemp -d)
pid=
cleanup() {
  kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  # let the manager drop its finalizers before it stops
  for _ in $(seq 1 600); do kc get namespace "$ns" >/dev/null 2>&1 || break; sleep 0.5; done
  [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
kc create namespace "$ns" >/dev/null
for ((i = 0; i < n; i++)); do
  printf -- '---\napiVersion: nvcre.nvidia.com/v1alpha1\nkind: Job\nmetadata: {name: job-%05d}\nspec: {workload: {trainJob: {runtimeRef: {kind: TrainingRuntime, name: nccl}}}}\n' "$i"
done >"$work/jobs.yaml"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$manager" --kubeconfig "$GR_KUBECONFIG_ADMIN" --namespace "$ns" --metrics-bind-address "127.0.0.1:$port" \
  --health-probe-bind-address 0 >"$work/manager.log" 2>&1 &
pid=$!
clk=$(getconf CLK_TCK)
cpu() { awk -v t="$clk" '{printf "%.2f", ($14 + $15) / t}' "/proc/$pid/stat"; }
t0=$(date +%s.%N)
kc -n "$ns" create -f "$work/jobs.yaml" >/dev/null
count() { kc -n "$ns" get jobs.nvcre.nvidia.com -o jsonpath="{range .items[*]}{.status.conditions[?(@.status==\"True\")].reason}{\"\\n\"}{end}" | grep -c "^$1\$" || true; }
until [[ $(count WorkloadRunning) -ge $n ]]; do sleep 2; done
t1=$(date +%s.%N)
echo "jobs: $n count"
echo "all_running_after: $(echo "$t1 - $t0" | bc) s"
echo "manager_cpu_to_running: $(cpu) s"
grep -E '^VmRSS' "/proc/$pid/status" | awk '{printf "manager_rss_running: %.1f MB\n", $2/1024}'
patch='{"status":{"conditions":[{"type":"Complete","status":"True","reason":"JobsCompleted","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}'
for ((i = 0; i < n; i++)); do
  printf 'job-%05d-workload\n' "$i"
done | xargs -P 4 -n 50 "$GR_KUBECTL" --kubeconfig "$GR_KUBECONFIG_ADMIN" -n "$ns" patch trainjobs \
  --subresource=status --type=merge -p "$patch" >/dev/null
until [[ $(count WorkloadCompleted) -ge $n ]]; do sleep 2; done
t2=$(date +%s.%N)
echo "all_succeeded_after: $(echo "$t2 - $t0" | bc) s"
echo "manager_cpu_total: $(cpu) s"
grep -E '^VmRSS|^VmHWM' "/proc/$pid/status" | awk '{printf "manager_%s %.1f MB\n", ($1 == "VmRSS:" ? "rss_end:" : "rss_peak:"), $2/1024}'
rec=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^nvcre_reconcile_total/ {s += $2} END {print s + 0}')
echo "manager_reconciles: $rec count"
awk -v c="$(cpu)" -v r="$rec" 'BEGIN {if (r > 0) printf "manager_cpu_per_1000_reconciles: %.3f s\n", c / (r / 1000)}'
curl -s "http://127.0.0.1:$port/metrics" | awk '
  /^nvcre_reconcile_duration_seconds_bucket/ {match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5); b[++n] = le; v[n] = $2}
  /^nvcre_reconcile_duration_seconds_count/ {tot = $2}
  END {for (i = 1; i <= n; i++) if (v[i] >= 0.99 * tot) {printf "manager_latency_p99_bucket: <= %s s\n", b[i]; exit}}'

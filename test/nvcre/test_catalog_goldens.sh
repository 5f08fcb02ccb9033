#!/usr/bin/env bash
# nvcre_catalog_goldens (unit): for every catalog entry × {aws, gcp, azure,
# oci, onprem} × {h100, gb200, l40s}, what the controllers would create from
# a one-category Certification on two generated GPU nodes of that platform
# and GPU (test/nvcre/data/catalog/<domain>/<variant>/<platform>-<arch>.yaml):
# the Workflow (Certification controller), its first-pass summary, the
# dependencies (TrainingRuntime, ComputeDomain) and Job(s) (Workflow
# controller) and each Job's TrainJob (Job controller). `gpuready render`
# runs those controllers' own pure functions, so a change to a catalog
# default, a platform file, or the controllers' child-building code shows
# here as a diff.
#
# Why two nodes: the smallest set on which every category partitions as it
# does by default for these GPUs: the NCCL categories (nodesPerJob 2) make
# one Job over both nodes, the single-node categories (loopback, DCGM) one
# Job per node, which shows the per-group naming and renamed job-scoped
# dependencies. More nodes only repeat identical Jobs. Volatile fields are
# fixed: uids are 00000000-0000-4000-8000-<kind><n>, the clock 2026-01-01.
#
# WF-67: the WorkflowSpec each golden shows is the one pulled from the
# catalog for that {domain, variant}.
#
# Also: CategoryOptions goldens (data/catalog/options/<name>.yaml, cases at
# the end) show options reaching the workload, or their refusal.
#
# Usage: test_catalog_goldens.sh <gpuready binary> [--update]
#   --update rewrites the goldens; review the diff (git diff) before committing.
set -uo pipefail
here=$(cd -- "$(dirname -- "$0")" && pwd)
bin=$1
update=${2:-}
data=$here/data/catalog
fail=0 checked=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # golden args...
  local golden=$1
  shift
  local rc=0
  "$bin" render "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "FAIL: gpuready render $*: exit $rc: $(cat "$tmp/err")"
    fail=1
    return
  fi
  checked=$((checked + 1))
  if [[ $update == --update ]]; then
    mkdir -p "$(dirname "$golden")"
    cp "$tmp/out" "$golden"
  elif [[ ! -f $golden ]]; then
    echo "FAIL: $golden is missing (run: $0 $bin --update)"
    fail=1
  elif ! diff -u "$golden" "$tmp/out"; then
    echo "FAIL: gpuready render $* differs from ${golden#"$here"/} (after review: $0 $bin --update)"
    fail=1
  fi
}

mapfile -t cats < <("$bin" catalog list | awk 'NR > 1 {print $1}')
if [[ ${#cats[@]} -ne 9 ]]; then
  echo "FAIL: gpuready catalog list: ${#cats[@]} categories, want 9 (a new one needs its goldens: --update)"
  fail=1
fi
for c in "${cats[@]}"; do
  for p in aws gcp azure oci onprem; do
    for a in h100 gb200 l40s; do
      check "$data/$c/$p-$a.yaml" --category "$c" --platform "$p" --gpu "$a"
    done
  done
done
# A golden whose category left the catalog is stale. (A set lookup, not
# `printf | grep -q`: grep's early exit would kill printf with SIGPIPE and,
# under pipefail, report a category that is there as missing.)
declare -A known=()
for c in "${cats[@]}"; do known[$c]=1; done
while IFS= read -r f; do
  rel=${f#"$data"/}
  [[ $rel == options/* ]] && continue
  c=${rel%/*}
  [[ -n ${known[$c]:-} ]] || {
    echo "FAIL: $rel: no catalog category $c (delete the golden)"
    fail=1
  }
done < <(find "$data" -name '*.yaml' | sort)

# CategoryOptions through the whole chain (data/catalog/options/<name>.yaml):
# each field's effect on the Workflow, Jobs and TrainJobs, or its refusal
# (exit 1, the Certification Failed with BuildFailed before anything is
# created). Every field also has a unit row in test_nvcre_catalog.c.
opt() { # name want_rc render-args...
  local name=$1 want=$2
  shift 2
  local golden=$data/options/$name.yaml rc=0
  "$bin" render "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  checked=$((checked + 1))
  if [[ $rc -ne $want ]]; then
    echo "FAIL: gpuready render $*: exit $rc, want $want: $(cat "$tmp/err")"
    fail=1
  elif [[ $update == --update ]]; then
    mkdir -p "$data/options"
    cp "$tmp/out" "$golden"
  elif ! diff -u "$golden" "$tmp/out"; then
    echo "FAIL: gpuready render $* differs from ${golden#"$here"/} (after review: $0 $bin --update)"
    fail=1
  fi
}
# placement (ADR-089): one unpinned Job of nodesPerJob, no hostname affinity
opt placement-unpinned 0 --category communication/nccl-all-reduce --set placement=Unpinned \
  --platform aws --gpu h100 --count 3
# testScale diagnose: orchestration.diagnose with minGroupSize, 15m per Job,
# round 1 of the diagnose state machine
opt testscale-diagnose 0 --category communication/nccl-all-reduce --set testScale=diagnose \
  --set minGroupSize=2 --platform onprem --gpu h100 --count 4
# testScale intra-rack: one group per nvidia.com/gpu.clique domain
opt testscale-intra-rack 0 --category communication/nccl-all-gather --set testScale=intra-rack \
  --platform oci --gpu gb200
# testScale intra-node on a multi-node category: one Job per node
opt testscale-intra-node 0 --category communication/nccl-alltoall --set testScale=intra-node \
  --platform azure --gpu h100
# resources, mlnxPerNode, nicResourceName, imagePullSecrets, image,
# workloadMetadata, startupStallTimeoutSeconds, repeatCount, maxConcurrent,
# timeoutPerJob, maxBytes, numIterations, numCycles, thresholds,
# measurementTimeout, gpusPerNode, nodesPerJob, enableMNNVL on one render
opt many-nccl 0 --category communication/nccl-all-reduce --platform onprem --gpu gb200 \
  --set 'resources={"limits":{"cpu":"8","memory":"64Gi"},"requests":{"cpu":"4"}}' \
  --set mlnxPerNode=4 --set nicResourceName=rdma/ib --set 'imagePullSecrets=[{"name":"regcred"}]' \
  --set image=mirror.local/nccl-tests:1 --set 'workloadMetadata={"labels":{"team":"infra"}}' \
  --set startupStallTimeoutSeconds=120 --set repeatCount=2 --set maxConcurrent=1 \
  --set timeoutPerJob=30m --set maxBytes=8G --set numIterations=20 --set numCycles=3 \
  --set 'thresholds={"busBandwidthGBps":"value >= 300"}' --set measurementTimeout=9m \
  --set gpusPerNode=4 --set nodesPerJob=2 --set enableMNNVL=false --count 2 --gpus-per-node 4
# the single-node categories' fields
opt many-dcgm 0 --category diagnostics/dcgm-level2 --platform gcp --gpu l40s \
  --set image=mirror.local/dcgm:1 --set gpusPerNode=4 --set 'resources={"requests":{"memory":"8Gi"}}' \
  --set timeoutPerJob=20m --set placement=Pinned --gpus-per-node 4
# refused: a global option no category can use (training-only, sweep-only)
opt refused-maxsteps 1 --category communication/nccl-all-reduce --set maxSteps=10 \
  --platform aws --gpu h100
opt refused-maxbytes-dcgm 1 --category diagnostics/dcgm-level1 --set maxBytes=8G \
  --platform aws --gpu h100
# a global option one category uses is fine for the other
opt thresholds-two-categories 0 --category diagnostics/dcgm-level1 \
  --category communication/nccl-loopback --set 'thresholds={"busBandwidthGBps":"value >= 100"}' \
  --platform onprem --gpu l40s --count 1
# a category's own option it cannot use: from a Certification file
cat >"$tmp/cert.yaml" <<'YAML'
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: opts, namespace: team-a}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
  - {domain: communication, variant: nccl-loopback, options: {nodesPerJob: 2}}
YAML
opt refused-category-nodesperjob 1 -f "$tmp/cert.yaml" --platform onprem --gpu h100
echo "checked $checked renderings"
exit $fail

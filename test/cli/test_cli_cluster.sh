#!/usr/bin/env bash
# cli_cluster (integration): the cluster commands of `gpuready` against the
# local control plane (fixture gr_cluster; no controller runs, so the
# Certification keeps no status and no finalizer):
#   certify (bad category refused naming the valid ones, unused options
#   refused, nothing created; created with --name, node selector and --set
#   options kept),
#   list, status, report -o json / junit, cleanup (deleted, waits until gone),
#   kubeconfig/context/namespace flags as kubectl's.
# Usage: test_cli_cluster.sh GPUREADY
set -uo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
gpuready=${1:?gpuready}
# shellcheck source=../harness/gr_harness.sh
. "$here/../harness/gr_harness.sh"
gr_skip_if_disabled
gr_test_begin cli
export GPUREADY_POLL_INTERVAL=200ms
gr_kubectl apply --server-side -f "$here/../../deploy/crds/nvcre.nvidia.com_certifications.yaml" >/dev/null || exit 1
gr_kwait --for condition=Established crd/certifications.nvcre.nvidia.com --timeout "$(gr_scale 60)s" || exit 1
ctx=$(gr_kubectl config current-context)
g() { "$gpuready" "$1" --kubeconfig "$GR_KUBECONFIG_ADMIN" --context "$ctx" -n "$GR_NS" "${@:2}"; }
fail() { echo "FAIL: $*"; exit 1; }

out=$(g certify --name bogus --category diagnostics/dcgm-level1 --category communication/nccl-bogus 2>&1); rc=$?
[[ $rc -eq 2 && $out == *"Unknown certification category communication/nccl-bogus; valid categories (DOMAIN/VARIANT): communication/nccl-all-gather, "*", diagnostics/dcgm-level4" ]] ||
  fail "bad category: rc=$rc $out"
# ... and options no category can use: refused before anything is created
out=$(g certify --name bogus --category diagnostics/dcgm-level1 --set maxBytes=8G 2>&1); rc=$?
[[ $rc -eq 2 && $out == *"spec.maxBytes: none of this Certification's categories can use it"* ]] ||
  fail "unused option: rc=$rc $out"
n=$(gr_kubectl -n "$GR_NS" get certifications -o name | wc -l)
[[ $n -eq 0 ]] || fail "a refused certify created $n Certification(s)"
# A threshold key the Job does not know would fail every node with
# UnknownThresholdKey after the whole run: refused up front, naming the keys.
out=$(g certify --category communication/nccl-all-reduce --set 'thresholds={"busBW":"value >= 300"}' 2>&1); rc=$?
[[ $rc -eq 2 && $out == *'unknown key "busBW" (known: algBandwidthGBps, '*busBandwidthGBps* ]] ||
  fail "unknown threshold key: rc=$rc $out"
out=$(g certify --category communication/nccl-all-reduce --set 'thresholds={"busBandwidthGBps":300}' 2>&1); rc=$?
[[ $rc -eq 2 && $out == *"want a CEL expression over value as a string"* ]] || fail "numeric threshold: rc=$rc $out"

out=$(g certify --name c1 --category diagnostics/dcgm-level1 --category communication/nccl-all-reduce \
  --node-selector nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3 --set testScale=intra-node \
  --set maxBytes=8G --set numIterations=20 2>&1) || fail "certify: $out"
[[ $out == "certification.nvcre.nvidia.com/c1 created" ]] || fail "certify output: $out"
sel=$(gr_kubectl -n "$GR_NS" get certification c1 -o jsonpath='{.spec.target.nodeSelector.nvidia\.com/gpu\.product}')
[[ $sel == NVIDIA-H100-80GB-HBM3 ]] || fail "node selector: $sel"
opts=$(gr_kubectl -n "$GR_NS" get certification c1 -o jsonpath='{.spec.testScale} {.spec.maxBytes} {.spec.numIterations}')
[[ $opts == "intra-node 8G 20" ]] || fail "--set options: $opts"
n=$(gr_kubectl -n "$GR_NS" get certification c1 -o jsonpath='{.spec.categories[*].variant}')
[[ $n == "dcgm-level1 nccl-all-reduce" ]] || fail "categories: $n"

out=$(g list) || fail "list"
[[ $out == *"c1 "*"Pending"*"0/2"* ]] || fail "list output: $out"
out=$(g status c1) || fail "status"
[[ $out == "$GR_NS/c1 Pending: not picked up by a controller yet (gpuready-manager)"* ]] || fail "status output: $out"
# kubectl's order: cluster flags before the command work too
out=$("$gpuready" --kubeconfig "$GR_KUBECONFIG_ADMIN" --context="$ctx" -n "$GR_NS" status c1) ||
  fail "status with leading cluster flags"
[[ $out == "$GR_NS/c1 Pending: "* ]] || fail "status with leading cluster flags: $out"
out=$(g report c1 -o json) || fail "report json"
[[ $(jq -r '.certification + " " + .result + " " + (.categories|length|tostring)' <<<"$out") == "c1 Pending 0" ]] ||
  fail "report json: $out"
out=$(g report c1 -o junit) || fail "report junit"
[[ $out == *'<testsuites name="c1" tests="0" failures="0">'* ]] || fail "junit: $out"
out=$(g report c1 -o html) || fail "report html"
[[ $out == *'<!DOCTYPE html>'* && $out == *'<table id="results">'* ]] || fail "html: $out"
out=$(g report c1 -o pdf 2>&1); [[ $? -eq 2 ]] || fail "report -o pdf accepted: $out"
out=$(g status nope 2>&1); [[ $? -eq 1 && $out == *NotFound* || $out == *"not found"* ]] || fail "status of a missing one: $out"

out=$(g cleanup c1 --timeout 60s) || fail "cleanup: $out"
[[ $out == *"certification.nvcre.nvidia.com/c1 deleted"* ]] || fail "cleanup output: $out"
gr_kubectl -n "$GR_NS" get certification c1 >/dev/null 2>&1 && fail "c1 still there after cleanup"
echo "PASS cli_cluster"

#!/usr/bin/env bash
# test_gang_serve.sh BINARY ALIAS — `gpuready-preflight serve` with gang
# coordination enabled, against real kube-apiservers (label integration):
#
#   PF-10/PF-11  a cluster that serves no native gang API (a second, private
#       control plane started with GR_FEATURE_GATES=GenericWorkload=false and
#       GR_RUNTIME_CONFIG=scheduling.k8s.io/v1alpha2=false): serve exits 1
#       and logs the contract line byte for byte, for the kube config given
#       by --kubeconfig and by $KUBECONFIG; the old program name
#       (gpuready-preflight-gang, ALIAS) behaves the same
#   on the fixture cluster (native PodGroup served): `check-gang` names the
#       native discoverer; serve starts the gang controllers on the
#       controller runtime, /readyz (webhook port and the runtime's probe
#       address) turns ok once the caches synced; admission answers with
#       the gang ConfigMap mounted but writes nothing (issue 20); once the
#       admitted pod exists the coordinator creates its gang ConfigMap
#       (PF-109, PF-113: the static resolver has no controllers, so this
#       proves the kube-backed service is the one wired in); SIGTERM exits 0
#   gang coordination off: serve needs no cluster at all (no kube config
#       is read)
#
# Needs: bash, openssl, curl, scripts/cluster, the cluster's kubectl.
set -euo pipefail
BIN=$(cd "$(dirname "${1:?usage: test_gang_serve.sh BINARY ALIAS}")" && pwd)/$(basename "$1")
ALIAS=$(cd "$(dirname "${2:?usage: test_gang_serve.sh BINARY ALIAS}")" && pwd)/$(basename "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=test/harness/gr_harness.sh
source "$HERE/../harness/gr_harness.sh"
gr_skip_if_disabled
gr_test_begin preflight-gang

WORK=$(mktemp -d)
NOGANG=$WORK/nogang-cluster
PID=""
cleanup() {
    if [[ -n $PID ]]; then
        kill "$PID" 2>/dev/null || true
        wait "$PID" 2>/dev/null || true
    fi
    if [[ -f $NOGANG/cluster.env ]]; then
        "$ROOT/scripts/cluster" down "$NOGANG" >/dev/null 2>&1 || true
    fi
    rm -rf "$WORK"
}
trap 'rc=$?; cleanup; _gr_test_end $rc' EXIT
fail() {
    echo "FAIL: $*" >&2
    local f
    for f in "$WORK"/*.log; do
        [[ -f $f ]] && { echo "---- $f (tail) ----" >&2; tail -n 20 "$f" >&2; }
    done
    exit 1
}
step() { echo "== $*"; }

# The contract's fatal line (PF-11), as gr_log writes it (slog shape).
PF11='"level":"ERROR","msg":"Fatal error","error":"failed to create gang discoverer resolver: failed to create default gang discoverer: kubernetes native gang API not available (requires K8s 1.35 Workload or K8s 1.36+ PodGroup)"'

CERTS=$WORK/certs
mkdir -p "$CERTS"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
    -keyout "$CERTS/tls.key" -out "$CERTS/tls.crt" 2>/dev/null
cat >"$WORK/gang.yaml" <<'EOF'
connectorSocket: ""
gangCoordination: {enabled: true}
initContainers:
  - {name: preflight-nccl-allreduce, image: allreduce:v1}
EOF
cat >"$WORK/plain.yaml" <<'EOF'
connectorSocket: ""
initContainers:
  - {name: preflight-dcgm-diag, image: dcgm:v1}
EOF

# ------------------------------------------- no native gang API: PF-11
step "PF-10/PF-11: a cluster without native gang APIs"
GR_CLUSTER_DIR=$NOGANG GR_K8S_BIN=$GR_K8S_BIN GR_FEATURE_GATES=GenericWorkload=false \
    GR_RUNTIME_CONFIG=scheduling.k8s.io/v1alpha2=false \
    "$ROOT/scripts/cluster" up --no-controller-manager --ttl 600 "$NOGANG" >"$WORK/nogang-up.log" 2>&1 ||
    fail "could not start the cluster without native gang APIs"
if KUBECACHEDIR=$WORK/kc "$GR_KUBECTL" --kubeconfig "$NOGANG/kubeconfig" api-versions |
    grep -q '^scheduling.k8s.io/v1alpha'; then
    fail "the private cluster still serves a native gang API; the overrides did not apply"
fi
run_fatal() { # LOG CMD... : expect exit 1 and the PF-11 line
    local log=$1 rc=0
    shift
    # a server that does not validate gang discovery would serve on: bound it
    timeout "$(gr_scale 60)" "$@" --config "$WORK/gang.yaml" --cert-dir "$CERTS" --port 0 --loopback >"$log" 2>&1 || rc=$?
    [[ $rc == 1 ]] || fail "$* exited $rc, want 1"
    grep -qF "$PF11" "$log" || fail "$*: no PF-11 line in $log"
}
run_fatal "$WORK/pf11-flag.log" "$BIN" serve --kubeconfig "$NOGANG/kubeconfig"
KUBECONFIG=$NOGANG/kubeconfig run_fatal "$WORK/pf11-env.log" "$BIN" serve
KUBECONFIG=$NOGANG/kubeconfig run_fatal "$WORK/pf11-alias.log" "$ALIAS" serve
rc=0
"$BIN" check-gang --config "$WORK/gang.yaml" --kubeconfig "$NOGANG/kubeconfig" >"$WORK/check-nogang.log" 2>&1 || rc=$?
[[ $rc == 1 ]] || fail "check-gang on the private cluster exited $rc, want 1"
grep -qF "$PF11" "$WORK/check-nogang.log" || fail "check-gang: no PF-11 line"
"$ROOT/scripts/cluster" down "$NOGANG" >/dev/null 2>&1 || fail "could not stop the private cluster"

# -------------------------------------------- gang coordination off
step "gang coordination off: no kube config is read"
PORT=$((20000 + RANDOM % 20000))
KUBECONFIG=$WORK/does-not-exist "$BIN" serve --config "$WORK/plain.yaml" --cert-dir "$CERTS" \
    --port "$PORT" --loopback >"$WORK/plain.log" 2>&1 &
PID=$!
for _ in $(seq "$(gr_tries 10 100)"); do
    curl -sk "https://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
    kill -0 "$PID" 2>/dev/null || fail "serve without gang coordination exited"
    sleep 0.1
done
[[ $(curl -sk "https://127.0.0.1:$PORT/healthz") == ok ]] || fail "/healthz (gang off)"
kill -TERM "$PID"
rc=0
wait "$PID" || rc=$?
PID=""
[[ $rc == 0 ]] || fail "serve (gang off) exited $rc after SIGTERM"

# ------------------------------------------ the fixture cluster: wired
step "check-gang on the fixture cluster"
out=$("$BIN" check-gang --config "$WORK/gang.yaml" --kubeconfig "$GR_KUBECONFIG_ADMIN" 2>"$WORK/check.log") ||
    fail "check-gang failed"
[[ $out == "gang discoverer: kubernetes" ]] || fail "check-gang printed '$out'"

step "serve with gang coordination: the coordinator creates the gang ConfigMap"
PORT=$((20000 + RANDOM % 20000))
PROBE=$((PORT + 1))
KUBECONFIG=$GR_KUBECONFIG_ADMIN "$BIN" serve --config "$WORK/gang.yaml" --cert-dir "$CERTS" \
    --port "$PORT" --loopback --workers 2 --health-probe-bind-address "127.0.0.1:$PROBE" \
    >"$WORK/serve.log" 2>&1 &
PID=$!
URL=https://127.0.0.1:$PORT
for _ in $(seq "$(gr_tries 20 100)"); do
    curl -sk "$URL/healthz" >/dev/null 2>&1 && break
    kill -0 "$PID" 2>/dev/null || fail "serve exited early"
    sleep 0.1
done
[[ $(curl -sk "$URL/healthz") == ok ]] || fail "/healthz"
grep -q '"msg":"serving".*"gangCoordination":true' "$WORK/serve.log" || fail "no serving line with gangCoordination"
for _ in $(seq 300); do
    [[ $(curl -sk "$URL/readyz") == ok ]] && break
    sleep 0.1
done
[[ $(curl -sk "$URL/readyz") == ok ]] || fail "webhook /readyz: $(curl -sk "$URL/readyz")"
[[ $(curl -s "http://127.0.0.1:$PROBE/readyz") == ok ]] || fail "runtime /readyz on $PROBE"
# (read first: `curl | grep -q` fails under pipefail when grep stops early)
metrics=$(curl -sk "$URL/metrics")
grep -q '^workqueue_depth{name="preflightconfig-resolver"}' <<<"$metrics" ||
    fail "the webhook's /metrics lacks the runtime's metrics: $(grep -c . <<<"$metrics") lines"
cat >"$WORK/review.json" <<EOF
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"gang-uid-1","namespace":"$GR_NS","operation":"CREATE",
 "object":{"metadata":{"name":"train-0","namespace":"$GR_NS"},"spec":{"schedulingGroup":{"podGroupName":"job1"},
 "containers":[{"name":"m","image":"x","resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}}}
EOF
code=$(curl -sk -o "$WORK/resp.json" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary @"$WORK/review.json" "$URL/mutate")
[[ $code == 200 ]] || fail "/mutate answered $code"
grep -q '"allowed":true' "$WORK/resp.json" || fail "gang pod not allowed: $(cat "$WORK/resp.json")"
patch=$(sed 's/.*"patch":"\([^"]*\)".*/\1/' "$WORK/resp.json" | base64 -d)
# PF-109, PF-113: gang ID kubernetes-<ns>-<podGroup>, ConfigMap preflight-<id>
CM=preflight-kubernetes-$GR_NS-job1
echo "$patch" | grep -q "\"$CM\"" || fail "patch does not mount $CM: $patch"
echo "$patch" | grep -q "\"kubernetes-$GR_NS-job1\"" || fail "patch lacks GANG_ID: $patch"
# issue 20: admission wrote nothing
sleep 1
if gr_kubectl -n "$GR_NS" get configmap "$CM" >/dev/null 2>&1; then
    fail "the gang ConfigMap exists before any member pod: admission wrote it"
fi
# the admitted pod appears (as the API server would store it): the
# coordinator creates its ConfigMap from the Pod watch
gr_kubectl -n "$GR_NS" apply -f - >/dev/null <<EOF || fail "could not create the PodGroup and pod"
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: job1}
spec: {schedulingPolicy: {gang: {minCount: 1}}}
---
apiVersion: v1
kind: Pod
metadata: {name: train-0}
spec:
  schedulingGroup: {podGroupName: job1}
  containers: [{name: m, image: busybox}]
  volumes: [{name: nvsentinel-preflight-gang-config, configMap: {name: $CM, optional: true}}]
EOF
found=""
for _ in $(seq "$(gr_tries 30 100)"); do
    if gr_kubectl -n "$GR_NS" get configmap "$CM" -o jsonpath='{.data.gang_id}' >"$WORK/cm.txt" 2>/dev/null; then
        found=1
        break
    fi
    sleep 0.1
done
[[ -n $found ]] || fail "gang ConfigMap $CM was not created (is the kube-backed resolver wired?)"
[[ $(cat "$WORK/cm.txt") == "kubernetes-$GR_NS-job1" ]] || fail "gang_id in $CM: $(cat "$WORK/cm.txt")"
kill -TERM "$PID"
rc=0
wait "$PID" || rc=$?
PID=""
[[ $rc == 0 ]] || fail "serve exited $rc after SIGTERM"
grep -q '"msg":"gang coordination stopped","registered":1' "$WORK/serve.log" ||
    fail "no gang stats on shutdown"
echo "PASS"

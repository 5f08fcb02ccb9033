#!/usr/bin/env bash
# test_integration.sh BINARY — gpuready-preflight behind a real kube-apiserver
# (label integration, fixture gr_cluster). The API server calls the webhook
# over TLS through a MutatingWebhookConfiguration (url + caBundle), scoped by a
# namespaceSelector label unique to this run:
#
#   PF-01/PF-28/PF-40/PF-41/PF-42/PF-77/PF-78  a GPU pod in a labelled
#       namespace is STORED with the injected init containers (resources
#       mirrored, common env, NCCL env inherited, socket volume)
#   PF-02  a non-GPU pod in the labelled namespace is untouched (the webhook
#       is called and answers "skipped")
#   PF-06/PF-07  a GPU pod in an unlabelled namespace is untouched and the
#       webhook is not even called
#   PF-34  a denial travels back through the API server with its message
#   certificate rotation under steady load: the cert files are rewritten 4
#       times through a Kubernetes-style `..data` symlink swap while pods are
#       created in a loop and fresh TLS handshakes run in another; zero failed
#       admissions, zero failed handshakes, every stored pod injected, each
#       new certificate served without a restart
#   PF-203  failurePolicy Fail with the webhook down: creation rejected
#   PF-204  failurePolicy Ignore with the webhook down: created unmutated
#
# Needs: bash, openssl, curl, the cluster's kubectl (gr_harness.sh).
set -euo pipefail
BIN=$(cd "$(dirname "${1:?usage: test_integration.sh path/to/gpuready-preflight}")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=test/harness/gr_harness.sh
source "$HERE/../harness/gr_harness.sh"
gr_skip_if_disabled
gr_test_begin preflight-it

WORK=$(mktemp -d)
RUN=pfit-$$-$RANDOM
LABEL_KEY=preflight-it.gpuready.test/run
WEBHOOK=preflight-it-$RUN
NS_OFF=""
PID=""
LOADERS=()
cleanup() {
    local l
    for l in "${LOADERS[@]}"; do kill "$l" 2>/dev/null || true; done
    if [[ -n $PID ]]; then
        kill "$PID" 2>/dev/null || true
        wait "$PID" 2>/dev/null || true
    fi
    gr_kubectl delete mutatingwebhookconfiguration "$WEBHOOK" --ignore-not-found >/dev/null 2>&1 || true
    gr_ns_delete "$NS_OFF" || true
    rm -rf "$WORK"
}
trap 'rc=$?; cleanup; _gr_test_end $rc' EXIT
fail() {
    echo "FAIL: $*" >&2
    [[ -f $WORK/webhook.log ]] && { echo "---- webhook log (tail) ----" >&2; tail -n 30 "$WORK/webhook.log" >&2; }
    exit 1
}
step() { echo "== $*"; }

# ------------------------------------------------------------ namespaces
gr_kubectl label namespace "$GR_NS" "$LABEL_KEY=$RUN" >/dev/null
NS_OFF=$(gr_ns_create preflight-it-off)

# ---------------------------------------------------------- certificates
# A CA of our own; serving certificates for IP 127.0.0.1 signed by it, laid
# out like a mounted Secret: tls.crt -> ..data/tls.crt, ..data -> ..genN.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -subj "/CN=preflight-it-ca" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$WORK/ca.key" -out "$WORK/ca.crt" 2>/dev/null
CERTS=$WORK/certs
mkdir -p "$CERTS"
issue() { # GEN: write $CERTS/..gen$GEN/tls.{crt,key}, print the serial (hex)
    local dir=$CERTS/..gen$1 serial=$((4096 + $1))
    mkdir -p "$dir"
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -subj "/CN=127.0.0.1" -keyout "$dir/tls.key" -out "$WORK/csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' >"$WORK/ext"
    openssl x509 -req -in "$WORK/csr" -CA "$WORK/ca.crt" -CAkey "$WORK/ca.key" -set_serial "$serial" \
        -days 1 -extfile "$WORK/ext" -out "$dir/tls.crt" 2>/dev/null
    printf '%X\n' "$serial"
}
issue 1 >/dev/null
ln -s ..gen1 "$CERTS/..data"
ln -s ..data/tls.crt "$CERTS/tls.crt"
ln -s ..data/tls.key "$CERTS/tls.key"
served_serial() {
    openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$WORK/ca.crt" </dev/null 2>/dev/null |
        openssl x509 -noout -serial 2>/dev/null | sed 's/^serial=//'
}

# --------------------------------------------------------------- webhook
cat >"$WORK/config.yaml" <<'EOF'
initContainers:
  - name: preflight-dcgm-diag
    image: ghcr.io/nvidia/nvsentinel/preflight-dcgm-diag:v1.26.0
    env: [{name: DCGM_DIAG_LEVEL, value: "2"}]
    volumeMounts: [{name: nvsentinel-socket, mountPath: /var/run}]
  - name: preflight-nccl-loopback
    image: ghcr.io/nvidia/nvsentinel/preflight-nccl-loopback:v1.26.0
EOF
PORT=""
for _ in $(seq 20); do
    p=$((20000 + RANDOM % 12000))
    ss -Htln "sport = :$p" 2>/dev/null | grep -q . || { PORT=$p; break; }
done
[[ -n $PORT ]] || fail "no free port"
URL=https://127.0.0.1:$PORT
"$BIN" serve --port "$PORT" --cert-dir "$CERTS" --config "$WORK/config.yaml" --timeout 5 \
    >"$WORK/webhook.log" 2>&1 &
PID=$!
for _ in $(seq "$(gr_tries 10 100)"); do
    curl -sf --cacert "$WORK/ca.crt" "$URL/healthz" >/dev/null 2>&1 && break
    kill -0 "$PID" 2>/dev/null || fail "webhook exited"
    sleep 0.1
done
[[ $(curl -sf --cacert "$WORK/ca.crt" "$URL/healthz") == ok ]] || fail "webhook not healthy on $URL"
metric() { # result label -> value of preflight_injection_total{result=...}
    curl -sf --cacert "$WORK/ca.crt" "$URL/metrics" |
        sed -n "s/^preflight_injection_total{result=\"$1\"} //p"
}
reloads() { curl -sf --cacert "$WORK/ca.crt" "$URL/metrics" |
    sed -n 's/^preflight_certificate_reloads_total{result="success"} //p'; }

apply_webhook() { # failurePolicy
    gr_apply - <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $WEBHOOK
webhooks:
  - name: preflight.nvsentinel.nvidia.com
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: $1
    timeoutSeconds: 5
    reinvocationPolicy: Never
    clientConfig:
      url: $URL/mutate
      caBundle: $(base64 -w0 "$WORK/ca.crt")
    rules:
      - operations: [CREATE]
        apiGroups: [""]
        apiVersions: [v1]
        resources: [pods]
        scope: Namespaced
    namespaceSelector:
      matchLabels:
        $LABEL_KEY: $RUN
EOF
}

pod_yaml() { # NAME|generate GPUS [ANNOTATION]
    local meta="name: $1"
    [[ $1 == generate ]] && meta="generateName: load-"
    local res="limits: {nvidia.com/gpu: \"$2\"}"
    [[ $2 == 0 ]] && res="requests: {cpu: 100m}"
    local ann=""
    [[ -n ${3:-} ]] && ann="annotations: {nvsentinel.nvidia.com/preflight-checks: \"$3\"}"
    cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  $meta
  labels: {app: preflight-it}
  $ann
spec:
  restartPolicy: Never
  containers:
    - name: trainer
      image: registry.invalid/train:1
      env: [{name: NCCL_DEBUG, value: WARN}, {name: WANDB_PROJECT, value: x}]
      resources: {$res}
EOF
}
init_names() { # NS POD
    gr_kubectl get pod -n "$1" "$2" -o jsonpath='{.spec.initContainers[*].name}'
}

step "MutatingWebhookConfiguration (failurePolicy Fail) pointing at $URL/mutate"
apply_webhook Fail || fail "apply webhook configuration"
# the API server picks configurations up asynchronously: wait until a
# server-side dry run is mutated (dry runs reach webhooks with sideEffects None)
ok=0
for _ in $(seq "$(gr_tries 30 200)"); do
    got=$(pod_yaml probe 1 | gr_kubectl create --dry-run=server -n "$GR_NS" -f - \
        -o jsonpath='{.spec.initContainers[*].name}' 2>/dev/null || true)
    [[ -n $got ]] && { ok=1; break; }
    sleep 0.2
done
((ok)) || fail "the API server never called the webhook"

# ------------------------------------------------ injection, stored pod
step "GPU pod in the labelled namespace: stored with the init containers (PF-01)"
pod_yaml gpu-pod 8 | gr_kubectl create -n "$GR_NS" -f - >/dev/null || fail "create gpu-pod"
names=$(init_names "$GR_NS" gpu-pod)
[[ $names == "preflight-dcgm-diag preflight-nccl-loopback" ]] ||
    fail "stored pod init containers are \"$names\" (PF-01, PF-28)"
jp() { gr_kubectl get pod -n "$GR_NS" gpu-pod -o "jsonpath=$1"; }
[[ $(jp '{.spec.initContainers[0].resources.limits.nvidia\.com/gpu}') == 8 ]] ||
    fail "GPU limit not mirrored into the check"
[[ $(jp '{.spec.initContainers[0].env[?(@.name=="NODE_NAME")].valueFrom.fieldRef.fieldPath}') == spec.nodeName ]] ||
    fail "NODE_NAME not from the downward API (PF-40)"
[[ $(jp '{.spec.initContainers[1].env[?(@.name=="PLATFORM_CONNECTOR_SOCKET")].value}') == unix:///var/run/nvsentinel.sock ]] ||
    fail "PLATFORM_CONNECTOR_SOCKET missing (PF-41)"
[[ $(jp '{.spec.initContainers[1].env[?(@.name=="PROCESSING_STRATEGY")].value}') == EXECUTE_REMEDIATION ]] ||
    fail "PROCESSING_STRATEGY missing (PF-42)"
[[ $(jp '{.spec.initContainers[1].env[?(@.name=="NCCL_DEBUG")].value}') == WARN ]] ||
    fail "NCCL_DEBUG not inherited (PF-77)"
[[ -z $(jp '{.spec.initContainers[1].env[?(@.name=="WANDB_PROJECT")].name}') ]] ||
    fail "WANDB_PROJECT inherited although it matches no pattern (PF-78)"
[[ $(jp '{.spec.volumes[?(@.name=="nvsentinel-socket")].hostPath.path}') == /var/run/nvsentinel ]] ||
    fail "socket volume missing"

step "non-GPU pod in the labelled namespace: untouched (PF-02)"
skipped0=$(metric skipped)
pod_yaml cpu-pod 0 | gr_kubectl create -n "$GR_NS" -f - >/dev/null || fail "create cpu-pod"
[[ -z $(init_names "$GR_NS" cpu-pod) ]] || fail "non-GPU pod got init containers (PF-02)"
[[ $(metric skipped) -gt $skipped0 ]] || fail "the webhook was not asked about the non-GPU pod"

step "GPU pod in an unlabelled namespace: untouched, webhook not called (PF-06, PF-07)"
total() { echo $(($(metric injected) + $(metric skipped) + $(metric denied) + $(metric error))); }
t0=$(total)
pod_yaml gpu-pod 8 | gr_kubectl create -n "$NS_OFF" -f - >/dev/null || fail "create in $NS_OFF"
[[ -z $(init_names "$NS_OFF" gpu-pod) ]] || fail "pod in an unlabelled namespace was mutated (PF-07)"
[[ $(total) == "$t0" ]] || fail "the webhook was called for an unlabelled namespace (PF-07)"

step "denial through the API server (PF-34)"
if pod_yaml denied-pod 8 "preflight-dcgm-diag,nope" |
    gr_kubectl create -n "$GR_NS" -f - >/dev/null 2>"$WORK/deny.err"; then
    fail "pod with an unknown check was admitted (PF-34)"
fi
grep -qF 'admission webhook "preflight.nvsentinel.nvidia.com" denied the request: failed to inject init containers: annotation nvsentinel.nvidia.com/preflight-checks references unknown checks: nope (configured: preflight-dcgm-diag, preflight-nccl-loopback)' \
    "$WORK/deny.err" || fail "denial message: $(cat "$WORK/deny.err")"

# ------------------------------------------- rotation under steady load
step "certificate rotation under steady load"
{
    echo "apiVersion: v1"
    echo "kind: List"
    echo "items:"
    for _ in $(seq 8); do pod_yaml generate 8 | sed 's/^/  /; 1s/^  /- /'; done
} >"$WORK/batch.yaml"
STOP=$WORK/stop
loader() { # N: create batches until $STOP exists
    local ok=0 bad=0
    while [[ ! -e $STOP ]]; do
        if gr_kubectl create -n "$GR_NS" -f "$WORK/batch.yaml" -o name >"$WORK/l$1.out" 2>"$WORK/l$1.err"; then
            ok=$((ok + $(grep -c '^pod/' "$WORK/l$1.out")))
        else
            bad=$((bad + 1))
            ok=$((ok + $(grep -c '^pod/' "$WORK/l$1.out" || true)))
            cat "$WORK/l$1.err" >>"$WORK/loader-errors"
        fi
    done
    echo "$ok $bad" >"$WORK/loader$1.result"
}
handshaker() { # fresh TLS connection per request, verified against the CA
    local ok=0 bad=0
    while [[ ! -e $STOP ]]; do
        if curl -sf --cacert "$WORK/ca.crt" "$URL/healthz" >/dev/null 2>>"$WORK/handshake-errors"; then
            ok=$((ok + 1))
        else
            bad=$((bad + 1))
        fi
        sleep 0.05
    done
    echo "$ok $bad" >"$WORK/handshaker.result"
}
injected0=$(metric injected)
reloads0=$(reloads)
loader 1 &
LOADERS+=($!)
loader 2 &
LOADERS+=($!)
handshaker &
LOADERS+=($!)
sleep 2
for gen in 2 3 4 5; do
    want=$(issue "$gen")
    # the kubelet's atomic writer: new directory, new symlink renamed over
    # ..data, old directory removed
    ln -s "..gen$gen" "$CERTS/..data_tmp"
    mv -T "$CERTS/..data_tmp" "$CERTS/..data"
    rm -rf "$CERTS/..gen$((gen - 1))"
    ok=0
    for _ in $(seq "$(gr_tries 10 100)"); do
        [[ $(served_serial) == "$want" ]] && { ok=1; break; }
        sleep 0.1
    done
    ((ok)) || fail "certificate generation $gen (serial $want) not served; serving $(served_serial)"
    echo "   generation $gen served (serial $want)"
    sleep 2
done
touch "$STOP"
for l in "${LOADERS[@]}"; do wait "$l" || true; done
LOADERS=()
read -r ok1 bad1 <"$WORK/loader1.result"
read -r ok2 bad2 <"$WORK/loader2.result"
read -r hs_ok hs_bad <"$WORK/handshaker.result"
created=$((ok1 + ok2))
echo "   pods created during rotation: $created (failed batches: $((bad1 + bad2))); handshakes: $hs_ok ok, $hs_bad failed"
((bad1 + bad2 == 0)) || fail "admissions failed during rotation: $(head -c 2000 "$WORK/loader-errors")"
((hs_bad == 0)) || fail "TLS handshakes failed during rotation: $(head -c 2000 "$WORK/handshake-errors")"
((created >= 16)) || fail "too little load during rotation ($created pods)"
((hs_ok >= 10)) || fail "too few handshakes during rotation ($hs_ok)"
kill -0 "$PID" 2>/dev/null || fail "the webhook died"
[[ $(reloads) -ge $((reloads0 + 4)) ]] || fail "certificate reloads: $(reloads), want >= $((reloads0 + 4))"
[[ $(($(metric injected) - injected0)) -ge $created ]] || fail "injections counted < pods created"
bare=$(gr_kubectl get pods -n "$GR_NS" -l app=preflight-it -o \
    jsonpath='{range .items[*]}{.metadata.generateName}{" "}{.spec.initContainers[*].name}{"\n"}{end}' |
    awk '$1 == "load-" && NF < 3' | wc -l)
stored=$(gr_kubectl get pods -n "$GR_NS" -l app=preflight-it -o name | grep -c '^pod/load-' || true)
((stored == created)) || fail "$stored load pods stored, $created reported created"
((bare == 0)) || fail "$bare stored load pods lack the init containers"

# ---------------------------------------------------------- failurePolicy
step "webhook down, failurePolicy Fail: GPU pod rejected (PF-203)"
kill -TERM "$PID"
rc=0
wait "$PID" || rc=$?
PID=""
((rc == 0)) || fail "webhook exited $rc on SIGTERM"
if pod_yaml down-fail 8 | gr_kubectl create -n "$GR_NS" -f - >/dev/null 2>"$WORK/fail.err"; then
    fail "pod admitted with the webhook down and failurePolicy Fail (PF-203)"
fi
grep -qF 'failed calling webhook "preflight.nvsentinel.nvidia.com"' "$WORK/fail.err" ||
    fail "unexpected rejection: $(cat "$WORK/fail.err")"

step "webhook down, failurePolicy Ignore: GPU pod created unmutated (PF-204)"
apply_webhook Ignore || fail "switch to Ignore"
ok=0
for _ in $(seq "$(gr_tries 30 200)"); do
    if pod_yaml down-ignore 8 | gr_kubectl create -n "$GR_NS" -f - >/dev/null 2>&1; then ok=1; break; fi
    sleep 0.2
done
((ok)) || fail "pod still rejected with failurePolicy Ignore (PF-204)"
[[ -z $(init_names "$GR_NS" down-ignore) ]] || fail "pod admitted under Ignore carries init containers"
echo "PASS"

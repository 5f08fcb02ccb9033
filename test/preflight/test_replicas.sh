#!/usr/bin/env bash
# test_replicas.sh BINARY — two `gpuready-preflight serve` replicas with gang
# coordination on the real control plane (label integration, fixture
# gr_cluster), as the chart deploys them (--leader-elect; otherwise default
# flags, --kube-api-qps 5 included):
#
#   - both replicas report /readyz ok; one holds the Lease
#     gpuready-preflight-controllers, the other follows (issue 14);
#   - the API server calls the FOLLOWER's webhook: a gang of 64 GPU pods
#     created by 64 concurrent writers is admitted with 0 refusals, every
#     stored pod mounts the gang ConfigMap (issue 20; PF-109, PF-113);
#   - one writer: the gang ConfigMap is created and filled by the leader
#     only: its managedFields name the leader's field manager and never the
#     follower's (each replica runs with its own --field-manager);
#   - takeover: SIGKILL the leader; the follower acquires the Lease and
#     writes the next peers (PF-145) while still serving admission.
#
# Prints (no assertion on time):
#   replicas_admit_64_seconds: <s> s
#   replicas_takeover_seconds: <s> s
#
# Needs: bash, openssl, curl, the cluster's kubectl (gr_harness.sh).
set -euo pipefail
BIN=$(cd "$(dirname "${1:?usage: test_replicas.sh path/to/gpuready-preflight}")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=test/harness/gr_harness.sh
source "$HERE/../harness/gr_harness.sh"
gr_skip_if_disabled
gr_test_begin preflight-rep

WORK=$(mktemp -d)
RUN=pfrep-$$-$RANDOM
LABEL_KEY=preflight-rep.gpuready.test/run
WEBHOOK=preflight-rep-$RUN
LEASE=gpuready-preflight-controllers
declare -A PID=()
cleanup() {
    local r
    for r in "${!PID[@]}"; do
        kill "${PID[$r]}" 2>/dev/null || true
        wait "${PID[$r]}" 2>/dev/null || true
    done
    gr_kubectl delete mutatingwebhookconfiguration "$WEBHOOK" --ignore-not-found >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap 'rc=$?; cleanup; _gr_test_end $rc' EXIT
fail() {
    echo "FAIL: $*" >&2
    local f
    for f in "$WORK"/*.log; do
        [[ -f $f ]] && { echo "---- $f (tail) ----" >&2; grep -v '"level":"DEBUG"' "$f" | tail -n 25 >&2; }
    done
    exit 1
}
step() { echo "== $*"; }
now() { date +%s.%N; }

gr_kubectl label namespace "$GR_NS" "$LABEL_KEY=$RUN" >/dev/null

# ---------------------------------------------------------- certificates
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -subj "/CN=preflight-rep-ca" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$WORK/ca.key" -out "$WORK/ca.crt" 2>/dev/null
CERTS=$WORK/certs
mkdir -p "$CERTS"
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -subj "/CN=127.0.0.1" -keyout "$CERTS/tls.key" -out "$WORK/csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' >"$WORK/ext"
openssl x509 -req -in "$WORK/csr" -CA "$WORK/ca.crt" -CAkey "$WORK/ca.key" -set_serial 4242 \
    -days 1 -extfile "$WORK/ext" -out "$CERTS/tls.crt" 2>/dev/null

cat >"$WORK/config.yaml" <<'EOF'
connectorSocket: ""
gangCoordination: {enabled: true}
initContainers:
  - {name: preflight-nccl-allreduce, image: allreduce:v1}
EOF

free_port() {
    local p
    for _ in $(seq 50); do
        p=$((20000 + RANDOM % 12000))
        [[ -z $(ss -Htln "sport = :$p" 2>/dev/null) ]] && { echo "$p"; return 0; }
    done
    return 1
}
declare -A PORT=() PROBE=()
start_replica() { # NAME
    PORT[$1]=$(free_port) || fail "no free port"
    PROBE[$1]=$(free_port) || fail "no free port"
    POD_NAME=replica-$1 KUBECONFIG=$GR_KUBECONFIG_ADMIN "$BIN" serve --config "$WORK/config.yaml" \
        --cert-dir "$CERTS" --port "${PORT[$1]}" --loopback \
        --leader-elect --leader-election-namespace "$GR_NS" \
        --leader-elect-lease-duration 6s --leader-elect-renew-deadline 4s \
        --leader-elect-retry-period 1s \
        --health-probe-bind-address "127.0.0.1:${PROBE[$1]}" --field-manager "preflight-$1" \
        >"$WORK/replica-$1.log" 2>&1 &
    PID[$1]=$!
}
ready() { # NAME
    [[ $(curl -s --cacert "$WORK/ca.crt" "https://127.0.0.1:${PORT[$1]}/readyz" 2>/dev/null) == ok ]]
}
holder() { gr_kubectl -n "$GR_NS" get lease "$LEASE" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true; }

step "two replicas, leader election on"
start_replica a
start_replica b
for _ in $(seq 600); do
    ready a && ready b && [[ -n $(holder) ]] && break
    kill -0 "${PID[a]}" 2>/dev/null || fail "replica a exited"
    kill -0 "${PID[b]}" 2>/dev/null || fail "replica b exited"
    sleep 0.1
done
ready a || fail "replica a not ready: $(curl -s --cacert "$WORK/ca.crt" "https://127.0.0.1:${PORT[a]}/readyz")"
ready b || fail "replica b not ready: $(curl -s --cacert "$WORK/ca.crt" "https://127.0.0.1:${PORT[b]}/readyz")"
[[ $(curl -s "http://127.0.0.1:${PROBE[a]}/readyz") == ok ]] || fail "runtime /readyz of a"
H=$(holder)
case $H in
replica-a_*) LEADER=a FOLLOWER=b ;;
replica-b_*) LEADER=b FOLLOWER=a ;;
*) fail "unexpected Lease holder '$H'" ;;
esac
echo "leader: $LEADER ($H), follower: $FOLLOWER"
metric_leader() { # NAME -> leader_election_master_status
    curl -s --cacert "$WORK/ca.crt" "https://127.0.0.1:${PORT[$1]}/metrics" |
        sed -n 's/^leader_election_master_status{[^}]*} //p'
}
[[ $(metric_leader "$LEADER") == 1 ]] || fail "leader's leader_election_master_status is not 1"
[[ $(metric_leader "$FOLLOWER") == 0 ]] || fail "follower's leader_election_master_status is not 0"

step "webhook registered at the follower ($FOLLOWER), failurePolicy Fail"
gr_apply - <<EOF || fail "apply webhook configuration"
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $WEBHOOK
webhooks:
  - name: preflight.nvsentinel.nvidia.com
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: 10
    reinvocationPolicy: Never
    clientConfig:
      url: https://127.0.0.1:${PORT[$FOLLOWER]}/mutate
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
pod_yaml() { # NAME
    cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: preflight-rep}}
spec:
  restartPolicy: Never
  schedulingGroup: {podGroupName: g64}
  containers:
    - name: trainer
      image: registry.invalid/train:1
      resources: {limits: {nvidia.com/gpu: "8"}}
EOF
}
ok=0
for _ in $(seq 150); do
    got=$(pod_yaml probe | gr_kubectl create --dry-run=server -n "$GR_NS" -f - \
        -o jsonpath='{.spec.initContainers[*].name}' 2>/dev/null || true)
    [[ -n $got ]] && { ok=1; break; }
    sleep 0.2
done
((ok)) || fail "the API server never called the webhook"

step "a 64-pod gang from 64 concurrent writers: 0 refusals"
gr_apply - <<EOF || fail "PodGroup"
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: g64, namespace: $GR_NS}
spec: {schedulingPolicy: {gang: {minCount: 64}}}
EOF
mkdir -p "$WORK/w"
t0=$(now)
writers=()
for i in $(seq 0 63); do
    (pod_yaml "$(printf 'w-%02d' "$i")" | gr_kubectl create -n "$GR_NS" -f - >"$WORK/w/$i.out" 2>&1;
        echo $? >"$WORK/w/$i.rc") &
    writers+=($!)
done
for w in "${writers[@]}"; do wait "$w" || true; done
t1=$(now)
refused=0
for i in $(seq 0 63); do
    [[ $(cat "$WORK/w/$i.rc") == 0 ]] || { refused=$((refused + 1)); cat "$WORK/w/$i.out" >&2; }
done
echo "replicas_admit_64_seconds: $(echo "$t1 - $t0" | bc) s"
[[ $refused == 0 ]] || fail "$refused of 64 pods refused"
CM=preflight-kubernetes-$GR_NS-g64
mounted=$(gr_kubectl -n "$GR_NS" get pods -l app=preflight-rep \
    -o jsonpath='{range .items[*]}{.spec.volumes[?(@.name=="nvsentinel-preflight-gang-config")].configMap.name}{"\n"}{end}' |
    grep -c "^$CM\$" || true)
[[ $mounted == 64 ]] || fail "$mounted of 64 stored pods mount $CM"

managers() { # CM -> the field managers of its managedFields, sorted, one line
    gr_kubectl -n "$GR_NS" get configmap "$1" --show-managed-fields \
        -o jsonpath='{range .metadata.managedFields[*]}{.manager}{"\n"}{end}' 2>/dev/null | sort -u | tr '\n' ' '
}
peers_n() {
    gr_kubectl -n "$GR_NS" get configmap "$CM" -o jsonpath='{.data.peers}' 2>/dev/null | grep -c ';' || true
}
set_ips() { # FROM TO
    local i
    for i in $(seq "$1" "$2"); do
        gr_kubectl -n "$GR_NS" patch pod "$(printf 'w-%02d' "$i")" --subresource=status --type=merge \
            -p "{\"status\":{\"phase\":\"Running\",\"podIP\":\"10.9.0.$((i + 1))\",\"podIPs\":[{\"ip\":\"10.9.0.$((i + 1))\"}]}}" \
            >/dev/null || fail "patch status of pod $i"
    done
}
step "one writer: the leader fills the gang ConfigMap"
set_ips 0 7
for _ in $(seq 300); do
    [[ $(peers_n) == 8 ]] && break
    sleep 0.1
done
[[ $(peers_n) == 8 ]] || fail "peers: $(peers_n) of 8"
[[ $(gr_kubectl -n "$GR_NS" get configmap "$CM" -o jsonpath='{.data.expected_count}') == 64 ]] ||
    fail "expected_count is not 64 (PF-147)"
m=$(managers "$CM")
echo "managers after the first phase: $m"
[[ $m == *"preflight-$LEADER "* ]] || fail "the leader (preflight-$LEADER) did not write $CM: $m"
[[ $m != *"preflight-$FOLLOWER "* ]] || fail "the follower (preflight-$FOLLOWER) wrote $CM: $m"
# nothing in the namespace was written by the follower
all_cms=$(gr_kubectl -n "$GR_NS" get configmaps --show-managed-fields -o json) || fail "list ConfigMaps"
if grep -q "\"manager\": \"preflight-$FOLLOWER\"" <<<"$all_cms"; then
    fail "the follower wrote a ConfigMap"
fi

step "SIGKILL the leader ($LEADER): the follower takes over"
kill -KILL "${PID[$LEADER]}"
wait "${PID[$LEADER]}" 2>/dev/null || true
unset "PID[$LEADER]"
t0=$(now)
for _ in $(seq 600); do
    [[ $(holder) == replica-${FOLLOWER}_* ]] && break
    sleep 0.1
done
[[ $(holder) == replica-${FOLLOWER}_* ]] || fail "the follower did not take the Lease: holder $(holder)"
echo "replicas_takeover_seconds: $(echo "$(now) - $t0" | bc) s"
set_ips 8 15
for _ in $(seq 300); do
    [[ $(peers_n) == 16 ]] && break
    sleep 0.1
done
[[ $(peers_n) == 16 ]] || fail "after takeover, peers: $(peers_n) of 16"
m=$(managers "$CM")
echo "managers after takeover: $m"
[[ $m == *"preflight-$FOLLOWER "* ]] || fail "the new leader did not write $CM: $m"
pod_yaml after-takeover | gr_kubectl create -n "$GR_NS" -f - >/dev/null || fail "admission after takeover"
ready "$FOLLOWER" || fail "the new leader is not ready"

kill -TERM "${PID[$FOLLOWER]}"
rc=0
wait "${PID[$FOLLOWER]}" || rc=$?
unset "PID[$FOLLOWER]"
[[ $rc == 0 ]] || fail "replica $FOLLOWER exited $rc after SIGTERM"
echo PASS

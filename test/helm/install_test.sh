#!/usr/bin/env bash
# test/helm/install_test.sh GANG_BIN — `helm install` of deploy/helm/gpuready
# into a real control plane, and GPU pods admitted through the installed
# webhook.
#
# The local control plane has no kubelet, kube-proxy or cert-manager, so the
# test plays exactly those parts and nothing else:
#   * cert-manager: issues the Secret the chart's Certificate asks for
#     (secretName, dnsNames read from the object) with the cluster CA;
#   * cainjector: puts that CA into the webhook configuration, as the
#     chart's cert-manager.io/inject-ca-from annotation requests;
#   * kubelet: binds the pod the chart's Deployment created to a fake node,
#     runs its container on this host (GANG_BIN in place of the image's
#     program, with the pod's own args, env, mounted ConfigMap and Secret,
#     and a token of the pod's ServiceAccount, so the chart's RBAC is what
#     the controllers get), and reports the pod Ready at this host's IP.
# The API server runs with --enable-aggregator-routing, so it reaches the
# webhook through the chart's Service and the EndpointSlice built from that
# pod, as it would through kube-proxy.
#
# Its own cluster (scripts/cluster up in a temp dir), removed at exit.
set -euo pipefail

ROOT=${GR_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=test/harness/gr_harness.sh
source "$ROOT/test/harness/gr_harness.sh"
gr_skip_if_disabled

BIN=${1:?usage: install_test.sh GANG_BIN}
[[ -x $BIN ]] || { echo "install_test: $BIN is not executable" >&2; exit 1; }
CHART=$ROOT/deploy/helm/gpuready
NS=nvsentinel
RELEASE=nvsentinel
NODE=gr-fake-node

die() {
  printf 'install_test: FAIL: %s\n' "$*" >&2
  exit 1
}
say() { printf 'install_test: %s\n' "$*"; }

for t in jq yq curl openssl ss; do command -v "$t" >/dev/null || die "$t not found"; done
if [[ -z ${GR_HELM:-} ]]; then
  GR_HELM=$("$ROOT/scripts/build-k8s" helm --print-bindir)/helm
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gr-helm-install.XXXXXX")
export HELM_CACHE_HOME=$WORK/helm/cache HELM_CONFIG_HOME=$WORK/helm/config HELM_DATA_HOME=$WORK/helm/data
DIR=$WORK/cluster
webhook_pid="" heartbeat_pid="" passed=0
cleanup() {
  local rc=$?
  set +eu
  if [[ -n $heartbeat_pid ]]; then kill "$heartbeat_pid" 2>/dev/null; fi
  if [[ -n $webhook_pid ]]; then kill "$webhook_pid" 2>/dev/null; wait "$webhook_pid" 2>/dev/null; fi
  if ((!passed)) && [[ -f $DIR/cluster.env ]]; then
    echo "---- webhook log" >&2
    tail -n 40 "$WORK/webhook.log" >&2 2>/dev/null || true
    gr_dump_state "$NS" || true
  fi
  "$ROOT/scripts/cluster" down "$DIR" >/dev/null 2>&1 || true
  rm -rf -- "$WORK"
  exit "$rc"
}
trap cleanup EXIT

# This host's address: the fake node's and the webhook pod's IP.
HOST_IP=$(ip -4 -o addr show scope global 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -n1)
[[ -n $HOST_IP ]] || die "no global IPv4 address on this host: the API server needs a non-loopback endpoint IP"
PORT=""
for _ in $(seq 50); do
  p=$((20000 + RANDOM % 12000))
  ss -Htln "sport = :$p" | grep -q . || { PORT=$p; break; }
done
[[ -n $PORT ]] || die "no free port"

GR_APISERVER_ARGS="--enable-aggregator-routing=true ${GR_APISERVER_ARGS:-}" \
  "$ROOT/scripts/cluster" up --ttl 1800 "$DIR" >"$WORK/cluster.log" 2>&1 ||
  { cat "$WORK/cluster.log" >&2; die "scripts/cluster up"; }
GR_CLUSTER_DIR=$DIR gr_cluster_open || die "cluster not ready"
helm() { "$GR_HELM" --kubeconfig "$GR_KUBECONFIG_ADMIN" "$@"; }
k() { gr_kubectl "$@"; }

# --- PF-03: installed with the defaults, preflight deploys nothing (NVCRE,
# on by default, is helm_install_nvcre's).
k create namespace "$NS" >/dev/null
helm install "$RELEASE" "$CHART" -n "$NS" >"$WORK/helm.out" 2>&1 || { cat "$WORK/helm.out"; die "helm install (defaults)"; }
[[ -z $(helm get manifest "$RELEASE" -n "$NS" | grep -E '^kind: (MutatingWebhookConfiguration|Certificate|Issuer)$|preflight' || true) ]] ||
  die "PF-03: the default install deployed preflight objects"
[[ -z $(k -n "$NS" get deploy,svc,cm -l app.kubernetes.io/name=preflight -o name) ]] || die "PF-03: preflight objects exist"
say "PF-03: default install deploys nothing"

# --- PF-04: global.preflight.enabled deploys it (cert-manager CRDs stand in for cert-manager).
gr_apply "$ROOT/test/helm/data/cert-manager-crds.yaml" >/dev/null || die "cert-manager CRDs"
helm upgrade "$RELEASE" "$CHART" -n "$NS" --set global.preflight.enabled=true \
  --set preflight.webhook.port="$PORT" >"$WORK/helm.out" 2>&1 || { cat "$WORK/helm.out"; die "helm upgrade (enabled)"; }
k get crd preflightconfigs.preflight.nvsentinel.nvidia.com >/dev/null || die "PF-118: PreflightConfig CRD not installed"
k -n "$NS" get deploy/preflight svc/preflight cm/preflight sa/preflight certificate/preflight-webhook >/dev/null ||
  die "PF-04: preflight objects missing"
say "PF-04: preflight installed"

# --- cert-manager's part: the Secret the Certificate asks for.
secret=$(k -n "$NS" get certificate preflight-webhook -o jsonpath='{.spec.secretName}')
mapfile -t dns < <(k -n "$NS" get certificate preflight-webhook -o jsonpath='{range .spec.dnsNames[*]}{@}{"\n"}{end}')
((${#dns[@]} > 0)) || die "Certificate preflight-webhook has no dnsNames"
san=$(printf 'DNS:%s,' "${dns[@]}")
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/tls.key" \
  -subj "/CN=${dns[0]}" -out "$WORK/tls.csr" 2>/dev/null
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "${san%,}" >"$WORK/ext"
openssl x509 -req -in "$WORK/tls.csr" -CA "$GR_CA_CERT" -CAkey "$GR_CA_KEY" -CAcreateserial -days 1 \
  -extfile "$WORK/ext" -out "$WORK/tls.crt" 2>/dev/null
k -n "$NS" create secret tls "$secret" --cert="$WORK/tls.crt" --key="$WORK/tls.key" >/dev/null
# --- the cainjector's part: inject-ca-from names the chart's CA certificate (PF-207).
mwc=preflight # upstream's name (issue 22)
ann=$(k get mutatingwebhookconfiguration "$mwc" -o jsonpath='{.metadata.annotations.cert-manager\.io/inject-ca-from}')
[[ $ann == "$NS/preflight-ca" ]] || die "PF-207: inject-ca-from is '$ann'"
k -n "$NS" get certificate preflight-ca >/dev/null || die "PF-207: CA certificate preflight-ca missing"
k patch mutatingwebhookconfiguration "$mwc" --type=json \
  -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$(base64 -w0 <"$GR_CA_CERT")\"}]" >/dev/null

# --- the kubelet's part.
pod=""
for _ in $(seq "$(gr_tries 60 500)"); do
  pod=$(k -n "$NS" get pod -l app.kubernetes.io/name=preflight -o jsonpath='{.items[0].metadata.name}' 2>/dev/null || true)
  [[ -n $pod ]] && break
  sleep 0.5
done
[[ -n $pod ]] || die "the Deployment created no pod"
k -n "$NS" get pod "$pod" -o json >"$WORK/pod.json"
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: $NODE, labels: {kubernetes.io/hostname: $NODE}}
EOF
node_ready() {
  local t; t=$(now)
  k patch node "$NODE" --subresource=status --type=merge -p "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"install_test\",\"lastHeartbeatTime\":\"$t\",\"lastTransitionTime\":\"$t\"}],\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"$HOST_IP\"}]}}" >/dev/null
}
node_ready
(while sleep 10; do node_ready || true; done) &
heartbeat_pid=$!
printf '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"%s"},"target":{"apiVersion":"v1","kind":"Node","name":"%s"}}' "$pod" "$NODE" |
  k create --raw "/api/v1/namespaces/$NS/pods/$pod/binding" -f - >/dev/null || die "binding $pod"

# The container as the pod spec says: command, args, env, mounts.
c='.spec.containers[0]'
cmd=$(jq -r "$c.command[0]" "$WORK/pod.json")
[[ $cmd == "$(basename "$BIN")" ]] || die "the Deployment runs '$cmd', not $(basename "$BIN")"
mapfile -t args < <(jq -r "$c.args[]" "$WORK/pod.json")
declare -A mounts=()
while IFS=$'\t' read -r vname mpath; do
  src=$WORK/vol/$vname
  mkdir -p "$src"
  kind=$(jq -r --arg v "$vname" '.spec.volumes[] | select(.name == $v) | if .secret then "secret \(.secret.secretName)" elif .configMap then "configmap \(.configMap.name)" elif (.projected.sources // [] | map(has("serviceAccountToken")) | any) then "token -" else "other" end' "$WORK/pod.json")
  read -r vk vn <<<"$kind"
  case $vk in
    secret) k -n "$NS" get secret "$vn" -o json | jq -r '.data | to_entries[] | "\(.key) \(.value)"' |
              while read -r key val; do base64 -d <<<"$val" >"$src/$key"; done ;;
    configmap) k -n "$NS" get configmap "$vn" -o json | jq -r '.data | keys[]' |
              while read -r key; do k -n "$NS" get configmap "$vn" -o json | jq -r --arg k "$key" '.data[$k]' >"$src/$key"; done ;;
    token) continue ;; # the ServiceAccount token: given to the webhook as --kubeconfig below
    *) die "unexpected volume $vname in the webhook pod" ;;
  esac
  mounts[$mpath]=$src
done < <(jq -r "$c.volumeMounts[] | \"\(.name)\t\(.mountPath)\"" "$WORK/pod.json")
for i in "${!args[@]}"; do
  for m in "${!mounts[@]}"; do
    args[i]=${args[i]//=$m/=${mounts[$m]}}
  done
done
# The controller runtime's probe server: any free loopback port here (the
# pod's :8081 may be taken on a shared machine).
for i in "${!args[@]}"; do
  [[ ${args[i]} == --health-probe-bind-address=* ]] && args[i]=--health-probe-bind-address=127.0.0.1:0
done
envs=()
while IFS=$'\t' read -r name val; do envs+=("$name=$val"); done < <(jq -r --arg ns "$NS" \
  "$c.env[] | \"\(.name)\t\(if .value then .value elif .valueFrom.fieldRef.fieldPath == \"metadata.namespace\" then \$ns else \"\" end)\"" "$WORK/pod.json")
sa=$(jq -r '.spec.serviceAccountName' "$WORK/pod.json")
token=$(k -n "$NS" create token "$sa" --duration=1h)
cat >"$WORK/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$GR_APISERVER_URL", certificate-authority: "$GR_CA_CERT"}}]
users: [{name: sa, user: {token: "$token"}}]
contexts: [{name: c, context: {cluster: c, user: sa, namespace: $NS}}]
current-context: c
EOF
env "${envs[@]}" "$BIN" "${args[@]}" --kubeconfig "$WORK/kubeconfig" >"$WORK/webhook.log" 2>&1 &
webhook_pid=$!
# Readiness, as the pod's probe: HTTPS GET /healthz on the container port (PF-219).
probe_path=$(jq -r "$c.readinessProbe.httpGet.path" "$WORK/pod.json")
ready=0
for _ in $(seq "$(gr_tries 20 200)"); do
  kill -0 "$webhook_pid" 2>/dev/null || die "the webhook exited: $(tail -n 5 "$WORK/webhook.log")"
  if [[ $(curl -sk --max-time 2 "https://$HOST_IP:$PORT$probe_path" 2>/dev/null) == ok ]]; then ready=1; break; fi
  sleep 0.2
done
((ready)) || die "the webhook never answered its readiness probe"
t=$(now)
img=$(jq -r "$c.image" "$WORK/pod.json")
k -n "$NS" patch pod "$pod" --subresource=status --type=merge -p "{\"status\":{\"phase\":\"Running\",\"hostIP\":\"$HOST_IP\",\"podIP\":\"$HOST_IP\",\"podIPs\":[{\"ip\":\"$HOST_IP\"}],\"startTime\":\"$t\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"$t\"},{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"$t\"},{\"type\":\"ContainersReady\",\"status\":\"True\",\"lastTransitionTime\":\"$t\"}],\"containerStatuses\":[{\"name\":\"preflight\",\"ready\":true,\"started\":true,\"restartCount\":0,\"image\":\"$img\",\"imageID\":\"\",\"state\":{\"running\":{\"startedAt\":\"$t\"}}}]}}" >/dev/null
ok=0
for _ in $(seq "$(gr_tries 20 200)"); do
  got=$(k -n "$NS" get endpointslices -l kubernetes.io/service-name=preflight \
    -o jsonpath='{.items[0].endpoints[0].addresses[0]} {.items[0].endpoints[0].conditions.ready} {.items[0].ports[0].port}' 2>/dev/null || true)
  [[ $got == "$HOST_IP true $PORT" ]] && { ok=1; break; }
  sleep 0.2
done
((ok)) || die "Service preflight has no ready endpoint $HOST_IP:$PORT (got '$got')"
say "webhook pod $pod ready at $HOST_IP:$PORT behind Service preflight"

# --- admissions through the installed webhook.
team="team-a"
k create namespace "$team" >/dev/null
k label namespace "$team" nvsentinel.nvidia.com/preflight=enabled >/dev/null
k create namespace other >/dev/null
gpu_pod() { # name [extra spec yaml lines]
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
$2
  containers:
    - name: main
      image: busybox
      env: [{name: NCCL_DEBUG, value: INFO}]
      resources: {limits: {nvidia.com/gpu: "8"}}
EOF
}
inits() { k -n "$1" get pod "$2" -o jsonpath='{range .spec.initContainers[*]}{.name}{","}{end}'; }
gpu_pod gpu-0 "" | k -n "$team" create -f - >/dev/null || die "creating a GPU pod failed"
got=$(inits "$team" gpu-0)
[[ $got == preflight-dcgm-diag,preflight-nccl-loopback,preflight-nccl-allreduce, ]] || die "PF-108: GPU pod got init containers '$got'"
got=$(k -n "$team" get pod gpu-0 -o jsonpath='{.spec.initContainers[0].image}')
[[ $got == ghcr.io/gpuready/preflight-dcgm-diag:0.1.0 ]] || die "PF-16: check image '$got'"
say "PF-108: a GPU pod in a labelled namespace got the three checks"
gpu_pod gpu-0 "" | k -n other create -f - >/dev/null
[[ -z $(inits other gpu-0) ]] || die "PF-07: a pod in an unlabelled namespace was injected"
k -n "$team" run cpu-0 --image=busybox --restart=Never >/dev/null
[[ -z $(inits "$team" cpu-0) ]] || die "PF-02: a pod without GPUs was injected"
say "PF-07, PF-02: unlabelled namespace and non-GPU pod untouched"

# Gang coordination on (default): the webhook, with the chart's RBAC only,
# creates the gang ConfigMap in the workload namespace (PF-143, PF-152).
k -n "$team" apply -f - >/dev/null <<'EOF'
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: workers}
spec:
  schedulingPolicy:
    gang: {minCount: 2}
EOF
gpu_pod train-0 "  schedulingGroup: {podGroupName: workers}" | k -n "$team" create -f - >/dev/null
got=$(k -n "$team" get pod train-0 -o jsonpath='{.spec.initContainers[0].env[?(@.name=="GANG_ID")].value}')
[[ $got == "kubernetes-$team-workers" ]] || die "PF-44: GANG_ID is '$got'"
got=""
for _ in $(seq "$(gr_tries 10 200)"); do
  # The coordinator (leader-elected, off the admission path) creates it
  # within a batch window; until then the list is empty.
  got=$(k -n "$team" get configmap -l nvsentinel.nvidia.com/managed-by=preflight \
    -o jsonpath='{.items[*].data.gang_id}' 2>/dev/null) || got=""
  [[ -n $got ]] && break
  sleep 0.2
done
[[ $got == "kubernetes-$team-workers" ]] || die "PF-143: no gang ConfigMap (got '$got')"
say "PF-143: gang ConfigMap created by the gang coordinator under the chart's RBAC"

# RBAC: native gang APIs readable (PF-93, PF-94); a labelled contributor is
# aggregated into <release>-gang-discovery (PF-128, PF-130).
as=(--as "system:serviceaccount:$NS:preflight")
[[ $(k auth can-i list podgroups.scheduling.k8s.io "${as[@]}" -A) == yes ]] || die "PF-93: cannot list podgroups"
[[ $(k auth can-i watch workloads.scheduling.k8s.io "${as[@]}" -A) == yes ]] || die "PF-94: cannot watch workloads"
gr_apply "$ROOT/test/fixtures/crds/volcano-podgroup.yaml" >/dev/null || die "Volcano PodGroup CRD fixture"
[[ $(k auth can-i list podgroups.scheduling.volcano.sh "${as[@]}" -A 2>/dev/null) == no ]] || die "volcano podgroups readable before the contributor"
k apply -f - >/dev/null <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: preflight-gang-discovery-volcano
  labels:
    preflight.nvsentinel.nvidia.com/aggregate-to-gang-discovery: "true"
rules:
  - apiGroups: ["scheduling.volcano.sh"]
    resources: ["podgroups"]
    verbs: ["get", "list", "watch"]
EOF
got=no
for _ in $(seq "$(gr_tries 20 200)"); do
  got=$(k auth can-i list podgroups.scheduling.volcano.sh "${as[@]}" -A 2>/dev/null || true)
  [[ $got == yes ]] && break
  sleep 0.2
done
[[ $got == yes ]] || die "PF-130: contributor role not aggregated into $RELEASE-gang-discovery"
say "PF-93, PF-94, PF-128, PF-130: gang-discovery RBAC"

# failurePolicy: Fail rejects GPU pods while the webhook is down (PF-203);
# Ignore admits them without checks (PF-204).
kill "$webhook_pid"; wait "$webhook_pid" 2>/dev/null || true; webhook_pid=""
if gpu_pod gpu-1 "" | k -n "$team" create -f - >"$WORK/out" 2>&1; then
  die "PF-203: a GPU pod was admitted while the webhook was down under failurePolicy: Fail"
fi
grep -q 'failed calling webhook' "$WORK/out" || { cat "$WORK/out"; die "PF-203: unexpected rejection"; }
helm upgrade "$RELEASE" "$CHART" -n "$NS" --reuse-values --set preflight.webhook.failurePolicy=Ignore >"$WORK/helm.out" 2>&1 ||
  { cat "$WORK/helm.out"; die "helm upgrade (Ignore)"; }
gpu_pod gpu-1 "" | k -n "$team" create -f - >"$WORK/out" 2>&1 || { cat "$WORK/out"; die "PF-204: GPU pod rejected under Ignore"; }
[[ -z $(inits "$team" gpu-1) ]] || die "PF-204: pod injected with the webhook down"
say "PF-203, PF-204: failurePolicy Fail and Ignore"

# Issue 22: every example values file (the reference page's examples, both
# publishTo: deployment setups among them) and upstream's default preflight
# values (its refused key removed) install on this control plane: the API
# server accepts every object. Upgrading one release through them keeps the
# kept CRD adopted.
k -n "$NS" create serviceaccount platform-preflight >/dev/null # existing-service-account.yaml
yq -y '{global: {preflight: {enabled: true}}, preflight: (. | del(.image.repository))}' \
  "$ROOT/test/helm/upstream/preflight-values.yaml" >"$WORK/upstream-values.yaml"
n=0
for f in "$ROOT"/test/helm/values/*.yaml "$WORK/upstream-values.yaml"; do
  name=$(basename "$f" .yaml)
  [[ $name == nvcre-* ]] && continue # NVCRE's examples: helm_install_nvcre
  helm upgrade "$RELEASE" "$CHART" -n "$NS" -f "$f" >"$WORK/helm.out" 2>&1 ||
    { cat "$WORK/helm.out"; die "issue 22: $name does not install"; }
  if [[ $name != disabled ]]; then
    k -n "$NS" get deploy/preflight cm/preflight svc/preflight >/dev/null || die "issue 22: $name: preflight objects missing"
    k get mutatingwebhookconfiguration "$mwc" >/dev/null || die "issue 22: $name: webhook configuration $mwc missing"
  fi
  case $name in
    publish-deployment | publish-deployment-host-network)
      got=$(k -n "$NS" get deploy/preflight -o jsonpath='{.spec.template.spec.volumes[?(@.name=="platform-connector-ca")].secret.secretName}')
      [[ $got == platform-connector-deployment-grpc-cert ]] || die "PF-171: $name: CA Secret '$got'" ;;
    single-node)
      grep -q 'WARNING: check preflight-dcgm-diag uses upstream' "$WORK/helm.out" ||
        { cat "$WORK/helm.out"; die "issue 22: no NOTES warning for an upstream image with tag \"\""; } ;;
    upstream-values)
      [[ $(k -n "$NS" get networkpolicy preflight -o jsonpath='{.spec.ingress[0].ports[0].port}') == 8443 ]] ||
        die "issue 22: upstream networkPolicy.enabled: no NetworkPolicy" ;;
  esac
  n=$((n + 1))
done
say "issue 22: $n example values files installed, the publishTo: deployment ones and upstream's defaults included"

# Issue 22: the installed PreflightConfig CRD holds status.conditions to the
# standard metav1.Condition patterns (PF-118, PF-126).
k -n "$team" apply -f - >/dev/null <<'EOF'
apiVersion: preflight.nvsentinel.nvidia.com/v1alpha1
kind: PreflightConfig
metadata: {name: patterns}
spec: {gangDiscovery: {}}
EOF
cond() { # type reason
  local t; t=$(now)
  k -n "$team" patch preflightconfig patterns --subresource=status --type=merge -p \
    "{\"status\":{\"conditions\":[{\"type\":\"$1\",\"status\":\"True\",\"reason\":\"$2\",\"message\":\"m\",\"lastTransitionTime\":\"$t\"}]}}"
}
cond Ready DiscovererActive >"$WORK/out" 2>&1 || { cat "$WORK/out"; die "issue 22: a valid condition was refused"; }
for bad in "Ready|not camel case" "Ready|9Reason" "not a type!|DiscovererActive"; do
  if cond "${bad%%|*}" "${bad#*|}" >"$WORK/out" 2>&1; then die "issue 22: condition '$bad' accepted"; fi
  grep -q 'should match' "$WORK/out" || { cat "$WORK/out"; die "issue 22: condition '$bad' refused for another reason"; }
done
say "issue 22: PreflightConfig conditions follow the metav1.Condition patterns"

# Uninstall removes the webhook configuration.
helm uninstall "$RELEASE" -n "$NS" >/dev/null
k get mutatingwebhookconfiguration "$mwc" >/dev/null 2>&1 && die "webhook configuration left after uninstall"
passed=1
say "ok"

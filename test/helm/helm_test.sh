#!/usr/bin/env bash
# test/helm/helm_test.sh — tests of the Helm chart deploy/helm/gpuready.
#
#   helm_test.sh lint       helm lint --strict, defaults and every example
#   helm_test.sh golden     helm template of every test/helm/values/*.yaml
#                           compared with test/helm/golden/*.yaml
#                           (GR_UPDATE_GOLDEN=1 rewrites the goldens); the
#                           NVCRE CRDs (charts/nvcre/crds) are left out, the
#                           nvcre mode compares them with deploy/crds
#   helm_test.sh refusals   every test/helm/refusals/*.yaml fails to render
#                           with the message on its "# expect:" line (a
#                           "# args: FLAG" second line adds a helm flag);
#                           without --kube-version the message names it
#   helm_test.sh upstream   upstream NVSentinel's default preflight values
#                           (test/helm/upstream/preflight-values.yaml, under
#                           our umbrella): each refused key fails with its
#                           message (upstream/refused.txt), the rest renders
#                           with upstream's meaning
#   helm_test.sh nvcre      the nvcre subchart: CRDs and LogProfiles equal to
#                           deploy/crds and deploy/logprofiles, assertions on
#                           the renderings (RBAC, flags, JOB-88), and every
#                           rendered manager command line parsed by the real
#                           gpuready-manager when GR_MANAGER_BIN is set
#   helm_test.sh assert     contract assertions (PF-nn) on the renderings,
#                           and the rendered config.yaml fed to the real
#                           webhook (check-config, inject) when
#                           GR_PREFLIGHT_BIN is set
#
# Environment: GR_HELM (helm binary; default: built by scripts/build-k8s),
# GR_PREFLIGHT_BIN (gpuready-preflight), GR_MANAGER_BIN (gpuready-manager),
# GR_SOURCE_DIR.
set -euo pipefail

ROOT=${GR_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
HERE=$ROOT/test/helm
CHART=$ROOT/deploy/helm/gpuready
KUBE_VERSION=1.36.3
RELEASE=nvsentinel
NS=nvsentinel

die() { printf 'helm_test: FAIL: %s\n' "$*" >&2; exit 1; }

for t in jq yq; do
  command -v "$t" >/dev/null || die "$t not found (scripts/install-deps installs it)"
done

if [[ -z ${GR_HELM:-} ]]; then
  bindir=$("$ROOT/scripts/build-k8s" helm --print-bindir) || die "could not build helm (scripts/build-k8s helm)"
  GR_HELM=$bindir/helm
fi
[[ -x $GR_HELM ]] || die "helm not executable: $GR_HELM"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gr-helm-test.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT
# Keep helm away from $HOME.
export HELM_CACHE_HOME=$WORK/helm/cache HELM_CONFIG_HOME=$WORK/helm/config HELM_DATA_HOME=$WORK/helm/data

render() { # values-file [extra helm args...]
  local f=$1; shift
  "$GR_HELM" template "$RELEASE" "$CHART" -n "$NS" --kube-version "$KUBE_VERSION" --include-crds -f "$f" "$@"
}

examples() { ls "$HERE"/values/*.yaml; }

# The rendering without the NVCRE CRDs (charts/nvcre/crds, 170 kB, equal to
# deploy/crds: checked by the nvcre mode instead of in every golden).
render_golden() { # values-file
  render "$1" | awk '
    function flush() { if (doc != "" && doc !~ /\n# Source: [^\n]*\/charts\/nvcre\/crds\//) printf "%s", doc; doc = "" }
    /^---$/ { flush() }
    { doc = doc $0 "\n" }
    END { flush() }'
}

# ---------------------------------------------------------------------------
cmd_lint() {
  local f n=0
  "$GR_HELM" lint --strict --kube-version "$KUBE_VERSION" "$CHART" >"$WORK/lint.out" 2>&1 ||
    { cat "$WORK/lint.out"; die "helm lint of the defaults"; }
  "$GR_HELM" lint --strict --kube-version "$KUBE_VERSION" "$CHART/charts/preflight" >"$WORK/lint.out" 2>&1 ||
    { cat "$WORK/lint.out"; die "helm lint of the preflight subchart on its own"; }
  "$GR_HELM" lint --strict --kube-version "$KUBE_VERSION" "$CHART/charts/nvcre" >"$WORK/lint.out" 2>&1 ||
    { cat "$WORK/lint.out"; die "helm lint of the nvcre subchart on its own"; }
  for f in $(examples); do
    "$GR_HELM" lint --strict --kube-version "$KUBE_VERSION" "$CHART" -f "$f" >"$WORK/lint.out" 2>&1 ||
      { cat "$WORK/lint.out"; die "helm lint with $(basename "$f")"; }
    n=$((n + 1))
  done
  echo "helm_test: lint ok (defaults, subcharts, $n examples)"
}

# ---------------------------------------------------------------------------
cmd_golden() {
  local f name fails=0 n=0
  for f in $(examples); do
    name=$(basename "$f")
    render_golden "$f" >"$WORK/$name" 2>"$WORK/$name.err" || { cat "$WORK/$name.err"; die "render $name"; }
    if [[ ${GR_UPDATE_GOLDEN:-0} == 1 ]]; then
      cp "$WORK/$name" "$HERE/golden/$name"
      echo "helm_test: wrote golden/$name"
    elif ! diff -u "$HERE/golden/$name" "$WORK/$name" >"$WORK/$name.diff"; then
      cat "$WORK/$name.diff"
      echo "helm_test: golden/$name differs (GR_UPDATE_GOLDEN=1 to accept)" >&2
      fails=$((fails + 1))
    fi
    n=$((n + 1))
  done
  # Every golden has its values file (no stale goldens).
  for f in "$HERE"/golden/*.yaml; do
    [[ -f $HERE/values/$(basename "$f") ]] || { echo "helm_test: stale golden $(basename "$f")" >&2; fails=$((fails + 1)); }
  done
  ((fails == 0)) || die "$fails golden file(s) differ"
  echo "helm_test: golden ok ($n renderings)"
}

# ---------------------------------------------------------------------------
cmd_refusals() {
  local f name want n=0
  local args
  for f in "$HERE"/refusals/*.yaml; do
    name=$(basename "$f")
    want=$(sed -n '1s/^# expect: //p' "$f")
    [[ -n $want ]] || die "$name: first line must be '# expect: <message>'"
    args=$(sed -n '2s/^# args: \([^ ]*\).*/\1/p' "$f")
    # shellcheck disable=SC2086 # one optional flag
    if render "$f" $args >"$WORK/out" 2>"$WORK/err"; then
      die "$name: rendered, but the chart must refuse it with: $want"
    fi
    grep -qF -- "$want" "$WORK/err" || { cat "$WORK/err"; die "$name: refused without the expected message: $want"; }
    n=$((n + 1))
  done
  # Issue 22: `helm template` without --kube-version (Helm assumes v1.20.0)
  # is refused with a message that names the flag; the default values (which
  # render nothing) still render.
  "$GR_HELM" template "$RELEASE" "$CHART" -n "$NS" -f "$HERE/values/default.yaml" >"$WORK/out" 2>"$WORK/err" &&
    die "rendered for Kubernetes v1.20.0 without --kube-version"
  grep -qF -- 'preflight needs Kubernetes >= 1.30, but this render targets v1.20.0: `helm template` and `helm lint` assume v1.20.0 unless you pass --kube-version' "$WORK/err" ||
    { cat "$WORK/err"; die "the Kubernetes version refusal does not name --kube-version"; }
  "$GR_HELM" template "$RELEASE" "$CHART" -n "$NS" >"$WORK/out" 2>"$WORK/err" ||
    { cat "$WORK/err"; die "the default values (preflight off) do not render without --kube-version"; }
  n=$((n + 1))
  echo "helm_test: refusals ok ($n cases)"
}

# ---------------------------------------------------------------------------
# Upstream's own default preflight values under our umbrella (issue 22).
cmd_upstream() {
  local up=$HERE/upstream/preflight-values.yaml path msg n=0 all_del="."
  wrap() { yq -y "{global: {nvcre: {enabled: false}, preflight: {enabled: true}}, preflight: ($1)}" "$up"; }
  # Each refused key alone: with every other refused key removed, the chart
  # fails with that key's message.
  local -a paths=() msgs=()
  while IFS=$'\t' read -r path msg; do
    [[ -z $path || $path == \#* ]] && continue
    paths+=("$path"); msgs+=("$msg")
  done <"$HERE/upstream/refused.txt"
  for path in "${paths[@]}"; do all_del="$all_del | del($path)"; done
  local i others
  for i in "${!paths[@]}"; do
    others="."
    for path in "${paths[@]}"; do [[ $path == "${paths[i]}" ]] || others="$others | del($path)"; done
    wrap "$others" >"$WORK/up.yaml"
    render "$WORK/up.yaml" >"$WORK/out" 2>"$WORK/err" && die "upstream values: ${paths[i]} rendered, want: ${msgs[i]}"
    grep -qF -- "${msgs[i]}" "$WORK/err" || { cat "$WORK/err"; die "upstream values: ${paths[i]} refused without: ${msgs[i]}"; }
    n=$((n + 1))
  done
  # Everything else renders, each key with upstream's meaning.
  wrap "$all_del" >"$WORK/upstream.yaml"
  render "$WORK/upstream.yaml" >"$WORK/upstream.out" 2>"$WORK/err" || { cat "$WORK/err"; die "upstream values (refused keys removed) do not render"; }
  yq -s 'map(select(. != null))' "$WORK/upstream.out" >"$WORK/upstream.json"
  yq -r 'select(. != null and .kind == "ConfigMap" and .metadata.name == "preflight") | .data["config.yaml"]' \
    "$WORK/upstream.out" >"$WORK/upstream.config.yaml"
  yq -s '.[0]' "$WORK/upstream.config.yaml" >"$WORK/upstream.config.json"
  J=$WORK/upstream.json
  # u FILTER: over upstream's values; strings raw, anything else as compact
  # JSON with sorted keys (as Helm's toYaml writes maps).
  local u; u() { yq -c "$1" "$up" | jq -S -c . | jq -r 'if type == "string" then . else tojson end'; }
  local dep pod
  dep="$(obj Deployment preflight) | .spec.template.spec.containers[0]"
  pod="$(obj Deployment preflight) | .spec.template.spec"
  eq upstream "$(q "$dep | .resources | tojson")" "$(u '.resources')" "resources (with the CPU limit)"
  eq upstream "$(q "$dep | .securityContext | tojson")" "$(u '.securityContext')" securityContext
  eq PF-218 "$(q "$dep | .livenessProbe | tojson")" "$(u '.livenessProbe')" livenessProbe
  # upstream's probe, plus the chart's X-Preflight-Probe header (Helm merges
  # the httpGet map): same path, port, scheme and timing; the header asks
  # /healthz for readiness (docs/gang.md § Replicas)
  eq PF-219 "$(q "$dep | .readinessProbe | del(.httpGet.httpHeaders) | tojson")" "$(u '.readinessProbe')" readinessProbe
  eq PF-219 "$(q "$dep | .readinessProbe.httpGet.httpHeaders | tojson")" '[{"name":"X-Preflight-Probe","value":"readiness"}]' "readiness header kept"
  eq PF-197 "$(q "$dep | .ports[0].containerPort")" "$(u '.service.targetPort')" "service.targetPort = the container port"
  eq upstream "$(q "$(obj Service preflight) | \"\(.spec.type) \(.spec.ports[0].port)\"")" "$(u '"\(.service.type) \(.service.port)"')" "Service type and port"
  eq PF-214 "$(q "$(obj MutatingWebhookConfiguration preflight) | .webhooks[0].clientConfig.service.port")" "$(u '.service.port')" "webhook calls service.port"
  eq upstream "$(q "$pod | .serviceAccountName")" preflight "serviceAccount.create: true, name \"\""
  eq upstream "$(q '[.[] | select(.kind == "ServiceAccount")] | map(.metadata.name) | join(",")')" preflight "ServiceAccount"
  eq upstream "$(q "$pod | .imagePullSecrets // [] | length")" 0 "imagePullSecrets: []"
  eq upstream "$(q '[.[] | select(.kind == "NetworkPolicy")] | length')" 1 "networkPolicy.enabled: true"
  eq upstream "$(q "$dep | .image")" ghcr.io/gpuready/preflight:0.1.0 "webhook image (upstream's refused)"
  eq PF-198 "$(q "$(obj MutatingWebhookConfiguration preflight) | .webhooks[0] | \"\(.failurePolicy) \(.timeoutSeconds)\"")" "Fail 10" "webhook"
  eq PF-207 "$(q "$(obj MutatingWebhookConfiguration preflight) | .metadata.annotations[\"cert-manager.io/inject-ca-from\"]")" "$NS/preflight-ca" "createIssuer: true"
  # config.yaml: upstream's lists, checks and settings, unchanged.
  local k
  for k in gpuResourceNames networkResourceNames ncclEnvPatterns volumeMountPatterns gangDiscovery \
    initContainerPlacement processingStrategy publishTo; do
    eq upstream "$(cfg ".$k | tojson")" "$(u ".$k | tojson")" "$k"
  done
  eq upstream "$(cfg '.imagePullSecrets | tojson')" "$(u '.injectedImagePullSecrets')" injectedImagePullSecrets
  # ncclTopoShape is the chart's ("" = no topology ConfigMap); upstream
  # omits mirrorResourceClaims, which then defaults to true.
  eq upstream "$(cfg '.gangCoordination | del(.mirrorResourceClaims) | tojson')" "$(u '.gangCoordination | del(.ncclTopoShape)')" gangCoordination
  eq PF-160 "$(cfg '.gangCoordination.mirrorResourceClaims')" true "mirrorResourceClaims (omitted upstream: true)"
  eq upstream "$(cfg '.initContainers | map(del(.image)) | tojson')" "$(u '.initContainers | map(del(.image))')" \
    "checks: env, mounts, securityContext, flags"
  eq PF-16 "$(cfg '.initContainers | map(.image) | join(",")')" \
    "$(u '.initContainers | map("\(.image.repository):0.1.0") | join(",")')" "check images: repository, tag \"\" = the chart's appVersion"
  eq PF-07 "$(q "$(obj MutatingWebhookConfiguration preflight) | .webhooks[0].namespaceSelector | tojson")" "$(u '.namespaceSelector')" namespaceSelector
  eq PF-215 "$(q "$(obj MutatingWebhookConfiguration preflight) | .webhooks[0] | has(\"objectSelector\")")" false "objectSelector: {}"
  eq PF-21 "$(q '[.[] | select(.kind == "DaemonSet")] | length')" 0 "imageCache.enabled: false"
  if [[ -n ${GR_PREFLIGHT_BIN:-} ]]; then
    "$GR_PREFLIGHT_BIN" check-config --config "$WORK/upstream.config.yaml" >"$WORK/cc.out" 2>&1 ||
      { cat "$WORK/cc.out"; die "the webhook refuses the config.yaml rendered from upstream's values"; }
  fi
  echo "helm_test: upstream ok (${#paths[@]} key(s) refused with their message, $n checked alone; the rest renders with upstream's meaning)"
}

# ---------------------------------------------------------------------------
# Assertions. Each rendering becomes a JSON array of objects in $WORK/<name>.json.
J=""
load() { # example-name
  local f=$HERE/values/$1.yaml
  render "$f" >"$WORK/$1.yaml" 2>"$WORK/$1.err" || { cat "$WORK/$1.err"; die "render $1"; }
  yq -s 'map(select(. != null))' "$WORK/$1.yaml" >"$WORK/$1.json"
  J=$WORK/$1.json
  yq -r 'select(. != null and .kind == "ConfigMap" and .metadata.name == "preflight") | .data["config.yaml"]' \
    "$WORK/$1.yaml" >"$WORK/$1.config.yaml"
  yq -s '.[0]' "$WORK/$1.config.yaml" >"$WORK/$1.config.json"
}
# q FILTER: jq over the current rendering, raw output
q() { jq -r "$1" "$J"; }
# cfg FILTER: jq over the current config.yaml
cfg() { jq -r "$1" "${J%.json}.config.json"; }
obj() { printf '.[] | select(.kind == "%s" and .metadata.name == "%s")' "$1" "$2"; }
eq() { # id got want what
  [[ "$2" == "$3" ]] || die "$1: $4: got '$2', want '$3'"
}
ok() { # id what condition-output ("true")
  [[ "$3" == "true" ]] || die "$1: $2"
}

# inject POD-YAML [args]: the init container names the webhook injects with this config.
inject() {
  local pod=$1; shift
  "$GR_PREFLIGHT_BIN" inject --config "${J%.json}.config.yaml" -o json "$@" "$pod" 2>"$WORK/inject.err" ||
    { cat "$WORK/inject.err"; die "inject failed"; }
}

cmd_assert() {
  local crd=preflight.nvsentinel.nvidia.com_preflightconfigs.yaml
  # PF-118: the chart ships the PreflightConfig CRD of the gang controller
  # (deploy/gang) unchanged.
  if [[ -f $ROOT/deploy/gang/$crd ]]; then
    cmp -s "$ROOT/deploy/gang/$crd" "$CHART/charts/preflight/files/$crd" ||
      die "PF-118: $CHART/charts/preflight/files/$crd differs from deploy/gang/$crd (copy it over)"
  fi
  # PF-156/157: one source of truth for the bundled NCCL topologies, our own
  # files in deploy/gang/topology (also compiled into the gang controller).
  local shape
  for shape in ndv4 ndv5; do
    cmp -s "$ROOT/deploy/gang/topology/$shape.xml" "$CHART/charts/preflight/files/$shape-topo.xml" ||
      die "PF-157: $CHART/charts/preflight/files/$shape-topo.xml differs from deploy/gang/topology/$shape.xml (copy it over)"
  done
  # --- PF-03: off by default: no values render no preflight object (NVCRE,
  # on by default, is the nvcre mode's).
  load disabled
  eq PF-03 "$(q '[.[] | select(.metadata.labels["app.kubernetes.io/name"] == "preflight" or (.kind | test("Webhook|Certificate|Issuer")) or .metadata.name == "preflightconfigs.preflight.nvsentinel.nvidia.com")] | length')" 0 \
    "preflight objects rendered without global.preflight.enabled"

  # --- defaults
  load default
  eq PF-04 "$(q "$(obj Deployment preflight) | .metadata.namespace")" "$NS" "Deployment preflight"     # PF-12
  eq PF-107 "$(q "$(obj ConfigMap preflight) | .metadata.namespace")" "$NS" "ConfigMap preflight"
  eq PF-08 "$(cfg '.gangCoordination.enabled')" true "gangCoordination.enabled default"
  eq PF-09 "$(cfg '.gangDiscovery | tojson')" '{}' "gangDiscovery default"
  eq PF-21 "$(q '[.[] | select(.kind == "DaemonSet")] | length')" 0 "image-cache DaemonSet by default"
  eq PF-26 "$(cfg '.initContainerPlacement')" append "initContainerPlacement default"
  eq PF-37 "$(cfg '[.initContainers[].name] | join(",")')" \
    preflight-dcgm-diag,preflight-nccl-loopback,preflight-nccl-allreduce "default checks"
  ok PF-47 "built-in checks inherit env and mounts" \
    "$(cfg '[.initContainers[] | .inheritUserEnv == true and .inheritUserVolumeMounts == true] | all')"
  ok PF-17 "each built-in check mounts nvsentinel-socket at /var/run" \
    "$(cfg '[.initContainers[] | .volumeMounts == [{"mountPath":"/var/run","name":"nvsentinel-socket"}]] | all')"
  # shellcheck disable=SC2016 # jq variables
  local env='.initContainers[] | select(.name == $c) | .env | from_entries'
  envof() { jq -r --arg c "$1" "$env | .[\"$2\"] // \"<unset>\"" "${J%.json}.config.json"; }
  eq PF-49 "$(envof preflight-dcgm-diag DCGM_DIAG_LEVEL)" 2 DCGM_DIAG_LEVEL
  eq PF-51 "$(envof preflight-dcgm-diag DCGM_HOSTENGINE_ADDR)" \
    "nvidia-dcgm-dra.gpu-operator.svc:5555,nvidia-dcgm.gpu-operator.svc:5555" DCGM_HOSTENGINE_ADDR
  eq PF-53 "$(envof preflight-dcgm-diag DCGM_DIAG_STATUS_RETRY_MAX_ATTEMPTS)" 10 retry attempts
  eq PF-54 "$(envof preflight-dcgm-diag DCGM_DIAG_STATUS_RETRY_INTERVAL_SECONDS)" 10 retry interval
  eq PF-59 "$(envof preflight-nccl-loopback BW_THRESHOLD_GBPS)" 150 loopback threshold
  eq PF-60 "$(envof preflight-nccl-loopback TEST_SIZE_MB)" 256 TEST_SIZE_MB
  eq PF-61 "$(envof preflight-nccl-loopback SKIP_BANDWIDTH_CHECK)" false loopback skip
  eq PF-65 "$(envof preflight-nccl-allreduce BW_THRESHOLD_GBPS)" 100 allreduce threshold
  eq PF-67 "$(envof preflight-nccl-allreduce MESSAGE_SIZES)" 4G MESSAGE_SIZES
  eq PF-69 "$(envof preflight-nccl-allreduce BENCHMARK_ITERS)" 20 BENCHMARK_ITERS
  eq PF-70 "$(envof preflight-nccl-allreduce WARMUP_ITERS)" 5 WARMUP_ITERS
  eq PF-71 "$(envof preflight-nccl-allreduce NCCL_REDUCE_OP)" sum NCCL_REDUCE_OP
  eq PF-73 "$(envof preflight-nccl-allreduce SKIP_BANDWIDTH_CHECK)" false allreduce skip
  eq PF-75 "$(envof preflight-nccl-allreduce NCCL_DEBUG)" "<unset>" "NCCL_DEBUG has no default"
  eq PF-76 "$(cfg '.initContainers[] | select(.name == "preflight-nccl-allreduce") | .securityContext.capabilities.add | join(",")')" \
    IPC_LOCK "allreduce capabilities"
  eq PF-80 "$(cfg '.ncclEnvPatterns | tojson')" '["NCCL_*","FI_*","LD_LIBRARY_PATH","UCX_*","TORCH_NCCL_*","CUDA_DEVICE_ORDER"]' ncclEnvPatterns
  eq PF-81 "$(cfg '.volumeMountPatterns | tojson')" '["host-opt-amazon*","nvtcpxo-*","nccl-*","dev-shm"]' volumeMountPatterns
  eq PF-195 "$(cfg '.gpuResourceNames | tojson')" '["nvidia.com/gpu"]' gpuResourceNames
  ok PF-196 "networkResourceNames include mlnxnics and efa" \
    "$(cfg '(.networkResourceNames | index("nvidia.com/mlnxnics")) != null and (.networkResourceNames | index("vpc.amazonaws.com/efa")) != null')"
  eq PF-106 "$(cfg '.imagePullSecrets | tojson')" '[]' "imagePullSecrets default"
  eq PF-154 "$(cfg '.gangCoordination.timeout')" 10m timeout
  eq PF-155 "$(cfg '.gangCoordination.masterPort')" 29500 masterPort
  eq PF-146 "$(cfg '.gangCoordination.configMapMountPath')" /etc/preflight configMapMountPath
  eq PF-156 "$(cfg '.gangCoordination.ncclTopoConfigMap')" "" ncclTopoConfigMap
  eq PF-157 "$(q '[.[] | select(.kind == "ConfigMap" and .metadata.name == "preflight-nccl-topo")] | length')" 0 "topology ConfigMap by default"
  eq PF-158 "$(cfg '.gangCoordination.extraHostPathMounts | tojson')" '[]' extraHostPathMounts
  eq PF-159 "$(cfg '.gangCoordination.extraVolumeMounts | tojson')" '[]' extraVolumeMounts
  eq PF-160 "$(cfg '.gangCoordination.mirrorResourceClaims')" true mirrorResourceClaims
  eq PF-161 "$(cfg '.publishTo')" socket "publishTo default"
  eq PF-41 "$(cfg '.connectorSocket')" unix:///var/run/nvsentinel.sock connectorSocket
  eq PF-42 "$(cfg '.processingStrategy')" EXECUTE_REMEDIATION processingStrategy
  eq PF-43 "$(cfg '.connectorTokenMountPath')" /var/run/secrets/nvsentinel/platform-connector "token mount path"
  # MutatingWebhookConfiguration
  # Issue 22: named `preflight` as upstream's (a migrating user's webhook is
  # replaced, not doubled), one webhook preflight.nvsentinel.nvidia.com,
  # reinvocationPolicy Never.
  local mwc; mwc=$(obj MutatingWebhookConfiguration preflight)
  eq upstream "$(q '[.[] | select(.kind == "MutatingWebhookConfiguration")] | map(.metadata.name) | join(",")')" preflight \
    "MutatingWebhookConfiguration name"
  eq upstream "$(q "$mwc | .webhooks | map(\"\(.name) \(.reinvocationPolicy)\") | join(\",\")")" \
    "preflight.nvsentinel.nvidia.com Never" "webhook name and reinvocationPolicy"
  eq PF-07 "$(q "$mwc | .webhooks[0].namespaceSelector | tojson")" '{"matchLabels":{"nvsentinel.nvidia.com/preflight":"enabled"}}' namespaceSelector
  eq PF-06 "$(q "$mwc | .webhooks[0].rules | tojson")" \
    '[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods"],"scope":"Namespaced"}]' rules
  eq PF-198 "$(q "$mwc | .webhooks[0].failurePolicy")" Fail failurePolicy
  eq PF-199 "$(q "$mwc | .webhooks[0].timeoutSeconds")" 10 timeoutSeconds
  eq PF-215 "$(q "$mwc | .webhooks[0] | has(\"objectSelector\")")" false "objectSelector emitted for {}"
  eq PF-214 "$(q "$mwc | .webhooks[0].clientConfig.service | \"\(.namespace)/\(.name)\(.path):\(.port)\"")" "$NS/preflight/mutate:443" clientConfig
  eq PF-207 "$(q "$mwc | .metadata.annotations[\"cert-manager.io/inject-ca-from\"]")" "$NS/preflight-ca" "CA injection"
  eq PF-200 "$(q '[.[] | select(.kind == "Issuer")] | map(.metadata.name) | sort | join(",")')" \
    preflight-ca,preflight-selfsigned "createIssuer: true issuers"
  eq PF-207 "$(q "$(obj Certificate preflight-ca) | .spec.isCA")" true "CA certificate"
  eq PF-207 "$(q "$(obj Certificate preflight-webhook) | .spec.issuerRef.name")" preflight-ca "serving certificate issuer"
  eq PF-212 "$(q "$(obj Certificate preflight-webhook) | .spec.dnsNames | join(\",\")")" \
    "preflight.$NS.svc,preflight.$NS.svc.cluster.local" "serving certificate names"
  # Deployment
  local dep; dep="$(obj Deployment preflight) | .spec.template.spec.containers[0]"
  eq PF-197 "$(q "$dep | .ports[0].containerPort")" 8443 "webhook port"
  eq PF-197 "$(q "$dep | .args | map(select(startswith(\"--port=\"))) | .[0]")" --port=8443 "--port flag"
  eq PF-218 "$(q "$dep | .livenessProbe.httpGet | \"\(.scheme) \(.port) \(.path)\"")" "HTTPS https /healthz" liveness
  eq PF-219 "$(q "$dep | .readinessProbe.httpGet | \"\(.scheme) \(.port) \(.path)\"")" "HTTPS https /healthz" readiness
  eq PF-107 "$(q "$(obj Deployment preflight) | .spec.template.spec.volumes[] | select(.name == \"config\") | .configMap.name")" preflight "config volume"
  # RBAC
  local agg="$RELEASE-gang-discovery"
  eq PF-128 "$(q "$(obj ClusterRole "$agg") | .aggregationRule.clusterRoleSelectors[0].matchLabels | tojson")" \
    '{"preflight.nvsentinel.nvidia.com/aggregate-to-gang-discovery":"true"}' "aggregated ClusterRole $agg"
  eq PF-128 "$(q "$(obj ClusterRoleBinding "$agg") | .subjects[0] | \"\(.namespace)/\(.name)\"")" "$NS/preflight" "binding of $agg"
  eq PF-93 "$(q "$(obj ClusterRole "$agg-builtin") | .rules[0] | \"\(.apiGroups[0]) \(.resources | join(\",\")) \(.verbs | join(\",\"))\"")" \
    "scheduling.k8s.io podgroups,workloads get,list,watch" "built-in contributor"          # PF-94
  eq PF-130 "$(q "$(obj ClusterRole "$agg-builtin") | .metadata.labels[\"preflight.nvsentinel.nvidia.com/aggregate-to-gang-discovery\"]")" \
    true "contributor aggregation label"
  eq PF-118 "$(q "$(obj CustomResourceDefinition preflightconfigs.preflight.nvsentinel.nvidia.com) | \"\(.spec.group)/\(.spec.versions[0].name) \(.spec.scope) \(.spec.names.kind)\"")" \
    "preflight.nvsentinel.nvidia.com/v1alpha1 Namespaced PreflightConfig" "PreflightConfig CRD"
  eq PF-125 "$(q "$(obj CustomResourceDefinition preflightconfigs.preflight.nvsentinel.nvidia.com) | .spec.versions[0].additionalPrinterColumns | map(.name) | join(\",\")")" \
    Discoverer,Ready,Age "printer columns"
  eq PF-126 "$(q "$(obj CustomResourceDefinition preflightconfigs.preflight.nvsentinel.nvidia.com) | .spec.versions[0].additionalPrinterColumns[1].jsonPath")" \
    ".status.conditions[?(@.type=='Ready')].status" "READY column"

  # --- single node
  load single-node
  eq PF-15 "$(cfg '[.initContainers[].name] | join(",")')" preflight-dcgm-diag "single-node checks (list replaced)"
  eq PF-16 "$(cfg '.initContainers[0].image')" ghcr.io/nvidia/nvsentinel/preflight-dcgm-diag:0.1.0 "repository/tag map, empty tag"
  eq PF-13 "$(cfg '.gangCoordination.enabled')" false "gang coordination off"
  eq PF-13 "$(q "[.[] | select(.kind == \"ClusterRole\")] | length")" 0 "no gang RBAC with coordination off"
  # --- prepend, object selectors, Volcano, OSMO+KAI
  load prepend
  eq PF-27 "$(cfg '.initContainerPlacement')" prepend initContainerPlacement
  load object-selector-labels
  eq PF-216 "$(q "$mwc | .webhooks[0].objectSelector | tojson")" '{"matchLabels":{"nvsentinel.nvidia.com/preflight":"enabled"}}' objectSelector
  load object-selector-expressions
  eq PF-217 "$(q "$mwc | .webhooks[0].objectSelector | tojson")" \
    '{"matchExpressions":[{"key":"nvsentinel.nvidia.com/preflight","operator":"In","values":["enabled","true"]}]}' objectSelector
  load volcano
  eq PF-101 "$(cfg '.gangDiscovery | "\(.name) \(.annotationKeys[0]) \(.podGroupGVR.group)/\(.podGroupGVR.version)/\(.podGroupGVR.resource) \(.minCountExpr)"')" \
    "volcano scheduling.k8s.io/group-name scheduling.volcano.sh/v1beta1/podgroups podGroup.spec.minMember" gangDiscovery
  eq PF-129 "$(q "$(obj ClusterRole "$agg-builtin") | .rules[1] | \"\(.apiGroups[0]) \(.resources[0])\"")" \
    "scheduling.volcano.sh podgroups" "contributor for podGroupGVR"
  load osmo-kai
  eq PF-102 "$(cfg '.gangDiscovery | "\(.name) \(.labelKeys[0]) \(.podGroupGVR.group)/\(.podGroupGVR.version)/\(.podGroupGVR.resource)"')" \
    "osmo-with-kai osmo.group_uuid scheduling.run.ai/v2alpha2/podgroups" gangDiscovery
  eq PF-104 "$(q "$(obj ClusterRole "$agg-builtin") | .rules[1] | \"\(.apiGroups[0]) \(.resources[0]) \(.verbs | join(\",\"))\"")" \
    "scheduling.run.ai podgroups get,list,watch" "contributor for podGroupGVR"
  # --- publishTo: deployment
  load publish-deployment
  eq PF-162 "$(cfg '.publishTo')" deployment publishTo
  eq PF-166 "$(cfg '.healthPublish.target')" "platform-connector-deployment.$NS.svc.cluster.local:50051" "health publish target"
  eq PF-168 "$(cfg '.healthPublish.insecure')" false "TLS by default"
  eq PF-168 "$(cfg '.healthPublish.caFile')" /etc/preflight-ca/ca.crt "CA from the page's values alone (issue 22)"
  # CA bundle sync (src/casync): the CA Secret mounted into the webhook, its
  # path in healthPublish.caFile, the webhook's namespaceSelector, RBAC.
  local dep; dep=$(obj Deployment preflight)
  eq PF-171 "$(q "$dep | .spec.template.spec.volumes[] | select(.name == \"platform-connector-ca\") | \"\(.secret.secretName) \(.secret.items[0].key)=\(.secret.items[0].path)\"")" \
    "platform-connector-deployment-grpc-cert ca.crt=ca.crt" "CA Secret volume: the connector's cert-manager Secret (issue 22)"
  eq PF-171 "$(q "$dep | .spec.template.spec.containers[0].volumeMounts[] | select(.name == \"platform-connector-ca\") | .mountPath")" \
    /etc/preflight-ca "CA Secret mount"
  eq PF-174 "$(cfg '.healthPublish.caFile')" /etc/preflight-ca/ca.crt healthPublish.caFile
  eq PF-173 "$(cfg '.healthPublish.namespaceSelector | tojson')" "$(q "$mwc | .webhooks[0].namespaceSelector | tojson")" \
    "CA sync namespaces = the webhook's namespaceSelector"
  eq PF-172 "$(q "$(obj ClusterRole nvsentinel-preflight) | [.rules[] | select(.resources | index(\"configmaps\")) | .verbs | (index(\"create\") != null and index(\"update\") != null and index(\"list\") != null)] | any")" \
    true "configmaps create/update/list"
  eq PF-173 "$(q "$(obj ClusterRole nvsentinel-preflight) | [.rules[] | select(.resources | index(\"namespaces\")) | .verbs | (index(\"list\") != null and index(\"watch\") != null)] | any")" \
    true "namespaces list/watch"
  load publish-deployment-host-network
  eq PF-162 "$(cfg '.publishTo')" deployment "renders with hostNetworkWorkloads: true"
  eq PF-168 "$(cfg '.healthPublish.caFile')" /etc/preflight-ca/ca.crt "CA with hostNetworkWorkloads: true"
  # The connector's own settings: insecureDevelopmentMode, grpcPort.
  load publish-deployment-insecure
  eq PF-168 "$(cfg '.healthPublish | "\(.insecure) \(.caFile // "none")"')" "true none" "tls.mode insecureDevelopmentMode"
  eq PF-166 "$(cfg '.healthPublish.target')" "platform-connector-deployment.$NS.svc.cluster.local:50052" "target on grpcPort"
  eq PF-171 "$(q "[$(obj Deployment preflight) | .spec.template.spec.volumes[] | select(.name == \"platform-connector-ca\")] | length")" 0 "no CA mount without TLS"
  load default
  eq PF-171 "$(cfg '.healthPublish.caFile // "none"')" none "no CA sync with publishTo: socket"
  eq PF-171 "$(q "[$(obj Deployment preflight) | .spec.template.spec.volumes[] | select(.name == \"platform-connector-ca\")] | length")" 0 "no CA mount with publishTo: socket"
  # --- webhook TLS variants
  load existing-issuer
  eq PF-208 "$(q '[.[] | select(.kind == "Issuer" or (.kind == "Certificate" and .spec.isCA == true))] | length')" 0 "no CA created"
  eq PF-209 "$(q "$(obj Certificate preflight-webhook) | .spec.issuerRef | \"\(.kind)/\(.name)\"")" ClusterIssuer/platform-ca issuerRef
  eq PF-210 "$(q "$mwc | .metadata.annotations[\"cert-manager.io/inject-ca-from\"]")" cert-manager/platform-ca "CA injection"
  eq PF-204 "$(q "$mwc | .webhooks[0].failurePolicy")" Ignore failurePolicy
  eq PF-205 "$(q "$mwc | .webhooks[0].timeoutSeconds")" 30 timeoutSeconds
  load existing-issuer-no-ca
  eq PF-211 "$(q "$mwc | (.metadata.annotations // {} | length) + (.webhooks[0].clientConfig.caBundle // \"\" | length)")" 0 \
    "nothing injects a CA bundle"
  eq PF-202 "$(q "$(obj Certificate preflight-webhook) | .spec.issuerRef.name")" platform-ca issuerRef
  load openshift
  eq PF-213 "$(q '[.[] | select(.apiVersion | startswith("cert-manager.io"))] | length')" 0 "cert-manager objects"
  eq PF-213 "$(q "$(obj Service preflight) | .metadata.annotations[\"service.beta.openshift.io/serving-cert-secret-name\"]")" preflight-webhook-tls "serving cert annotation"
  eq PF-213 "$(q "$mwc | .metadata.annotations[\"service.beta.openshift.io/inject-cabundle\"]")" true "CA bundle annotation"
  # --- image cache
  load image-cache
  local ds; ds=$(obj DaemonSet preflight-image-cache)
  eq PF-22 "$(q "$ds | .spec.template.spec.containers | map(\"\(.name)=\(.image)\") | join(\",\")")" \
    "preflight-dcgm-diag=ghcr.io/gpuready/preflight-dcgm-diag:0.1.0,preflight-upstream=ghcr.io/nvidia/nvsentinel/preflight-nccl-loopback:v1.26.0,preflight-custom=registry.example.com/team/gpu-check:1.2" "one container per check image"
  eq PF-22 "$(q "$ds | .spec.template.spec.containers[0].command | join(\" \")")" /usr/local/bin/gpuready-idle "hold command"
  eq PF-22 "$(q "$ds | .spec.template.spec.containers[1].command | tojson")" \
    '["/bin/sh","-c","trap '"'"'exit 0'"'"' TERM INT; sleep infinity & wait $!"]' "upstream image: shell hold command (issue 22)"
  eq PF-22 "$(q "$ds | .spec.template.spec.containers[2].command | join(\" \")")" /app/idle "per-image hold command"
  eq PF-23 "$(q "$ds | .spec.template.spec.containers[0].resources.requests | \"\(.cpu) \(.memory)\"")" "10m 16Mi" requests
  eq PF-24 "$(q "$ds | .spec.template.spec.containers[0].resources.limits | \"\(.cpu) \(.memory)\"")" "50m 64Mi" limits
  # The webhook Service must not select the image-cache pods.
  ok PF-22 "the webhook Service selects image-cache pods" \
    "$(jq -r "($(obj Service preflight) | .spec.selector) as \$sel | [$ds | .spec.template.metadata.labels | to_entries as \$l | \$sel | to_entries | all(. as \$e | \$l | any(. == \$e))] == [false]" "$J")"
  eq PF-25 "$(q "$ds | .spec.template.metadata.annotations | tojson")" '{"example.com/owner":"gpu-team"}' podAnnotations
  eq PF-22 "$(cfg '.initContainers | map(has("imageCacheCommand")) | any')" false "chart-only key kept out of config.yaml"
  # --- topology
  load topology-ndv5
  eq PF-157 "$(cfg '.gangCoordination.ncclTopoConfigMap')" preflight-nccl-topo "topology ConfigMap name"
  ok PF-157 "bundled ndv5 XML in ConfigMap preflight-nccl-topo and in config.yaml" \
    "$(jq -r --arg x "$(cat "$CHART/charts/preflight/files/ndv5-topo.xml")" \
      "[$(obj ConfigMap preflight-nccl-topo) | (.data[\"topo.xml\"] | rtrimstr(\"\\n\")) == \$x] == [true]" "$J")"
  eq PF-157 "$(cfg '.gangCoordination.ncclTopoData | contains("<system version=\"1\">")')" true "ncclTopoData"
  # --- issue 22: upstream's Deployment keys, each with upstream's meaning
  load default
  local dspec; dspec="$(obj Deployment preflight) | .spec.template.spec"
  eq upstream "$(q "$(obj NetworkPolicy preflight) | .spec | \"\(.policyTypes | join(\",\")) \(.ingress[0].ports[0].port) \(.podSelector.matchLabels[\"app.kubernetes.io/name\"])\"")" \
    "Ingress 8443 preflight" "networkPolicy.enabled (default true, as upstream)"
  eq upstream "$(q "$dspec | .containers[0].securityContext | \"\(.runAsNonRoot) \(.runAsUser) \(.readOnlyRootFilesystem) \(.capabilities.drop | join(\",\"))\"")" \
    "true 65532 true ALL" "default securityContext"
  load upstream-keys
  eq upstream "$(q "$dspec | .imagePullSecrets | tojson")" '[{"name":"regcred"}]' imagePullSecrets
  eq upstream "$(q "$dspec | .serviceAccountName")" gpu-preflight serviceAccount.name
  eq upstream "$(q "$(obj ServiceAccount gpu-preflight) | .metadata.annotations[\"eks.amazonaws.com/role-arn\"]")" \
    arn:aws:iam::111122223333:role/preflight serviceAccount.annotations
  eq upstream "$(q '[.[] | select(.kind == "ClusterRoleBinding") | .subjects[0].name] | unique | join(",")')" gpu-preflight "RBAC bound to serviceAccount.name"
  eq upstream "$(q "$dspec | .containers[0].securityContext.runAsUser")" 1001 securityContext
  eq upstream "$(q "$dspec | .containers[0].resources.limits.cpu")" 500m "resources: CPU limit"
  eq upstream "$(q "$(obj Service preflight) | .spec.ports[0] | \"\(.port) \(.targetPort)\"")" "8443 https" "service.port; targetPort = webhook.port"
  eq PF-214 "$(q "$mwc | .webhooks[0].clientConfig.service.port")" 8443 "webhook calls service.port"
  eq PF-197 "$(q "$dspec | .containers[0].ports[0].containerPort")" 9443 "webhook.port"
  eq PF-218 "$(q "$dspec | .containers[0].livenessProbe | \"\(.httpGet.port) \(.initialDelaySeconds) \(.periodSeconds) \(.failureThreshold)\"")" "9443 10 20 6" livenessProbe
  eq PF-219 "$(q "$dspec | .containers[0].readinessProbe | \"\(.httpGet.port) \(.initialDelaySeconds) \(.periodSeconds)\"")" "9443 3 7" readinessProbe
  eq upstream "$(q '[.[] | select(.kind == "NetworkPolicy")] | length')" 0 "networkPolicy.enabled: false"
  load existing-service-account
  eq upstream "$(q '[.[] | select(.kind == "ServiceAccount")] | length')" 0 "serviceAccount.create: false renders none"
  eq upstream "$(q "$dspec | .serviceAccountName")" platform-preflight "existing ServiceAccount"
  eq upstream "$(q '[.[] | select(.kind == "ClusterRoleBinding") | .subjects[0].name] | unique | join(",")')" platform-preflight "RBAC bound to it"

  # --- per-check examples
  load init-container-examples
  eq PF-63 "$(cfg '.initContainers[1].image')" ghcr.io/nvidia/nvsentinel/preflight-nccl-loopback:latest "plain image string"
  eq PF-105 "$(cfg '.imagePullSecrets | tojson')" '[{"name":"my-registry"}]' imagePullSecrets
  eq PF-85 "$(cfg '.initContainers[2].env | map("\(.name)=\(.value)") | join(",")')" \
    "MESSAGE_SIZES=4G,NCCL_IB_HCA=mlx5,BW_THRESHOLD_GBPS=90" "ncclAllreduceExtraEnv appended, replacing same names"
  eq PF-42 "$(cfg '.processingStrategy')" STORE_ONLY processingStrategy

  if [[ -n ${GR_PREFLIGHT_BIN:-} ]]; then
    assert_webhook
  else
    echo "helm_test: GR_PREFLIGHT_BIN not set: rendered config.yaml not fed to the webhook" >&2
  fi
  echo "helm_test: assert ok"
}

# The rendered config.yaml of every example, read by the real webhook.
assert_webhook() {
  [[ -x $GR_PREFLIGHT_BIN ]] || die "GR_PREFLIGHT_BIN not executable: $GR_PREFLIGHT_BIN"
  local f name pod=$WORK/pod.yaml pod2=$WORK/pod-init.yaml out
  cat >"$pod" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: train-0, namespace: team-a, labels: {osmo.group_uuid: myjob}}
spec:
  containers:
    - name: main
      image: busybox
      env: [{name: NCCL_DEBUG, value: INFO}, {name: UNRELATED, value: x}]
      resources: {limits: {nvidia.com/gpu: "8"}}
EOF
  cat >"$pod2" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: train-1, namespace: team-a}
spec:
  initContainers: [{name: setup, image: busybox}]
  containers:
    - name: main
      image: busybox
      resources: {limits: {nvidia.com/gpu: "1"}}
EOF
  for f in $(examples); do
    name=$(basename "$f" .yaml)
    [[ $name == disabled ]] && continue
    load "$name"
    "$GR_PREFLIGHT_BIN" check-config --config "${J%.json}.config.yaml" >"$WORK/cc.out" 2>&1 ||
      { cat "$WORK/cc.out"; die "$name: the webhook refuses the rendered config.yaml"; }
  done
  load default
  out=$(inject "$pod" | jq -r '[.spec.initContainers[].name] | join(",")')
  eq PF-108 "$out" preflight-dcgm-diag,preflight-nccl-loopback,preflight-nccl-allreduce "checks injected by default"
  out=$(inject "$pod" | jq -r '.spec.initContainers[0].env | map(select(.name == "PLATFORM_CONNECTOR_TOKEN_PATH")) | .[0].value')
  eq PF-43 "$out" /var/run/secrets/nvsentinel/platform-connector/token PLATFORM_CONNECTOR_TOKEN_PATH
  out=$(inject "$pod2" | jq -r '[.spec.initContainers[].name] | join(",")')
  eq PF-26 "$out" setup,preflight-dcgm-diag,preflight-nccl-loopback,preflight-nccl-allreduce "append placement"
  load prepend
  out=$(inject "$pod2" | jq -r '[.spec.initContainers[].name] | join(",")')
  eq PF-27 "$out" preflight-dcgm-diag,preflight-nccl-loopback,preflight-nccl-allreduce,setup "prepend placement"
  load single-node
  out=$(inject "$pod" | jq -r '[.spec.initContainers[].name] | join(",")')
  eq PF-15 "$out" preflight-dcgm-diag "single-node checks"
  out=$(inject "$pod" | jq -r '[.spec.initContainers[].env[].name | select(startswith("GANG_"))] | length')
  eq PF-18 "$out" 0 "gang env with coordination off"
  load osmo-kai
  out=$(inject "$pod" | jq -r '.spec.initContainers[0].env | map(select(.name == "GANG_ID")) | .[0].value')
  eq PF-109 "$out" osmo-with-kai-team-a-myjob "gang id from the rendered OSMO + KAI config"
  load init-container-examples
  out=$(inject "$pod" --gang-id g1 | jq -c '.spec.initContainers')
  eq PF-30 "$(jq -r 'map(.name) | join(",")' <<<"$out")" preflight-dcgm-diag,preflight-nccl-allreduce "defaultEnabled: false not injected"
  eq PF-77 "$(jq -r '.[0].env | map(select(.name == "NCCL_DEBUG")) | length' <<<"$out")" 1 "inherited NCCL_DEBUG (inheritUserEnv default)"
  eq PF-83 "$(jq -r '.[1].env | map(select(.name == "NCCL_DEBUG")) | length' <<<"$out")" 0 "inheritUserEnv: false"
  eq PF-85 "$(jq -r '.[1].env | map(select(.name == "NCCL_IB_HCA")) | .[0].value' <<<"$out")" mlx5 "ncclAllreduceExtraEnv"
  eq PF-86 "$(jq -r '.[1].volumeMounts | map(select(.name == "host-opt-amazon")) | .[0].mountPath' <<<"$out")" /opt/amazon "extraHostPathMounts"
  eq PF-42 "$(jq -r '.[0].env | map(select(.name == "PROCESSING_STRATEGY")) | .[0].value' <<<"$out")" STORE_ONLY PROCESSING_STRATEGY
  eq PF-105 "$(inject "$pod" | jq -r '.spec.imagePullSecrets | tojson')" '[{"name":"my-registry"}]' "pull secrets injected"
  load publish-deployment
  out=$(inject "$pod" | jq -c '.')
  eq PF-166 "$(jq -r '.spec.initContainers[0].env | map(select(.name == "HEALTH_PUBLISH_TARGET")) | .[0].value' <<<"$out")" \
    "platform-connector-deployment.$NS.svc.cluster.local:50051" HEALTH_PUBLISH_TARGET
  eq PF-167 "$(jq -r '.spec.initContainers[0].env | map(select(.name == "HEALTH_PUBLISH_TOKEN_PATH")) | length' <<<"$out")" 1 HEALTH_PUBLISH_TOKEN_PATH
  eq PF-168 "$(jq -r '.spec.initContainers[0].env | map(select(.name == "HEALTH_PUBLISH_TLS_CA_FILE")) | .[0].value' <<<"$out")" \
    /etc/nvsentinel/platform-connector-deployment-ca/ca.crt HEALTH_PUBLISH_TLS_CA_FILE
  eq PF-176 "$(jq -r '.metadata.labels["nvsentinel.nvidia.com/health-publisher"]' <<<"$out")" true "health-publisher label"
  load publish-deployment-insecure
  out=$(inject "$pod" | jq -c '.spec.initContainers[0].env | from_entries')
  eq PF-168 "$(jq -r '"\(.HEALTH_PUBLISH_INSECURE) \(.HEALTH_PUBLISH_TLS_CA_FILE // "unset") \(.HEALTH_PUBLISH_TARGET)"' <<<"$out")" \
    "true unset platform-connector-deployment.$NS.svc.cluster.local:50052" "insecureDevelopmentMode"
  echo "helm_test: rendered configs accepted by $(basename "$GR_PREFLIGHT_BIN")"
}

# ---------------------------------------------------------------------------
# The nvcre subchart (issue 19).
cmd_nvcre() {
  local nv=$CHART/charts/nvcre f b
  # The CRDs and the built-in LogProfiles are copies of deploy/crds and
  # deploy/logprofiles: byte for byte, none missing, none stale.
  for f in "$ROOT"/deploy/crds/*.yaml; do
    b=$(basename "$f")
    cmp -s "$f" "$nv/crds/$b" || die "nvcre: charts/nvcre/crds/$b differs from deploy/crds/$b (cp deploy/crds/*.yaml $nv/crds/)"
  done
  for f in "$nv"/crds/*.yaml; do
    [[ -f $ROOT/deploy/crds/$(basename "$f") ]] || die "nvcre: charts/nvcre/crds/$(basename "$f") is not in deploy/crds (remove it)"
  done
  for f in "$ROOT"/deploy/logprofiles/*.yaml; do
    b=$(basename "$f")
    cmp -s "$f" "$nv/files/logprofiles/$b" ||
      die "nvcre: charts/nvcre/files/logprofiles/$b differs from deploy/logprofiles/$b (cp deploy/logprofiles/*.yaml $nv/files/logprofiles/)"
  done
  for f in "$nv"/files/logprofiles/*.yaml; do
    [[ -f $ROOT/deploy/logprofiles/$(basename "$f") ]] || die "nvcre: files/logprofiles/$(basename "$f") is not in deploy/logprofiles (remove it)"
  done

  # --- defaults: no values at all deploy NVCRE (on by default).
  load disabled
  local dep pod c args
  dep=$(obj Deployment nvcre-manager)
  pod="$dep | .spec.template.spec"
  c="$pod | .containers[0]"
  args() { q "$c | .args | join(\" \")"; }
  eq nvcre "$(q "[.[] | select(.kind == \"CustomResourceDefinition\") | .metadata.name] | sort | join(\",\")")" \
    "bandwidthmeasurements.nvcre.nvidia.com,certifications.nvcre.nvidia.com,goodputmeasurements.nvcre.nvidia.com,jobs.nvcre.nvidia.com,logprofiles.nvcre.nvidia.com,workflows.nvcre.nvidia.com,workloadruns.nvcre.nvidia.com" \
    "the seven NVCRE CRDs"
  eq nvcre "$(q "$dep | \"\(.metadata.namespace) \(.spec.replicas)\"")" "$NS 2" "Deployment nvcre-manager, 2 replicas"
  eq nvcre "$(q "$c | .image")" ghcr.io/gpuready/gpuready-manager:0.1.0 "manager image"
  eq nvcre "$(args)" "--health-probe-bind-address=:8081 --metrics-bind-address=:8443 --leader-elect --leader-elect-lease-duration=15s --leader-elect-renew-deadline=10s --leader-elect-retry-period=2s --controllers=* --max-concurrent-reconciles=10 --measurement-max-concurrent-reconciles=5 --workload-creation-deadline=10m --zap-log-level=info" \
    "manager flags (fact sheet §6.1)"
  eq JOB-88 "$(q "$c | .args | map(select(startswith(\"--workload-creation-deadline=\"))) | .[0]")" --workload-creation-deadline=10m "deadline default"
  eq nvcre "$(q "$c | .env | map(.valueFrom.fieldRef.fieldPath) | join(\",\")")" metadata.namespace,metadata.name "POD_NAMESPACE (the Lease's namespace), POD_NAME"
  eq nvcre "$(q "$c | .ports | map(\"\(.name)=\(.containerPort)\") | join(\",\")")" probes=8081,metrics=8443 ports
  eq nvcre "$(q "$c | \"\(.livenessProbe.httpGet.path) \(.livenessProbe.httpGet.port) \(.readinessProbe.httpGet.path) \(.readinessProbe.httpGet.port)\"")" \
    "/healthz probes /readyz probes" "probes on the manager's health port"
  eq nvcre "$(q "$c | .securityContext | \"\(.runAsNonRoot) \(.runAsUser) \(.readOnlyRootFilesystem) \(.allowPrivilegeEscalation) \(.capabilities.drop | join(\",\"))\"")" \
    "true 65532 true false ALL" "non-root, read-only root filesystem"
  eq nvcre "$(q "$c | .resources | tojson")" '{"limits":{"memory":"512Mi"},"requests":{"cpu":"50m","memory":"128Mi"}}' resources
  eq nvcre "$(q "$pod | \"\(.serviceAccountName) \(.terminationGracePeriodSeconds)\"")" "nvcre-manager 10" "ServiceAccount, grace period"
  eq nvcre "$(q "$(obj ServiceAccount nvcre-manager) | .metadata.namespace")" "$NS" ServiceAccount
  local cr="$(obj ClusterRole "$RELEASE-nvcre-manager")"
  eq nvcre "$(q "$(obj ClusterRoleBinding "$RELEASE-nvcre-manager") | \"\(.roleRef.name) \(.subjects[0].kind) \(.subjects[0].namespace)/\(.subjects[0].name)\"")" \
    "$RELEASE-nvcre-manager ServiceAccount $NS/nvcre-manager" "ClusterRoleBinding"
  # Least privilege: no wildcard, no Secrets, no RBAC or impersonation verbs,
  # nothing namespaced is deleted but what the controllers own.
  eq nvcre "$(q "[$cr | .rules[] | (.verbs + .resources + .apiGroups)[] | select(. == \"*\")] | length")" 0 "no wildcard in the ClusterRole"
  eq nvcre "$(q "[$cr | .rules[] | .resources[] | select(test(\"secrets|roles|rolebindings|serviceaccounts\"))] | length")" 0 "no Secrets, RBAC or ServiceAccounts"
  eq nvcre "$(q "[$cr | .rules[] | .verbs[] | select(test(\"escalate|bind|impersonate|deletecollection\"))] | length")" 0 "no escalate, bind, impersonate, deletecollection"
  eq nvcre "$(q "[$cr | .rules[] | select(.verbs | index(\"delete\")) | .resources[]] | sort | join(\",\")")" \
    "computedomains,jobs,trainingruntimes,trainjobs,workflows" "deletes only what the controllers create"
  eq nvcre "$(q "[$cr | .rules[] | select(.apiGroups == [\"\"]) | \"\(.resources | join(\"+\")):\(.verbs | join(\"+\"))\"] | join(\" \")")" \
    "nodes:list+watch pods:list+watch pods/log:get persistentvolumes:list+patch configmaps:create+patch events:create+patch" "core resources, read-mostly"
  local role; role=$(obj Role nvcre-leader-election)
  eq nvcre "$(q "$role | [.rules[] | \"\(.resources[0]):\(.resourceNames // [] | join(\"+\")):\(.verbs | join(\"+\"))\"] | join(\" \")")" \
    "leases::create leases:240fe9c6.nvidia.com:get+update" "leader-election Role: the one Lease"
  eq nvcre "$(q "$(obj RoleBinding nvcre-leader-election) | \"\(.roleRef.name) \(.subjects[0].name)\"")" "nvcre-leader-election nvcre-manager" "leader-election RoleBinding"
  local svc; svc=$(obj Service nvcre-manager-metrics)
  eq nvcre "$(q "$svc | .spec.ports[0] | \"\(.port) \(.targetPort)\"")" "8443 metrics" "metrics Service"
  ok nvcre "the metrics Service selects the manager pods" \
    "$(jq -r "($svc | .spec.selector) as \$sel | [$dep | .spec.template.metadata.labels | to_entries as \$l | \$sel | to_entries | all(. as \$e | \$l | any(. == \$e))] == [true]" "$J")"
  eq nvcre "$(q '[.[] | select(.kind == "ServiceMonitor")] | length')" 0 "no ServiceMonitor by default"
  # The built-in LogProfiles: every file of deploy/logprofiles, spec unchanged.
  local want got
  want=$(for f in "$ROOT"/deploy/logprofiles/*.yaml; do yq -c '{name: .metadata.name, spec}' "$f"; done | jq -s -c -S 'sort_by(.name)')
  got=$(q '[.[] | select(.kind == "LogProfile") | {name: .metadata.name, spec}] | sort_by(.name)' | jq -c -S .)
  eq nvcre "$got" "$want" "built-in LogProfiles = deploy/logprofiles"
  eq nvcre "$(q '[.[] | select(.kind == "LogProfile") | .metadata.labels["nvcre.nvidia.com/builtin"]] | unique | join(",")')" true "builtin label kept"

  # --- upstream NVCRE's keys
  load nvcre-upstream-keys
  eq nvcre "$(q "$dep | .spec.replicas")" 1 manager.replicas
  eq nvcre "$(q "$c | .args | map(select(startswith(\"--leader-elect\"))) | length")" 0 "leaderElection.enabled: false"
  eq nvcre "$(q '[.[] | select(.kind == "Role")] | length')" 0 "no leader-election Role without leader election"
  eq nvcre "$(q "$c | .image")" \
    registry.example.com/mirror/gpuready-manager@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef "image by digest"
  eq JOB-88 "$(q "$c | .args | map(select(startswith(\"--workload-creation-deadline=\"))) | .[0]")" --workload-creation-deadline=20m manager.workloadCreationDeadline
  eq nvcre "$(q "$c | .args | map(select(test(\"max-concurrent\"))) | join(\" \")")" \
    "--max-concurrent-reconciles=20 --measurement-max-concurrent-reconciles=2" "workers"
  eq nvcre "$(q "$c | .resources.limits | \"\(.cpu) \(.memory)\"")" "500m 1Gi" "upstream resources"
  eq nvcre "$(q "$pod | \"\(.tolerations | tojson) \(.imagePullSecrets | tojson)\"")" '[{"operator":"Exists"}] [{"name":"regcred"}]' "tolerations, pull secrets"
  eq nvcre "$(q "$(obj ServiceMonitor nvcre-metrics-monitor) | \"\(.metadata.labels.release) \(.spec.endpoints[0].port) \(.spec.endpoints[0].interval) \(.spec.selector.matchLabels[\"control-plane\"])\"")" \
    "kube-prometheus-stack metrics 30s manager" "ServiceMonitor (monitoring.coreos.com/v1)"
  eq nvcre "$(q "$(obj Service nvcre-manager-metrics) | .spec.ports[0].port") $(q "$c | .args | map(select(startswith(\"--metrics\"))) | .[0]")" \
    "9443 --metrics-bind-address=:9443" metrics.port
  # --- options
  load nvcre-options
  eq nvcre "$(q '[.[] | select(.kind == "ServiceAccount")] | length')" 0 "serviceAccount.create: false"
  eq nvcre "$(q '[.[] | select(.kind == "ClusterRoleBinding" or .kind == "RoleBinding") | .subjects[0].name] | unique | join(",")')" platform-nvcre "RBAC bound to the existing ServiceAccount"
  eq nvcre "$(q "$pod | .serviceAccountName")" platform-nvcre serviceAccount.name
  eq nvcre "$(q '[.[] | select(.kind == "Service" or .kind == "LogProfile")] | length')" 0 "no metrics Service, no LogProfiles"
  eq nvcre "$(q "$c | .args | map(select(test(\"metrics|controllers|http2|lease-duration\"))) | join(\" \")")" \
    "--metrics-bind-address=0 --leader-elect-lease-duration=1m --controllers=*,-measurement --enable-http2" "flags"
  eq nvcre "$(q "$c | .image")" ghcr.io/gpuready/gpuready-manager:0.2.0 "global.image.tag"
  eq nvcre "$(q "$cr | .rules[-1] | \"\(.apiGroups[0]) \(.resources[0]) \(.verbs | join(\",\"))\"")" \
    "resource.k8s.io resourceclaimtemplates get,create,patch,delete" "rbac.extraRules appended"
  load nvcre-off
  eq nvcre "$(q 'length')" 0 "global.nvcre.enabled: false with preflight off renders nothing"

  # Every rendered command line is one the real manager accepts (exit 2 is
  # a flag error; 1 is the missing kubeconfig given on purpose).
  if [[ -n ${GR_MANAGER_BIN:-} ]]; then
    [[ -x $GR_MANAGER_BIN ]] || die "GR_MANAGER_BIN not executable: $GR_MANAGER_BIN"
    local name rc m=0
    for f in $(examples); do
      name=$(basename "$f" .yaml)
      load "$name"
      [[ $(q "[$dep] | length") == 1 ]] || continue
      mapfile -t args < <(q "$c | .args[]")
      rc=0
      "$GR_MANAGER_BIN" "${args[@]}" --kubeconfig "$WORK/no-such-kubeconfig" >"$WORK/mgr.out" 2>&1 || rc=$?
      [[ $rc == 1 ]] && grep -q 'unable to load the Kubernetes client configuration' "$WORK/mgr.out" ||
        { cat "$WORK/mgr.out"; die "$name: gpuready-manager refuses the rendered flags (exit $rc)"; }
      m=$((m + 1))
    done
    echo "helm_test: gpuready-manager accepts the flags of $m rendering(s)"
  else
    echo "helm_test: GR_MANAGER_BIN not set: rendered flags not fed to the manager" >&2
  fi
  echo "helm_test: nvcre ok"
}

case ${1:-} in
  lint) cmd_lint ;;
  golden) cmd_golden ;;
  refusals) cmd_refusals ;;
  assert) cmd_assert ;;
  upstream) cmd_upstream ;;
  nvcre) cmd_nvcre ;;
  *) echo "usage: $0 lint|golden|refusals|assert|upstream|nvcre" >&2; exit 2 ;;
esac

# shellcheck shell=bash
# gr_harness.sh — shell equivalent of gr_harness.{c,h}. Source it from bash:
#
#   source test/harness/gr_harness.sh
#   gr_skip_if_disabled                # GR_SKIP_INTEGRATION=1 -> prints SKIPPED, exit 77
#   gr_test_begin mytest               # open cluster, fresh namespace in $GR_NS,
#                                      # dump state + delete namespace on exit
#   gr_apply test/fixtures/crds/grove.yaml
#   gr_apply - "$GR_NS" <<<"$yaml"
#   gr_wait "$GR_NS" podcliques.grove.io/x 'jsonpath={.spec.replicas}=2' 30
#   gr_kubectl -n "$GR_NS" get pods
#   gr_kubectl_lowpriv -n "$GR_NS" get pods   # as user gr-lowpriv
#
# Same environment as the C harness: GR_CLUSTER_DIR, GR_SKIP_INTEGRATION,
# GR_SOURCE_DIR, GR_HARNESS_KEEP_NS, GR_TEST_TIMEOUT_SCALE.
#
# Every wait (gr_wait, gr_wait_jsonpath, gr_kwait, gr_apply's CRD wait) is
# scaled to load with `gr_scale SECONDS` — the rule of gr_test_scale.h:
# SECONDS × GR_TEST_TIMEOUT_SCALE (>= 1, default 1) × the 1-minute load
# average per CPU clamped to [1, 4]. Poll loops in test scripts use
# `gr_tries SECONDS STEP_MS` for their iteration count.

GR_HARNESS_SH_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
: "${GR_SOURCE_DIR:=$(cd -- "$GR_HARNESS_SH_DIR/../.." && pwd)}"

gr_say() { printf 'gr_harness: %s\n' "$*" >&2; }

# gr_scale SECONDS: SECONDS scaled to load (see above), rounded up.
gr_scale() {
  awk -v s="$1" -v u="${GR_TEST_TIMEOUT_SCALE:-1}" -v n="$(nproc 2>/dev/null || echo 1)" '
    BEGIN {
      if (u !~ /^[0-9]+(\.[0-9]+)?$/ || u < 1 || u > 100) u = 1
      l = 1
      if ((getline line < "/proc/loadavg") > 0) { split(line, f, " "); l = f[1] / n }
      if (l < 1) l = 1; if (l > 4) l = 4
      v = s * u * l; r = int(v); if (r < v) r++; if (r < s) r = s
      print r
    }'
}

# gr_tries SECONDS STEP_MS: iterations of a poll loop sleeping STEP_MS that
# lasts SECONDS scaled to load.
gr_tries() {
  local s
  s=$(gr_scale "$1")
  echo $((s * 1000 / $2 > 0 ? s * 1000 / $2 : 1))
}

gr_truthy() {
  case ${1:-} in 1|true|TRUE|True|yes|YES|on|ON) return 0 ;; *) return 1 ;; esac
}

# Exit 77 (CTest "skipped") with a visible message when integration tests are
# disabled. Call at the top of a test script.
gr_skip_if_disabled() {
  if gr_truthy "${GR_SKIP_INTEGRATION:-}"; then
    echo "SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION"
    exit 77
  fi
}

# Load the cluster's cluster.env (exports KUBECONFIG, GR_KUBECTL, ...) and
# check /readyz. Returns non-zero, with a message, when there is no cluster.
gr_cluster_open() {
  local dir=${GR_CLUSTER_DIR:-${TMPDIR:-/tmp}/gpuready-cluster-$(id -u)}
  if [[ ! -f $dir/cluster.env ]]; then
    gr_say "no cluster in $dir: run \`scripts/cluster up $dir\` or use ctest (fixture gr_cluster); GR_SKIP_INTEGRATION=1 skips"
    return 1
  fi
  set -a
  # shellcheck source=/dev/null
  source "$dir/cluster.env"
  set +a
  local ready
  ready=$(gr_kubectl get --raw /readyz --request-timeout=5s 2>&1) || true
  if [[ $ready != ok ]]; then
    gr_say "cluster in $dir is not ready: $ready"
    return 1
  fi
}

gr_kubectl() {
  KUBECACHEDIR=${KUBECACHEDIR:-} "$GR_KUBECTL" --kubeconfig "$GR_KUBECONFIG_ADMIN" "$@"
}

gr_kubectl_lowpriv() {
  KUBECACHEDIR=${KUBECACHEDIR:-} "$GR_KUBECTL" --kubeconfig "$GR_KUBECONFIG_LOWPRIV" "$@"
}

# gr_ns_create [PREFIX]: create a fresh namespace, print its name.
gr_ns_create() {
  local prefix=${1:-test} name
  prefix=$(printf '%s' "$prefix" | tr 'A-Z_.' 'a-z--' | tr -cd 'a-z0-9-' | cut -c1-36)
  prefix=${prefix%-}
  name=$(printf '%s-%x-%04x%04x' "${prefix:-t}" "$$" "$RANDOM" "$RANDOM")
  gr_kubectl create -f - >/dev/null <<YAML || return 1
apiVersion: v1
kind: Namespace
metadata:
  name: $name
  labels:
    gpuready.test/harness: "true"
YAML
  if [[ ${GR_CLUSTER_KCM:-0} == 1 ]]; then
    local i
    for ((i = 0; i < 300; i++)); do
      gr_kubectl -n "$name" get serviceaccount default -o name >/dev/null 2>&1 && break
      sleep 0.1
    done
  fi
  printf '%s\n' "$name"
}

gr_ns_delete() {
  [[ -n ${1:-} ]] || return 0
  if gr_truthy "${GR_HARNESS_KEEP_NS:-}"; then gr_say "keeping namespace $1"; return 0; fi
  gr_kubectl delete namespace "$1" --wait=false --ignore-not-found >/dev/null
}

# gr_apply FILE|- [NAMESPACE]: server-side apply a multi-document YAML file
# (relative to GR_SOURCE_DIR) or stdin; wait for every CRD in it to be
# Established and retry objects whose kinds those CRDs define.
gr_apply() {
  local file=${1:?gr_apply FILE|- [NS]} ns=${2:-} input out err rc attempt crds
  local nsargs=()
  [[ -n $ns ]] && nsargs=(-n "$ns")
  if [[ $file == - ]]; then
    input=$(cat)
  else
    [[ $file == /* ]] || file=$GR_SOURCE_DIR/$file
    input=$(<"$file") || return 1
  fi
  err=$(mktemp)
  for ((attempt = 1; attempt <= 6; attempt++)); do
    rc=0
    out=$(gr_kubectl apply --server-side --force-conflicts --field-manager=gr-harness \
          -o name -f - "${nsargs[@]}" <<<"$input" 2>"$err") || rc=$?
    crds=$(grep '^customresourcedefinition.apiextensions.k8s.io/' <<<"$out" | sed 's|^[^/]*/|crd/|' || true)
    if [[ -n $crds ]]; then
      # shellcheck disable=SC2086  # one resource per word
      gr_kwait --for=condition=Established --timeout="$(gr_scale 60)s" $crds || { rm -f "$err"; return 1; }
    fi
    if ((rc == 0)); then rm -f "$err"; return 0; fi
    if ! grep -qE 'no matches for kind|ensure CRDs are installed first|could not find the requested resource' "$err"; then
      break
    fi
    sleep 0.5
  done
  gr_say "apply $file failed:"
  cat "$err" >&2
  rm -f "$err"
  return 1
}

# gr_kwait ARGS...: `kubectl wait ARGS` that treats "no status.conditions yet"
# as not yet rather than failure. kubectl gives up at once with
# "... accessor error: <nil> is of the type <nil>" in that case (e.g. a CRD the
# apiserver has not reconciled); retry for up to 60 s (scaled to load).
gr_kwait() {
  local err deadline=$((SECONDS + $(gr_scale 60)))
  err=$(mktemp)
  while :; do
    if gr_kubectl wait "$@" >/dev/null 2>"$err"; then rm -f "$err"; return 0; fi
    if ! grep -q 'accessor error' "$err" || ((SECONDS >= deadline)); then
      cat "$err" >&2; rm -f "$err"; return 1
    fi
    sleep 0.2
  done
}

# gr_wait NAMESPACE|"" RESOURCE FOR [TIMEOUT_S]: kubectl wait --for=FOR
# (TIMEOUT_S scaled to load).
gr_wait() {
  local ns=$1 res=$2 for=$3 timeout
  timeout=$(gr_scale "${4:-60}")
  local nsargs=()
  [[ -n $ns ]] && nsargs=(-n "$ns")
  if ! gr_kwait "--for=$for" "--timeout=${timeout}s" "$res" "${nsargs[@]}"; then
    gr_say "wait --for=$for $res failed"
    gr_kubectl get "$res" "${nsargs[@]}" -o yaml >&2 || true
    return 1
  fi
}

# gr_wait_jsonpath NAMESPACE|"" RESOURCE JSONPATH WANT [TIMEOUT_S]
gr_wait_jsonpath() {
  local ns=$1 res=$2 jp=$3 want=$4 timeout got="" start=$SECONDS
  timeout=$(gr_scale "${5:-60}")
  local nsargs=()
  [[ -n $ns ]] && nsargs=(-n "$ns")
  while :; do
    got=$(gr_kubectl get "$res" "${nsargs[@]}" -o "jsonpath=$jp" 2>/dev/null) && [[ $got == "$want" ]] && return 0
    ((SECONDS - start < timeout)) || break
    sleep 0.2
  done
  gr_say "$res: $jp is \"$got\", wanted \"$want\" within ${timeout}s"
  gr_kubectl get "$res" "${nsargs[@]}" -o yaml >&2 || true
  return 1
}

# gr_dump_state [NAMESPACE]: objects, events and control-plane log tails.
gr_dump_state() {
  local ns=${1:-} kinds
  {
    echo "======== gr_harness: cluster state${ns:+ for namespace $ns} ========"
    if [[ -n $ns ]]; then
      kinds=$(gr_kubectl api-resources --namespaced=true --verbs=list -o name 2>/dev/null \
        | grep -vxE 'events|events.events.k8s.io|endpoints' | paste -sd, -)
      echo "---- objects in $ns ----"
      gr_kubectl get "${kinds:-all}" -n "$ns" -o wide --ignore-not-found --show-kind 2>&1
      echo "---- events in $ns ----"
      gr_kubectl get events -n "$ns" --sort-by=.metadata.creationTimestamp 2>&1
    fi
    echo "---- CRDs ----"
    gr_kubectl get crd 2>&1
    echo "==== $GR_APISERVER_LOG (last 40 lines) ===="
    tail -n 40 "$GR_APISERVER_LOG" 2>&1
    if [[ ${GR_CLUSTER_KCM:-0} == 1 ]]; then
      echo "==== kube-controller-manager (last 20 lines) ===="
      tail -n 20 "$GR_CLUSTER_DIR/logs/kube-controller-manager.log" 2>&1
    fi
    echo "======== end of cluster state ========"
  } >&2
}

# gr_test_begin [PREFIX]: open the cluster, create $GR_NS, and on exit dump
# state if the script failed, then delete the namespace.
gr_test_begin() {
  gr_cluster_open || exit 1
  GR_NS=$(gr_ns_create "${1:-$(basename "$0" .sh)}") || exit 1
  export GR_NS
  trap '_gr_test_end $?' EXIT
}

_gr_test_end() {
  local rc=$1
  trap - EXIT
  if ((rc != 0 && rc != 77)); then
    gr_say "test failed (exit $rc)"
    gr_dump_state "$GR_NS"
  fi
  gr_ns_delete "$GR_NS" || true
  exit "$rc"
}

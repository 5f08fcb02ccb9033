#!/usr/bin/env bash
# Lifecycle test of scripts/cluster itself (does not use the gr_cluster
# fixture; starts its own clusters): N up/down cycles leave no process and no
# file behind; two clusters run side by side; an interrupted `up` and a
# crashed component clean up after themselves; a TTL expires.
#
#   test_cluster_lifecycle.sh [CYCLES]     (default 5)
set -euo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
cluster=$here/../../scripts/cluster
cycles=${1:-5}

case ${GR_SKIP_INTEGRATION:-0} in
  1|true|TRUE|yes|YES|on|ON) echo "SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION"; exit 77 ;;
esac

base=$(mktemp -d "${TMPDIR:-/tmp}/gr-lifecycle.XXXXXX")
trap 'for d in "$base"/*/; do [[ -d $d ]] && "$cluster" down "$d" >/dev/null 2>&1 || true; done; rm -rf -- "$base"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# Processes belonging to clusters under $base (etcd/apiserver/KCM args point
# into it; the supervisor has it on its command line).
leftover_pids() {
  local f p args=()
  for f in /proc/[0-9]*/cmdline; do
    p=${f#/proc/}; p=${p%/cmdline}
    [[ $p == "$$" || $p == "$BASHPID" ]] && continue
    { mapfile -d '' -t args <"$f"; } 2>/dev/null || continue
    ((${#args[@]})) || continue
    case "${args[0]##*/}" in
      etcd|kube-apiserver|kube-controller-manager) [[ "${args[*]}" == *"$base/"* ]] && echo "$p ${args[0]##*/}" ;;
      bash) [[ "${args[*]}" == *"_supervise $base/"* ]] && echo "$p supervisor" ;;
    esac
  done
  return 0
}

assert_clean() { # what
  local left
  left=$(leftover_pids)
  [[ -z $left ]] || fail "$1: processes left: $left"
  [[ -z $(ls -A "$base") ]] || fail "$1: files left in $base: $(ls -A "$base")"
}

home_kube_before=$( [[ -e $HOME/.kube ]] && echo yes || echo no )

echo "== $cycles up/down cycles"
for ((i = 1; i <= cycles; i++)); do
  d=$base/c$i
  "$cluster" up "$d" >/dev/null 2>"$base.log" || { cat "$base.log"; fail "cycle $i: up failed"; }
  # shellcheck disable=SC1090
  (eval "$("$cluster" env "$d")"; [[ $(kubectl get --raw /readyz) == ok ]]) || fail "cycle $i: /readyz"
  (eval "$("$cluster" env "$d")"; kubectl api-resources --api-group=scheduling.k8s.io -o name | grep -qx workloads.scheduling.k8s.io) \
    || fail "cycle $i: workloads not served"
  "$cluster" down "$d" >/dev/null 2>&1 || fail "cycle $i: down failed"
  assert_clean "cycle $i"
  echo "cycle $i: clean"
done
rm -f "$base.log"

echo "== two clusters at once"
"$cluster" up --no-controller-manager "$base/a" >/dev/null 2>&1 &
pa=$!
"$cluster" up --no-controller-manager "$base/b" >/dev/null 2>&1 &
pb=$!
wait "$pa" || fail "parallel up a"
wait "$pb" || fail "parallel up b"
ua=$(grep '^GR_APISERVER_URL=' "$base/a/cluster.env"); ub=$(grep '^GR_APISERVER_URL=' "$base/b/cluster.env")
[[ $ua != "$ub" ]] || fail "both clusters on the same port"
"$cluster" status "$base/a" >/dev/null || fail "a not ready"
"$cluster" status "$base/b" >/dev/null || fail "b not ready"
"$cluster" down "$base/a" >/dev/null 2>&1
"$cluster" status "$base/b" >/dev/null || fail "b died with a"
"$cluster" down "$base/b" >/dev/null 2>&1
assert_clean "parallel"
echo "parallel: clean"

echo "== up interrupted (SIGINT in the foreground, SIGTERM in the background)"
# A background job of a non-interactive shell starts with SIGINT ignored, so
# SIGINT is sent by timeout(1) to a foreground `up` instead.
rc=0
timeout -s INT 1.5 "$cluster" up "$base/int" >/dev/null 2>&1 || rc=$?
((rc != 0)) || fail "up interrupted by SIGINT exited 0 (was it already ready?)"
assert_clean "up interrupted by SIGINT"
"$cluster" up "$base/term" >/dev/null 2>&1 &
pt=$!
for ((k = 0; k < 100; k++)); do [[ -f $base/term/supervisor.pid ]] && break; sleep 0.05; done
kill -TERM "$pt"
wait "$pt" && fail "up interrupted by SIGTERM exited 0"
assert_clean "up interrupted by SIGTERM"
echo "interrupted up: clean"

echo "== a component crashes"
"$cluster" up --no-controller-manager "$base/crash" >/dev/null 2>&1 || fail "up crash"
kill -KILL "$(<"$base/crash/kube-apiserver.pid")"
for ((k = 0; k < 100; k++)); do
  [[ -z $(leftover_pids) ]] && break
  sleep 0.1
done
[[ -z $(leftover_pids) ]] || fail "supervisor did not stop the rest after a crash: $(leftover_pids)"
grep -q 'kube-apiserver exited' "$base/crash/logs/supervisor.log" || fail "crash not reported"
"$cluster" status "$base/crash" >/dev/null 2>&1 && fail "status says ready after crash"
"$cluster" down "$base/crash" >/dev/null 2>&1
assert_clean "crash"
echo "crash: clean"

if command -v python3 >/dev/null 2>&1; then
  echo "== port taken between choosing and binding: retried on other ports"
  busy=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(120)' "$busy" &
  holder=$!
  sleep 0.3
  GR__CLUSTER_FORCE_PORTS="$((busy - 2)) $((busy - 1)) $busy" \
    "$cluster" up --no-controller-manager "$base/clash" >/dev/null 2>&1 || { kill "$holder"; fail "up did not recover from a port clash"; }
  grep -q "127.0.0.1:$busy\$" "$base/clash/cluster.env" && fail "clash: still on the busy port"
  kill "$holder" 2>/dev/null || true
  wait "$holder" 2>/dev/null || true
  "$cluster" down "$base/clash" >/dev/null 2>&1
  assert_clean "port clash"
  echo "port clash: clean"
fi

echo "== ttl"
"$cluster" up --no-controller-manager --ttl 3 "$base/ttl" >/dev/null 2>&1 || fail "up ttl"
for ((k = 0; k < 200; k++)); do [[ -e $base/ttl ]] || break; sleep 0.1; done
assert_clean "ttl"
echo "ttl: clean"

echo "== down is idempotent and refuses foreign directories"
"$cluster" down "$base/never-existed" >/dev/null 2>&1 || fail "down of a missing dir failed"
mkdir "$base/foreign"; touch "$base/foreign/precious"
"$cluster" down "$base/foreign" >/dev/null 2>&1 && fail "down accepted a foreign directory"
[[ -f $base/foreign/precious ]] || fail "down deleted a foreign directory"
rm -rf -- "$base/foreign"

home_kube_after=$( [[ -e $HOME/.kube ]] && echo yes || echo no )
[[ $home_kube_before == "$home_kube_after" ]] || fail "\$HOME/.kube was created"

echo "PASS: cluster lifecycle"

#!/usr/bin/env bash
# gpuready-manager on the real control plane (gr_cluster fixture): the first
# instance wins the Lease 240fe9c6.nvidia.com and reports ready, a second
# instance stays a follower, SIGKILL of the first hands the lease to the
# second, SIGTERM of the second exits 0 and releases the lease.
#
# Timings: lease 6s / renew 4s / retry 1s, so a takeover is due about 6 s
# after the last renewal. The waits allow far more (GR_WAIT_S, default
# 180 s) so a loaded 2-core machine does not fail the test; only "never"
# fails. The observed takeover time is printed, not asserted.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../harness/gr_harness.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/../harness/gr_harness.sh"
gr_skip_if_disabled
MGR=${1:?usage: test_leader.sh PATH-TO-gpuready-manager}
WAIT_S=${GR_WAIT_S:-180}
LEASE=240fe9c6.nvidia.com
gr_test_begin manager-leader

WORK=$(mktemp -d)
PID_A='' PID_B=''
cleanup() {
  local p
  for p in $PID_A $PID_B; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap 'rc=$?; if ((rc != 0 && rc != 77)); then for f in "$WORK"/*.log; do [[ -f $f ]] && { echo "--- $f"; tail -n 40 "$f"; }; done; fi; cleanup; _gr_test_end $rc' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { # wait_for DESCRIPTION COMMAND...
  local desc=$1 deadline=$((SECONDS + WAIT_S))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || fail "no $desc within ${WAIT_S}s"
    sleep 0.5
  done
}
holder() { gr_kubectl -n "$GR_NS" get lease "$LEASE" -o 'jsonpath={.spec.holderIdentity}' 2>/dev/null || true; }
holder_is() { local h; h=$(holder); [[ $h == "$1"_* ]]; }
holder_empty() { [[ -z $(holder) ]]; }
code() { curl -s -o /dev/null -m 10 -w '%{http_code}' "http://127.0.0.1:$1$2" || true; }
ready() { [[ $(code "$1" /readyz) == 200 ]]; }
leader_gauge() { curl -s -m 10 "http://127.0.0.1:$1/metrics" | sed -n "s/^leader_election_master_status{name=\"$LEASE\"} //p"; }
gauge_is() { [[ $(leader_gauge "$1") == "$2" ]]; }

start() { # start NAME PROBE-PORT METRICS-PORT -> sets STARTED_PID
  POD_NAME=$1 "$MGR" --kubeconfig "$GR_KUBECONFIG_ADMIN" --leader-elect \
    --leader-election-namespace "$GR_NS" \
    --health-probe-bind-address "127.0.0.1:$2" --metrics-bind-address "127.0.0.1:$3" \
    --leader-elect-lease-duration 6s --leader-elect-renew-deadline 4s \
    --leader-elect-retry-period 1s >"$WORK/$1.log" 2>&1 &
  STARTED_PID=$!
}

PA=$(free_port) MA=$(free_port) PB=$(free_port) MB=$(free_port)

# 1. The first instance wins the lease and turns ready.
start mgr-a "$PA" "$MA"
PID_A=$STARTED_PID
wait_for "/healthz 200 from mgr-a" eval '[[ $(code "$PA" /healthz) == 200 ]]'
wait_for "lease held by mgr-a" holder_is mgr-a
wait_for "/readyz 200 from mgr-a" ready "$PA"
wait_for "leader gauge 1 on mgr-a" gauge_is "$MA" 1
echo "mgr-a leads: $(holder)"

# 2. A second instance knows the leader (ready) but does not lead.
start mgr-b "$PB" "$MB"
PID_B=$STARTED_PID
wait_for "/readyz 200 from mgr-b" ready "$PB"
for _ in 1 2 3 4 5; do # several retry periods: still a follower
  sleep 1
  holder_is mgr-a || fail "mgr-b took the lease from a live leader: $(holder)"
  gauge_is "$MB" 0 || fail "mgr-b reports leader_election_master_status $(leader_gauge "$MB")"
done
kill -0 "$PID_B" || fail "mgr-b exited"

# 3. SIGKILL the leader: no release, the follower takes over after expiry.
kill -KILL "$PID_A"
wait "$PID_A" 2>/dev/null || true
PID_A=''
t0=$SECONDS
wait_for "lease takeover by mgr-b" holder_is mgr-b
echo "takeover after SIGKILL: $((SECONDS - t0)) s (lease duration 6 s)"
wait_for "leader gauge 1 on mgr-b" gauge_is "$MB" 1
ready "$PB" || fail "mgr-b not ready after taking over"

# 4. SIGTERM: clean exit 0, lease released.
kill -TERM "$PID_B"
rc=0
wait "$PID_B" || rc=$?
PID_B=''
((rc == 0)) || fail "mgr-b exited $rc after SIGTERM"
holder_empty || fail "lease still held after a clean stop: $(holder)"
grep -q '"manager stopped"' "$WORK/mgr-b.log" || fail "no 'manager stopped' log line"
echo "PASS: manager_leader_integration"

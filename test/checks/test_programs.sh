#!/usr/bin/env bash
# test_programs.sh BINDIR — the three check programs end to end with the GPU
# test backend (GR_GPU_BACKEND=test) and the real gRPC peer of the health
# issue (test/health/peer.js). Every documented exit code and event path;
# checklist IDs are named next to the assertions.
set -u
BIN=$1
SRC=${GR_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v node >/dev/null || { echo "SKIP: node not installed (scripts/install-deps)"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed (scripts/install-deps)"; exit 77; }
[ -d "$SRC/test/node/node_modules/@grpc/grpc-js" ] || { echo "SKIP: test/node/node_modules missing (scripts/install-deps)"; exit 77; }

W=$(mktemp -d /tmp/gr-checks-XXXXXX)
PEER_PID=
NETNS=
cleanup() {
  [ -n "$PEER_PID" ] && kill "$PEER_PID" 2>/dev/null
  # The two-namespace case: never leave its netns or veth behind, also when a
  # check fails or the test is interrupted.
  if [ -n "$NETNS" ]; then
    ip link del "grv0-$$" 2>/dev/null
    ip netns del "$NETNS" 2>/dev/null
  fi
  rm -rf "$W"
}
trap cleanup EXIT
FAILS=0
N=0
fail() { echo "FAIL [$CASE]: $*"; FAILS=$((FAILS + 1)); }
ok() { N=$((N + 1)); }
check() { if eval "$1"; then ok; else fail "$2"; fi; }

# start_peer [responses-json]: a gRPC platform connector on a unix socket.
start_peer() {
  [ -n "$PEER_PID" ] && kill "$PEER_PID" 2>/dev/null && wait "$PEER_PID" 2>/dev/null
  SOCK=$W/peer-$RANDOM.sock; REC=$W/rec-$RANDOM.jsonl; : >"$REC"
  local extra=""
  [ -n "${1:-}" ] && extra=",\"responses\":$1"
  echo "{\"proto\":\"$SRC/src/health/proto/health_event.proto\",\"listen\":\"unix:$SOCK\",\"records\":\"$REC\"$extra}" >"$W/peer.json"
  node "$SRC/test/health/peer.js" "$W/peer.json" >"$W/peer.out" 2>"$W/peer.err" &
  PEER_PID=$!
  for _ in $(seq 1 100); do grep -q ready "$W/peer.out" 2>/dev/null && return 0; sleep 0.1; done
  echo "peer did not start"; cat "$W/peer.err"; exit 1
}
events() { jq -c '.request.events[0]' "$REC"; }
nevents() { wc -l <"$REC" | tr -d ' '; }
ev() { jq -r ".request.events[0]$1" "$REC" | sed -n "${2:-1}p"; }

# run PROG [VAR=value ...]: the common env plus overrides; sets RC, LOG.
run() {
  local prog=$1; shift
  LOG=$W/$prog-$RANDOM.log; GLOG=$W/gpu-$RANDOM.jsonl; : >"$GLOG"
  env -i PATH="$PATH" NODE_NAME=node-a PLATFORM_CONNECTOR_SOCKET="unix://$SOCK" \
    GR_GPU_BACKEND=test GR_GPU_SCENARIO="$W/scn.json" GR_GPU_TEST_LOG="$GLOG" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" "$@" \
    "$BIN/$prog" 2>"$LOG"
  RC=$?
}
scenario() { cat >"$W/scn.json"; }

# ------------------------------------------------------------------ loopback
L=preflight-nccl-loopback
CASE="loopback pass (PF-226, PF-59, PF-60)"
start_peer; scenario <<<'{"cuda":{"devices":8},"nccl":{"algbw_gbps":100}}'
run $L
check '[ $RC = 0 ]' "exit $RC, want 0: $(tail -3 $LOG)"
check '[ "$(nevents)" = 1 ]' "want 1 event"
check '[ "$(ev .message)" = "NCCL all-reduce bus bandwidth 175.00 GB/s meets threshold 150.00 GB/s" ]' "message: $(ev .message)"
check '[ "$(ev .agent)" = preflight-nccl-loopback ] && [ "$(ev .checkName)" = NCCLLoopbackTest ] && [ "$(ev .componentClass)" = Node ]' "identity"
check '[ "$(ev .isHealthy)" = true ] && [ "$(ev .isFatal)" = false ] && [ "$(ev .recommendedAction)" = NONE ]' "healthy"
check '[ "$(jq -r "select(.call==\"nccl_all_reduce\").bytes" $GLOG | head -1)" = 268435456 ]' "TEST_SIZE_MB default 256 MiB"
check '[ "$(jq -r "select(.call==\"nccl_comm_init_all\").ndev" $GLOG)" = 8 ]' "all GPUs in one communicator set (PF-58)"
check '[ "$(jq -r "select(.call==\"nccl_all_reduce\")" $GLOG | jq -s length)" = 25 ]' "5 warm-up + 20 timed iterations"
check 'grep -q "\"busbw_gbps\":175" $LOG && grep -q "\"algbw_gbps\":100" $LOG' "algbw/busbw logged"

CASE="loopback below threshold (PF-227)"
start_peer; scenario <<<'{"cuda":{"devices":8},"nccl":{"algbw_gbps":50}}'
run $L TEST_SIZE_MB=1
check '[ $RC = 1 ]' "exit $RC, want 1"
check '[ "$(ev .message)" = "NCCL all-reduce bus bandwidth 87.50 GB/s is below threshold 150.00 GB/s" ]' "message: $(ev .message)"
check '[ "$(ev .errorCode[0])" = NCCL_BW_DEGRADED ] && [ "$(ev .isFatal)" = true ] && [ "$(ev .recommendedAction)" = CONTACT_SUPPORT ]' "fatal degraded"
check '[ "$(jq -r "select(.call==\"nccl_all_reduce\").bytes" $GLOG | head -1)" = 1048576 ]' "TEST_SIZE_MB=1"

CASE="loopback threshold override"
start_peer; scenario <<<'{"cuda":{"devices":2},"nccl":{"algbw_gbps":20}}'
run $L TEST_SIZE_MB=1 BW_THRESHOLD_GBPS=15
check '[ $RC = 0 ] && [ "$(ev .message)" = "NCCL all-reduce bus bandwidth 20.00 GB/s meets threshold 15.00 GB/s" ]' "rc $RC $(ev .message)"

CASE="loopback skip (PF-62, PF-61)"
start_peer; scenario <<<'{"cuda":{"devices":8},"nccl":{"algbw_gbps":50}}'
run $L TEST_SIZE_MB=1 SKIP_BANDWIDTH_CHECK=true
check '[ $RC = 0 ]' "exit $RC"
check '[ "$(ev .message)" = "NCCL all-reduce completed successfully with bus bandwidth 87.50 GB/s (threshold check skipped)" ]' "$(ev .message)"
run $L TEST_SIZE_MB=1 SKIP_BANDWIDTH_CHECK=bogus
check '[ $RC = 1 ] && grep -q "not a boolean" $LOG' "invalid bool: warn and treat as false, rc $RC"

CASE="loopback benchmark did not run (PF-228)"
start_peer; scenario <<<'{"cuda":{"devices":2},"nccl":{"init_error":2}}'
run $L TEST_SIZE_MB=1
check '[ $RC = 1 ]' "exit $RC"
check '[ "$(ev .errorCode[0])" = NCCL_TEST_ERROR ] && [ "$(ev .isFatal)" = true ]' "NCCL_TEST_ERROR"
check '[[ "$(ev .message)" == "NCCL loopback test failed: ncclCommInitAll failed: "* ]]' "$(ev .message)"

CASE="loopback configuration errors, no event (PF-229, PF-243, PF-187)"
start_peer; scenario <<<'{"cuda":{"devices":2}}'
run $L TEST_SIZE_MB=abc
check '[ $RC = 2 ] && grep -q "Configuration error" $LOG && grep -q TEST_SIZE_MB $LOG' "TEST_SIZE_MB rc $RC"
run $L BW_THRESHOLD_GBPS=-3
check '[ $RC = 2 ]' "BW_THRESHOLD_GBPS rc $RC"
run $L PROCESSING_STRATEGY=NOPE
check '[ $RC = 2 ] && grep -q "Invalid PROCESSING_STRATEGY: NOPE" $LOG' "strategy rc $RC"
run $L NODE_NAME=
check '[ $RC = 2 ] && grep -q "NODE_NAME is required" $LOG' "NODE_NAME rc $RC"
run $L HEALTH_PUBLISH_TARGET=pc.example:50051
check '[ $RC = 2 ] && grep -q "HEALTH_PUBLISH_TOKEN_PATH is required" $LOG' "direct mode rc $RC"
scenario <<<'{"missing":["nccl"],"cuda":{"devices":2}}'
run $L
check '[ $RC = 2 ] && grep -q "cannot load libnccl.so.2" $LOG' "missing NCCL rc $RC"
scenario <<<'{"cuda":{"devices":0}}'
run $L
check '[ $RC = 2 ] && grep -q "no GPU visible" $LOG' "no GPU rc $RC"
check '[ "$(nevents)" = 0 ]' "no event on configuration errors"
# The real backend on a machine without a driver: a clear configuration
# error, never a crash.
run $L GR_GPU_BACKEND=real
check '[ $RC = 2 ] && grep -q "cannot load libcuda.so.1" $LOG' "real backend without libcuda: rc $RC $(tail -1 $LOG)"

CASE="loopback STORE_ONLY (PF-244, PF-245, PF-246, PF-192)"
start_peer; scenario <<<'{"cuda":{"devices":8},"nccl":{"algbw_gbps":50}}'
run $L TEST_SIZE_MB=1 PROCESSING_STRATEGY=STORE_ONLY
check '[ $RC = 0 ]' "exit $RC"
check '[ "$(ev .processingStrategy)" = STORE_ONLY ] && [ "$(ev .isHealthy)" = false ]' "event recorded"
check 'grep -q "Check failed (STORE_ONLY — not blocking pod)" $LOG' "STORE_ONLY log line"
run $L TEST_SIZE_MB=abc PROCESSING_STRATEGY=STORE_ONLY
check '[ $RC = 2 ]' "config error keeps its code under STORE_ONLY (PF-193): $RC"

CASE="loopback event not delivered (PF-230, PF-189)"
start_peer '[{"code":"INVALID_ARGUMENT","message":"no"}]'; scenario <<<'{"cuda":{"devices":8},"nccl":{"algbw_gbps":100}}'
run $L TEST_SIZE_MB=1
check '[ $RC = 3 ]' "exit $RC"


# --------------------------------------------------------------- dcgm-diag
D=preflight-dcgm-diag
base_dcgm='"nvml":{"uuids":["GPU-bbb"]},"dcgm":{"reachable":["he-1:5555"],"gpus":[{"id":0,"uuid":"GPU-aaa"},{"id":3,"uuid":"GPU-bbb"}]'
CASE="dcgm pass, GPUs matched by UUID (PF-48, PF-221, PF-250, PF-49)"
start_peer
scenario <<EOF2
{$base_dcgm,"attempts":[{"results":[
 {"test":"pcie","gpu":3,"status":"pass"},{"test":"sm_stress","gpu":3,"status":"pass"},
 {"test":"memory","gpu":3,"status":"skip"},{"test":"pcie","gpu":0,"status":"fail","code":14,"msg":"other pod's GPU"}]}]}}
EOF2
run $D DCGM_HOSTENGINE_ADDR=he-1:5555
check '[ $RC = 0 ]' "exit $RC $(tail -2 $LOG)"
check '[ "$(jq -r "select(.call==\"dcgm_group_add\").gpu" $GLOG)" = 3 ]' "hostengine GPU 3 (UUID GPU-bbb), not container index 0"
check '[ "$(jq -r "select(.call==\"dcgm_run_diag\").level" $GLOG)" = 2 ]' "DCGM_DIAG_LEVEL default 2"
check '[ "$(nevents)" = 2 ]' "one event per pass/warn/fail result of our GPU, got $(nevents)"
check '[ "$(ev .checkName 1)" = DcgmDiagnosticPcie ] && [ "$(ev .checkName 2)" = DcgmDiagnosticSmStress ]' "check names"
check '[ "$(ev .entitiesImpacted[0].entityType 1)" = GPU_UUID ] && [ "$(ev .entitiesImpacted[0].entityValue 1)" = GPU-bbb ]' "entity"
check '[ "$(ev .message 1)" = "Test passed" ] && [ "$(ev .componentClass 1)" = GPU ] && [ "$(ev .agent 1)" = preflight-dcgm-diag ]' "pass event"
check '[ "$(jq -r "select(.call==\"dcgm_group_destroy\")" $GLOG | jq -s length)" = 1 ]' "group destroyed"

CASE="dcgm fatal finding (PF-223, PF-239)"
start_peer
scenario <<EOF2
{$base_dcgm,"attempts":[{"results":[{"test":"nvlink-bandwidth","gpu":3,"status":"fail","code":14,"msg":"NVLink 2 is down"}]}]}}
EOF2
run $D DCGM_HOSTENGINE_ADDR=he-1:5555 DCGM_DIAG_LEVEL=3
check '[ $RC = 1 ]' "exit $RC"
check '[ "$(ev .checkName)" = DcgmDiagnosticNvlinkBandwidth ] && [ "$(ev .isFatal)" = true ] && [ "$(ev .recommendedAction)" = RESTART_VM ] && [ "$(ev .errorCode[0])" = DCGM_FR_NVLINK_DOWN ]' "$(events)"
check '[ "$(ev .message)" = "NVLink 2 is down" ]' "DCGM message"
check '[ "$(jq -r "select(.call==\"dcgm_run_diag\").level" $GLOG)" = 3 ]' "level 3"
# The diag level is its own key; the log level stays the log level (issue 14).
check 'grep "\"diagnostic finished\"" $LOG | jq -e "select(.level == \"ERROR\" and .diag_level == 3)" >/dev/null' "diagnostic finished line: $(grep '"diagnostic finished"' $LOG)"

CASE="dcgm non-fatal findings exit 0 (PF-251, PF-252, PF-255, PF-222)"
start_peer
scenario <<EOF2
{$base_dcgm,"attempts":[{"results":[{"test":"diagnostic","gpu":3,"status":"fail","code":101,"msg":"XID 31"},
 {"test":"pcie","gpu":3,"status":"warn","code":3,"msg":"replays"}]}]}}
EOF2
run $D DCGM_HOSTENGINE_ADDR=he-1:5555
check '[ $RC = 0 ]' "exit $RC"
check '[ "$(ev .errorCode[0] 1)" = DCGM_FR_XID_ERROR ] && [ "$(ev .recommendedAction 1)" = NONE ] && [ "$(ev .isFatal 1)" = false ] && [ "$(ev .isHealthy 1)" = false ]' "XID non-fatal"
check '[ "$(ev .isFatal 2)" = false ] && [ "$(ev .recommendedAction 2)" = RESTART_BM ]' "warn: not fatal, still an action"

CASE="dcgm mapping table override"
start_peer
printf 'DCGM_FR_XID_ERROR,COMPONENT_RESET\nDCGM_FR_FOO,NOT_AN_ACTION\n' >"$W/map.csv"
run $D DCGM_HOSTENGINE_ADDR=he-1:5555 DCGM_ERROR_MAPPING_PATH="$W/map.csv"
check '[ $RC = 1 ] && [ "$(ev .recommendedAction 1)" = COMPONENT_RESET ] && [ "$(ev .isFatal 1)" = true ]' "rc $RC"
run $D DCGM_HOSTENGINE_ADDR=he-1:5555 DCGM_ERROR_MAPPING_PATH="$W/nope.csv"
check '[ $RC = 1 ] && grep -q "Configuration error" $LOG' "unreadable table is a configuration error"

CASE="dcgm DCGM_ST retry then non-fatal event (PF-53, PF-54, PF-55, PF-56, PF-57)"
start_peer
scenario <<EOF2
{$base_dcgm,"attempts":[{"status":-34}]}}
EOF2
run $D DCGM_HOSTENGINE_ADDR=he-1:5555 DCGM_DIAG_STATUS_RETRY_MAX_ATTEMPTS=3 DCGM_DIAG_STATUS_RETRY_INTERVAL_SECONDS=0.05
check '[ $RC = 0 ]' "exit $RC"
check '[ "$(jq -r "select(.call==\"dcgm_run_diag\")" $GLOG | jq -s length)" = 3 ]' "3 attempts"
check '[ "$(nevents)" = 1 ] && [ "$(ev .errorCode[0])" = DCGM_ST_IN_USE ] && [ "$(ev .isFatal)" = false ] && [ "$(ev .isHealthy)" = false ] && [ "$(ev .recommendedAction)" = NONE ]' "$(events)"
check '[ "$(ev .message)" = "DCGM diagnostic returned DCGM_ST_IN_USE after 3 attempts; diagnostic did not complete" ] && [ "$(ev .checkName)" = DcgmDiagnostic ]' "$(ev .message)"

CASE="dcgm retry then success"
start_peer
scenario <<EOF2
{$base_dcgm,"attempts":[{"status":-34},{"results":[{"test":"pcie","gpu":3,"status":"pass"}]}]}}
EOF2
run $D DCGM_HOSTENGINE_ADDR=he-1:5555 DCGM_DIAG_STATUS_RETRY_INTERVAL_SECONDS=0.05
check '[ $RC = 0 ] && [ "$(nevents)" = 1 ] && [ "$(ev .checkName)" = DcgmDiagnosticPcie ]' "rc $RC"
check '[ "$(jq -r "select(.call==\"dcgm_run_diag\")" $GLOG | jq -s length)" = 2 ]' "2 attempts"

CASE="dcgm stale diagnostic stopped"
start_peer
scenario <<EOF2
{$base_dcgm,"attempts":[{"status":-39},{"status":-39},{"results":[{"test":"pcie","gpu":3,"status":"pass"}]}]}}
EOF2
run $D DCGM_HOSTENGINE_ADDR=he-1:5555 DCGM_DIAG_STATUS_RETRY_MAX_ATTEMPTS=2 DCGM_DIAG_STATUS_RETRY_INTERVAL_SECONDS=0.05
check '[ $RC = 0 ] && [ "$(ev .checkName)" = DcgmDiagnosticPcie ]' "rc $RC"
check '[ "$(jq -r "select(.call==\"dcgm_stop_diag\")" $GLOG | jq -s length)" = 1 ]' "stop_diag called once"

CASE="dcgm hostengine list tried in order, unreachable (PF-52, PF-224)"
start_peer
scenario <<EOF2
{"nvml":{"uuids":["GPU-bbb"]},"dcgm":{"reachable":["he-2:5555"],"gpus":[{"id":3,"uuid":"GPU-bbb"}],"attempts":[{"results":[{"test":"pcie","gpu":3,"status":"pass"}]}]}}
EOF2
run $D DCGM_HOSTENGINE_ADDR="he-1:5555, he-2:5555"
check '[ $RC = 0 ] && [ "$(jq -r "select(.call==\"dcgm_connect\").addr" $GLOG | tr "\n" " ")" = "he-1:5555 he-2:5555 " ]' "rc $RC order"
run $D
check '[ "$(jq -r "select(.call==\"dcgm_connect\").addr" $GLOG | tr "\n" " ")" = "nvidia-dcgm-dra.gpu-operator.svc:5555 nvidia-dcgm.gpu-operator.svc:5555 " ]' "default list (PF-51)"
start_peer
run $D DCGM_HOSTENGINE_ADDR=he-9:5555
check '[ $RC = 1 ] && [ "$(ev .errorCode[0])" = DCGM_HOSTENGINE_UNREACHABLE ] && [ "$(ev .isFatal)" = false ]' "unreachable rc $RC"

CASE="dcgm GPU not known to the hostengine; no GPUs"
start_peer
scenario <<<'{"nvml":{"uuids":["GPU-zzz"]},"dcgm":{"reachable":["he:1"],"gpus":[{"id":0,"uuid":"GPU-aaa"}]}}'
run $D DCGM_HOSTENGINE_ADDR=he:1
check '[ $RC = 1 ] && [[ "$(ev .message)" == "GPU GPU-zzz is not managed by the DCGM hostengine at he:1" ]]' "rc $RC $(ev .message)"
scenario <<<'{"nvml":{"uuids":[]},"dcgm":{"reachable":["he:1"]}}'
start_peer
run $D DCGM_HOSTENGINE_ADDR=he:1
check '[ $RC = 1 ] && [ "$(ev .message)" = "No GPUs allocated to this container" ]' "rc $RC"

CASE="dcgm configuration errors exit 1, no event (PF-225, PF-242, PF-186)"
start_peer
run $D DCGM_DIAG_LEVEL=7
check '[ $RC = 1 ] && grep -q "DCGM_DIAG_LEVEL must be 1-4, got 7" $LOG' "rc $RC"
run $D DCGM_DIAG_STATUS_RETRY_MAX_ATTEMPTS=0
check '[ $RC = 1 ] && grep -q "DCGM_DIAG_STATUS_RETRY_MAX_ATTEMPTS" $LOG' "rc $RC"
run $D HEALTH_PUBLISH_TARGET=x:1 HEALTH_PUBLISH_TOKEN_PATH=/t
check '[ $RC = 1 ] && grep -q "HEALTH_PUBLISH_TLS_CA_FILE is required" $LOG' "rc $RC"
scenario <<<'{"missing":["dcgm"]}'
run $D
check '[ $RC = 1 ] && grep -q "cannot load libdcgm.so.4" $LOG' "rc $RC"
check '[ "$(nevents)" = 0 ]' "no events"

CASE="dcgm STORE_ONLY (PF-245)"
start_peer
scenario <<EOF2
{$base_dcgm,"attempts":[{"results":[{"test":"memory","gpu":3,"status":"fail","code":4,"msg":"DBE"}]}]}}
EOF2
run $D DCGM_HOSTENGINE_ADDR=he-1:5555 PROCESSING_STRATEGY=STORE_ONLY
check '[ $RC = 0 ] && [ "$(ev .isFatal)" = true ] && grep -q "STORE_ONLY" $LOG' "rc $RC"

CASE="dcgm event not delivered keeps the verdict (PF-191)"
start_peer '[{"code":"PERMISSION_DENIED"}]'
run $D DCGM_HOSTENGINE_ADDR=he-1:5555
check '[ $RC = 1 ]' "rc $RC"

CASE="dcgm SIGTERM stops the diagnostic"
start_peer
scenario <<EOF2
{$base_dcgm,"attempts":[{"block":true}]}}
EOF2
LOG=$W/sig.log; GLOG=$W/sig.jsonl; : >"$GLOG"
env -i PATH="$PATH" NODE_NAME=n PLATFORM_CONNECTOR_SOCKET="unix://$SOCK" GR_GPU_BACKEND=test \
  GR_GPU_SCENARIO="$W/scn.json" GR_GPU_TEST_LOG="$GLOG" DCGM_HOSTENGINE_ADDR=he-1:5555 \
  "$BIN/$D" 2>"$LOG" &
P=$!
for _ in $(seq 1 100); do grep -q dcgm_run_diag "$GLOG" && break; sleep 0.05; done
kill -TERM $P; wait $P; RC=$?
check '[ $RC = 143 ] && grep -q dcgm_stop_diag $GLOG' "rc $RC, stop_diag: $(cat $GLOG | tr '\n' ' ')"

# ----------------------------------------------------------- nccl-allreduce
A=preflight-nccl-allreduce
# gang_dir DIR EXPECTED PEERS [MASTER] [PORT]: a kubelet-style ConfigMap
# volume: keys are symlinks into ..data, which points at a timestamped dir.
gang_write() {
  local dir=$1 exp=$2 peers=$3 master=${4-127.0.0.1} port=${5-29500}
  mkdir -p "$dir"
  local ts=..$(date +%s%N)
  mkdir "$dir/$ts"
  printf '%s' "$exp" >"$dir/$ts/expected_count"
  printf '%b' "$peers" >"$dir/$ts/peers"
  printf '%s' "$master" >"$dir/$ts/master_addr"
  printf '%s' "$port" >"$dir/$ts/master_port"
  printf '%s' "gang-x" >"$dir/$ts/gang_id"
  ln -sfn "$ts" "$dir/..data_tmp" && mv -T "$dir/..data_tmp" "$dir/..data"
  for k in expected_count peers master_addr master_port gang_id; do
    [ -L "$dir/$k" ] || ln -s "..data/$k" "$dir/$k"
  done
  # The kubelet deletes the old version after the swap.
  for old in "$dir"/..[0-9]*; do [ "$(basename "$old")" = "$ts" ] || rm -rf "$old"; done
}
freeport() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)); }

CASE="allreduce without gang environment (PF-19, PF-235, PF-18)"
start_peer; scenario <<<'{"cuda":{"devices":1}}'
run $A
check '[ $RC = 2 ] && [ "$(ev .errorCode[0])" = NCCL_GANG_CONFIG_ERROR ] && [ "$(ev .isFatal)" = false ] && [ "$(ev .recommendedAction)" = NONE ]' "rc $RC $(events)"

CASE="allreduce gang timeout (PF-236, PF-240, PF-249)"
start_peer
gang_write "$W/g1" 2 'pod-0;127.0.0.1;0\n'
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g1" GANG_TIMEOUT_SECONDS=1 PROCESSING_STRATEGY=STORE_ONLY
check '[ $RC = 3 ]' "rc $RC"
check '[ "$(ev .message)" = "Gang formation timeout after 1s" ] && [ "$(ev .errorCode[0])" = NCCL_GANG_TIMEOUT ] && [ "$(ev .isFatal)" = false ]' "$(events)"
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/missing" GANG_TIMEOUT_SECONDS=1
check '[ $RC = 3 ]' "missing ConfigMap: keep waiting, then time out: rc $RC"

CASE="allreduce not in peers, master_addr missing, check-name mismatch (PF-36, PF-248)"
start_peer
gang_write "$W/g2" 2 'pod-0;127.0.0.1;0\npod-1;127.0.0.2;1\n'
run $A POD_NAME=pod-9 GANG_CONFIG_DIR="$W/g2" GANG_TIMEOUT_SECONDS=5
check '[ $RC = 2 ] && [ "$(ev .message)" = "Pod pod-9 not found in peers list" ]' "rc $RC $(ev .message)"
start_peer
gang_write "$W/g3" 2 'pod-0;127.0.0.1;0\npod-1;127.0.0.2;1\n' ""
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g3" GANG_TIMEOUT_SECONDS=1 PROCESSING_STRATEGY=STORE_ONLY
check '[ $RC = 2 ] && [ "$(ev .message)" = "Master address not set in ConfigMap" ]' "rc $RC $(ev .message)"
start_peer
gang_write "$W/g4" 2 'pod-0;127.0.0.1;0;preflight-nccl-allreduce,preflight-dcgm-diag\npod-1;127.0.0.2;1;preflight-nccl-allreduce\n'
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g4" GANG_TIMEOUT_SECONDS=5
check '[ $RC = 2 ] && [ "$(ev .message)" = "Check name mismatch across gang: pod-0=[preflight-dcgm-diag,preflight-nccl-allreduce]; pod-1=[preflight-nccl-allreduce]" ]' "rc $RC $(ev .message)"
gang_write "$W/g5" 1 'pod-0;127.0.0.1;0\n' 127.0.0.1 99999
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g5" GANG_TIMEOUT_SECONDS=5
check '[ $RC = 2 ]' "bad master_port rc $RC"

CASE="allreduce configuration errors (PF-188, sizes)"
start_peer
gang_write "$W/g6" 1 'pod-0;127.0.0.1;0\n'
for bad in "MESSAGE_SIZES=4X" "MESSAGE_SIZES=4" "MESSAGE_SIZES=,," "BENCHMARK_ITERS=0" "WARMUP_ITERS=-1" "NCCL_REDUCE_OP=mean" "HEALTH_PUBLISH_TARGET=h:1"; do
  run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g6" "$bad"
  check '[ $RC = 2 ] && grep -q "Configuration error" $LOG' "$bad: rc $RC"
done
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g6" MESSAGE_SIZES=4X
check 'grep -q "Invalid size format: 4X. Use G/GB or M/MB suffix." $LOG' "size message"
check '[ "$(nevents)" = 0 ]' "no events"

PORT=$(freeport)
CASE="allreduce gang of one: pass, sizes, op (PF-231, PF-68, PF-72, PF-69, PF-70)"
start_peer
scenario <<<'{"cuda":{"devices":2},"nccl":{"algbw_gbps":150}}'
gang_write "$W/g7" 1 'pod-0;127.0.0.1;0\n' 127.0.0.1 "$PORT"
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g7" MESSAGE_SIZES="1M, 2MB" NCCL_REDUCE_OP=MAX BENCHMARK_ITERS=3 WARMUP_ITERS=1
check '[ $RC = 0 ]' "rc $RC $(tail -3 $LOG)"
check '[ "$(ev .message)" = "NCCL all-reduce bus bandwidth 150.00 GB/s meets threshold 100.00 GB/s" ] && [ "$(ev .checkName)" = NCCLAllReduceTest ]' "$(ev .message)"
check '[ "$(jq -r "select(.call==\"nccl_all_reduce\").bytes" $GLOG | sort -u | tr "\n" " ")" = "1048576 2097152 " ]' "sizes"
check '[ "$(jq -r "select(.call==\"nccl_all_reduce\").op" $GLOG | sort -u)" = max ]' "op max"
check '[ "$(jq -r "select(.call==\"nccl_all_reduce\" and .bytes==1048576)" $GLOG | jq -s length)" = 4 ]' "1 warm-up + 3 timed per size"

CASE="allreduce threshold on the minimum across sizes (PF-232), skip (PF-74)"
start_peer
scenario <<<'{"cuda":{"devices":2},"nccl":{"algbw_gbps":150,"algbw_gbps_by_mb":{"2":40}}}'
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g7" MESSAGE_SIZES=1M,2M BENCHMARK_ITERS=2 WARMUP_ITERS=0
check '[ $RC = 1 ] && [ "$(ev .message)" = "NCCL all-reduce bus bandwidth 40.00 GB/s is below threshold 100.00 GB/s" ] && [ "$(ev .errorCode[0])" = NCCL_ALLREDUCE_BW_DEGRADED ] && [ "$(ev .isFatal)" = true ]' "rc $RC $(ev .message)"
start_peer
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g7" MESSAGE_SIZES=1M,2M BENCHMARK_ITERS=2 SKIP_BANDWIDTH_CHECK=yes
check '[ $RC = 0 ] && [ "$(ev .isHealthy)" = true ]' "skip rc $RC"
start_peer
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g7" MESSAGE_SIZES=1M,2M BENCHMARK_ITERS=2 PROCESSING_STRATEGY=STORE_ONLY
check '[ $RC = 0 ] && [ "$(ev .isHealthy)" = false ] && grep -q "not blocking pod" $LOG' "STORE_ONLY rc $RC"
start_peer '[{"code":"INVALID_ARGUMENT"}]'
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g7" MESSAGE_SIZES=1M BENCHMARK_ITERS=2
check '[ $RC = 4 ]' "not delivered (PF-237, PF-190): rc $RC"

CASE="allreduce NCCL init failure (PF-234), benchmark failure"
start_peer
scenario <<<'{"cuda":{"devices":2},"nccl":{"init_error":2}}'
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g7" MESSAGE_SIZES=1M
check '[ $RC = 1 ] && [ "$(ev .errorCode[0])" = NCCL_ALLREDUCE_INIT_FAILED ] && [[ "$(ev .message)" == "Failed to initialize NCCL: "* ]]' "rc $RC $(ev .message)"
start_peer
scenario <<<'{"cuda":{"devices":2},"nccl":{"allreduce_error":6}}'
run $A POD_NAME=pod-0 GANG_CONFIG_DIR="$W/g7" MESSAGE_SIZES=1M
check '[ $RC = 1 ] && [ "$(ev .errorCode[0])" = NCCL_ALLREDUCE_TIMEOUT ] && [[ "$(ev .message)" == "NCCL all-reduce benchmark failed: "* ]]' "rc $RC $(ev .message)"

CASE="allreduce three nodes over TCP on 127.0.0.x, ..data swap (PF-64, PF-145, PF-146)"
start_peer
PORT=$(freeport)
mkdir -p "$W/rdv"
scenario <<EOF2
{"cuda":{"devices":2},"nccl":{"algbw_gbps":60,"rendezvous_dir":"$W/rdv"}}
EOF2
G=$W/g8
# Start with an incomplete gang (one peer, no master yet); the controller
# completes it later with a ..data swap.
gang_write "$G" 3 'pod-0;127.0.0.1;0\n' ""
GLOG=$W/multi.jsonl; : >"$GLOG"
PIDS=()
for i in 0 1 2; do
  env -i PATH="$PATH" NODE_NAME=node-$i PLATFORM_CONNECTOR_SOCKET="unix://$SOCK" \
    GR_GPU_BACKEND=test GR_GPU_SCENARIO="$W/scn.json" GR_GPU_TEST_LOG="$GLOG" \
    POD_NAME=pod-$i GANG_CONFIG_DIR="$G" GANG_TIMEOUT_SECONDS=30 MESSAGE_SIZES=4M \
    BENCHMARK_ITERS=2 WARMUP_ITERS=1 BW_THRESHOLD_GBPS=90 \
    "$BIN/$A" 2>"$W/node-$i.log" &
  PIDS+=($!)
done
sleep 1.2
gang_write "$G" 3 "pod-2;127.0.0.3;2;preflight-nccl-allreduce\npod-0;127.0.0.1;0;preflight-nccl-allreduce\npod-1;127.0.0.2;1;preflight-nccl-allreduce\n" 127.0.0.1 "$PORT"
RCS=""
for p in "${PIDS[@]}"; do wait "$p"; RCS="$RCS$? "; done
check '[ "$RCS" = "0 0 0 " ]' "exit codes $RCS; $(tail -2 $W/node-1.log)"
check '[ "$(jq -r "select(.call==\"nccl_comm_init_rank\") | \"\(.rank)/\(.nranks)\"" $GLOG | sort | tr "\n" " ")" = "0/6 1/6 2/6 3/6 4/6 5/6 " ]' "ranks = node_rank*2+local_rank"
check '[ "$(jq -r "select(.call==\"nccl_comm_init_rank\").id" $GLOG | sort -u | wc -l)" = 1 ]' "one ncclUniqueId for all six ranks"
check '[ "$(nevents)" = 1 ] && [ "$(ev .nodeName)" = node-0 ]' "only global rank 0 reports: $(nevents) events"
check '[ "$(ev .message)" = "NCCL all-reduce bus bandwidth 100.00 GB/s meets threshold 90.00 GB/s" ]' "busbw = 60 * 2*5/6: $(ev .message)"
check 'grep -q "\"node_rank\":2" $W/node-2.log' "node 2 rank from the peers list"

CASE="allreduce bootstrap refuses a node of another size (GPU count mismatch)"
start_peer
PORT=$(freeport)
scenario <<<'{"cuda":{"devices":2},"nccl":{"algbw_gbps":60}}'
echo '{"cuda":{"devices":1},"nccl":{"algbw_gbps":60}}' >"$W/scn1.json"
gang_write "$W/g9" 2 'pod-0;127.0.0.1;0\npod-1;127.0.0.2;1\n' 127.0.0.1 "$PORT"
common=(PATH="$PATH" PLATFORM_CONNECTOR_SOCKET="unix://$SOCK" GR_GPU_BACKEND=test GANG_CONFIG_DIR="$W/g9" MESSAGE_SIZES=1M BOOTSTRAP_TIMEOUT_SECONDS=10)
env -i "${common[@]}" NODE_NAME=node-0 POD_NAME=pod-0 GR_GPU_SCENARIO="$W/scn.json" "$BIN/$A" 2>"$W/m0.log" &
P0=$!
env -i "${common[@]}" NODE_NAME=node-1 POD_NAME=pod-1 GR_GPU_SCENARIO="$W/scn1.json" "$BIN/$A" 2>"$W/m1.log" &
P1=$!
wait $P0; R0=$?; wait $P1; R1=$?
check '[ $R0 = 1 ] && [ $R1 = 1 ]' "rc $R0 $R1"
check '[ "$(jq -r "select(.request.events[0].errorCode[0]==\"NCCL_ALLREDUCE_INIT_FAILED\")" $REC | jq -s length)" = 2 ]' "both nodes report the init failure: $(events)"
check 'grep -q "has 1 GPUs, rank 0 has 2" $W/m1.log' "the reason reaches node 1"

# Across two network namespaces (needs root and unshare): one node in a
# separate netns reachable over a veth pair.
CASE="allreduce across two network namespaces"
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && ip netns add grchk-$$ 2>/dev/null; then
  NS=grchk-$$
  NETNS=$NS
  ip link add grv0-$$ type veth peer name grv1-$$ && ip link set grv1-$$ netns $NS &&
  ip addr add 10.231.0.1/24 dev grv0-$$ && ip link set grv0-$$ up &&
  ip -n $NS addr add 10.231.0.2/24 dev grv1-$$ && ip -n $NS link set grv1-$$ up && ip -n $NS link set lo up
  start_peer
  PORT=$(freeport)
  rm -rf "$W/rdv2"; mkdir -p "$W/rdv2"
  echo "{\"cuda\":{\"devices\":1},\"nccl\":{\"algbw_gbps\":300,\"rendezvous_dir\":\"$W/rdv2\"}}" >"$W/scn2.json"
  gang_write "$W/g10" 2 'pod-0;10.231.0.1;0\npod-1;10.231.0.2;1\n' 10.231.0.1 "$PORT"
  common=(PATH="$PATH" PLATFORM_CONNECTOR_SOCKET="unix://$SOCK" GR_GPU_BACKEND=test GR_GPU_SCENARIO="$W/scn2.json" GANG_CONFIG_DIR="$W/g10" MESSAGE_SIZES=1M)
  env -i "${common[@]}" NODE_NAME=node-0 POD_NAME=pod-0 "$BIN/$A" 2>"$W/n0.log" &
  P0=$!
  ip netns exec $NS env -i "${common[@]}" NODE_NAME=node-1 POD_NAME=pod-1 "$BIN/$A" 2>"$W/n1.log" &
  P1=$!
  wait $P0; R0=$?; wait $P1; R1=$?
  check '[ $R0 = 0 ] && [ $R1 = 0 ] && [ "$(nevents)" = 1 ]' "rc $R0 $R1 $(tail -1 $W/n1.log)"
  ip link del grv0-$$ 2>/dev/null; ip netns del $NS && NETNS=
else
  echo "note: skipped the two-namespace case (needs root and ip netns)"
fi

echo "$N assertions passed, $FAILS failed"
[ "$FAILS" = 0 ]

#!/usr/bin/env bash
# test_gpu_check.sh BINDIR — scripts/gpu-check (the GPU validation run) end to
# end against the GPU test backend (GR_GPU_BACKEND=test) and the real gRPC
# peer, with prebuilt checks (GPU_CHECK_BIN): its exit status is the worst
# check result, it shows the checks' upper-case WARN/ERROR lines, and it
# counts GPUs without nvidia-smi (issue 14).
set -u
BIN=$1
SRC=${GR_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v node >/dev/null || { echo "SKIP: node not installed (scripts/install-deps)"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed (scripts/install-deps)"; exit 77; }
[ -d "$SRC/test/node/node_modules/@grpc/grpc-js" ] || { echo "SKIP: test/node/node_modules missing (scripts/install-deps)"; exit 77; }

W=$(mktemp -d /tmp/gr-gpu-check-XXXXXX)
trap 'rm -rf "$W"' EXIT
FAILS=0
fail() { echo "FAIL [$CASE]: $*"; FAILS=$((FAILS + 1)); }
check() { eval "$1" || fail "$2"; }

# Two GPUs as the driver lists them in /proc, and as device nodes.
mkdir -p "$W/proc/0000:01:00.0" "$W/proc/0000:02:00.0" "$W/dev" "$W/empty"
: >"$W/dev/nvidia0"; : >"$W/dev/nvidia1"; : >"$W/dev/nvidiactl"; : >"$W/dev/nvidia-uvm"
printf '#!/bin/sh\necho "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-a)"\n' >"$W/nvidia-smi"
chmod +x "$W/nvidia-smi"

dcgm='"nvml":{"uuids":["GPU-a"]},"dcgm":{"reachable":["127.0.0.1:5555"],"gpus":[{"id":0,"uuid":"GPU-a"}]'
PASS_SCN="{\"cuda\":{\"devices\":2},\"nccl\":{\"algbw_gbps\":200},$dcgm,\"attempts\":[{\"results\":[{\"test\":\"pcie\",\"gpu\":0,\"status\":\"pass\"}]}]}}"
FAIL_SCN="{\"cuda\":{\"devices\":2},\"nccl\":{\"algbw_gbps\":1},$dcgm,\"attempts\":[{\"results\":[{\"test\":\"nvlink-bandwidth\",\"gpu\":0,\"status\":\"fail\",\"code\":14,\"msg\":\"NVLink 2 is down\"}]}]}}"

# The gang-of-one bootstrap port: below the kernel's ephemeral range (where
# the outgoing connections of every other test pick theirs) and free now.
port() {
  local lo hi p i
  read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
  ((lo > 20000)) || lo=61000 # an unusual range: use the ports above it
  for ((i = 0; i < 50; i++)); do
    if ((lo == 61000)); then p=$((61000 + RANDOM % 4000)); else p=$((20000 + RANDOM % (lo - 20000))); fi
    python3 -c 'import socket,sys;s=socket.socket();s.bind(("127.0.0.1",int(sys.argv[1])))' "$p" 2>/dev/null &&
      { echo "$p"; return; }
  done
  echo "$p"
}
# run SCENARIO [VAR=value ...]: gpu-check with the test backend; sets RC, OUT.
# A bootstrap port taken between the choice and the bind is a property of
# the shared test machine, not of gpu-check: that run is repeated once.
run() {
  echo "$1" >"$W/scn.json"; shift
  local try
  for try in 1 2; do
    OUT=$W/out-$RANDOM.txt
    env GR_GPU_BACKEND=test GR_GPU_SCENARIO="$W/scn.json" GPU_CHECK_BIN="$BIN" \
      NVIDIA_SMI="$W/no-such-nvidia-smi" NVIDIA_GPUS_DIR="$W/proc" NVIDIA_DEV_DIR="$W/empty" \
      GPU_CHECK_MASTER_PORT="$(port)" TEST_SIZE_MB=1 MESSAGE_SIZES=1M \
      NODE_NAME=gpu-check-node GPU_CHECK_TIMEOUT=120 "$@" \
      bash "$SRC/scripts/gpu-check" >"$OUT" 2>&1
    RC=$?
    grep -q 'bootstrap: cannot listen on .*Address already in use' "$OUT" || break
  done
}
show() { sed 's/^/    | /' "$OUT"; }

CASE="every check passes"
run "$PASS_SCN"
check '[ $RC = 0 ]' "exit $RC, want 0"
check 'grep -q "^preflight-nccl-loopback: PASS (exit 0" $OUT && grep -q "^preflight-nccl-allreduce: PASS (exit 0" $OUT && grep -q "^preflight-dcgm-diag: PASS (exit 0" $OUT' "summary"
check 'grep -q "^gpu-check: exit 0 " $OUT' "last line"
check 'grep -q "note: $W/no-such-nvidia-smi not found" $OUT' "says nvidia-smi is missing"
check 'grep -q "^GPUs: 2 (counted from $W/proc)" $OUT' "GPU count from /proc/driver/nvidia/gpus"
check 'grep -q "skip threshold: false" $OUT' "2 GPUs: bandwidth threshold checked"
check '[ "$(grep -c "\"checkName\"" $OUT)" -ge 3 ]' "events received by the peer"
[ $FAILS = 0 ] || show

CASE="every check fails but its events arrive (was exit 0)"
n0=$FAILS
run "$FAIL_SCN"
check '[ $RC = 1 ]' "exit $RC, want 1 (the worst check result)"
check 'grep -q "^preflight-nccl-loopback: FAIL (exit 1: bandwidth below threshold" $OUT' "loopback summary"
check 'grep -q "^preflight-nccl-allreduce: FAIL (exit 1: bandwidth degraded" $OUT' "allreduce summary"
check 'grep -q "^preflight-dcgm-diag: FAIL (exit 1: fatal finding" $OUT' "dcgm summary"
check 'grep -q "^gpu-check: exit 1 (the worst check result)" $OUT' "last line"
check '[ "$(grep -c "unhealthy event(s):" $OUT)" = 3 ]' "the failed result shown for each check"
check 'grep -q "^    {\"time\":.*\"level\":\"ERROR\"" $OUT' "an upper-case ERROR log line is shown"
check 'grep -q "NVLink 2 is down" $OUT' "the DCGM finding is shown"
check 'grep -q "\"isHealthy\":false" $OUT' "unhealthy events received by the peer"
[ $FAILS = "$n0" ] || show

CASE="the worst result wins: a configuration error (2) beside passes"
n0=$FAILS
run "$PASS_SCN" TEST_SIZE_MB=abc
check '[ $RC = 2 ]' "exit $RC, want 2"
check 'grep -q "^preflight-nccl-loopback: FAIL (exit 2: configuration error)" $OUT' "loopback summary"
check 'grep -q "^preflight-nccl-allreduce: PASS" $OUT' "allreduce passed"
check 'grep -q "Configuration error" $OUT' "the configuration error line is shown"
[ $FAILS = "$n0" ] || show

CASE="GPUs counted from /dev/nvidia<N> when /proc has none"
n0=$FAILS
run "$PASS_SCN" NVIDIA_GPUS_DIR="$W/no-such-dir" NVIDIA_DEV_DIR="$W/dev"
check '[ $RC = 0 ]' "exit $RC"
check 'grep -q "^GPUs: 2 (counted from $W/dev/nvidia<N>)" $OUT' "count from device nodes (nvidiactl, nvidia-uvm not counted)"
[ $FAILS = "$n0" ] || show

CASE="nvidia-smi counts when present; one GPU skips the threshold"
n0=$FAILS
run "$PASS_SCN" NVIDIA_SMI="$W/nvidia-smi"
check '[ $RC = 0 ]' "exit $RC"
check 'grep -q "^GPUs: 1 (counted from nvidia-smi)" $OUT' "count from nvidia-smi"
check 'grep -q "skip threshold: true" $OUT' "1 GPU: threshold skipped"
[ $FAILS = "$n0" ] || show

CASE="no GPU found anywhere"
n0=$FAILS
run "$PASS_SCN" NVIDIA_GPUS_DIR="$W/no-such-dir" NVIDIA_DEV_DIR="$W/empty"
check 'grep -q "^GPUs: none found" $OUT' "says none were found"
check '[ $RC = 0 ]' "exit $RC (the test backend still has GPUs)"
[ $FAILS = "$n0" ] || show

if [ $FAILS -gt 0 ]; then
  echo "$FAILS check(s) failed"
  exit 1
fi
echo "all gpu-check cases passed"

#!/usr/bin/env bash
# test/helm/idle_test.sh IDLE — the image-cache hold command gpuready-idle
# (PF-22): waits for SIGTERM, SIGINT or SIGHUP and exits 0; --version exits
# 0; any other argument exits 2.
set -euo pipefail
idle=${1:?usage: idle_test.sh IDLE}
die() { printf 'idle_test: FAIL: %s\n' "$*" >&2; exit 1; }
"$idle" --version | grep -q '^gpuready-idle ' || die "--version"
rc=0; "$idle" --bogus 2>/dev/null || rc=$?
[[ $rc == 2 ]] || die "unknown argument exited $rc, want 2"
for sig in TERM INT HUP; do
  "$idle" &
  pid=$!
  sleep 0.3
  kill -0 "$pid" 2>/dev/null || die "exited before SIG$sig"
  kill -"$sig" "$pid"
  rc=0; wait "$pid" || rc=$?
  [[ $rc == 0 ]] || die "SIG$sig: exit $rc, want 0"
done
# Other signals do not stop it early (SIGUSR1 keeps its default: terminate,
# so use SIGCHLD/SIGWINCH, which a container runtime may send).
"$idle" &
pid=$!
sleep 0.2
kill -CHLD "$pid"; kill -WINCH "$pid"
sleep 0.2
kill -0 "$pid" 2>/dev/null || die "SIGCHLD/SIGWINCH stopped it"
kill -TERM "$pid"; wait "$pid"
echo "idle_test: ok"

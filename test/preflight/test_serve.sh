#!/usr/bin/env bash
# test_serve.sh BINARY — end-to-end test of `gpuready-preflight` on loopback:
# TLS serving, /healthz, /readyz, /mutate (patch, denial, 400, 413), /metrics
# linted with `promtool check metrics` (tools/promtool), invalid config →
# exit 1 naming the key, certificate hot reload through a Kubernetes-style
# `..data` symlink swap, graceful SIGTERM.
set -euo pipefail
BIN=${1:?usage: test_serve.sh path/to/gpuready-preflight}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
PID=""
cleanup() {
    if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$WORK/log" ] && tail -20 "$WORK/log" >&2; exit 1; }

ROOT=$(cd "$HERE/../.." && pwd)
# promtool from the tools cache (scripts/build-k8s builds and caches it);
# while build-k8s has no promtool entry, build the same pinned module here.
promtool_bin() {
    local dir go
    if dir=$("$ROOT/scripts/build-k8s" --print-bindir promtool 2>"$WORK/promtool-build.log") &&
        [ -x "$dir/promtool" ]; then
        echo "$dir/promtool"
        return 0
    fi
    go=${GO:-/usr/local/go/bin/go}
    [[ -x $go ]] || go=$(command -v go || true)
    (cd "$ROOT/tools/promtool" && CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" \
        "$go" build -o "$WORK/promtool" ./cmd/promtool) >>"$WORK/promtool-build.log" 2>&1 || return 1
    echo "$WORK/promtool"
}

mkcert() { # dir CN
    mkdir -p "$1"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj "/CN=$2" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -keyout "$1/tls.key" -out "$1/tls.crt" 2>/dev/null
}
# Secret-volume layout: tls.crt -> ..data/tls.crt, ..data -> ..gen1
CERTS=$WORK/certs
mkcert "$CERTS/..gen1" preflight-gen1
ln -s ..gen1 "$CERTS/..data"
ln -s ..data/tls.crt "$CERTS/tls.crt"
ln -s ..data/tls.key "$CERTS/tls.key"

cat >"$WORK/config.yaml" <<'EOF'
connectorSocket: "unix:///var/run/nvsentinel.sock"
initContainers:
  - name: preflight-dcgm-diag
    image: dcgm:v1
EOF

# invalid config: exit 1, message names the key (facts 2.1)
printf 'initContainerPlacement: sideways\n' >"$WORK/bad.yaml"
set +e
"$BIN" --config "$WORK/bad.yaml" --cert-dir "$CERTS" --port 1 2>"$WORK/bad.log"
rc=$?
set -e
[ "$rc" = 1 ] || fail "invalid config exited $rc, want 1"
grep -q '"msg":"Fatal error"' "$WORK/bad.log" || fail "no Fatal error log line"
grep -q 'invalid initContainerPlacement \\"sideways\\"' "$WORK/bad.log" || fail "message does not name the key"

PORT=$((20000 + RANDOM % 20000))
"$BIN" --config "$WORK/config.yaml" --cert-dir "$CERTS" --port "$PORT" >"$WORK/log" 2>&1 &
PID=$!
URL=https://127.0.0.1:$PORT
for _ in $(seq 100); do
    curl -sk "$URL/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
[ "$(curl -sk "$URL/healthz")" = ok ] || fail "/healthz"
[ "$(curl -sk "$URL/readyz")" = ok ] || fail "/readyz"

# TLS >= 1.2: a TLS 1.2 client works, a client capped at TLS 1.1 is refused
curl -sk --tlsv1.2 --tls-max 1.2 "$URL/healthz" >/dev/null || fail "TLS 1.2 refused"
if curl -sk --tlsv1.0 --tls-max 1.1 "$URL/healthz" >/dev/null 2>&1; then fail "TLS 1.1 accepted"; fi

post() { curl -sk -o "$WORK/resp" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @"$1" "$URL/mutate"; }
cat >"$WORK/review.json" <<'EOF'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1234-uid","namespace":"team-a","operation":"CREATE",
 "object":{"metadata":{"name":"p"},"spec":{"containers":[{"name":"m","image":"x","resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}}}
EOF
[ "$(post "$WORK/review.json")" = 200 ] || fail "/mutate status"
grep -q '"uid":"1234-uid"' "$WORK/resp" || fail "uid not echoed"
grep -q '"patchType":"JSONPatch"' "$WORK/resp" || fail "no JSONPatch"
patch=$(sed 's/.*"patch":"\([^"]*\)".*/\1/' "$WORK/resp" | base64 -d)
echo "$patch" | grep -q '"preflight-dcgm-diag"' || fail "patch lacks the init container: $patch"

sed 's/"limits":{"nvidia.com\/gpu":"8"}/"limits":{"cpu":"1"}/' "$WORK/review.json" >"$WORK/cpu.json"
[ "$(post "$WORK/cpu.json")" = 200 ] || fail "non-GPU status"
if ! grep -q '"allowed":true' "$WORK/resp" || grep -q patch "$WORK/resp"; then
    fail "non-GPU pod patched (PF-02)"
fi

sed 's/"metadata":{"name":"p"}/"metadata":{"name":"p","annotations":{"nvsentinel.nvidia.com\/preflight-checks":"nope"}}/' \
    "$WORK/review.json" >"$WORK/deny.json"
[ "$(post "$WORK/deny.json")" = 200 ] || fail "denial status"
grep -q '"allowed":false' "$WORK/resp" || fail "not denied"
grep -q 'references unknown checks: nope' "$WORK/resp" || fail "denial message"

printf 'not json' >"$WORK/garbage"
[ "$(post "$WORK/garbage")" = 400 ] || fail "garbage not 400"
head -c 5000000 /dev/zero | tr '\0' ' ' >"$WORK/big"
[ "$(post "$WORK/big")" = 413 ] || fail "oversized body not 413"

# metrics: names, counts, and `promtool check metrics` (tools/promtool,
# built once into the tools cache by scripts/build-k8s; modules come from the
# Go module proxy on a fresh machine)
curl -sk "$URL/metrics" >"$WORK/metrics"
grep -q '^preflight_injection_total{result="injected"} 1$' "$WORK/metrics" || fail "injected counter"
grep -q '^preflight_injection_total{result="skipped"} 1$' "$WORK/metrics" || fail "skipped counter"
grep -q '^preflight_injection_total{result="denied"} 1$' "$WORK/metrics" || fail "denied counter"
grep -q '^preflight_injection_total{result="error"} 2$' "$WORK/metrics" || fail "error counter"
grep -q '^preflight_webhook_latency_seconds_count 4$' "$WORK/metrics" || fail "latency count"
grep -q '^preflight_webhook_latency_seconds_bucket{le="+Inf"} 4$' "$WORK/metrics" || fail "+Inf bucket"
grep -q '^process_resident_memory_bytes [1-9]' "$WORK/metrics" || fail "process metrics"
PROMTOOL=$(promtool_bin) || fail "cannot build promtool (tools/promtool): $(tail -20 "$WORK/promtool-build.log")"
"$PROMTOOL" check metrics <"$WORK/metrics" || fail "promtool check metrics found problems"
echo "promtool check metrics: clean"

# hot reload: swap ..data like the kubelet does while requests keep coming;
# none may fail, new handshakes get the new certificate
subject() { echo | openssl s_client -connect "127.0.0.1:$PORT" 2>/dev/null | openssl x509 -noout -subject; }
subject | grep -q preflight-gen1 || fail "initial certificate"
mkcert "$CERTS/..gen2" preflight-gen2
(for _ in $(seq 150); do post "$WORK/review.json"; echo; done >"$WORK/codes") &
LOAD=$!
sleep 0.3
ln -s ..gen2 "$CERTS/..data_tmp"
mv -T "$CERTS/..data_tmp" "$CERTS/..data"
ok=0
for _ in $(seq 50); do
    if subject | grep -q preflight-gen2; then ok=1; break; fi
    sleep 0.1
done
[ "$ok" = 1 ] || fail "certificate not reloaded"
wait "$LOAD"
[ "$(grep -c '^200$' "$WORK/codes")" = 150 ] || fail "admissions failed during rotation: $(sort "$WORK/codes" | uniq -c)"
grep -q 'reloaded serving certificate' "$WORK/log" || fail "no reload log line"
# a mismatched pair (key of gen1, cert of gen3) is refused; gen2 stays
mkcert "$CERTS/..gen3" preflight-gen3
cp "$CERTS/..gen1/tls.key" "$CERTS/..gen3/tls.key"
ln -s ..gen3 "$CERTS/..data_tmp"
mv -T "$CERTS/..data_tmp" "$CERTS/..data"
sleep 1.5
subject | grep -q preflight-gen2 || fail "mismatched pair was installed"
grep -q 'does not match the certificate' "$WORK/log" || fail "mismatch not reported"
# read whole first: `curl | grep -q` fails under pipefail when grep stops early
metrics=$(curl -sk "$URL/metrics")
grep -q '^preflight_certificate_reloads_total{result="error"} [1-9]' <<<"$metrics" || fail "reload error metric"

# graceful SIGTERM. A client's kept-alive connection stays open through the
# drain: its next request is answered (with "Connection: close") instead of
# the connection being closed under it — the API server does not retry a
# webhook POST whose connection the server closed ("broken pipe"/EOF).
# Each step waits for what it needs (no fixed sleeps): the first answer,
# then the listener gone (the drain has begun), then the second answer.
req='GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
answers() { grep -o 'HTTP/1.1 200 OK' "$WORK/drain.out" 2>/dev/null | wc -l; }
: >"$WORK/drain.out"
{
  printf "$req"
  for _ in $(seq 300); do [ "$(answers)" -ge 1 ] && break; sleep 0.1; done
  kill -TERM "$PID"
  for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || break; sleep 0.1; done
  printf "$req"
  for _ in $(seq 300); do [ "$(answers)" -ge 2 ] && break; sleep 0.1; done
} | openssl s_client -quiet -connect "127.0.0.1:$PORT" >"$WORK/drain.out" 2>/dev/null || true
drain=$(tr -d '\r' <"$WORK/drain.out")
[ "$(grep -o 'HTTP/1.1 200 OK' <<<"$drain" | wc -l)" = 2 ] ||
  fail "the kept-alive connection was not served through the drain: $drain"
grep -qi '^connection: close' <<<"$drain" || fail "no Connection: close while draining: $drain"
for _ in $(seq 80); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$PID" 2>/dev/null; then fail "still running 8 s after SIGTERM"; fi
wait "$PID" || fail "exit status $? after SIGTERM"
PID=""
grep -q '"msg":"stopped"' "$WORK/log" || fail "no stopped log line"
echo "PASS"

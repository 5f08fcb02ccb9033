#!/usr/bin/env bash
# test/helm/images_test.sh — builds the five images with scripts/build-images
# from the programs of this build tree and checks them:
#   * the OCI layout is consistent (every digest and size matches its blob,
#     the gunzipped layer matches the config's diff_id), and an independent
#     reader (umoci, skopeo) accepts it when installed;
#   * each root filesystem holds only our programs, their libraries, the
#     idle entrypoint and /etc/{passwd,group,nsswitch.conf} — no shell;
#   * every program starts inside its image (chroot as the image user when
#     possible, else through the image's own dynamic loader) and the checks
#     exit with their documented configuration-error codes in an empty
#     environment (PF-225, PF-229, PF-235); gpuready-manager prints its
#     version and, with no cluster configuration, exits 1 naming it;
#   * the image-cache hold command works: gpuready-idle as PID 1 of a new PID
#     namespace exits 0 on SIGTERM (PF-22);
#   * the build is reproducible (same manifest digest twice);
#   * each image is under 50 MB (uncompressed) unless the programs are built
#     with sanitizers.
#
#   images_test.sh BINDIR     (BINDIR: the CMake build tree)
set -euo pipefail

ROOT=${GR_SOURCE_DIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}
BINDIR=${1:?usage: images_test.sh BINDIR}
die() { printf 'images_test: FAIL: %s\n' "$*" >&2; exit 1; }
note() { printf 'images_test: %s\n' "$*"; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gr-images-test.XXXXXX")
cleanup() {
  set +e
  if [[ -n ${idle_pid:-} ]]; then kill -KILL "$idle_pid" 2>/dev/null; fi
  rm -rf -- "$WORK"
}
trap cleanup EXIT
OUT=$WORK/out
IMAGES=(preflight preflight-dcgm-diag preflight-nccl-loopback preflight-nccl-allreduce gpuready-manager)

SOURCE_DATE_EPOCH=0 "$ROOT/scripts/build-images" --bindir "$BINDIR" --out "$OUT" --archive \
  >"$WORK/build.out" 2>"$WORK/build.err" || { cat "$WORK/build.err"; die "scripts/build-images failed"; }
cat "$WORK/build.out"

blobsha() { sha256sum "$1" | cut -d' ' -f1; }
check_blob() { # layout digest size what
  local f=$1/blobs/sha256/${2#sha256:}
  [[ -f $f ]] || die "$4: blob $2 missing"
  [[ $(blobsha "$f") == "${2#sha256:}" ]] || die "$4: blob $2 does not match its digest"
  [[ $(stat -c %s "$f") == "$3" ]] || die "$4: blob $2 size $(stat -c %s "$f") != $3"
}

# How to run a program inside an image root. Each way is tried on a real
# program of the preflight image, and the first that works is used: a probe
# of the tool alone is not enough (inside a chroot, `unshare -m` works but
# mounting /proc does not; a sanitizer build cannot run without /proc).
# Sanitizer builds (CI): LeakSanitizer needs /proc, which a bare chroot lacks.
SAN_ENV=(ASAN_OPTIONS=detect_leaks=0)
CHROOT=$(command -v chroot || true)
UNSHARE=$(command -v unshare || true)
in_image_procns() { # with its own /proc (sanitizers read /proc/self/environ)
  local r=$1; shift
  mkdir -p "$r/proc"
  env -i "${SAN_ENV[@]}" "$UNSHARE" -m -p -f --mount-proc="$r/proc" "$CHROOT" --userspec=65532:65532 "$r" "$@"
}
in_image_chroot() { local r=$1; shift; env -i "${SAN_ENV[@]}" "$CHROOT" --userspec=65532:65532 "$r" "$@"; }
in_image_userns() { local r=$1; shift; env -i "${SAN_ENV[@]}" "$UNSHARE" -r "$CHROOT" "$r" "$@"; }
in_image_loader() { # the image's own loader and libraries, no chroot
  local r=$1 prog=$2; shift 2
  env -i "${SAN_ENV[@]}" "$r/lib64/ld-linux-x86-64.so.2" --library-path "$r/lib/x86_64-linux-gnu:$r/usr/lib/x86_64-linux-gnu" "$r$prog" "$@"
}
declare -A HOW=([procns]="chroot as 65532:65532 with its own /proc" [chroot]="chroot as 65532:65532"
  [userns]="unshare -r chroot" [loader]="the image's dynamic loader")
ways=()
if [[ -n $CHROOT && -n $UNSHARE && $(id -u) == 0 ]]; then ways+=(procns); fi
if [[ -n $CHROOT && $(id -u) == 0 ]]; then ways+=(chroot); fi
if [[ -n $CHROOT && -n $UNSHARE && $(id -u) != 0 ]]; then ways+=(userns); fi
ways+=(loader)
how="" tried=""
for w in "${ways[@]}"; do
  ok=0
  "in_image_$w" "$OUT/preflight.rootfs" /usr/local/bin/gpuready-preflight-gang --help >"$WORK/probe" 2>&1 && ok=1
  # the layout checks below compare the layer with this tree: leave no /proc
  rmdir "$OUT/preflight.rootfs/proc" 2>/dev/null || true
  if ((ok)); then
    eval "in_image() { in_image_$w \"\$@\"; }"
    how=${HOW[$w]}
    break
  fi
  tried+=$'\n'"  ${HOW[$w]}: $(tail -n 3 "$WORK/probe" | tr '\n' ' ')"
done
[[ -n $how ]] || die "no way to run a program of the preflight image here:$tried"
[[ -z $tried ]] || note "could not run programs with:$tried"
note "running programs with $how"

sanitized=0
for img in "${IMAGES[@]}"; do
  layout=$OUT/$img rootfs=$OUT/$img.rootfs
  [[ $(jq -r .imageLayoutVersion "$layout/oci-layout") == 1.0.0 ]] || die "$img: oci-layout"
  m=$(jq -c '.manifests[0]' "$layout/index.json")
  check_blob "$layout" "$(jq -r .digest <<<"$m")" "$(jq -r .size <<<"$m")" "$img manifest"
  mf=$layout/blobs/sha256/$(jq -r '.digest | ltrimstr("sha256:")' <<<"$m")
  [[ $(jq -r .mediaType "$mf") == application/vnd.oci.image.manifest.v1+json ]] || die "$img: manifest mediaType"
  check_blob "$layout" "$(jq -r .config.digest "$mf")" "$(jq -r .config.size "$mf")" "$img config"
  check_blob "$layout" "$(jq -r '.layers[0].digest' "$mf")" "$(jq -r '.layers[0].size' "$mf")" "$img layer"
  cfg=$layout/blobs/sha256/$(jq -r '.config.digest | ltrimstr("sha256:")' "$mf")
  layer=$layout/blobs/sha256/$(jq -r '.layers[0].digest | ltrimstr("sha256:")' "$mf")
  [[ "sha256:$(gzip -dc "$layer" | sha256sum | cut -d' ' -f1)" == "$(jq -r '.rootfs.diff_ids[0]' "$cfg")" ]] ||
    die "$img: layer does not match diff_id"
  [[ $(jq -r .config.User "$cfg") == 65532:65532 ]] || die "$img: not running as 65532"
  entry=$(jq -r '.config.Entrypoint[0]' "$cfg")
  [[ -x $rootfs$entry ]] || die "$img: entrypoint $entry missing"
  # The layer holds exactly the assembled root filesystem, owned by root.
  diff <(gzip -dc "$layer" | tar -t | sed 's|/$||' | LC_ALL=C sort) \
       <(cd "$rootfs" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort) >/dev/null ||
    die "$img: layer contents differ from the root filesystem"
  [[ -z $(gzip -dc "$layer" | tar -tv --numeric-owner | awk '$2 != "0/0"') ]] || die "$img: files not owned by 0/0"
  # Minimal: only our programs, libraries, the idle entrypoint, three /etc files.
  extra=$(cd "$rootfs" && find . -mindepth 1 \( -type f -o -type l \) -printf '%P\n' |
    grep -Ev '^(usr/local/bin/[a-z-]+|(usr/)?lib(64|/x86_64-linux-gnu)/[^/]+\.so[.0-9]*|lib64/ld-linux-x86-64\.so\.2|etc/(passwd|group|nsswitch\.conf))$' || true)
  [[ -z $extra ]] || die "$img: unexpected files: $extra"
  [[ ! -e $rootfs/bin/sh ]] || die "$img: has a shell"
  [[ -x $rootfs/usr/local/bin/gpuready-idle ]] || die "PF-22: $img has no idle entrypoint"
  # The Dockerfile shipped for this image agrees with the daemonless build.
  df=$ROOT/deploy/images/$img/Dockerfile
  [[ -f $df ]] || die "$img: no Dockerfile at deploy/images/$img/Dockerfile"
  grep -qx "ENTRYPOINT \[\"$entry\"\]" "$df" || die "$img: Dockerfile ENTRYPOINT is not $entry"
  grep -qx 'USER 65532:65532' "$df" || die "$img: Dockerfile USER is not 65532:65532"
  grep -q '^FROM scratch$' "$df" || die "$img: Dockerfile final stage is not FROM scratch"
  for p in $(cd "$rootfs/usr/local/bin" && ls); do
    [[ $p == gpuready-idle ]] || grep -q "/$p\b" "$df" || die "$img: Dockerfile does not install $p"
  done
  if grep -q __asan_init "$rootfs$entry" || [[ -n $(find "$rootfs" -name 'libasan.so*') ]]; then sanitized=1; fi
  note "$img: layout ok, $(find "$rootfs" -type f | wc -l) files"
done

# Independent readers.
if command -v umoci >/dev/null; then
  umoci_args=()
  [[ $(id -u) == 0 ]] || umoci_args=(--rootless)
  for img in "${IMAGES[@]}"; do
    umoci unpack "${umoci_args[@]}" --image "$OUT/$img:$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' "$OUT/$img/index.json")" \
      "$WORK/bundle-$img" >/dev/null 2>"$WORK/umoci.err" || { cat "$WORK/umoci.err"; die "umoci cannot unpack $img"; }
  done
  note "umoci unpacks every image"
else
  note "umoci not installed: layout checked by this script only"
fi
if command -v skopeo >/dev/null; then
  skopeo inspect "oci-archive:$OUT/preflight.oci.tar" >/dev/null || die "skopeo cannot read preflight.oci.tar"
  note "skopeo reads the OCI archive"
fi

# Programs start inside their images.
rf=$OUT/preflight.rootfs
in_image "$rf" /usr/local/bin/gpuready-preflight-gang --help >"$WORK/o" 2>&1 ||
  { cat "$WORK/o"; die "gpuready-preflight-gang does not start in its image"; }
mkdir -p "$rf/tmp/t" && chmod 0755 "$rf/tmp/t"
cat >"$rf/tmp/t/config.yaml" <<'EOF'
initContainers:
  - name: preflight-dcgm-diag
    image: ghcr.io/gpuready/preflight-dcgm-diag:0.1.0
EOF
chmod 0644 "$rf/tmp/t/config.yaml"
in_image "$rf" /usr/local/bin/gpuready-preflight check-config --config /tmp/t/config.yaml >"$WORK/o" 2>&1 ||
  { cat "$WORK/o"; die "gpuready-preflight check-config does not run in its image"; }
rm -rf -- "$rf/tmp/t"
declare -A want=([preflight-dcgm-diag]=1 [preflight-nccl-loopback]=2 [preflight-nccl-allreduce]=2)
for img in preflight-dcgm-diag preflight-nccl-loopback preflight-nccl-allreduce; do
  rc=0
  in_image "$OUT/$img.rootfs" "/usr/local/bin/$img" >"$WORK/o" 2>&1 || rc=$?
  ! grep -q 'error while loading shared libraries' "$WORK/o" || { cat "$WORK/o"; die "$img: missing libraries"; }
  grep -q '"level":"ERROR"' "$WORK/o" || { cat "$WORK/o"; die "$img: no JSON error log"; }
  # PF-225 (dcgm-diag 1), PF-229 (loopback 2), PF-235 (allreduce 2): no NODE_NAME/POD_NAME.
  [[ $rc == "${want[$img]}" ]] || { cat "$WORK/o"; die "$img: configuration error exit $rc, want ${want[$img]}"; }
done
# gpuready-manager (the nvcre subchart's image): starts, and without an API
# server configuration (no kubeconfig, not in a pod) exits 1 saying so.
mf=$OUT/gpuready-manager.rootfs
in_image "$mf" /usr/local/bin/gpuready-manager --version >"$WORK/o" 2>&1 ||
  { cat "$WORK/o"; die "gpuready-manager does not start in its image"; }
grep -q '^gpuready-manager ' "$WORK/o" || { cat "$WORK/o"; die "gpuready-manager --version in its image"; }
rc=0
in_image "$mf" /usr/local/bin/gpuready-manager --leader-elect --metrics-bind-address=:8443 >"$WORK/o" 2>&1 || rc=$?
! grep -q 'error while loading shared libraries' "$WORK/o" || { cat "$WORK/o"; die "gpuready-manager: missing libraries"; }
[[ $rc == 1 ]] && grep -q 'unable to load the Kubernetes client configuration' "$WORK/o" ||
  { cat "$WORK/o"; die "gpuready-manager without a configuration: exit $rc, want 1 with the reason"; }
note "every program starts in its image"

# PF-22: the image-cache hold command. As PID 1 of a new PID namespace when
# possible (the kernel drops SIG_DFL signals to init), else as a plain process.
idle_root=$OUT/preflight-nccl-allreduce.rootfs
if [[ $(id -u) == 0 && -n $UNSHARE && -n $CHROOT ]] && "$UNSHARE" -p -f true 2>/dev/null; then
  "$UNSHARE" -p -f "$CHROOT" --userspec=65532:65532 "$idle_root" /usr/local/bin/gpuready-idle &
  outer=$!
  for _ in $(seq 50); do idle_pid=$(pgrep -P "$outer" || true); [[ -n $idle_pid ]] && break; sleep 0.1; done
  [[ -n $idle_pid ]] || die "gpuready-idle did not start"
  mode="PID 1 of a new PID namespace"
else
  in_image "$idle_root" /usr/local/bin/gpuready-idle &
  outer=$!
  idle_pid=$outer
  mode="a plain process"
fi
sleep 0.5
kill -0 "$idle_pid" 2>/dev/null || die "gpuready-idle exited before the signal"
kill -TERM "$idle_pid"
rc=0
wait "$outer" || rc=$?
idle_pid=""
[[ $rc == 0 ]] || die "PF-22: gpuready-idle as $mode exited $rc on SIGTERM, want 0"
note "gpuready-idle as $mode exits 0 on SIGTERM"

# Reproducible: a second build gives the same digest.
SOURCE_DATE_EPOCH=0 "$ROOT/scripts/build-images" --bindir "$BINDIR" --out "$WORK/out2" preflight >/dev/null 2>"$WORK/build.err" ||
  { cat "$WORK/build.err"; die "second build failed"; }
[[ $(jq -r '.manifests[0].digest' "$WORK/out2/preflight/index.json") == $(jq -r '.manifests[0].digest' "$OUT/preflight/index.json") ]] ||
  die "the preflight image is not reproducible"
note "reproducible"

# --add-lib bundles a vendor library the checks dlopen (here a stand-in that
# is not otherwise in the image) where the loader finds it by name.
# (awk reads to the end: an early `exit` would kill ldconfig with SIGPIPE,
# which pipefail and set -e turn into a silent exit of this test)
extra=$(ldconfig -p | awk '/libcmocka\.so\.0 .*x86-64/ && !seen {print $NF; seen = 1}')
if [[ -n $extra ]]; then
  "$ROOT/scripts/build-images" --bindir "$BINDIR" --out "$WORK/out3" --add-lib "preflight-nccl-loopback=$extra" \
    preflight-nccl-loopback >/dev/null 2>"$WORK/build.err" || { cat "$WORK/build.err"; die "--add-lib build failed"; }
  [[ -f $WORK/out3/preflight-nccl-loopback.rootfs/usr/lib/x86_64-linux-gnu/libcmocka.so.0 ]] ||
    die "--add-lib: library not in /usr/lib/x86_64-linux-gnu"
  [[ ! -e $OUT/preflight-nccl-loopback.rootfs/usr/lib/x86_64-linux-gnu/libcmocka.so.0 ]] ||
    die "the default image carries the stand-in library"
  note "--add-lib bundles a library"
fi

# Size goal.
while read -r img raw _; do
  if ((sanitized)); then
    note "$img: $raw bytes (sanitizer build: the 50 MB goal applies to release builds)"
  else
    ((raw < 50000000)) || die "$img is $raw bytes, over the 50 MB goal"
  fi
done <"$OUT/sizes.txt"
note "ok"

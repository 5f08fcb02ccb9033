#!/usr/bin/env bash
# deploy/images/collect-rootfs.sh — assemble the root filesystem of a minimal
# gpuready image: our binaries, exactly the shared libraries they load (ldd,
# the dynamic loader included), the idle entrypoint and a few /etc files.
# Nothing else: no shell, no package manager. GPU libraries (libcuda,
# libnvidia-ml, ...) are not copied: the checks dlopen them at run time from
# the host driver mount that the NVIDIA container toolkit provides.
#
#   collect-rootfs.sh ROOT IDLE_BIN BINARY...
#
#   ROOT      directory to fill (created; must be empty or absent)
#   IDLE_BIN  the static gpuready-idle binary (-> /usr/local/bin/gpuready-idle)
#   BINARY    our program(s) (-> /usr/local/bin/<name>, stripped); a symlink
#             to another BINARY in its directory (a program alias) stays a
#             symlink
#
# Used by scripts/build-images (daemonless OCI build) and by the Dockerfiles
# under deploy/images/ (docker build), so both produce the same tree.
# Environment: STRIP (default: strip if found, else none); EXTRA_LIBS
# (space-separated files, e.g. libnccl.so.2 or libdcgm.so.4, copied under
# their file name into /usr/lib/<multiarch>/, the loader's default path,
# with the libraries they need).
set -euo pipefail

die() { printf 'collect-rootfs: error: %s\n' "$*" >&2; exit 1; }

(($# >= 3)) || die "usage: collect-rootfs.sh ROOT IDLE_BIN BINARY..."
root=$1 idle=$2
shift 2
if [[ -e $root ]] && [[ -n $(ls -A "$root") ]]; then die "$root is not empty"; fi
mkdir -p "$root"
[[ -x $idle ]] || die "idle entrypoint not executable: $idle"
strip_bin=${STRIP-$(command -v strip || true)}

declare -A libs=()
add_libs() { # binary: every library ldd resolves, plus the loader
  local bin=$1 out line path
  out=$(ldd "$bin" 2>&1) || {
    # A static binary has nothing to add.
    if grep -q 'not a dynamic executable\|statically linked' <<<"$out"; then return 0; fi
    die "ldd $bin failed: $out"
  }
  while IFS= read -r line; do
    if [[ $line == *"not found"* ]]; then die "$bin: missing library: ${line%%=>*}"; fi
    path=""
    if [[ $line == *"=> /"* ]]; then
      path=${line#*=> }
      path=${path%% (*}
    elif [[ $line =~ ^[[:space:]]*(/[^[:space:]]+) ]]; then
      path=${BASH_REMATCH[1]}
    fi
    [[ -n $path ]] && libs[$path]=1
  done <<<"$out"
}

install_file() { # src dest-in-root mode
  local src=$1 dest=$root$2 mode=$3
  mkdir -p "$(dirname -- "$dest")"
  cp -L -- "$src" "$dest"
  chmod "$mode" "$dest"
}

declare -A given=()
for bin in "$@"; do given[$(basename -- "$bin")]=1; done
for bin in "$@"; do
  [[ -x $bin ]] || die "not an executable: $bin"
  name=$(basename -- "$bin")
  # Another name of a program that is also given (a symlink to it in the
  # same directory, e.g. gpuready-preflight-gang -> gpuready-preflight):
  # the same symlink in the image, not a second copy.
  if [[ -L $bin ]]; then
    target=$(readlink -- "$bin")
    if [[ $target != */* && -n ${given[$target]:-} ]]; then
      mkdir -p "$root/usr/local/bin"
      ln -sfn -- "$target" "$root/usr/local/bin/$name"
      continue
    fi
  fi
  install_file "$bin" "/usr/local/bin/$name" 0755
  if [[ -n $strip_bin ]]; then "$strip_bin" --strip-unneeded "$root/usr/local/bin/$name"; fi
  add_libs "$bin"
done
install_file "$idle" /usr/local/bin/gpuready-idle 0755

multiarch=$(gcc -print-multiarch 2>/dev/null || true)
for lib in ${EXTRA_LIBS:-}; do
  [[ -f $lib ]] || die "EXTRA_LIBS: no such file: $lib"
  install_file "$lib" "/usr/lib/${multiarch:-x86_64-linux-gnu}/$(basename -- "$lib")" 0644
  add_libs "$lib"
done

for lib in "${!libs[@]}"; do
  # Keep the path ldd printed (the soname path the loader looks up); copy the
  # file it resolves to.
  install_file "$lib" "$lib" 0644
  case $(basename -- "$lib") in ld-linux*) chmod 0755 "$root$lib" ;; esac
done

# Identity for the non-root user the images run as (65532), name lookups
# through files then DNS, a world-writable /tmp ($HOME).
mkdir -p "$root/etc" "$root/tmp"
chmod 1777 "$root/tmp"
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:65532:65532:nonroot:/tmp:/usr/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
chmod 0644 "$root/etc/passwd" "$root/etc/group" "$root/etc/nsswitch.conf"

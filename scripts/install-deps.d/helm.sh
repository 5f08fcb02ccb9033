#!/usr/bin/env bash
# Packages for the chart and image tests (test/helm): jq and yq read the
# rendered manifests and build the OCI image JSON, umoci cross-checks the
# image layouts. Helm itself is built from tools/helm by scripts/build-k8s.
# Idempotent; silent when everything is installed.
set -euo pipefail
want=(jq yq umoci skopeo)
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0
echo "install-deps.d/helm: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

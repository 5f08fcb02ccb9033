#!/usr/bin/env bash
# src/gang tests: gang_topo_xmllint checks the bundled NCCL topology XML
# (deploy/gang/topology/) with xmllint. Idempotent and quiet when present.
set -euo pipefail
command -v xmllint >/dev/null && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get install -y -qq libxml2-utils >/dev/null

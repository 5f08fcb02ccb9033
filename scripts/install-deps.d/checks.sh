#!/usr/bin/env bash
# src/checks tests: test/checks/test_programs.sh reads the peer's records with jq.
# Idempotent and quiet when jq is present.
set -euo pipefail
command -v jq >/dev/null && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get install -y -qq jq >/dev/null

#!/usr/bin/env bash
# CTest fixture gr_cluster: `fixture.sh up DIR` (FIXTURES_SETUP) and
# `fixture.sh down DIR` (FIXTURES_CLEANUP). See docs/control-plane.md.
set -euo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
cluster=$here/../../scripts/cluster
action=${1:?usage: fixture.sh up|down DIR}
dir=${2:?usage: fixture.sh up|down DIR}

case ${GR_SKIP_INTEGRATION:-0} in
  1|true|TRUE|yes|YES|on|ON)
    if [[ $action == up ]]; then
      echo "SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION"
      exit 77
    fi
    ;;
esac

case $action in
  up)
    # --ttl: if ctest itself is killed before the cleanup test runs, the
    # cluster still stops (and removes its directory) on its own.
    exec "$cluster" up --ttl "${GR_CLUSTER_TTL:-7200}" --timeout "${GR_CLUSTER_UP_TIMEOUT:-300}" "$dir"
    ;;
  down)
    exec "$cluster" down "$dir"
    ;;
  *)
    echo "usage: fixture.sh up|down DIR" >&2
    exit 2
    ;;
esac

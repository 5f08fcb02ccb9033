#!/bin/sh
# gang_topo_xmllint: libxml2's opinion of the bundled NCCL topology files
# (deploy/gang/topology/*.xml); test_gang_topo.c checks NCCL's own rules.
if ! command -v xmllint >/dev/null 2>&1; then
  echo "SKIPPED: xmllint not installed (run scripts/install-deps.d/gang.sh)"
  exit 77
fi
exec xmllint --noout "$@"

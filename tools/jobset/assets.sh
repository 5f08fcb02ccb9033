#!/usr/bin/env bash
# Copies the pinned JobSet module's CRD (config/components/crd/bases) and
# webhook manifest into the tool cache: assets.sh GO STAGE (run by build-k8s).
set -euo pipefail
go=$1 stage=$2
jobset=$("$go" list -m -f '{{.Dir}}' sigs.k8s.io/jobset)
mkdir -p "$stage/crds" "$stage/webhooks"
cp "$jobset/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml" "$stage/crds/"
cp "$jobset/config/components/webhook/manifests.yaml" "$stage/webhooks/jobset.yaml"

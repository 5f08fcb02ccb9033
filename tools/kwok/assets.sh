#!/usr/bin/env bash
# Copies KWOK's CRDs (the Logs resource the simulated cluster uses) from the
# pinned module into the tool cache: assets.sh GO STAGE (run by build-k8s).
set -euo pipefail
go=$1 stage=$2
dir=$("$go" list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
mkdir -p "$stage/crds"
cp "$dir/kustomize/crd/bases/kwok.x-k8s.io_logs.yaml" "$dir/kustomize/crd/bases/kwok.x-k8s.io_clusterlogs.yaml" "$stage/crds/"

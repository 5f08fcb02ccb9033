#!/usr/bin/env bash
# trainer_crds.sh — print the directory holding the Kubeflow Trainer v2.2.1
# CRDs (TrainJob, TrainingRuntime, ClusterTrainingRuntime), the release
# upstream NVCRE targets. They come from the Go module
# github.com/kubeflow/trainer/v2@v2.2.1 (manifests/base/crds), fetched through
# the Go module proxy (or the local module cache) and checked against the
# pinned go.sum hash below, so every run installs the same bytes.
# Exit 77 (skip) when Go is missing or the module cannot be fetched.
set -euo pipefail
MOD=github.com/kubeflow/trainer/v2
VER=v2.2.1
SUM='h1:GsM80cgxnLnd8j8+lrX/Dpcvw7DYqpxkL0ni4XA/U7Y='

command -v go >/dev/null || { echo "trainer_crds: go not found (scripts/install-deps installs it)" >&2; exit 77; }
json=$(cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod go mod download -json "$MOD@$VER" 2>&1) || {
  echo "trainer_crds: cannot fetch $MOD@$VER: $json" >&2
  exit 77
}
dir=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
sum=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p')
[[ $sum == "$SUM" ]] || { echo "trainer_crds: $MOD@$VER has hash $sum, want $SUM" >&2; exit 1; }
crds=$dir/manifests/base/crds
[[ -f $crds/trainer.kubeflow.org_trainjobs.yaml ]] || { echo "trainer_crds: no CRDs in $crds" >&2; exit 1; }
echo "$crds"

#!/usr/bin/env bash
# Copies the pinned Trainer module's CRDs (manifests/base/crds) and webhook
# manifest into the tool cache: assets.sh GO STAGE (run by build-k8s).
set -euo pipefail
go=$1 stage=$2
trainer=$("$go" list -m -f '{{.Dir}}' github.com/kubeflow/trainer/v2)
mkdir -p "$stage/crds" "$stage/webhooks"
cp "$trainer"/manifests/base/crds/trainer.kubeflow.org_*.yaml "$stage/crds/"
cp "$trainer/manifests/base/webhook/manifests.yaml" "$stage/webhooks/trainer.yaml"

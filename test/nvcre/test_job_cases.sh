#!/usr/bin/env bash
# CTest driver for the Job controller's reconcile cases (issue 15; label
# integration, fixture gr_cluster; docs/nvcre-job.md):
#   test_job_cases.sh RUNNER MANAGER
# Installs the pinned Kubeflow Trainer v2.2.1 CRDs (trainer_crds.sh) and the
# NVCRE Job CRD, then runs every case under test/cases/job with
# gpuready-manager as the child (--workload-creation-deadline=8s, so the
# deadline cases finish in seconds) and requires "N passed, 0 failed".
# Then test/cases/job-rbac runs with the manager as the cluster's user
# gr-lowpriv (job_lowpriv_rbac.yaml: everything but creating TrainJobs), so
# that a real RBAC denial meets the SelfSubjectAccessReview.
set -uo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
runner=${1:?runner}
manager=${2:?manager}

case ${GR_SKIP_INTEGRATION:-0} in
  1|true|TRUE|yes|YES|on|ON) echo "SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION"; exit 77 ;;
esac
set -a
# shellcheck disable=SC1091
source "${GR_CLUSTER_DIR:?}/cluster.env"
set +a
kc() { "$GR_KUBECTL" --kubeconfig "$GR_KUBECONFIG_ADMIN" "$@"; }

crds=$(bash "$here/trainer_crds.sh")
rc=$?
if [[ $rc -eq 77 ]]; then
  echo "SKIPPED: the Kubeflow Trainer v2.2.1 CRDs are not available (see above)"
  exit 77
fi
[[ $rc -eq 0 ]] || { echo "FAIL: trainer_crds.sh exited $rc"; exit 1; }
kc apply --server-side --force-conflicts -f "$crds/trainer.kubeflow.org_trainjobs.yaml" \
  -f "$crds/trainer.kubeflow.org_trainingruntimes.yaml" \
  -f "$crds/trainer.kubeflow.org_clustertrainingruntimes.yaml" \
  -f "$root/deploy/crds/nvcre.nvidia.com_jobs.yaml" >/dev/null || { echo "FAIL: CRD install"; exit 1; }
kc wait --for condition=Established --timeout=60s crd/trainjobs.trainer.kubeflow.org \
  crd/jobs.nvcre.nvidia.com >/dev/null || { echo "FAIL: CRDs not Established"; exit 1; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
GR_SOURCE_DIR=$root "$runner" --manager "exec '$manager' --workload-creation-deadline=8s \
--metrics-bind-address 127.0.0.1:\$GR_METRICS_PORT --health-probe-bind-address 127.0.0.1:\$GR_HEALTH_PORT" \
  "$root/test/cases/job" >"$out" 2>&1
rc=$?
cat "$out"
n=$(find "$root/test/cases/job" -name input_config.yaml | wc -l)
last=$(tail -n 1 "$out")
[[ $rc -eq 0 && $last == "$n passed, 0 failed" ]] || { echo "FAIL: runner exited $rc; last line '$last', want '$n passed, 0 failed'"; exit 1; }

kc apply -f "$here/job_lowpriv_rbac.yaml" >/dev/null || { echo "FAIL: RBAC for gr-lowpriv"; exit 1; }
GR_SOURCE_DIR=$root "$runner" --manager "exec '$manager' --kubeconfig '$GR_KUBECONFIG_LOWPRIV' \
--workload-creation-deadline=8s --metrics-bind-address 127.0.0.1:\$GR_METRICS_PORT \
--health-probe-bind-address 127.0.0.1:\$GR_HEALTH_PORT" "$root/test/cases/job-rbac" >"$out" 2>&1
rc=$?
cat "$out"
n=$(find "$root/test/cases/job-rbac" -name input_config.yaml | wc -l)
last=$(tail -n 1 "$out")
[[ $rc -eq 0 && $last == "$n passed, 0 failed" ]] || { echo "FAIL: (gr-lowpriv) runner exited $rc; last line '$last', want '$n passed, 0 failed'"; exit 1; }

#!/usr/bin/env bash
# Integration test of the shell harness (gr_harness.sh) against the fixture
# cluster: CRD + instance in one stream, waits, and the low-privilege user.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=gr_harness.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/gr_harness.sh"
gr_skip_if_disabled
gr_test_begin harness-shell

# CRD and an object of its kind in one stream: gr_apply must wait and retry.
{
  cat "$GR_SOURCE_DIR/test/fixtures/crds/kai-podgroup.yaml"
  printf -- '---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: shell-pg\nspec:\n  minMember: 2\n  queue: q\n'
} | gr_apply - "$GR_NS"

gr_wait "" crd/podgroups.scheduling.run.ai condition=Established 30
gr_wait_jsonpath "$GR_NS" podgroups.scheduling.run.ai/shell-pg '{.spec.minMember}' 2 10

gr_kubectl patch podgroups.scheduling.run.ai/shell-pg -n "$GR_NS" --subresource=status \
  --type=merge -p '{"status":{"phase":"Running"}}' >/dev/null
gr_wait "$GR_NS" podgroups.scheduling.run.ai/shell-pg 'jsonpath={.status.phase}=Running' 30

if out=$(gr_kubectl_lowpriv get podgroups.scheduling.run.ai -n "$GR_NS" 2>&1); then
  echo "FAIL: gr-lowpriv could list podgroups: $out" >&2
  exit 1
fi
[[ $out == *Forbidden* ]] || { echo "FAIL: expected Forbidden, got: $out" >&2; exit 1; }
# Service-account bearer tokens (the product's in-cluster auth path) work.
if [[ ${GR_CLUSTER_KCM:-0} == 1 ]]; then
  token=$(gr_kubectl create token default -n "$GR_NS" --duration=10m)
  who=$(KUBECONFIG=/dev/null "$GR_KUBECTL" --server "$GR_APISERVER_URL" \
        --certificate-authority "$GR_CA_CERT" --token "$token" \
        auth whoami -o 'jsonpath={.status.userInfo.username}')
  [[ $who == "system:serviceaccount:$GR_NS:default" ]] || { echo "FAIL: token user is '$who'" >&2; exit 1; }
fi
echo "PASS: shell harness"

#!/usr/bin/env bash
# cli_certify_refused (unit): `gpuready certify` refuses a Certification the
# controller could only fail, before it reads the kubeconfig or creates
# anything (issue 17): an unknown category (named, with the valid ones
# listed: every `gpuready catalog list` entry), and a CategoryOptions field
# no category can use. The kubeconfig given does not exist: a command that
# got as far as connecting would say so (the last case shows it does).
# cli_cluster checks against a real API server that nothing was created.
# Usage: test_cli_certify_refused.sh GPUREADY
set -uo pipefail
bin=${1:?gpuready}
fail=0
bad() { echo "FAIL: $*"; fail=1; }
g() { "$bin" certify --kubeconfig /nonexistent/kubeconfig -n team-a "$@"; }

mapfile -t valid < <("$bin" catalog list | awk 'NR > 1 {print $1}')
((${#valid[@]} == 9)) || bad "catalog list: ${#valid[@]} categories"
want_list=$(IFS=,; echo "${valid[*]}" | sed 's/,/, /g')

for args in "--category x/y" "--category diagnostics/dcgm-level1 --category x/y" \
  "--category communication/x/y"; do
  read -r -a a <<<"$args"
  cat=${a[-1]}
  out=$(g "${a[@]}" 2>&1); rc=$?
  [[ $rc -eq 2 ]] || bad "certify $args: exit $rc, want 2: $out"
  [[ $out == "gpuready certify: --category $cat: Unknown certification category $cat; valid categories (DOMAIN/VARIANT): $want_list" ]] ||
    bad "certify $args: message: $out (want the category named and: $want_list)"
  [[ $out != *nonexistent* ]] || bad "certify $args: read the kubeconfig before refusing: $out"
done

# A global option none of the categories can use (the controller would fail
# the Certification with BuildFailed at once).
out=$(g --category diagnostics/dcgm-level1 --set maxBytes=8G 2>&1); rc=$?
[[ $rc -eq 2 && $out == "gpuready certify: spec.maxBytes: none of this Certification's categories can use it (diagnostics/dcgm-level1: it does not run the nccl-tests message-size sweep). Remove it, or set it in the options of a category that uses it" ]] ||
  bad "unused option: exit $rc: $out"
out=$(g --category communication/nccl-all-reduce --set maxSteps=10 2>&1); rc=$?
[[ $rc -eq 2 && $out == *"spec.maxSteps: none of this Certification's categories can use it"*"training runs"* ]] ||
  bad "training option: exit $rc: $out"
# ... but one that some category uses is fine for the others: this gets as
# far as the (missing) kubeconfig.
out=$(g --category diagnostics/dcgm-level1 --category communication/nccl-all-reduce \
  --set maxBytes=8G --set testScale=intra-node 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"/nonexistent/kubeconfig"* ]] || bad "valid certify: exit $rc: $out"
exit $fail

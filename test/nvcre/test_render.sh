#!/usr/bin/env bash
# gpuready_render (unit): `gpuready render` output equals the goldens
# (test/nvcre/data/*.golden.yaml) and the exit status says whether the
# controller would run the Workflow (0) or fail it (1). Regenerate a golden
# with the command shown on failure after reviewing the diff.
# Usage: test_render.sh <gpuready binary>
set -uo pipefail
here=$(cd -- "$(dirname -- "$0")" && pwd)
bin=$1
fail=0
check() { # want_rc golden args...
  local want=$1 golden=$2
  shift 2
  local out rc
  out=$("$bin" render "$@")
  rc=$?
  if [[ $rc -ne $want ]]; then echo "FAIL: gpuready render $*: exit $rc, want $want"; fail=1; fi
  if ! diff -u "$here/data/$golden" <(printf '%s\n' "$out"); then
    echo "FAIL: gpuready render $* differs from data/$golden (regenerate: gpuready render $* > test/nvcre/data/$golden)"
    fail=1
  fi
}
# WF-25 WF-45: the aws override removes the queue label; the Job still has it.
check 0 wf-nccl.aws-h100.golden.yaml -f "$here/data/wf-nccl.yaml" --platform aws --gpu h100 --count 4
# WF-38 WF-46 WF-47: the oci override changes it: GangSchedulingConflict, no Jobs.
check 1 wf-nccl-oci-conflict.golden.yaml -f "$here/data/wf-nccl-oci-conflict.yaml" --platform oci --gpu h100 --count 2
# Bad usage exits 2.
"$bin" render -f "$here/data/wf-nccl.yaml" >/dev/null 2>&1
[[ $? -eq 2 ]] || { echo "FAIL: render without nodes or platform must exit 2"; fail=1; }
exit $fail

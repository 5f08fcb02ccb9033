#!/usr/bin/env bash
# nvcre_catalog_goldens (unit): for every catalog entry × {aws, gcp, azure,
# oci, onprem} × {h100, gb200, l40s}, what the controllers would create from
# a one-category Certification on two generated GPU nodes of that platform
# and GPU (test/nvcre/data/catalog/<domain>/<variant>/<platform>-<arch>.yaml):
# the Workflow (Certification controller), its first-pass summary, the
# dependencies (TrainingRuntime, ComputeDomain) and Job(s) (Workflow
# controller) and each Job's TrainJob (Job controller). `gpuready render`
# runs those controllers' own pure functions, so a change to a catalog
# default, a platform file, or the controllers' child-building code shows
# here as a diff.
#
# Why two nodes: the smallest set on which every category partitions as it
# does by default for these GPUs: the NCCL categories (nodesPerJob 2) make
# one Job over both nodes, the single-node categories (loopback, DCGM) one
# Job per node, which shows the per-group naming and renamed job-scoped
# dependencies. More nodes only repeat identical Jobs. Volatile fields are
# fixed: uids are 00000000-0000-4000-8000-<kind><n>, the clock 2026-01-01.
#
# Also: CategoryOptions goldens (data/catalog/options/<name>.yaml, each from
# the `--set` arguments on its first line) show each option reaching the
# workload.
#
# Usage: test_catalog_goldens.sh <gpuready binary> [--update]
#   --update rewrites the goldens; review the diff (git diff) before committing.
set -uo pipefail
here=$(cd -- "$(dirname -- "$0")" && pwd)
bin=$1
update=${2:-}
data=$here/data/catalog
fail=0 checked=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # golden args...
  local golden=$1
  shift
  local rc=0
  "$bin" render "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "FAIL: gpuready render $*: exit $rc: $(cat "$tmp/err")"
    fail=1
    return
  fi
  checked=$((checked + 1))
  if [[ $update == --update ]]; then
    mkdir -p "$(dirname "$golden")"
    cp "$tmp/out" "$golden"
  elif [[ ! -f $golden ]]; then
    echo "FAIL: $golden is missing (run: $0 $bin --update)"
    fail=1
  elif ! diff -u "$golden" "$tmp/out"; then
    echo "FAIL: gpuready render $* differs from ${golden#"$here"/} (after review: $0 $bin --update)"
    fail=1
  fi
}

mapfile -t cats < <("$bin" catalog list | awk 'NR > 1 {print $1}')
if [[ ${#cats[@]} -ne 9 ]]; then
  echo "FAIL: gpuready catalog list: ${#cats[@]} categories, want 9 (a new one needs its goldens: --update)"
  fail=1
fi
for c in "${cats[@]}"; do
  for p in aws gcp azure oci onprem; do
    for a in h100 gb200 l40s; do
      check "$data/$c/$p-$a.yaml" --category "$c" --platform "$p" --gpu "$a"
    done
  done
done
# A golden whose category left the catalog is stale.
while IFS= read -r f; do
  rel=${f#"$data"/}
  [[ $rel == options/* ]] && continue
  c=${rel%/*}
  printf '%s\n' "${cats[@]}" | grep -qxF "$c" || {
    echo "FAIL: $rel: no catalog category $c (delete the golden)"
    fail=1
  }
done < <(find "$data" -name '*.yaml' | sort)

# CategoryOptions reaching the workload: the first line of each golden
# (`# args: ...`) holds its render arguments.
for f in "$data"/options/*.yaml; do
  [[ -f $f ]] || continue
  read -r -a args < <(head -n 1 "$f" | sed 's/^# args: //')
  "$bin" render "${args[@]}" >"$tmp/body" 2>"$tmp/err"
  rc=$?
  { head -n 1 "$f"; cat "$tmp/body"; } >"$tmp/out"
  checked=$((checked + 1))
  if [[ $rc -gt 1 ]]; then
    echo "FAIL: gpuready render ${args[*]}: exit $rc: $(cat "$tmp/err")"
    fail=1
  elif [[ $update == --update ]]; then
    cp "$tmp/out" "$f"
  elif ! diff -u "$f" "$tmp/out"; then
    echo "FAIL: gpuready render ${args[*]} differs from ${f#"$here"/} (after review: $0 $bin --update)"
    fail=1
  fi
done
echo "checked $checked renderings"
exit $fail

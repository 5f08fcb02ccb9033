#!/usr/bin/env bash
# Unit test of scripts/cluster's sim_actions (the simulator's apply loop) with
# a fake kubectl: a batched apply that fails (the API server or JobSet's pod
# webhook timing out under load) is retried file by file until each file
# applied; a lost apply used to leave its pod Running for ever.
set -euo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gr-sim-actions.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
mkdir -p "$work/bin" "$work/d/sim"
# The fake kubectl fails its first two calls, then succeeds.
cat >"$work/bin/kubectl" <<FAKE
#!/usr/bin/env bash
n=\$(cat "$work/count" 2>/dev/null || echo 0)
echo \$((n + 1)) >"$work/count"
printf '%s\n' "\$*" >>"$work/calls"
((n >= 2)) || { echo "Error from server: Timeout" >&2; exit 1; }
FAKE
chmod +x "$work/bin/kubectl"
touch "$work/a.yaml" "$work/b.yaml"
sed -n '/^sim_actions() {/,/^}/p' "$root/scripts/cluster" >"$work/fn.sh"
grep -q '^sim_actions() {' "$work/fn.sh" || { echo "FAIL: no sim_actions in scripts/cluster"; exit 1; }
# Keep the input open until both files applied (bounded: 120 s).
{
  printf 'apply %s\napply %s\n' "$work/a.yaml" "$work/b.yaml"
  for _ in $(seq 1200); do
    [[ -e $work/a.yaml || -e $work/b.yaml ]] || break
    sleep 0.1
  done
} | GR_K8S_BIN=$work/bin bash -c 'set -euo pipefail; source "$1"; sim_actions "$2"' _ "$work/fn.sh" "$work/d"
fails=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; fails=$((fails + 1)); fi; }
check '[[ ! -e $work/a.yaml && ! -e $work/b.yaml ]]' "both files applied (and removed) after the failed batch"
check '[[ $(sed -n 1p "$work/calls") == *"--filename=$work/a.yaml --filename=$work/b.yaml"* ]]' \
  "the first apply is one batch of both files"
check '(($(grep -c -- "-f $work/a.yaml" "$work/calls") == 2))' "a.yaml retried alone until it applied"
check '(($(grep -c -- "-f $work/b.yaml" "$work/calls") == 1))' "b.yaml retried alone once"
((fails == 0))

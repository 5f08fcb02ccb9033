#!/usr/bin/env bash
# Unit test of scripts/cluster's sim_actions (the simulator's apply loop) with
# a fake kubectl: a batched apply that fails (the API server or JobSet's pod
# webhook timing out under load) is retried file by file until each file
# applied, and a line cut by the read timeout (a loaded machine) is read
# whole; a lost apply used to leave its pod Running for ever.
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
sed -n '/^sim_read_line() {/,/^}/p; /^sim_actions() {/,/^}/p' "$root/scripts/cluster" >"$work/fn.sh"
grep -q '^sim_actions() {' "$work/fn.sh" || { echo "FAIL: no sim_actions in scripts/cluster"; exit 1; }
# Keep the input open until both files applied (bounded: 120 s).
{
  # b whole, then a cut in two by a pause longer than the 0.3 s batch timeout
  printf 'apply %s\napply %s' "$work/b.yaml" "$work/a"
  sleep 1
  printf '.yaml\n'
  for _ in $(seq 1200); do
    [[ -e $work/a.yaml || -e $work/b.yaml ]] || break
    sleep 0.1
  done
} | GR_K8S_BIN=$work/bin bash -c 'set -euo pipefail; source "$1"; sim_actions "$2"' _ "$work/fn.sh" "$work/d"
fails=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; fails=$((fails + 1)); fi; }
check '[[ ! -e $work/a.yaml && ! -e $work/b.yaml ]]' "both files applied (and removed) after the failed batch"
check '[[ $(sed -n 1p "$work/calls") == *"--filename=$work/b.yaml --filename=$work/a.yaml" ]]' \
  "the first apply is one batch of both files, the cut line read whole"
check '(($(grep -c -- "-f $work/a.yaml\$" "$work/calls") >= 1 && $(grep -c -- "-f $work/b.yaml\$" "$work/calls") >= 1))' \
  "each file retried alone after the failed batch"
check '! grep -q -- "$work/a\$\|$work/a " "$work/calls"' "no apply of a cut file name"
((fails == 0))

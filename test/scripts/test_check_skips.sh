#!/usr/bin/env bash
# test_check_skips.sh — scripts/check-skips, the skip gate of scripts/test,
# on the junit and json-v1 files of a real ctest run: a generated project
# with a passing test, a unit test that skips (missing npm peers), an
# integration test that skips (GR_SKIP_INTEGRATION) and one that skips
# without printing why.
set -u
SRC=${GR_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
GATE=$SRC/scripts/check-skips
command -v python3 >/dev/null || { echo "SKIP: python3 not installed (scripts/install-deps)"; exit 77; }
W=$(mktemp -d /tmp/gr-skips-XXXXXX)
trap 'rm -rf "$W"' EXIT
FAILS=0
fail() { echo "FAIL [$CASE]: $*"; FAILS=$((FAILS + 1)); }
check() { eval "$1" || fail "$2"; }

mkdir -p "$W/p"
cat >"$W/p/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(skips NONE)
enable_testing()
add_test(NAME passes COMMAND sh -c "echo fine")
set_tests_properties(passes PROPERTIES LABELS unit)
add_test(NAME needs_npm COMMAND sh -c "echo 'starting'; echo 'SKIP: test/node/node_modules missing (scripts/install-deps)'; exit 77")
set_tests_properties(needs_npm PROPERTIES LABELS unit SKIP_RETURN_CODE 77)
add_test(NAME needs_cluster COMMAND sh -c "echo 'SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION'; exit 77")
set_tests_properties(needs_cluster PROPERTIES LABELS "integration;fixture" SKIP_RETURN_CODE 77)
add_test(NAME silent COMMAND sh -c "exit 77")
set_tests_properties(silent PROPERTIES LABELS integration SKIP_RETURN_CODE 77)
CM
cmake -S "$W/p" -B "$W/b" >/dev/null || { echo "cmake failed"; exit 1; }
ctest --test-dir "$W/b" --output-junit "$W/all.xml" >/dev/null
ctest --test-dir "$W/b" -L unit --output-junit "$W/unit.xml" >/dev/null
ctest --test-dir "$W/b" -R passes --output-junit "$W/none.xml" >/dev/null
ctest --test-dir "$W/b" --show-only=json-v1 >"$W/tests.json"

# gate JUNIT [ARGS...]: sets RC, OUT
gate() {
  local j=$1; shift
  OUT=$W/out-$RANDOM.txt
  python3 "$GATE" --junit "$W/$j" --tests "$W/tests.json" "$@" >"$OUT" 2>&1
  RC=$?
}

CASE="no skips"
gate none.xml
check '[ $RC = 0 ] && grep -q "^skips: none" $OUT' "rc $RC: $(cat $OUT)"

CASE="skips not allowed: exit 1, every skip listed with its reason"
gate all.xml
check '[ $RC = 1 ]' "rc $RC, want 1"
check 'grep -q "3 test(s) did not run" $OUT' "count"
check 'grep -q "needs_npm \[unit\] NOT ALLOWED: SKIP: test/node/node_modules missing (scripts/install-deps)" $OUT' "npm reason: $(cat $OUT)"
check 'grep -q "needs_cluster \[fixture,integration\] NOT ALLOWED: SKIPPED: integration tests disabled by GR_SKIP_INTEGRATION" $OUT' "cluster reason"
check 'grep -q "silent \[integration\] NOT ALLOWED: (no output)" $OUT' "a skip without output still named"
check 'grep -q "GR_ALLOW_SKIPS=1" $OUT' "says how to allow skips"
check '! grep -q "passes" $OUT' "a test that ran is not listed"

CASE="GR_SKIP_INTEGRATION: integration skips allowed, the unit skip still fails"
gate all.xml --allow-label integration
check '[ $RC = 1 ]' "rc $RC, want 1"
check 'grep -q "needs_cluster \[fixture,integration\] allowed" $OUT && grep -q "silent \[integration\] allowed" $OUT' "integration allowed"
check 'grep -q "needs_npm \[unit\] NOT ALLOWED" $OUT && grep -q "^skips: 1 test(s) that must run" $OUT' "unit not allowed"

CASE="only integration skipped, GR_SKIP_INTEGRATION: passes"
python3 - "$W/all.xml" "$W/int.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]); r = t.getroot()
for c in list(r):
    if c.get("name") == "needs_npm":
        r.remove(c)
t.write(sys.argv[2])
PY
gate int.xml --allow-label integration
check '[ $RC = 0 ] && grep -q "all allowed" $OUT' "rc $RC: $(cat $OUT)"

CASE="GR_ALLOW_SKIPS: everything allowed, still listed"
gate all.xml --allow-all
check '[ $RC = 0 ] && [ "$(grep -c " allowed: " $OUT)" = 3 ]' "rc $RC: $(cat $OUT)"

CASE="a label subset run (-L unit)"
gate unit.xml --allow-label integration
check '[ $RC = 1 ] && grep -q "1 test(s) did not run" $OUT' "rc $RC: $(cat $OUT)"

CASE="unreadable results"
gate missing.xml
check '[ $RC = 2 ] && grep -q "cannot read the ctest results" $OUT' "rc $RC: $(cat $OUT)"

if [ $FAILS -gt 0 ]; then
  echo "$FAILS check(s) failed"
  exit 1
fi
echo "skip gate: all cases passed"

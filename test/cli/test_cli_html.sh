#!/usr/bin/env bash
# cli_html (unit): the HTML certification report (data/report.html, the
# golden that cli_report renders from data/report-input.yaml) in headless
# Chromium, offline: it loads with network access disabled, its script runs
# (data-ready), the DOM after scripts has 6 node cells of which 2 failed,
# the failed-node list names ip-10-0-1-12 and ip-10-0-1-13, the bandwidth
# plot and its threshold line are there, and a screenshot is written.
# Skipped (77) when Chromium is not installed (scripts/install-deps adds the
# Debian package `chromium`).
set -uo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z $chrome ]]; then
  echo "SKIPPED: no chromium on PATH (scripts/install-deps installs the Debian package chromium)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$here/data/report.html" "$tmp/report.html"
flags=(--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run
       --user-data-dir="$tmp/profile" --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>'
       --virtual-time-budget=5000)
fail() { echo "FAIL: $*"; exit 1; }
timeout 120 "$chrome" "${flags[@]}" --dump-dom "file://$tmp/report.html" >"$tmp/dom.html" 2>"$tmp/chrome.log" ||
  { cat "$tmp/chrome.log"; fail "chromium --dump-dom failed"; }
dom=$(cat "$tmp/dom.html")
[[ $dom == *'data-ready="1"'* ]] || fail "the report's script did not run: $(head -c 400 "$tmp/dom.html")"
[[ $dom == *'data-node-count="6"'* ]] || fail "node count (want 6): $(grep -o 'data-node-count="[0-9]*"' "$tmp/dom.html")"
[[ $dom == *'data-failed-count="2"'* ]] || fail "failed node count (want 2)"
[[ $dom == *'<span class="failed-node">ip-10-0-1-12</span>'* ]] || fail "ip-10-0-1-12 not in the failed list"
[[ $dom == *'<span class="failed-node">ip-10-0-1-13</span>'* ]] || fail "ip-10-0-1-13 not in the failed list"
[[ $dom == *'<svg class="plot"'* ]] || fail "no bandwidth plot"
[[ $dom == *'<line class="threshold"'* ]] || fail "no threshold line"
[[ $dom == *'<table id="results">'* ]] || fail "no results table"
timeout 120 "$chrome" "${flags[@]}" --window-size=1200,1600 --screenshot="$tmp/report.png" \
  "file://$tmp/report.html" >/dev/null 2>>"$tmp/chrome.log" || { cat "$tmp/chrome.log"; fail "screenshot failed"; }
[[ -s $tmp/report.png && $(head -c 8 "$tmp/report.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
  fail "no PNG screenshot"
echo "PASS cli_html ($(stat -c %s "$tmp/report.png") byte screenshot)"

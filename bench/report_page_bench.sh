#!/usr/bin/env bash
# How long `ncclshim report` takes to write the HTML page of a big phynet report, and how long
# headless chromium takes to open it (docs/TOOLS.md): the load test's trace (64 ranks, TP=8 x DP=8,
# 10,240 ops; tests/phynet/tools/make_test_trace.cc) replayed 7 times on 64 oversubscribed local
# ranks gives 10,080 report rows; the page is then written (and opened, when chromium is there) in
# R rounds. Needs Python 3 with matplotlib (scripts/setup.sh --tests), as `ncclshim report` does.
#
# usage: bench/report_page_bench.sh [--rounds R]      (default 3)
# Output lines (also read by bench/stated_figures.py):
#   report_page rows <N> seconds <median> (<min>-<max>) kib <size>
#   report_open seconds <median> (<min>-<max>)          (with chromium only)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "report_page_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for tool in build/ncclshim build/phynet build/phynet_make_test_trace; do
  [ -x "$tool" ] || { echo "report_page_bench: $tool is missing: run 'make all' first" >&2; exit 2; }
done
python3 -c 'import matplotlib' 2>/dev/null ||
  { echo "report_page_bench: no Python 3 with matplotlib here (scripts/setup.sh --tests installs it)" >&2; exit 2; }
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)

work=$(mktemp -d /tmp/ncclshim-report-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
build/phynet_make_test_trace "$work/trace" --ranks 64 --tp 8 --repeat 10 --elements 64 >/dev/null
echo "# replaying the load test's trace on 64 ranks, 7 iterations" >&2
timeout 600 mpirun --allow-run-as-root --oversubscribe -np 64 --mca pml ob1 --mca btl self,tcp \
  --mca btl_tcp_if_include lo build/phynet --ifname lo --rows 0 --iterations 7 --json "$work/report.json" \
  "$work/trace" >"$work/replay.log" 2>&1 || { echo "report_page_bench: the replay failed:" >&2; tail -5 "$work/replay.log" >&2; exit 1; }
rows=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["ops"]))' "$work/report.json")

: >"$work/times.txt"
for round in $(seq 1 "$rounds"); do
  start=$(date +%s%N)
  build/ncclshim report "$work/report.json" -o "$work/page.html" --input "$work/trace" 2>"$work/report.err" ||
    { echo "report_page_bench: ncclshim report failed: $(cat "$work/report.err")" >&2; exit 1; }
  echo "page $(( ($(date +%s%N) - start) / 1000000 ))" >>"$work/times.txt"
  if [ -n "$chromium" ]; then
    start=$(date +%s%N)
    timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
      --user-data-dir="$work/profile" --dump-dom "file://$work/page.html" >/dev/null 2>&1 || true
    echo "open $(( ($(date +%s%N) - start) / 1000000 ))" >>"$work/times.txt"
  fi
  echo "# round $round done" >&2
done

python3 - "$work/times.txt" "$rows" "$(stat -c %s "$work/page.html")" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    what, ms = line.split()
    by.setdefault(what, []).append(int(ms) / 1000)
page = by["page"]
print(f"report_page rows {sys.argv[2]} seconds {statistics.median(page):.2f} ({min(page):.2f}-{max(page):.2f})"
      f" kib {int(sys.argv[3]) // 1024}")
if "open" in by:
    o = by["open"]
    print(f"report_open seconds {statistics.median(o):.2f} ({min(o):.2f}-{max(o):.2f})")
PY

#!/usr/bin/env bash
# The report pages end to end (`ncclshim report`, `ncclshim compare`, `phynet --html`; run by
# tests/run_all.sh after `make`; about 40 s on 2 cores). Real replays: mpirun with 4
# ranks split over two emulated hosts (NCCLSHIM_HOSTID), --scale 1 and --scale 8, and 64 ranks
# replaying the load test's 10,240-op trace 7 times (10,080 report rows). Asserts:
#   cli/*      --help; a missing file, bad JSON, a CSV, a non-report JSON, a missing field, an
#              unwritable output: exit 2 and one line that names the file, never a Python
#              traceback; usage errors exit 2; without matplotlib report and compare -o exit 3
#              and write nothing, while compare's text still works.
#   page/*     phynet --html writes the same bytes as ncclshim report --input TRACE on the same JSON
#              (the trace gives the communicators' members: a timeline bar per rank of every op;
#              without it the page says what it lacks; another workload's trace is refused); the pages
#              open in headless chromium with no console message and no network request (its net
#              log), and the DOM read back (tests/report/check_page.py) has every chart as SVG with
#              the JSON's point counts and tables whose numbers equal the JSON (summary, ranks,
#              NICs, the traffic matrix from peer_bytes); a planted script error and a planted
#              external image are caught (the checks can fail); a report without peer_bytes / hosts
#              still renders, and an unknown section ("algorithms") is shown as a table.
#   compare/*  scale 8 against scale 1: the end-to-end time ratio and the largest size's time ratios
#              are > 1, and < 1 the other way round; the HTML's ratios equal a recomputation from
#              the JSONs; three runs compare each against the first; --fail-below exits 1 / 0;
#              different workloads (other ops, world size, a count --scale does not explain) are
#              refused (exit 2).
#   time/*     CPU call times are labelled, never divided by, and compare refuses them;
#              a hand-made GPU capture replays --pace recorded with its ops, bytes, NCCL's recorded
#              algorithms and its NCCL settings, and compare's capture figures equal the hand
#              computation (docs/replay_time.md).
#   load/*     the 64-rank page: written, < 10 MB, opened by chromium in < 5 s (browser start
#              included), its matrix 64 x 64 equal to the JSON.
# chromium (scripts/setup.sh --tests installs it) is required: without it the browser checks FAIL.
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
tool="$BUILD/ncclshim"
phynet="$BUILD/phynet"
gen="$BUILD/phynet_make_test_trace"
check="tests/report/check_page.py"
work=$(mktemp -d /tmp/report-tests-XXXXXX)
trap 'rm -rf "$work"' EXIT

source tests/lib/checks.sh  # result(), passed, failed

for f in "$tool" "$phynet" "$gen"; do
  [ -x "$f" ] || { echo "missing $f: run make first"; echo "0 passed, 1 failed"; exit 1; }
done
python=$(for p in ${NCCLSHIM_PYTHON:-python3 /usr/bin/python3}; do "$p" -c 'import matplotlib' 2>/dev/null && { echo "$p"; break; }; done)
[ -n "$python" ]
result $? "setup/python3-with-matplotlib" "apt-get install python3-matplotlib (scripts/setup.sh --tests)"
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}

# browse <page> <name>: chromium loads the page; $work/<name>.dom (the DOM after load), .log
# (its stderr with console messages), .net (the net log). Exit status: chromium's.
browse() {
  local page=$1 name=$2 profile
  profile=$(mktemp -d "$work/profile-XXXXXX")
  timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$profile" \
    --host-resolver-rules="MAP * ~NOTFOUND" --enable-logging=stderr --v=0 --log-net-log="$work/$name.net" \
    --dump-dom "file://$(realpath "$page")" >"$work/$name.dom" 2>"$work/$name.log"
}
# console_clean <name>: no console message at all (errors, warnings, logs) while loading.
console_clean() { ! grep -q ":CONSOLE" "$work/$1.log"; }
# requests <name>: URLs the page asked the network for (the browser's own update / account
# traffic left out).
requests() {
  grep -o '"url":"[^"]*"' "$work/$1.net" 2>/dev/null | sort -u |
    grep -Ev '"url":"https?://([a-z0-9-]+\.)*(google\.com|googleapis\.com|gvt1\.com)/' || true
}
seconds_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }  # <date +%s%N>
browser_ok=1
if [ -n "$chromium" ] && "$chromium" --version >/dev/null 2>&1; then browser_ok=0; fi
result $browser_ok "setup/chromium-starts (${chromium:-none found})" "apt-get install chromium (scripts/setup.sh --tests)"

# ---- command line: help, and errors that name the file (no traceback)
for command in report compare; do
  "$tool" "$command" --help >"$work/help.txt" 2>&1 && grep -q "usage: ncclshim $command" "$work/help.txt"
  result $? "cli/help-$command"
done
printf '{"ops": [1, 2' >"$work/cut.json"
printf 'op,group,comm,nranks,\n' >"$work/report.csv"
printf '{"traceEvents": []}\n' >"$work/other.json"
for case in "missing:$work/no-such.json:cannot read" "cut:$work/cut.json:not valid JSON (line 1" \
            "csv:$work/report.csv:not valid JSON" "other:$work/other.json:not a phynet JSON report"; do
  IFS=: read -r name file says <<<"$case"
  "$tool" report "$file" -o "$work/x.html" >"$work/err.txt" 2>&1
  rc=$?
  [ "$rc" -eq 2 ] && grep -qF "$file: $says" "$work/err.txt" && ! grep -q Traceback "$work/err.txt" && [ ! -e "$work/x.html" ]
  result $? "cli/report-$name-exit-2-names-the-file" "exit $rc: $(cat "$work/err.txt")"
  "$tool" compare "$file" "$file" >"$work/err.txt" 2>&1
  rc=$?
  [ "$rc" -eq 2 ] && grep -qF "$file: $says" "$work/err.txt" && ! grep -q Traceback "$work/err.txt"
  result $? "cli/compare-$name-exit-2-names-the-file" "exit $rc: $(cat "$work/err.txt")"
done
"$tool" report "$work/cut.json" >"$work/err.txt" 2>&1
[ $? -eq 2 ] && grep -q "\-o PAGE.html is required" "$work/err.txt"
result $? "cli/report-without-o" "$(cat "$work/err.txt")"
"$tool" compare "$work/cut.json" >"$work/err.txt" 2>&1
[ $? -eq 2 ] && grep -q "two or more" "$work/err.txt"
result $? "cli/compare-one-input" "$(cat "$work/err.txt")"
"$tool" compare a.json b.json --fail-below fast >"$work/err.txt" 2>&1
[ $? -eq 2 ] && grep -q "fail-below: 'fast'" "$work/err.txt"
result $? "cli/compare-bad-fail-below" "$(cat "$work/err.txt")"

# ---- real replays: 4 ranks on two emulated hosts, --scale 1 and 8
"$gen" "$work/trace" --ranks 4 --tp 2 --repeat 2 >/dev/null
replay() {  # replay <name> <np> <trace> <phynet args...>: rank r on host node<r/2>
  local name=$1 np=$2 trace=$3; shift 3
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$np" --mca pml ob1 --mca btl self,tcp \
    --mca btl_tcp_if_include lo sh -c 'NCCLSHIM_HOSTID=node$((OMPI_COMM_WORLD_RANK / 2)) exec "$@"' sh \
    "$phynet" --ifname lo --rows 0 "$@" "$trace" >"$work/$name.log" 2>&1
}
replay s1 4 "$work/trace" --iterations 3 --warmup 1 --rate 5 --json "$work/s1.json" --html "$work/s1_phynet.html"
result $? "replay/scale-1-with-html" "$(tail -5 "$work/s1.log")"
grep -q "^phynet: wrote $work/s1_phynet.html" "$work/s1.log"
result $? "replay/phynet-says-it-wrote-the-page" "$(tail -3 "$work/s1.log")"
replay s8 4 "$work/trace" --iterations 3 --warmup 1 --rate 5 --scale 8 --json "$work/s8.json"
result $? "replay/scale-8" "$(tail -5 "$work/s8.log")"
replay only_allreduce 4 "$work/trace" --ops allreduce --json "$work/only_allreduce.json"
result $? "replay/allreduce-only" "$(tail -5 "$work/only_allreduce.log")"
# --html without --json: the page from a temporary JSON, which is removed
ls /tmp/phynet-report-*.json 2>/dev/null | sort >"$work/tmp-before.txt"
replay html_only 4 "$work/trace" --ops allgather --html "$work/html_only.html"
rc=$?
ls /tmp/phynet-report-*.json 2>/dev/null | sort >"$work/tmp-after.txt"
[ "$rc" -eq 0 ] && grep -q 'id="chart-busbw"' "$work/html_only.html" && cmp -s "$work/tmp-before.txt" "$work/tmp-after.txt"
result $? "replay/html-without-json" "$(tail -5 "$work/html_only.log")"
"$phynet" --help | grep -q -- "--html FILE.html"
result $? "replay/phynet-help-lists-html"

# ---- the report page
"$tool" report "$work/s1.json" -o "$work/s1.html" --input "$work/trace" 2>"$work/report.err"
result $? "page/report-exit-0" "$(cat "$work/report.err")"
cmp -s "$work/s1.html" "$work/s1_phynet.html"
result $? "page/phynet-html-equals-ncclshim-report-with-input"
"$tool" report "$work/s1.json" -o "$work/nomembers.html" 2>"$work/report.err" &&
  grep -q "have one lane each" "$work/nomembers.html"
result $? "page/without-input-the-timeline-says-what-it-lacks" "$(cat "$work/report.err")"
"$tool" report "$work/s1.json" -o "$work/x.html" --input examples/traces/megatron_tp2 >"$work/err.txt" 2>&1
[ $? -eq 2 ] && grep -q "examples/traces/megatron_tp2: none of its communicators is in $work/s1.json" "$work/err.txt"
result $? "page/input-of-another-workload-refused" "$(cat "$work/err.txt")"
if [ $browser_ok -eq 0 ]; then
  browse "$work/s1.html" s1
  result $? "page/report-opens-in-chromium" "$(tail -3 "$work/s1.log")"
  console_clean s1
  result $? "page/report-no-console-message" "$(grep ":CONSOLE" "$work/s1.log" | head -3)"
  [ -z "$(requests s1)" ]
  result $? "page/report-no-network-request" "$(requests s1 | head -3)"
  "$python" "$check" report "$work/s1.dom" "$work/s1.json" members >"$work/check.txt" 2>&1
  result $? "page/report-charts-and-numbers-equal-the-json ($(head -1 "$work/check.txt"))" "$(cat "$work/check.txt")"
  # The checks can fail: a planted script error and a planted external image are both seen.
  sed 's|</body>|<script>console.error("planted")</script><img src="http://example.invalid/x.png"></body>|' \
    "$work/s1.html" >"$work/planted.html"
  browse "$work/planted.html" planted
  ! console_clean planted && requests planted | grep -q example.invalid &&
    ! "$python" "$check" report "$work/planted.dom" "$work/s1.json" >/dev/null 2>&1
  result $? "page/planted-error-and-request-are-caught"
fi

# A report without per-peer bytes and hosts (as older phynets wrote), with an unknown section.
"$python" - "$work/s1.json" "$work/bare.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for key in ("hosts", "nics", "host_pairs"):
    doc.pop(key, None)
for r in doc["ranks"]:
    for key in ("peer_bytes", "host", "host_id", "nic", "address", "local_rank"):
        r.pop(key, None)
doc["algorithms"] = [{"op": "allreduce", "algorithm": "ring", "channels": 2}]
json.dump(doc, open(sys.argv[2], "w"))
PY
"$tool" report "$work/bare.json" -o "$work/bare.html" 2>"$work/bare.err" &&
  grep -q 'id="extra-algorithms-table"' "$work/bare.html" && grep -q "no per-peer byte counts" "$work/bare.html" &&
  ! grep -q 'id="chart-matrix"' "$work/bare.html"
result $? "page/without-optional-sections-and-with-an-unknown-one" "$(cat "$work/bare.err")"
if [ $browser_ok -eq 0 ]; then
  browse "$work/bare.html" bare && console_clean bare &&
    "$python" "$check" report "$work/bare.dom" "$work/bare.json" >"$work/check.txt" 2>&1
  result $? "page/without-optional-sections-numbers-equal-the-json" "$(cat "$work/check.txt")"
fi

# Without matplotlib (a Python whose `import matplotlib` fails): report and compare -o write
# nothing and exit 3 saying so; compare's text needs only Python 3.
mkdir -p "$work/nompl"
echo 'raise ImportError("hidden by report_tests.sh")' >"$work/nompl/matplotlib.py"
printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$work/nompl" "$python" >"$work/nompl/python"
chmod +x "$work/nompl/python"
NCCLSHIM_PYTHON="$work/nompl/python" "$tool" report "$work/s1.json" -o "$work/none.html" >"$work/err.txt" 2>&1
[ $? -eq 3 ] && [ ! -e "$work/none.html" ] && grep -q "no Python 3 with matplotlib" "$work/err.txt"
result $? "cli/report-without-matplotlib-exit-3" "$(cat "$work/err.txt")"
NCCLSHIM_PYTHON="$work/nompl/python" "$tool" compare "$work/s1.json" "$work/s8.json" >"$work/out.txt" 2>"$work/err.txt" &&
  grep -q "^# end-to-end time B/A" "$work/out.txt"
result $? "cli/compare-text-without-matplotlib" "$(cat "$work/err.txt")"
NCCLSHIM_PYTHON="$work/nompl/python" "$tool" compare "$work/s1.json" "$work/s8.json" -o "$work/none.html" \
  >/dev/null 2>"$work/err.txt"
[ $? -eq 3 ] && [ ! -e "$work/none.html" ]
result $? "cli/compare-html-without-matplotlib-exit-3" "$(cat "$work/err.txt")"
"$tool" report "$work/s1.json" -o "$work/no-such-dir/page.html" >"$work/err.txt" 2>&1
[ $? -eq 2 ] && grep -qF "$work/no-such-dir/page.html: cannot write" "$work/err.txt" && ! grep -q Traceback "$work/err.txt"
result $? "cli/report-unwritable-output-names-it" "$(cat "$work/err.txt")"
printf '{"world_size":4,"iterations":1,"end_to_end_s":1,"ranks":[],"summary":[],"ops":[{"op":"allreduce"}]}' \
  >"$work/field.json"
"$tool" report "$work/field.json" -o "$work/x.html" >"$work/err.txt" 2>&1
[ $? -eq 2 ] && grep -qF "$work/field.json: ops[0]: missing field \"group\"" "$work/err.txt"
result $? "cli/report-missing-field-named" "$(cat "$work/err.txt")"

# ---- compare: scale 8 against scale 1 takes longer, and the other way round shorter
"$tool" compare "$work/s1.json" "$work/s8.json" -o "$work/compare.html" >"$work/compare.txt" 2>"$work/compare.err"
result $? "compare/exit-0" "$(cat "$work/compare.err")"
e2e=$(sed -n 's/^# end-to-end time B\/A: //p' "$work/compare.txt")
awk -v r="$e2e" 'BEGIN { exit !(r > 1) }'
result $? "compare/scale-8-end-to-end-time-ratio-above-1 ($e2e)" "$(head -8 "$work/compare.txt")"
# rows of the largest size bucket (256K at scale 1: 2 MiB at scale 8): time ratio > 1
largest=$(awk '/^  / && $4 == "256K" { n++; if ($9 <= 1) bad++ } END { print n + 0, bad + 0 }' "$work/compare.txt")
[ "${largest% *}" -gt 0 ] && [ "${largest#* }" -eq 0 ]
result $? "compare/scale-8-largest-ops-time-ratio-above-1 (rows, not above: $largest)" "$(cat "$work/compare.txt")"
"$tool" compare "$work/s8.json" "$work/s1.json" >"$work/reverse.txt" 2>&1
back=$(sed -n 's/^# end-to-end time B\/A: //p' "$work/reverse.txt")
awk -v r="$back" 'BEGIN { exit !(r < 1) }'
result $? "compare/reverse-end-to-end-time-ratio-below-1 ($back)" "$(head -8 "$work/reverse.txt")"
if [ $browser_ok -eq 0 ]; then
  browse "$work/compare.html" compare && console_clean compare && [ -z "$(requests compare)" ]
  result $? "compare/page-opens-clean" "$(grep ":CONSOLE" "$work/compare.log" | head -3)"
  "$python" "$check" compare "$work/compare.dom" "$work/s1.json" "$work/s8.json" >"$work/check.txt" 2>&1
  result $? "compare/page-ratios-equal-a-recomputation ($(head -1 "$work/check.txt"))" "$(cat "$work/check.txt")"
fi
"$tool" compare "$work/s1.json" "$work/s8.json" --fail-below 0.9 >/dev/null 2>"$work/fail.err"
[ $? -eq 1 ] && grep -q "below --fail-below: .*end-to-end speed" "$work/fail.err"
result $? "compare/fail-below-0.9-exits-1" "$(cat "$work/fail.err")"
"$tool" compare "$work/s1.json" "$work/s1.json" --fail-below 0.999 >/dev/null 2>"$work/fail.err"
result $? "compare/fail-below-same-run-exits-0" "$(cat "$work/fail.err")"
"$tool" compare "$work/s1.json" "$work/s8.json" "$work/s1.json" >"$work/three.txt" 2>"$work/three.err" &&
  grep -q "^# end-to-end time C/A: 1.000$" "$work/three.txt" && grep -q "C/A time" "$work/three.txt"
result $? "compare/three-runs-each-against-the-first" "$(cat "$work/three.err") $(head -6 "$work/three.txt")"
# A count that --scale does not explain (one op of the scale-8 run edited) is another workload.
"$python" - "$work/s8.json" "$work/edited.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
key = (doc["ops"][0]["comm"], doc["ops"][0]["seq"])
for op in doc["ops"]:
    if (op["comm"], op["seq"]) == key:
        op["count"] += 1000
json.dump(doc, open(sys.argv[2], "w"))
PY
"$tool" compare "$work/s1.json" "$work/edited.json" >/dev/null 2>"$work/refused.err"
[ $? -eq 2 ] && grep -q "not runs of the same workload: .*count [0-9]* (scale 1) against [0-9]* (scale 8)" "$work/refused.err"
result $? "compare/refuses-a-count-the-scale-does-not-explain" "$(cat "$work/refused.err")"
"$tool" compare "$work/s1.json" "$work/only_allreduce.json" >/dev/null 2>"$work/refused.err"
[ $? -eq 2 ] && grep -q "are not runs of the same workload: .* is only in $work/s1.json" "$work/refused.err"
result $? "compare/refuses-a-different-workload" "$(cat "$work/refused.err")"

# ---- time (docs/replay_time.md): recorded time for what it is, the job's timeline (--delay: phynet_tests.sh)
# A CPU-timed capture: its times are labelled CPU calls, never divided by; compare refuses it.
replay cpu 2 examples/traces/megatron_dp2 --json "$work/cpu.json"
"$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["recorded_clock"] == "cpu_call" and all(o["ratio"] is None for o in d["ops"]), d["recorded_clock"]
' "$work/cpu.json" &&
  grep -q "^# recorded time      : the CPU time of each call" "$work/cpu.log"
result $? "time/cpu-call-times-labelled-never-divided" "$(grep "recorded time" "$work/cpu.log")"
"$tool" compare examples/traces/megatron_dp2 "$work/cpu.json" >/dev/null 2>"$work/err.txt"
[ $? -eq 2 ] && grep -q "holds CPU call times" "$work/err.txt"
result $? "time/compare-refuses-a-cpu-timed-capture" "$(cat "$work/err.txt")"

# The hand-made GPU capture (tests/data/replay_time: two communicators overlapping, two iterations)
# replayed --pace recorded: ops, bytes and NCCL's recorded algorithms as captured; its NCCL settings
# in force with where each came from; ncclshim compare's capture figures equal the hand computation
# of docs/replay_time.md, and the replay's come from the report.
gpu=tests/data/replay_time/gpu_two_comms
NCCL_P2P_NET_CHUNKSIZE=262144 replay gpu 2 "$gpu" --pace recorded --iterations 2 --json "$work/gpu.json"
result $? "time/gpu-capture-replays-paced" "$(tail -5 "$work/gpu.log")"
"$python" - "$work/gpu.json" >"$work/gpu.txt" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ops = {(o["comm"], o["seq"]): o for o in d["ops"] if o["iteration"] == 0}
want = {("0x1111111111111111", 0): ("allreduce", 8388608, "tree", 2, "simple", 2100),
        ("0x2222222222222222", 0): ("allreduce", 65536, "ring", 1, "ll", 300),
        ("0x1111111111111111", 1): ("allgather", 1048576, "ring", 2, "simple", 500)}
for key, (op, size, algo, channels, proto, gpu_us) in want.items():
    o = ops[key]
    got = (o["op"], o["bytes"], o["algorithm"], o["channels"], o["protocol"], o["recorded_us"])
    assert got == (op, size, algo, channels, proto, gpu_us) and d["recorded_clock"] == "gpu", (key, got)
assert [r["ops"] for r in d["ranks"]] == [12, 12] and all(r["op_bytes"] == 2 * 19005440 for r in d["ranks"])
settings = {s["name"]: s for s in d["nccl_settings"]}
assert settings["NCCL_P2P_NET_CHUNKSIZE"]["source"] == "environment", settings
assert settings["NCCL_P2P_NET_CHUNKSIZE"]["captured"] == "131072" and settings["NCCL_P2P_NET_CHUNKSIZE"]["read"]
assert settings["NCCL_BUFFSIZE"]["source"] == "capture" and settings["NCCL_BUFFSIZE"]["value"] == "4194304"
assert settings["NCCL_IB_HCA"]["source"] == "capture (not applied)"
# The Socket transport's settings travel too: the replay's TCP transport read the capture's.
for name, value in (("NCCL_SOCKET_NTHREADS", "1"), ("NCCL_NSOCKS_PERTHREAD", "2")):
    assert settings[name]["source"] == "capture" and settings[name]["value"] == value and settings[name]["read"], settings
t = d["timeline"]
assert t["captured"] and t["paced"] and t["capture_overlap_pairs"] == 4, t
# From iteration 1 on (the second of two): rank 0's capture communicates 2700 us (by hand, as compare's
# "rank 0 iteration 1" below).
assert [s["rank"] for s in t["steady"]] == [0, 1] and t["steady"][0]["capture"]["comm_us"] == 2700.0, t["steady"]
print("ok")
PY
result $? "time/gpu-capture-ops-bytes-algorithms-settings" "$(cat "$work/gpu.txt")"
grep -q "^#   NCCL_BUFFSIZE=4194304  from the capture" "$work/gpu.log" &&
  grep -q "^#   NCCL_NSOCKS_PERTHREAD=2  from the capture, read" "$work/gpu.log" &&
  grep -q "^#   NCCL_IB_HCA=mlx5_0,mlx5_1  from the capture, not applied" "$work/gpu.log"
result $? "time/gpu-capture-settings-in-text" "$(grep -A8 "NCCL settings" "$work/gpu.log")"
"$tool" compare "$gpu" "$work/gpu.json" -o "$work/gpu-compare.html" >"$work/gpu-compare.txt" 2>"$work/err.txt"
result $? "time/compare-capture-with-replay" "$(cat "$work/err.txt")"
# By hand (docs/replay_time.md): per op class the longest member's GPU time; per rank communication
# = the sum of the GPU times, exposed = their union (the capture's span less its idle time).
for want in "allreduce     world       2      8M     2       2100.0" "allreduce     world       2     64K     2        300.0" \
            "allgather     world       2      1M     2        500.0" "rank 0: communication 5400.0 -> " "rank 1: communication 5800.0 -> " \
            "overlapping op pairs: capture 4, replay" "rank 0 iteration 1: communication 2700.0 -> "; do
  grep -qF -- "$want" "$work/gpu-compare.txt" || { echo "missing: $want"; false; } || break
done >"$work/missing.txt"
[ ! -s "$work/missing.txt" ]
result $? "time/compare-capture-figures-equal-the-hand-computation" "$(cat "$work/missing.txt") $(head -20 "$work/gpu-compare.txt")"
grep -Eq "rank 0: communication 5400.0 -> [0-9.]+ \([0-9.]+\), exposed 4800.0 -> [0-9.]+ \([0-9.]+\)" "$work/gpu-compare.txt" &&
  grep -Eq "rank 1: communication 5800.0 -> [0-9.]+ \([0-9.]+\), exposed 5200.0 -> " "$work/gpu-compare.txt" &&
  grep -q 'id="capture-overlap" data-value="4"' "$work/gpu-compare.html"
result $? "time/compare-exposed-time-and-page" "$(grep "rank" "$work/gpu-compare.txt" | head -4)"

# ---- 64 ranks, the load test's trace, 7 iterations: 10,080 report rows
"$gen" "$work/trace64" --ranks 64 --tp 8 --repeat 10 --elements 64 >/dev/null
start=$SECONDS
timeout 300 mpirun --allow-run-as-root --oversubscribe -np 64 --mca pml ob1 --mca btl self,tcp \
  --mca btl_tcp_if_include lo "$phynet" --ifname lo --rows 0 --iterations 7 --json "$work/big.json" \
  "$work/trace64" >"$work/big.log" 2>&1
rc=$?
rows=$("$python" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["ops"]))' "$work/big.json" 2>/dev/null)
[ "$rc" -eq 0 ] && [ "${rows:-0}" -ge 10000 ]
result $? "load/64-ranks-replay-${rows:-?}-report-rows ($((SECONDS - start)) s)" "$(tail -3 "$work/big.log")"
"$tool" compare "$work/s1.json" "$work/big.json" >/dev/null 2>"$work/refused.err"
[ $? -eq 2 ] && grep -q "64 ranks against 4" "$work/refused.err"
result $? "compare/refuses-another-world-size" "$(cat "$work/refused.err")"
start=$(date +%s%N)
"$tool" report "$work/big.json" -o "$work/big.html" --input "$work/trace64" 2>"$work/big.err"
rc=$?
took=$(seconds_since "$start")
size=$(stat -c %s "$work/big.html" 2>/dev/null || echo 0)
[ "$rc" -eq 0 ] && [ "$size" -lt 10000000 ]
result $? "load/64-rank-page-written-in-${took}s-$((size / 1024))KiB-under-10MB" "$(cat "$work/big.err")"
if [ $browser_ok -eq 0 ]; then
  start=$(date +%s%N)
  browse "$work/big.html" big
  rc=$?
  took=$(seconds_since "$start")
  [ "$rc" -eq 0 ] && awk -v t="$took" 'BEGIN { exit !(t < 5) }' && console_clean big
  result $? "load/64-rank-page-opens-in-${took}s-under-5s" "$(tail -3 "$work/big.log")"
  "$python" "$check" report "$work/big.dom" "$work/big.json" members >"$work/check.txt" 2>&1
  result $? "load/64-rank-page-numbers-equal-the-json ($(head -1 "$work/check.txt"))" "$(cat "$work/check.txt")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Capture in production (docs/capture.md), GPU-free, one rank per process through ctypes
# (tests/lib/capture_loop.py: a set-up call, then steps of four operations, one of them grouped):
# a window of marked iterations holds exactly those steps (ops = 3 x one step's, step lines 10..13)
# and the same window found without marks; SIGUSR2 starts and stops it (whole steps); call:N; a
# trigger file; a start that cannot be read is refused by name and records no call; marks in
# summary. NCCLSHIM_TRACE_MAX_MB on a long `ncclshim perf` run: each file <= 1 MiB with its footer,
# one warning per rank, validate reports the cut. zstd files read as their plain text (dump,
# summary, convert). Names carry the job; a killed process leaves its file .part; validate of a
# directory of 64 replicated rank files names the missing rank and the file of another job.
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
lib=$(realpath "$BUILD/libncclshim.so")
tool="$BUILD/ncclshim"
trace_tool="$BUILD/ncclshim-trace"
loop=tests/lib/capture_loop.py
work=$(mktemp -d /tmp/capture-tests-XXXXXX)
trap 'rm -rf "$work"' EXIT
source tests/lib/checks.sh
[ -e "$lib" ] || { echo "missing $lib: run make first"; echo "0 passed, 1 failed"; exit 1; }

# capture <name> <loop args...> (environment before it with env): one GPU-free run into $work/<name>.
capture() {
  local name=$1
  shift
  env NCCLSHIM_MODE=gpufree NCCLSHIM_TRACE_DIR="$work/$name" "$@" >"$work/$name.out" 2>"$work/$name.err"
}
ops_of() { cat "$work/$1"/*.jsonl* 2>/dev/null | grep '"type":"op"' | grep -vc '"op":"group'; }
steps_of() { cat "$work/$1"/*.jsonl* 2>/dev/null | grep '"type":"step"' | grep -o '"step":[0-9]*' | cut -d: -f2 | tr '\n' ' '; }

echo "== a window of marked iterations: steps 10-12 of 20"
capture marked NCCLSHIM_TRACE_START=iter:10 NCCLSHIM_TRACE_ITERATIONS=3 python3 $loop "$lib" 20 --mark
result "$([ "$(ops_of marked)" -eq 12 ] && [ "$(steps_of marked)" = "10 11 12 13 " ]; echo $?)" window/marked-3-steps \
  "$(ops_of marked) ops, steps $(steps_of marked); $(cat "$work/marked.err")"
"$trace_tool" validate "$work/marked" >"$work/marked.valid" 2>&1
result $? window/marked-validates "$(tail -3 "$work/marked.valid")"
"$tool" summary "$work/marked" >"$work/marked.summary" 2>&1
grep -q "iterations: 3 of 4 calls per rank (marked by the job)" "$work/marked.summary"
result $? window/marked-summary "$(grep iterations "$work/marked.summary")"

echo "== the same window without marks: iterations found while the job runs"
capture found NCCLSHIM_TRACE_START=iter:12 NCCLSHIM_TRACE_ITERATIONS=3 python3 $loop "$lib" 20
first=$(grep -m1 '"type":"op"' "$work"/found/*.jsonl | grep -o '"op":"[a-z]*","count":[0-9]*')
result "$([ "$(ops_of found)" -eq 12 ] && [ "$first" = '"op":"allreduce","count":4' ]; echo $?)" window/found-3-steps \
  "$(ops_of found) ops, first $first"

echo "== SIGUSR2 starts and stops"
capture usr2 NCCLSHIM_TRACE_START=signal python3 $loop "$lib" 20 --mark --usr2 5,9
result "$([ "$(ops_of usr2)" -eq 16 ] && [ "$(steps_of usr2)" = "6 7 8 9 10 " ]; echo $?)" window/usr2-marked \
  "$(ops_of usr2) ops, steps $(steps_of usr2)"
capture usr2found NCCLSHIM_TRACE_START=signal python3 $loop "$lib" 20 --usr2 5,15
result "$([ "$(ops_of usr2found)" -eq 40 ]; echo $?)" window/usr2-found "$(ops_of usr2found) ops (steps 5-14: 40)"

echo "== call:N, a trigger file, a start that cannot be read"
capture calls NCCLSHIM_TRACE_START=call:6 python3 $loop "$lib" 3
first=$(grep -m1 '"type":"op"' "$work"/calls/*.jsonl | grep -o '"count":[0-9]*')
result "$([ "$(ops_of calls)" -eq 7 ] && [ "$first" = '"count":8' ]; echo $?)" window/call-6 "$(ops_of calls) ops, first $first"
capture file NCCLSHIM_TRACE_START=file:"$work/go" python3 $loop "$lib" 30 --mark --file "$work/go:5:20" --sleep 0.03
n=$(ops_of file)
result "$([ "$n" -gt 0 ] && [ "$n" -lt 120 ] && [ $((n % 4)) -eq 0 ]; echo $?)" window/trigger-file "$n ops of 120"
capture bad NCCLSHIM_TRACE_START=someday python3 $loop "$lib" 3
result "$([ "$(ops_of bad)" -eq 0 ] && grep -q "NCCLSHIM_TRACE_START=someday: .*expected iter:N" "$work/bad.err"; echo $?)" \
  window/bad-start-refused "$(cat "$work/bad.err")"

echo "== NCCLSHIM_TRACE_MAX_MB=1 on a long perf run"
NCCLSHIM_TRACE_DIR="$work/max" NCCLSHIM_TRACE_MAX_MB=1 "$tool" perf all_reduce -np 2 -b 8 -e 8 -n 20000 -w 1 -c 0 \
  >/dev/null 2>"$work/max.err"
sizes=$(stat -c %s "$work"/max/*.jsonl | tr '\n' ' ')
big=$(stat -c %s "$work"/max/*.jsonl | awk '$1 > 1048576' | wc -l)
cuts=$(tail -qn1 "$work"/max/*.jsonl | grep -c '"reason":"cut".*"cut":"max_mb"')
warned=$(grep -c 'reached NCCLSHIM_TRACE_MAX_MB' "$work/max.err")
result "$([ "$big" -eq 0 ] && [ "$cuts" -eq 2 ] && [ "$warned" -eq 2 ]; echo $?)" max-mb/cut-with-footer-and-warning \
  "sizes $sizes, $cuts cut footers, $warned warnings"
"$trace_tool" validate "$work/max" >"$work/max.valid" 2>&1
result "$(grep -c 'recording stopped at NCCLSHIM_TRACE_MAX_MB' "$work/max.valid" | grep -qx 2; echo $?)" max-mb/validate-reports \
  "$(tail -3 "$work/max.valid")"

echo "== zstd: compressed files read as their text"
capture zstd NCCLSHIM_TRACE_COMPRESS=zstd python3 $loop "$lib" 20 --mark
zfile=$(ls "$work"/zstd/*.jsonl.zst 2>/dev/null | head -1)
mkdir -p "$work/plain" && zstd -qdc "$zfile" >"$work/plain/rank0.jsonl" 2>"$work/unzstd.err"
result "$([ -n "$zfile" ] && [ -s "$work/plain/rank0.jsonl" ]; echo $?)" zstd/written "$(ls "$work/zstd") $(cat "$work/unzstd.err")"
"$trace_tool" dump "$work/zstd" >"$work/z.dump" 2>&1 && "$trace_tool" dump "$work/plain" >"$work/p.dump" 2>&1
result "$(cmp -s "$work/z.dump" "$work/p.dump"; echo $?)" zstd/dump-equals-plain "$(diff "$work/z.dump" "$work/p.dump" | head -3)"
"$tool" summary "$zfile" >"$work/z.summary" 2>&1 && "$tool" summary "$work/plain/rank0.jsonl" >"$work/p.summary" 2>&1
result "$(diff <(sed "s|$zfile|FILE|g" "$work/z.summary") <(sed "s|$work/plain/rank0.jsonl|FILE|g" "$work/p.summary") >/dev/null &&
  grep -q 'iterations: 19 of 4' "$work/z.summary"; echo $?)" zstd/summary-equals-plain "$(head -3 "$work/z.summary")"
"$tool" convert "$work/zstd" --to simai -o "$work/z.txt" >/dev/null 2>"$work/z.convert.err"
result $? zstd/convert "$(cat "$work/z.convert.err")"

echo "== names carry the job; a killed process leaves .part"
capture job SLURM_JOB_ID=4711 python3 $loop "$lib" 2
result "$(ls "$work"/job | grep -q '^ncclshim-4711-.*-rank0\.jsonl$' && grep -q '"job":"4711"' "$work"/job/*.jsonl; echo $?)" \
  names/job-in-name-and-header "$(ls "$work/job")"
capture killed SLURM_JOB_ID=4711 python3 $loop "$lib" 2 --kill
result "$(ls "$work"/killed | grep -q '\.jsonl\.part$'; echo $?)" names/killed-is-part "$(ls "$work/killed")"
"$trace_tool" validate "$work/killed" >"$work/killed.valid" 2>&1
result "$(grep -q 'incomplete: still named .part' "$work/killed.valid"; echo $?)" names/validate-incomplete \
  "$(tail -2 "$work/killed.valid")"

echo "== validate DIR: 64 rank files, one missing, one of another job"
python3 tests/lib/replicate_ranks.py examples/traces/megatron_tp2 "$work/many" 64 --missing 17 --other-job 40:job2
"$trace_tool" validate "$work/many" >"$work/many.valid" 2>&1
status=$?
result "$([ $status -eq 1 ] && grep -q 'ranks have no trace file: global ranks 17$' "$work/many.valid" &&
  grep -q 'ncclshim-job2-rank40.jsonl: from another job: job2' "$work/many.valid"; echo $?)" many/missing-and-other-job-named \
  "exit $status; $(grep -v '^/' "$work/many.valid" | head -5)"
"$tool" summary "$work/many" >"$work/many.summary" 2>&1
[ $? -ne 0 ] && grep -q "no file for global rank 17 " "$work/many.summary"
result $? many/summary-names-the-missing-rank "$(head -2 "$work/many.summary")"
python3 tests/lib/replicate_ranks.py examples/traces/megatron_tp2 "$work/whole" 64
"$trace_tool" validate "$work/whole" >"$work/whole.valid" 2>&1
result $? many/whole-job-valid "$(tail -2 "$work/whole.valid")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

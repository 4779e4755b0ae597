#!/usr/bin/env bash
# libncclshim.so as NCCL's profiler plugin (libshim/profiler_plugin.cc), driven in real processes by
# the fake NCCL's profiler side (tests/shim/fake_nccl_profiler.cc raises the events NCCL 2.28 does,
# on its threads) with the real recorder: 3 rank processes of profiler_test_program under
# LD_PRELOAD in forward mode, then profiler_trace_check verifies every field of every nccl_task /
# nccl_proxy line and its join to the op line of its call. Cases: NCCL_PROFILER_PLUGIN naming the
# library; the one switch NCCLSHIM_PROFILER=1 with other algorithm / protocol names; proxy events
# off (NCCLSHIM_PROFILER_PROXY=0); the diagnostics (the step log; records not written, callbacks counted; an explicit
# activation mask; callbacks that return at once; the run-time switches ncclshimProfilerSetEvents and
# ncclshimSetRecording); the plugin loaded with recording
# off (nothing written); and the GPU machine's block-switching estimator, without a GPU.
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
lib=$(realpath "$build/libncclshim.so")
program="$build/tests/profiler_test_program"
checker="$build/tests/profiler_trace_check"
work=$(mktemp -d)
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT

source tests/lib/checks.sh  # result(), passed, failed

for f in "$lib" "$program" "$checker"; do
  [ -e "$f" ] || { echo "missing $f: run make first"; echo "0 passed, 1 failed"; exit 1; }
done

# run_ranks <case> <n> <env assignments...>: n rank processes; their CHECK lines are counted.
run_ranks() {
  local name=$1 n=$2 r pids=() rc=0
  shift 2
  local dir="$work/$name"
  mkdir -p "$dir"
  for ((r = 0; r < n; r++)); do
    env NCCLSHIM_MODE=forward "$@" LD_PRELOAD="$lib" timeout 60 "$program" "$r" "$n" "$dir" \
      >"$dir/out.$r" 2>"$dir/err.$r" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
  count_checks "$name" "$dir"/out.*
  result "$rc" "$name/ranks-exit-0" "$(tail -n 3 "$dir"/err.* | tr '\n' ' ')"
}

# count_checks <case> <files...>: adds their CHECK PASS / FAIL lines to the totals.
count_checks() {
  local name=$1 p f
  shift
  p=$(cat "$@" | grep -c '^CHECK PASS')
  f=$(cat "$@" | grep -c '^CHECK FAIL')
  grep -h '^CHECK FAIL' "$@" | sed "s/^CHECK /[$name] /"
  echo "$name: $p checks passed, $f failed"
  passed=$((passed + p))
  failed=$((failed + f))
  [ "$p" -gt 0 ] || result 1 "$name/ran" "no checks ran"
}

# check_trace <case> <n> <algo> <proto> [--no-proxy]
check_trace() {
  local name=$1
  "$checker" "$work/$name/trace" "$2" "$3" "$4" ${5:-} >"$work/$name/check.out" 2>&1
  count_checks "$name-trace" "$work/$name/check.out"
}

echo "== NCCL_PROFILER_PLUGIN=libncclshim.so, 3 ranks"
run_ranks plugin 3 NCCLSHIM_TRACE_DIR="$work/plugin/trace" NCCL_PROFILER_PLUGIN="$lib"
check_trace plugin 3 RING SIMPLE

echo "== NCCLSHIM_PROFILER=1 (the one switch), other algorithm and protocol, 2 ranks"
run_ranks switch 2 NCCLSHIM_TRACE_DIR="$work/switch/trace" NCCLSHIM_PROFILER=1 FAKE_NCCL_ALGO=TREE FAKE_NCCL_PROTO=LL
check_trace switch 2 TREE LL

echo "== proxy events off"
run_ranks noproxy 2 NCCLSHIM_TRACE_DIR="$work/noproxy/trace" NCCLSHIM_PROFILER=1 NCCLSHIM_PROFILER_PROXY=0
check_trace noproxy 2 RING SIMPLE --no-proxy

# trace_lines <case> <type>: lines of that type in the case's trace files.
trace_lines() { cat "$work/$1/trace"/*.jsonl 2>/dev/null | grep -c "\"type\":\"$2\""; }
# callback_starts <case> <event bit>: the plugin's counted starts of that event type, all ranks.
callback_starts() {
  cat "$work/$1"/err.* | grep -o "starts[^;]*" | tr ' ' '\n' | grep "^$2:" | cut -d: -f2 \
    | awk '{s += $1} END {print s + 0}'
}

echo "== diagnostics: the step log (NCCLSHIM_PROFILER_STEPS)"
# The step log (NCCLSHIM_PROFILER_STEPS): every proxy step the fake raised, one row each, in a new
# private file per process, with its step's bytes and the times of its states; the trace unchanged.
run_ranks steps 2 NCCLSHIM_TRACE_DIR="$work/steps/trace" NCCLSHIM_PROFILER=1 NCCLSHIM_PROFILER_STEPS="$work/steps/log"
check_trace steps 2 RING SIMPLE
steps=$(python3 - "$work/steps" <<'PY'
import csv, glob, json, os, stat, sys
base = sys.argv[1]
files = sorted(glob.glob(f"{base}/log/ncclshim-steps-*.csv"))
problems, rows_by_rank, steps_by_rank = [], {}, {}
for path in files:
    if stat.S_IMODE(os.stat(path).st_mode) != 0o600:
        problems.append(f"{path}: mode {oct(os.stat(path).st_mode)}")
    lines = [l for l in open(path) if not l.startswith("#")]
    for row in csv.DictReader(lines):
        send = row["dir"] == "send"
        want = 1000 * (int(row["channel"]) + 1) + 10 * int(row["step"]) + (1 if send else 2)  # fakeprof::stepBytes
        if int(row["bytes"]) != want:
            problems.append(f"rank {row['rank']} channel {row['channel']} step {row['step']}: bytes {row['bytes']}, want {want}")
        times = [int(row[k]) for k in ("start_ns", "t1_ns", "t2_ns", "t3_ns", "stop_ns")]
        if min(times) == 0 or times[0] > min(times[1:]) or times[4] < max(times[:4]):
            problems.append(f"rank {row['rank']} step {row['step']}: times {times}")
        rows_by_rank[row["rank"]] = rows_by_rank.get(row["rank"], 0) + 1
for path in glob.glob(f"{base}/trace/*.jsonl"):
    for line in open(path):
        r = json.loads(line)
        if r.get("type") == "nccl_proxy":
            steps_by_rank[str(r["rank"])] = steps_by_rank.get(str(r["rank"]), 0) + r["steps"]
if len(files) != 2 or rows_by_rank != steps_by_rank:
    problems.append(f"{len(files)} files; rows per rank {rows_by_rank}, the trace's proxy steps {steps_by_rank}")
print("; ".join(problems[:5]) if problems else f"ok {sum(rows_by_rank.values())} steps")
PY
)
result "$([[ $steps == ok* ]]; echo $?)" steps/every-step-timed "$steps"

echo "== diagnostics: records not written (NCCLSHIM_PROFILER_RECORD=0), callbacks counted"
run_ranks norecord 2 NCCLSHIM_TRACE_DIR="$work/norecord/trace" NCCLSHIM_PROFILER=1 NCCLSHIM_PROFILER_RECORD=0 \
  NCCLSHIM_PROFILER_COUNT=1
ops=$(trace_lines norecord op) tasks=$(trace_lines norecord nccl_task) proxies=$(trace_lines norecord nccl_proxy)
result "$([ "$ops" -gt 0 ] && [ "$tasks" -eq 0 ] && [ "$proxies" -eq 0 ]; echo $?)" norecord/ops-only \
  "$ops op, $tasks nccl_task, $proxies nccl_proxy lines"
coll=$(callback_starts norecord 1) p2p=$(callback_starts norecord 2) proxy=$(callback_starts norecord 3)
result "$([ "$coll" -gt 0 ] && [ "$p2p" -gt 0 ] && [ "$proxy" -gt 0 ]; echo $?)" norecord/callbacks-ran \
  "coll $coll, p2p $p2p, proxy-op $proxy task starts counted"

echo "== diagnostics: callbacks that return at once (NCCLSHIM_PROFILER_NOOP=1), events as usual"
run_ranks noop 2 NCCLSHIM_TRACE_DIR="$work/noop/trace" NCCLSHIM_PROFILER=1 NCCLSHIM_PROFILER_NOOP=1
ops=$(trace_lines noop op) tasks=$(trace_lines noop nccl_task) proxies=$(trace_lines noop nccl_proxy)
result "$([ "$ops" -gt 0 ] && [ "$tasks" -eq 0 ] && [ "$proxies" -eq 0 ]; echo $?)" noop/ops-only \
  "$ops op, $tasks nccl_task, $proxies nccl_proxy lines"

echo "== diagnostics: NCCLSHIM_PROFILER_EVENTS=0x600 (API events only)"
run_ranks apionly 2 NCCLSHIM_TRACE_DIR="$work/apionly/trace" NCCLSHIM_PROFILER=1 NCCLSHIM_PROFILER_EVENTS=0x600 \
  NCCLSHIM_PROFILER_COUNT=1
tasks=$(trace_lines apionly nccl_task) api=$(( $(callback_starts apionly 9) + $(callback_starts apionly 10) ))
coll=$(callback_starts apionly 1) p2p=$(callback_starts apionly 2)
result "$([ "$tasks" -eq 0 ] && [ "$api" -gt 0 ] && [ "$coll" -eq 0 ] && [ "$p2p" -eq 0 ]; echo $?)" \
  apionly/mask-followed \
  "$tasks nccl_task lines; API starts $api, task starts $coll + $p2p"

echo "== the plugin loaded, recording off: no trace, calls unaffected"
run_ranks off 2 NCCL_PROFILER_PLUGIN="$lib"
written=$(find "$work/off" -name '*.jsonl' | wc -l)
result "$([ "$written" -eq 0 ]; echo $?)" off/no-trace-written "$written trace files"

echo "== diagnostics: ncclshimProfilerSetEvents switches NCCL's mask word at run time"
# Through the v5 table as NCCL calls it: init hands the plugin NCCL's mask word; the switch returns
# -1 before any recording init, then the previous mask, and writes the new one into that word.
toggle=$(NCCLSHIM_TRACE_DIR="$work/toggle" python3 - "$lib" <<'PY' 2>&1
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
switch = lib.ncclshimProfilerSetEvents
switch.argtypes, switch.restype = [ctypes.c_int], ctypes.c_int
before = switch(0)
class Table(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("init", ctypes.c_void_p)]
Init = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint64, ctypes.POINTER(ctypes.c_int),
                        ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
init = Init(Table.in_dll(lib, "ncclProfiler_v5").init)
context, word = ctypes.c_void_p(), ctypes.c_int(0)
rc = init(ctypes.byref(context), 1, ctypes.byref(word), b"t", 1, 2, 0, None)
on = word.value
off_prev = switch(0)
off = word.value
back_prev = switch(on)
print(before, rc, hex(on), off_prev == on, off, back_prev, word.value == on)
PY
)
result "$([ "$toggle" = "-1 0 0x61e True 0 0 True" ]; echo $?)" toggle/mask-word-switched "$toggle"

echo "== diagnostics: ncclshimSetRecording switches the recording of calls at run time"
# GPU-free, one rank: an all-reduce recorded, two made with recording off, one after it is back on.
# The trace holds the two recorded ones (seq 0 and 1); without a trace the switch refuses (-1).
cat >"$work/rec_toggle.py" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
switch = lib.ncclshimSetRecording
switch.argtypes, switch.restype = [ctypes.c_int], ctypes.c_int
comm, dev = ctypes.c_void_p(), (ctypes.c_int * 1)(0)
buf, out = (ctypes.c_float * 4)(1, 2, 3, 4), (ctypes.c_float * 4)()
allreduce = lambda: lib.ncclAllReduce(buf, out, ctypes.c_size_t(4), 7, 0, comm, None)
steps = [lib.ncclCommInitAll(ctypes.byref(comm), 1, dev), allreduce(), switch(0), allreduce(), allreduce(),
         switch(1), allreduce(), lib.ncclCommDestroy(comm), list(out)]
print(*steps)
PY
recording=$(NCCLSHIM_MODE=gpufree NCCLSHIM_TRACE_DIR="$work/rec_toggle" python3 "$work/rec_toggle.py" "$lib" 2>&1)
seqs=$(cat "$work"/rec_toggle/*.jsonl 2>/dev/null | grep '"type":"op"' | grep -o '"seq":[0-9]*' | tr '\n' ' ')
result "$([ "$recording" = "0 0 1 0 0 0 0 0 [1.0, 2.0, 3.0, 4.0]" ] && [ "$seqs" = '"seq":0 "seq":1 ' ]; echo $?)" \
  toggle/recording-switched "$recording; ops $seqs"
untraced=$(NCCLSHIM_MODE=gpufree python3 -c 'import ctypes,sys; print(ctypes.CDLL(sys.argv[1]).ncclshimSetRecording(0))' "$lib" 2>&1)
result "$([ "$untraced" = "-1" ]; echo $?)" toggle/recording-refused-untraced "$untraced"

# ---- the GPU machine's block-switching estimator (tests/gpu/torch_busbw.py BUSBW_BLOCK and
# tests/gpu/block_toggle_table.py), with a stand-in for torch whose calls cost a known extra when on
estimator=$(python3 tests/gpu/block_estimator_check.py 2>&1)
result $? gpu-scripts/block-estimator "$estimator"

# ---- the GPU machine's split of NCCL's time into wire and hardware parts (tests/gpu/wire_part.py) on
# a hand-made step log: one allreduce, rank 0 sends steps posted at 1000 and 3000 ns that arrive at
# rank 1 at 2000 and 5000; rank 1's one step is posted at 1500 and arrives at 2500. On the wire:
# [1000,2500] and [3000,5000], 3.5 us; NCCL's GPU time 10 us, the replay's 4 us: hardware 6.5 us,
# replay / NCCL 0.40, replay / wire part 1.14. A step that never arrived (channel 1) is counted apart.
mkdir -p "$work/wire/steps"
header='nccl_comm,comm,seq,rank,peer,channel,dir,step,bytes,start_ns,t1_ns,t2_ns,t3_ns,stop_ns'
printf '# rank 0\n%s\n%s\n%s\n%s\n%s\n' "$header" \
  0xabc,1,0,0,1,0,send,0,512,900,950,990,1000,2100 0xabc,1,0,0,1,0,send,1,512,2900,2950,2990,3000,5100 \
  0xabc,1,0,0,1,0,recv,0,256,800,900,2500,2600,2700 0xabc,1,0,0,1,1,send,0,64,100,110,120,130,140 \
  > "$work/wire/steps/ncclshim-steps-1.csv"
printf '# rank 1\n%s\n%s\n%s\n%s\n' "$header" \
  0xabc,1,0,1,0,0,recv,0,512,850,860,2000,2050,2100 0xabc,1,0,1,0,0,recv,1,512,2850,2860,5000,5050,5100 \
  0xabc,1,0,1,0,0,send,0,256,1400,1450,1490,1500,2600 > "$work/wire/steps/ncclshim-steps-2.csv"
printf 'op,comm,seq,bytes,time_us,recorded_us\nallreduce,0x0000000000000001,0,1024,4,10\n' > "$work/wire/replay.csv"
wire=$(python3 tests/gpu/wire_part.py "$work/wire/steps" "$work/wire/replay.csv" 1 2>&1)
row=$(grep '^| allreduce' <<< "$wire")
result "$([[ $row == "| allreduce | 1 KiB | 1 | 10.0 | 3.5 | 6.5 | 4.0 | 0.40 | 1.14 | 1.14-1.14 |" ]] &&
  grep -q '^1 connections with unequal step counts' <<< "$wire"; echo $?)" gpu-scripts/wire-part-hand-computed "$wire"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

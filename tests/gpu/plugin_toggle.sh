#!/usr/bin/env bash
# The plugin's and the recording's cost per PyTorch call measured inside one process (issue 17), on
# the GPU machine: rounds of tests/gpu/torch_busbw.py with BUSBW_TOGGLE, one process per GPU, the
# order of the variants rotated from round to round. Variants (VARIANTS, space-separated):
#   events<K>  the plugin's events on / off in alternate windows, recording on in both, with the
#              build $SHIM_<K> (K = NEW or OLD): the plugin's cost
#   all<K>     recording + events on / off in alternate windows (BUSBW_TOGGLE=all; the build needs
#              ncclshimSetRecording): everything recording and the plugin add over forwarding
#   rec<K>     recording on / off, the plugin's events off throughout (BUSBW_TOGGLE=rec)
#   noop<K>    as events<K> with NCCLSHIM_PROFILER_NOOP=1: NCCL's own cost of raising the events
# Then the callback bench (bench/profiler_callback_bench.cc, as `coll`) on each build, hot and with
# 4 MiB evicted between iterations (and, with BENCH_TLB=1, one byte in each page of 64 MiB: the TLB
# evicted too), and the table (tests/gpu/toggle_split.py); the runs' JSON lines end up in
# toggle_runs.tar.gz.
# Also one short run whose trace is checked: tasks joined to their calls (task_join_check.py).
# SHIM_SELF (a build made with -DNSHIM_SELF_TIME=1, common/self_time.h): then two runs of it with
# BUSBW_SELF_TIME=1, the shim's own spans timed inside the job (tests/gpu/self_time_table.py):
# recording + events in the "on" windows (variant selfall), and recording alone with the trace
# writer mostly asleep (a ring of 2^18 records drained about once a second, not every 10 ms:
# variant selfrecquiet); SELF_RUNS (default "all rec_quiet") picks the runs, in order; their on /
# off windows are in the table too. SELF_BUILDS (below) compares several self-timed builds.
# ENV_<K> (optional): settings for the runs of build K, e.g. ENV_NEW4K="NCCLSHIM_TRACE_HUGEPAGES=0" with
# SHIM_NEW4K=$SHIM_NEW: one build, two settings.
#   ROUNDS (default 3); BUSBW_MAX_BYTES / BUSBW_WINDOWS / BUSBW_ITERS / BUSBW_OPS / BUSBW_BLOCK as
#   torch_busbw.py reads them (with BUSBW_BLOCK the table is tests/gpu/block_toggle_table.py's);
#   SHIM_NEW, SHIM_OLD: libncclshim.so builds; BENCH: the callback bench; TRACE_TOOL: ncclshim-trace;
#   OUT: results.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export BUSBW_OPS=${BUSBW_OPS:-all_reduce,all_gather,reduce_scatter,broadcast,alltoall}
export BUSBW_MAX_BYTES=${BUSBW_MAX_BYTES:-131072} BUSBW_WINDOWS=${BUSBW_WINDOWS:-12} BUSBW_ITERS=${BUSBW_ITERS:-400}
PY=${PY:-/opt/torch/.venv/bin/python}
[ -x "$PY" ] || PY=python3
ROUNDS=${ROUNDS:-3}
read -r -a variants <<< "${VARIANTS:-eventsOLD eventsNEW allNEW}"
{ nvidia-smi -L; lscpu | grep -E 'Model name|^CPU\(s\)|NUMA node'
  cat /sys/devices/system/clocksource/clocksource0/current_clocksource; uptime
  "$PY" -c 'import torch; print(torch.__version__, torch.cuda.nccl.version())'; } > "$OUT/machine.txt" 2>&1
n=${#variants[@]}
for round in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((n - 1))); do
    v=${variants[$(( (k + round - 1) % n ))]}
    mode=${v%%[A-Z]*}
    build=${v#"$mode"}
    so_var=SHIM_$build
    so=${!so_var}
    env_var=ENV_$build
    read -r -a extra_env <<< "${!env_var:-}"
    toggle=1
    noop=0
    case $mode in all|rec) toggle=$mode ;; noop) noop=1 ;; esac
    t0=$(date +%s%N)
    env LD_PRELOAD="$so" NCCLSHIM_MODE=forward NCCLSHIM_DEBUG=WARN NCCLSHIM_TRACE_DIR="/tmp/toggle_traces/$v$round" \
      NCCL_PROFILER_PLUGIN="$so" NCCLSHIM_PROFILER=1 NCCLSHIM_PROFILER_NOOP=$noop BUSBW_TOGGLE=$toggle "${extra_env[@]}" \
      "$PY" -m torch.distributed.run --standalone --nproc-per-node 2 "$HERE/torch_busbw.py" \
      > "$OUT/toggle_${v,,}_r$round.jsonl" 2> "/tmp/toggle_$v$round.err"
    rc=$?
    echo "round $round $v rc $rc $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$OUT/runs.txt"
    [ $rc -eq 0 ] || tail -5 "/tmp/toggle_$v$round.err" >> "$OUT/runs.txt"
    rm -rf "/tmp/toggle_traces/$v$round"
  done
done
# SELF_BUILDS ("name=path ...", e.g. "new=/x/self_new.so pf=/x/self_pf.so"): several self-timed builds,
# run one after the other in each of SELF_ROUNDS (default 1) rounds, rotated; variant self<run><name>;
# SELFENV_<name> (optional): settings for that entry's runs (one build, several settings).
self_builds=${SELF_BUILDS:-}
[ -z "$self_builds" ] && [ -n "${SHIM_SELF:-}" ] && self_builds="=$SHIM_SELF"
if [ -n "$self_builds" ]; then
  read -r -a selves <<< "$self_builds"
  ns=${#selves[@]}
  for round in $(seq 1 "${SELF_ROUNDS:-1}"); do
    for j in $(seq 0 $((ns - 1))); do
      entry=${selves[$(( (j + round - 1) % ns ))]}
      name=${entry%%=*}
      so=${entry#*=}
      env_var=SELFENV_$name
      read -r -a extra_env <<< "${!env_var:-}"
      for run in ${SELF_RUNS:-all rec_quiet}; do
        quiet=()
        toggle=all
        if [ "$run" = rec_quiet ]; then toggle=rec; quiet=(NCCLSHIM_TRACE_RING=262144 NCCLSHIM_TRACE_FLUSH_MS=1000); fi
        env LD_PRELOAD="$so" NCCLSHIM_MODE=forward NCCLSHIM_DEBUG=WARN NCCLSHIM_TRACE_DIR="/tmp/self_traces" \
          NCCL_PROFILER_PLUGIN="$so" NCCLSHIM_PROFILER=1 BUSBW_TOGGLE=$toggle BUSBW_SELF_TIME=1 "${quiet[@]}" "${extra_env[@]}" \
          "$PY" -m torch.distributed.run --standalone --nproc-per-node 2 "$HERE/torch_busbw.py" \
          > "$OUT/toggle_self${run//_/}${name}_r$round.jsonl" 2> "/tmp/self_$run.err"
        echo "self-timed $run $name round $round rc $?" >> "$OUT/runs.txt"
        rm -rf /tmp/self_traces
      done
    done
  done
  "$PY" "$HERE/self_time_table.py" "$OUT"/toggle_self*.jsonl > "$OUT/self_table.md" 2>&1
fi
# One short run kept: NCCL's tasks joined to their calls, inside the call or launched later
# (tests/gpu/task_join_check.py), and the files valid ($TRACE_TOOL validate, when given). No toggle,
# so no blocks either (torch_busbw.py refuses BUSBW_BLOCK without a toggle).
rm -rf /tmp/join_traces
env LD_PRELOAD="$SHIM_NEW" NCCLSHIM_MODE=forward NCCLSHIM_DEBUG=WARN NCCLSHIM_TRACE_DIR=/tmp/join_traces \
  NCCL_PROFILER_PLUGIN="$SHIM_NEW" NCCLSHIM_PROFILER=1 BUSBW_WINDOWS=1 BUSBW_ITERS=20 BUSBW_MAX_BYTES=32768 BUSBW_BLOCK=0 \
  "$PY" -m torch.distributed.run --standalone --nproc-per-node 2 "$HERE/torch_busbw.py" > /dev/null 2> /tmp/join.err
rc=$?
echo "join run rc $rc" > "$OUT/join_check.txt"
[ $rc -eq 0 ] || tail -5 /tmp/join.err >> "$OUT/join_check.txt"
"$PY" "$HERE/task_join_check.py" /tmp/join_traces >> "$OUT/join_check.txt" 2>&1
[ -n "${TRACE_TOOL:-}" ] && "$TRACE_TOOL" validate /tmp/join_traces >> "$OUT/join_check.txt" 2>&1
if [ -n "${BENCH:-}" ]; then
  for build in OLD NEW OLD NEW; do
    so_var=SHIM_$build
    for evict in 0 4096 tlb; do
      [ "$evict" = tlb ] && [ "${BENCH_TLB:-0}" != 1 ] && continue
      echo "== $build evict $evict" >> "$OUT/runs.txt"
      if [ "$evict" = tlb ]; then
        NCCLSHIM_TRACE_DIR=/tmp/bench_trace PROFILER_BENCH_EVICT=65536 PROFILER_BENCH_EVICT_STRIDE=4096 taskset -c 3 \
          "$BENCH" "${!so_var}" 3 512 coll 2>&1 | tail -2 >> "$OUT/runs.txt"
      else
        NCCLSHIM_TRACE_DIR=/tmp/bench_trace PROFILER_BENCH_EVICT=$evict taskset -c 3 "$BENCH" "${!so_var}" 4 4096 coll \
          2>&1 | tail -2 >> "$OUT/runs.txt"
      fi
      rm -rf /tmp/bench_trace
    done
  done
fi
if [ "${BUSBW_BLOCK:-0}" -gt 0 ]; then
  "$PY" "$HERE/block_toggle_table.py" "$OUT" > "$OUT/table.md" 2>&1
else
  "$PY" "$HERE/toggle_split.py" "$OUT" > "$OUT/table.md" 2>&1
fi
# the runs' lines in one file (the device returns few files)
tar -C "$OUT" -czf "$OUT/toggle_runs.tar.gz" $(cd "$OUT" && ls toggle_*.jsonl) && rm -f "$OUT"/toggle_*.jsonl
cat "$OUT/runs.txt" "$OUT/join_check.txt" "$OUT/table.md"
if [ -f "$OUT/self_table.md" ]; then cat "$OUT/self_table.md"; fi

#!/usr/bin/env bash
# PyTorch overhead of the shim and of its profiler plugin, one process per GPU (issue 17), on the
# GPU machine: interleaved rounds of tests/gpu/torch_busbw.py under several sides, the order of the
# sides rotated from round to round (so that no side always runs first or last), then the table
# (tests/gpu/plugin_table.py: per side and size the median and the best over the rounds).
#   SIDES   space-separated, from: plain (no shim), fwd (forwarding only), rec (recording),
#           plugin (recording + the shim as NCCL's profiler plugin), and diagnostics of the plugin
#           side: mask0 (plugin loaded, activation mask 0: NCCL's own cost of a loaded plugin),
#           api (only CollApi / P2pApi events), norec (every event, no task record written),
#           old (plugin side with $SHIM_OLD, an earlier build, as shim and plugin)
#   ROUNDS  rounds (default 3); BUSBW_MAX_BYTES, BUSBW_OPS, BUSBW_PIN as torch_busbw.py reads them
#   SHIM    libncclshim.so (default build/gpu/libncclshim.so); OUT where logs and the table go
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PY=${PY:-/opt/torch/.venv/bin/python}
[ -x "$PY" ] || PY=python3
SHIM=${SHIM:-$PWD/build/gpu/libncclshim.so}
SHIM_OLD=${SHIM_OLD:-}
TRACES=${TRACES:-/tmp/plugin_traces}
SIDES=${SIDES:-plain fwd rec plugin}
ROUNDS=${ROUNDS:-3}
read -r -a sides <<< "$SIDES"

side_env() {  # side round -> env assignments
  local so=$SHIM
  [ "$1" = old ] && so=$SHIM_OLD
  local fwd="LD_PRELOAD=$so NCCLSHIM_MODE=forward NCCLSHIM_DEBUG=WARN"
  local rec="$fwd NCCLSHIM_TRACE_DIR=$TRACES/$1$2"
  local plugin="$rec NCCL_PROFILER_PLUGIN=$so NCCLSHIM_PROFILER=1"
  case $1 in
    plain) echo "BUSBW_SIDE=plain" ;;
    fwd) echo "$fwd" ;;
    rec) echo "$rec" ;;
    plugin|old) echo "$plugin" ;;
    mask0) echo "$plugin NCCLSHIM_PROFILER_EVENTS=0" ;;
    api) echo "$plugin NCCLSHIM_PROFILER_EVENTS=1536" ;;
    norec) echo "$plugin NCCLSHIM_PROFILER_RECORD=0" ;;
    *) echo "unknown side $1" >&2; exit 2 ;;
  esac
}

{ nvidia-smi -L; lscpu | grep -E 'Model name|^CPU\(s\)|NUMA node'; cat /sys/devices/system/clocksource/clocksource0/current_clocksource
  df -h /tmp | tail -1; "$PY" -c 'import torch; print(torch.__version__, torch.cuda.nccl.version())'; } > "$OUT/machine.txt" 2>&1
n=${#sides[@]}
for round in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((n - 1))); do
    side=${sides[$(( (k + round - 1) % n ))]}
    t0=$(date +%s%N)
    env $(side_env "$side" "$round") "$PY" -m torch.distributed.run --standalone --nproc-per-node 2 \
      "$HERE/torch_busbw.py" > "$OUT/busbw_$side$round.jsonl" 2> "/tmp/busbw_$side$round.err"
    rc=$?
    t1=$(date +%s%N)
    echo "round $round $side rc $rc $(( (t1 - t0) / 1000000 )) ms" >> "$OUT/runs.txt"
    [ $rc -eq 0 ] || tail -5 "/tmp/busbw_$side$round.err" >> "$OUT/runs.txt"
    # what the profiler side recorded: kept for the last round only (traces are large)
    if [ "$round" != "$ROUNDS" ]; then rm -rf "$TRACES/$side$round"; fi
  done
done
"$PY" "$HERE/plugin_table.py" "$OUT" $SIDES > "$OUT/table.md" 2>&1
cat "$OUT/runs.txt" "$OUT/table.md"

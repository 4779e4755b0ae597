#!/usr/bin/env bash
# Benchmarks `ncclshim perf` against Open MPI and Gloo over loopback TCP (nccl-tests tables) and compares.
#
# Usage: bench/run_bench.sh            (from anywhere; results in build/bench/results, summary in
#                                       build/bench/summary.md)
# Environment (defaults in brackets):
#   BENCH_MIN [1K] BENCH_MAX [256M] BENCH_FACTOR [4] BENCH_WARMUP [5] BENCH_ITERS [20]
#   BENCH_RANKS ["2 4"]  BENCH_OPS ["all_reduce all_gather reduce_scatter broadcast alltoall"]
#   BENCH_SIDES ["ncclshim mpi gloo"]  which sides to run (the other sides' old results are kept)
#   GLOO_PYTHON [/opt/gloo-venv/bin/python, else python3]  a Python with torch for the Gloo side
#               (bench/install_gloo.sh makes /opt/gloo-venv); without one the Gloo side is skipped
#   BENCH_TIMEOUT [900]  seconds per run before it is killed
#   BENCH_REPEAT [1]  runs per side and case, interleaved; compare.py reduces them per size
#   BENCH_STAT [median]  median | best (the fastest run: interference only adds time, so on a
#                        machine shared with builds and tests, use BENCH_REPEAT=3+ BENCH_STAT=best)
#   SHIM_PERF_CMD ["build/ncclshim perf"]  command prefix; "<op> -np N -b .. -e .. -f .. -w .. -n .."
#                 is appended (paths relative to the repository root). SHIM_PERF_CMD=bench/mpi_perf.sh
#                 runs the MPI peer as a stand-in, to exercise the harness without the shim.
#   BUILD [build]  MPIRUN_EXTRA  (extra mpirun options for the MPI peer)
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export BUILD=${BUILD:-$ROOT/build}
OUT=$BUILD/bench
RESULTS=$OUT/results

BENCH_MIN=${BENCH_MIN:-1K}
BENCH_MAX=${BENCH_MAX:-256M}
BENCH_FACTOR=${BENCH_FACTOR:-4}
BENCH_WARMUP=${BENCH_WARMUP:-5}
BENCH_ITERS=${BENCH_ITERS:-20}
BENCH_RANKS=${BENCH_RANKS:-2 4}
BENCH_OPS=${BENCH_OPS:-all_reduce all_gather reduce_scatter broadcast alltoall}
BENCH_SIDES=${BENCH_SIDES:-ncclshim mpi gloo}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-900}
BENCH_REPEAT=${BENCH_REPEAT:-1}
BENCH_STAT=${BENCH_STAT:-median}
SHIM_PERF_CMD=${SHIM_PERF_CMD:-$BUILD/ncclshim perf}

log() { printf '[run_bench] %s\n' "$*" >&2; }
wants() { [[ " $BENCH_SIDES " == *" $1 "* ]]; }

mkdir -p "$RESULTS"
size_args=(-b "$BENCH_MIN" -e "$BENCH_MAX" -f "$BENCH_FACTOR" -w "$BENCH_WARMUP" -n "$BENCH_ITERS")

# 1. The MPI peer.
run_mpi=0
if wants mpi; then
  if command -v mpicxx >/dev/null && command -v mpirun >/dev/null; then
    log "building $OUT/mpi_peer_bench"
    if mpicxx -std=c++20 -O2 -Wall -I. -o "$OUT/mpi_peer_bench" bench/mpi_peer_bench.cc -lm; then
      run_mpi=1
    else
      log "mpicxx failed: the MPI side is skipped"
    fi
  else
    log "mpicxx/mpirun not found: the MPI side is skipped"
  fi
fi

# 1b. The Gloo peer (PyTorch's Gloo backend on CPU tensors), when a Python with torch exists.
run_gloo=0
if wants gloo; then
  GLOO_PYTHON=${GLOO_PYTHON:-$([ -x /opt/gloo-venv/bin/python ] && echo /opt/gloo-venv/bin/python || echo python3)}
  if "$GLOO_PYTHON" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null; then
    run_gloo=1
  else
    log "no torch with Gloo in $GLOO_PYTHON: the Gloo side is skipped (bench/install_gloo.sh installs one)"
  fi
fi

# 2. ncclshim perf (a command prefix; it may not be built yet).
run_shim=0
read -r -a shim_cmd <<<"$SHIM_PERF_CMD"
if wants ncclshim; then
  if [[ ${#shim_cmd[@]} -gt 0 ]] && command -v "${shim_cmd[0]}" >/dev/null 2>&1; then
    run_shim=1
  else
    log "'${shim_cmd[0]:-}' not found: the ncclshim side is skipped (build it, or set SHIM_PERF_CMD)"
  fi
fi

# Percent of CPU time idle over half a second: other work on the machine (parallel builds, tests)
# skews a loopback benchmark badly, so each result file records it and compare.py flags busy runs.
cpu_idle_percent() {
  local a b
  a=$(awk '/^cpu /{ print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
  sleep 0.5
  b=$(awk '/^cpu /{ print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
  awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); t = y[2] - x[2];
    printf "%.0f", (t > 0 ? 100 * (y[1] - x[1]) / t : 100) }'
}

# One run: side, op, ranks, repeat, command... -> results/<side>_<op>_np<N>[.rep<R>].{txt,err};
# a line in runs.tsv.
[[ -f $RESULTS/runs.tsv ]] ||
  printf 'side\top\tranks\trep\trc\tseconds\tidle_before_pct\tcommand\n' >"$RESULTS/runs.tsv"
run_one() {
  local side=$1 op=$2 np=$3 rep=$4
  shift 4
  local base=$RESULTS/${side}_${op}_np${np}
  if [[ $rep -eq 1 ]]; then
    rm -f "$base".txt "$base".err "$base".rep*.txt "$base".rep*.err  # no stale repeats
  else
    base=$base.rep$rep
  fi
  local idle start end rc
  idle=$(cpu_idle_percent)
  log "$side $op np=$np run $rep/$BENCH_REPEAT (cpu idle before: ${idle}%): $*"
  ((idle < 80)) && log "warning: the machine is busy (${idle}% idle); these numbers will be skewed"
  echo "# run_bench: cpu idle before run: ${idle}%" >"$base.txt"
  start=$(date +%s.%N)
  timeout "$BENCH_TIMEOUT" "$@" >>"$base.txt" 2>"$base.err"
  rc=$?
  end=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  [[ $rc -eq 124 ]] && log "$side $op np=$np: timed out after ${BENCH_TIMEOUT}s"
  [[ $rc -ne 0 && $rc -ne 124 ]] && log "$side $op np=$np: exit $rc (see $base.err)"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$side" "$op" "$np" "$rep" "$rc" "$secs" "$idle" "$*" \
    >>"$RESULTS/runs.tsv"
  case $side in mpi) mpi_secs=$(awk -v a="$mpi_secs" -v b="$secs" 'BEGIN { print a + b }') ;;
              gloo) gloo_secs=$(awk -v a="$gloo_secs" -v b="$secs" 'BEGIN { print a + b }') ;;
                *) shim_secs=$(awk -v a="$shim_secs" -v b="$secs" 'BEGIN { print a + b }') ;; esac
}

mpi_secs=0 shim_secs=0 gloo_secs=0
for np in $BENCH_RANKS; do
  for op in $BENCH_OPS; do
    for ((rep = 1; rep <= BENCH_REPEAT; rep++)); do
      [[ $run_shim -eq 1 ]] && run_one ncclshim "$op" "$np" "$rep" "${shim_cmd[@]}" "$op" -np "$np" "${size_args[@]}"
      [[ $run_mpi -eq 1 ]] && run_one mpi "$op" "$np" "$rep" bench/mpi_perf.sh "$op" -np "$np" "${size_args[@]}"
      [[ $run_gloo -eq 1 ]] && run_one gloo "$op" "$np" "$rep" "$GLOO_PYTHON" bench/gloo_perf.py "$op" -np "$np" \
        "${size_args[@]}"
    done
  done
done
log "time spent: ncclshim ${shim_secs}s, MPI ${mpi_secs}s, Gloo ${gloo_secs}s"

# 3. The comparison (it reports missing runs itself).
python3 bench/compare.py --results "$RESULTS" --ranks "$BENCH_RANKS" --ops "$BENCH_OPS" \
  --stat "$BENCH_STAT" --markdown "$OUT/summary.md"

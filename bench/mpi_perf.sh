#!/usr/bin/env bash
# Runs the Open MPI peer benchmark behind the `ncclshim perf` command line: mpi_perf.sh <op> -np N [args].
# Used by run_bench.sh for the MPI side, and usable as SHIM_PERF_CMD to exercise the harness without the shim.
# The peer runs over loopback TCP only (pml ob1, btl self,tcp on lo), oversubscribed when ranks > cores.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PEER=${MPI_PEER_BIN:-${BUILD:-$ROOT/build}/bench/mpi_peer_bench}

if [[ $# -lt 3 || $2 != "-np" ]]; then
  echo "usage: $0 <all_reduce|all_gather|reduce_scatter|broadcast|alltoall> -np N [-b .. -e .. -f .. -w .. -n ..]" >&2
  exit 2
fi
op=$1 np=$3
shift 3
if [[ ! -x $PEER ]]; then
  echo "$0: $PEER is not built (run bench/run_bench.sh, or: mpicxx -std=c++20 -O2 -I$ROOT -o $PEER $ROOT/bench/mpi_peer_bench.cc -lm)" >&2
  exit 2
fi
# MPIRUN_EXTRA: more mpirun options, e.g. "--bind-to none".
# shellcheck disable=SC2086
exec mpirun --allow-run-as-root --oversubscribe -np "$np" \
  --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo \
  ${MPIRUN_EXTRA:-} "$PEER" -o "$op" "$@"

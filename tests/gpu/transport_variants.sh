#!/usr/bin/env bash
# Replays a GPU-timed capture (default: the committed ground truth, tests/data/time_truth) on the
# machine it was captured on, under several TCP-transport variants in interleaved rounds, and prints
# per (op, size) each variant's median replay / NCCL GPU time (tests/gpu/transport_variants_table.py).
# Needs no GPU, only that machine's CPUs and loopback, and phynet built there:
#   make -j12 build/phynet   (Open MPI, mpicxx, libfmt-dev are installed there)
#   ROUNDS=3 bash tests/gpu/transport_variants.sh [CAPTURE_DIR] NAME='VAR=VALUE ...' ...
# A variant is NAME='WORDS': VAR=VALUE words are set in the ranks' environment, the others are
# phynet options. No variant given: whole buffers (the replay before --staging), staged (the
# default: socket copies touch 2 x NCCL_BUFFSIZE, as NCCL's proxy touches its staging slots),
# autotuned socket buffers (NCCL's default) and NCCL's AWS data sockets (2 threads x 8). Writes the
# reports and the table under $OUT.
set -u
OUT=${OUT:-/tmp/gpu-out}
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
capture=tests/data/time_truth
if [[ $# -gt 0 && $1 != *=* ]]; then capture=$1; shift; fi
[[ -d $capture ]] || { echo "$0: no capture directory $capture" >&2; exit 2; }
[[ -x build/phynet ]] || { echo "$0: build/phynet is not built (make -j12 build/phynet)" >&2; exit 2; }
if [[ $# -eq 0 ]]; then
  set -- whole='--staging whole' staged='' autotuned='NCCLSHIM_SOCKET_SNDBUF=0 NCCLSHIM_SOCKET_RCVBUF=0' \
    aws_sockets='NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=8'
fi
for ((round = 1; round <= ROUNDS; round++)); do
  for variant in "$@"; do
    name=${variant%%=*} words=${variant#*=}
    exports=() vars=() args=()
    for w in $words; do
      if [[ $w =~ ^[A-Z_][A-Z0-9_]*= ]]; then vars+=("$w") exports+=(-x "$w"); else args+=("$w"); fi
    done
    env "${vars[@]}" timeout 500 mpirun --allow-run-as-root --oversubscribe -np 2 --mca pml ob1 --mca btl self,tcp \
      --mca btl_tcp_if_include lo "${exports[@]}" build/phynet --ifname lo --gpus-per-node 1 "${args[@]}" \
      --report "$OUT/variant.$name.$round.csv" "$capture" > "$OUT/variant.$name.$round.log" 2>&1
    echo "round $round $name: exit $?" | tee -a "$OUT/variants.log"
  done
done
python3 tests/gpu/transport_variants_table.py "$OUT" "$@" | tee "$OUT/variants_table.md"

#!/usr/bin/env bash
# Interleaved A/B benchmark of the TCP transport on one host: `ncclshim perf` (GPU-free, the NCCL
# API on libncclshim.so, TCP over loopback) under two or more environments, run in alternating
# rounds so that a busy or noisy machine slows every variant alike; prints per (op, ranks, size)
# the median out-of-place time of each variant, its spread (min-max over rounds) and the ratio of
# each variant's median to the first one's (bench/transport_ab_table.py).
#
#   bench/transport_ab.sh [-r ROUNDS] [-o OPS] [-p RANKS] [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS]
#                         NAME='VAR=VALUE ...' NAME='VAR=VALUE ...' ...
# e.g. bench/transport_ab.sh before='NCCLSHIM_BIN=/tmp/old/ncclshim' after='' aws='NCCL_SOCKET_NTHREADS=2'
# (NCCLSHIM_BIN in a variant: that build's ncclshim, its libncclshim.so beside it).
# Defaults: 5 rounds; all_reduce all_gather reduce_scatter alltoall; 2 and 4 ranks; 64K..256M by 8;
# 5 timed calls after 2 warm-up ones. Raw rows go to $OUT (default build/bench/transport_ab/).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${NCCLSHIM_BIN:-$ROOT/build/ncclshim}
rounds=5 ops="all_reduce all_gather reduce_scatter alltoall" ranks="2 4" min=64K max=256M factor=8 iters=5
while getopts "r:o:p:b:e:f:n:" flag; do
  case $flag in
    r) rounds=$OPTARG ;; o) ops=$OPTARG ;; p) ranks=$OPTARG ;; b) min=$OPTARG ;; e) max=$OPTARG ;;
    f) factor=$OPTARG ;; n) iters=$OPTARG ;;
    *) sed -n '2,14p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [[ $# -lt 1 ]]; then sed -n '2,14p' "$0" >&2; exit 2; fi
[[ -x $BIN ]] || { echo "$0: $BIN is not built (make -j2 all)" >&2; exit 2; }
OUT=${OUT:-$ROOT/build/bench/transport_ab}
mkdir -p "$OUT"
rows=$OUT/rows.tsv
printf 'variant\top\tranks\tsize\ttime_us\tround\n' > "$rows"
for ((round = 1; round <= rounds; round++)); do
  for variant in "$@"; do
    name=${variant%%=*} assignments=${variant#*=} bin=$BIN
    for word in $assignments; do [[ $word == NCCLSHIM_BIN=* ]] && bin=${word#NCCLSHIM_BIN=}; done
    [[ $name != "$variant" ]] || { echo "$0: a variant is NAME='VAR=VALUE ...', got '$variant'" >&2; exit 2; }
    for op in $ops; do
      for np in $ranks; do
        log=$OUT/$name.$op.$np.$round.log
        # shellcheck disable=SC2086
        if ! env NCCLSHIM_TRANSPORT=tcp $assignments timeout 600 "$bin" perf "$op" -np "$np" -b "$min" -e "$max" \
            -f "$factor" -n "$iters" -w 2 -c 0 > "$log" 2>&1; then
          echo "$0: $name $op -np $np failed (round $round): $(tail -1 "$log")" >&2
          exit 1
        fi
        python3 "$ROOT/bench/parse_table.py" "$log" --csv | python3 -c '
import csv, sys
name, op, np, rnd = sys.argv[1:5]
for row in csv.DictReader(sys.stdin):
    print("\t".join([name, op, np, row["size"], row["oop_time_us"], rnd]))' "$name" "$op" "$np" "$round" >> "$rows"
      done
    done
  done
  echo "round $round of $rounds done" >&2
done
python3 "$ROOT/bench/transport_ab_table.py" "$rows"

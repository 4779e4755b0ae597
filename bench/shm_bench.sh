#!/usr/bin/env bash
# The intra-node path (issue 18): (1) build/shm_bench moves 64 MiB between two processes through
# the shared-memory transport against memcpy of the same bytes (rounds interleaved inside it;
# target >= 0.8); (2) a 1 MiB allreduce between 2 local ranks (ncclshim perf, every element checked)
# over shared memory against TCP loopback, rounds interleaved (target >= 2x the busbw).
# usage: bench/shm_bench.sh [--rounds R]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=5
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "shm_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for tool in build/shm_bench build/ncclshim; do
  [ -x "$tool" ] || { echo "shm_bench: $tool is missing: run 'make all' first" >&2; exit 2; }
done

echo "== 64 MiB through shared memory vs memcpy ($rounds rounds of 5, interleaved)"
build/shm_bench 64 "$rounds"

echo
echo "== allreduce 1 MiB, 2 local ranks: shm vs tcp ($rounds rounds, interleaved; out-of-place busbw GB/s)"
: >/tmp/shm_bench_ar.$$
for round in $(seq 1 "$rounds"); do
  for t in shm tcp; do
    bw=$(NCCLSHIM_TRANSPORT=$t build/ncclshim perf all_reduce -np 2 -b 1M -e 1M -n 100 -w 20 |
      awk '!/^#/ && NF > 8 { print $8; exit }')
    echo "$t $bw" >>/tmp/shm_bench_ar.$$
    echo "# round $round: $t $bw GB/s" >&2
  done
done
python3 - /tmp/shm_bench_ar.$$ <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    t, bw = line.split()
    by.setdefault(t, []).append(float(bw))
print(f"{'transport':<10} {'median':>8} {'min':>8} {'max':>8}")
for t in ("shm", "tcp"):
    v = by[t]
    print(f"{t:<10} {statistics.median(v):>8.2f} {min(v):>8.2f} {max(v):>8.2f}")
print(f"ratio shm/tcp (medians): {statistics.median(by['shm']) / statistics.median(by['tcp']):.2f} (target >= 2.00)")
PY
rm -f /tmp/shm_bench_ar.$$

#!/usr/bin/env bash
# Memory per rank against the world size (issue 20): `phynet --check` of AICB's 128-rank L65B
# tp2_pp8 CSV (tests/data/aicb) on 16, 32, 64 and 128 oversubscribed local ranks, each rank's peak
# RSS taken by /usr/bin/time. Each rank holds only its own operations, so the median and the
# highest rank should stay where they are at 16 ranks; the table gives them per world size and the
# ratio to 16 ranks (the peer: the same job at the smallest world, in the same run). Rounds are
# interleaved (16, 32, 64, 128, 16, ...) because this machine is noisy.
#
# usage: bench/rank_memory_bench.sh [--rounds R] [--worlds "16 32 64 128"] [--replay]
#        --replay: a whole replay at --scale 1e-4 instead of --check (buffers included)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=2
worlds="16 32 64 128"
mode=(--check)
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --worlds) worlds="$2"; shift 2 ;;
    --replay) mode=(--scale 1e-4 --rows 0); shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "rank_memory_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x build/phynet ] || { echo "rank_memory_bench: build/phynet is missing: run 'make all' first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "rank_memory_bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d /tmp/ncclshim-rank-memory.XXXXXX)
trap 'rm -rf "$work"' EXIT
zcat tests/data/aicb/L65B-M1-C05_Llama65B_megatron_tp2_pp8_mbs1.csv.gz >"$work/L65B.csv"
: >"$work/rss.txt"

for round in $(seq 1 "$rounds"); do
  for np in $worlds; do
    log="$work/np$np.log"
    if ! timeout 1200 mpirun --allow-run-as-root --oversubscribe -np "$np" --mca pml ob1 --mca btl self,tcp \
        --mca btl_tcp_if_include lo /usr/bin/time -f "RSSKB %M" build/phynet --ifname lo "${mode[@]}" \
        "$work/L65B.csv" >"$log" 2>&1; then
      echo "rank_memory_bench: $np ranks failed:" >&2
      tail -5 "$log" >&2
      exit 1
    fi
    # One line per rank; a line mpirun cut into another is dropped, not misread.
    grep -o "^RSSKB [0-9]*$" "$log" | awk -v np="$np" '{print np, $2}' >>"$work/rss.txt"
    echo "# round $round: $np ranks done" >&2
  done
done

python3 - "$work/rss.txt" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    np, kib = map(int, line.split())
    by.setdefault(np, []).append(kib / 1024)
base = None
print(f"{'ranks':>6} {'samples':>8} {'median MiB':>11} {'min MiB':>8} {'max MiB':>8} {'median / smallest world':>24}")
for np in sorted(by):
    v = sorted(by[np])
    med = statistics.median(v)
    base = base or med
    print(f"{np:>6} {len(v):>8} {med:>11.1f} {v[0]:>8.1f} {v[-1]:>8.1f} {med / base:>24.3f}")
PY

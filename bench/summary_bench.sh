#!/usr/bin/env bash
# How long `ncclshim summary` takes, and its peak RSS, on the big workload files: SimAI's 9216-rank
# workload_analytical.txt (37 M calls as it expands, tests/data/simai) and AICB's DP=128 ZeRO-3
# L65B CSV (tests/data/aicb). Rounds are interleaved (every file with every binary, then again)
# because this machine is shared; each line gives the median and the spread (min-max) over rounds.
#
# usage: bench/summary_bench.sh [--rounds R] [--bin NAME=PATH]... [--input FILE]...
#   --rounds R        rounds (default 3)
#   --bin NAME=PATH   an ncclshim binary to time, under NAME (default: ncclshim=build/ncclshim); give
#                     several to compare builds (e.g. --bin before=/tmp/old/ncclshim --bin after=...)
#   --input FILE      a workload to summarise instead of the two above (repeatable)
# Output lines (also read by bench/stated_figures.py):
#   summary <input> <name> seconds <median> (<min>-<max>) rss_mib <median> (<min>-<max>)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
bins=()
inputs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --bin) bins+=("$2"); shift 2 ;;
    --input) inputs+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "summary_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#bins[@]} -gt 0 ] || bins=(ncclshim=build/ncclshim)
[ -x /usr/bin/time ] || { echo "summary_bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
for b in "${bins[@]}"; do
  [ -x "${b#*=}" ] || { echo "summary_bench: ${b#*=} is missing: run 'make all' first" >&2; exit 2; }
done

work=$(mktemp -d /tmp/ncclshim-summary-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ ${#inputs[@]} -eq 0 ]; then
  zcat tests/data/aicb/L65B-D1-C07_Llama65B_zero3_mbs1.csv.gz >"$work/L65B-D1-C07_Llama65B_zero3_mbs1.csv"
  inputs=(tests/data/simai/workload_analytical.txt "$work/L65B-D1-C07_Llama65B_zero3_mbs1.csv")
fi

: >"$work/times.txt"
for round in $(seq 1 "$rounds"); do
  for input in "${inputs[@]}"; do
    for b in "${bins[@]}"; do
      name=${b%%=*} bin=${b#*=}
      /usr/bin/time -f "%e %M" -o "$work/time.txt" "$bin" summary "$input" -o "$work/out.txt" 2>"$work/err.txt" ||
        { echo "summary_bench: $bin summary $input failed: $(cat "$work/err.txt")" >&2; exit 1; }
      read -r secs kib <"$work/time.txt"
      echo "$(basename "$input") $name $secs $kib" >>"$work/times.txt"
      echo "# round $round: $(basename "$input") $name ${secs}s $((kib / 1024)) MiB" >&2
    done
  done
done

python3 - "$work/times.txt" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, binary, secs, kib = line.split()
    runs.setdefault((name, binary), []).append((float(secs), int(kib) / 1024))
for (name, binary), values in runs.items():
    secs = [v[0] for v in values]
    mib = [v[1] for v in values]
    print(f"summary {name} {binary} seconds {statistics.median(secs):.2f} ({min(secs):.2f}-{max(secs):.2f})"
          f" rss_mib {statistics.median(mib):.1f} ({min(mib):.1f}-{max(mib):.1f})")
PY

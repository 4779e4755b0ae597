#!/usr/bin/env bash
# The figures README.md states for this machine's kind (2 cores, file commands and a replay's load),
# measured again and printed beside the stated value, so that a stated figure that no longer holds
# is seen (issue 39). Each figure: where it is stated, the command that measures it, the stated
# value, the measured median and spread over interleaved rounds, and measured / stated.
#   summary-simai-s     ncclshim summary of SimAI's 9216-rank workload_analytical.txt: seconds
#   summary-simai-mib   the same run's peak RSS
#   summary-ingest      ncclshim summary of a generated trace (bench/make_ingest_trace.py): M records/s
#   rank-rss-16         phynet --check of AICB's L65B file on 16 ranks: median peak RSS per rank
#                       (bench/rank_memory_bench.sh --worlds 16)
#   shm-memcpy          64 MiB through the shared-memory transport / memcpy (bench/shm_bench.sh)
#   shm-tcp             1 MiB allreduce busbw on 2 local ranks, shared memory / TCP (bench/shm_bench.sh)
# The transports' busbw against Open MPI and Gloo is run_bench.sh's table (docs/bench_loopback.md).
# GPU figures are not measured here: docs/ name the script and the device run behind each.
# `make bench` runs this after the transport tables.
#
# usage: bench/stated_figures.sh [--rounds R] [--quick] [--before BIN]
#        --quick     the summary figures only, 1 round (seconds)
#        --before    another ncclshim binary timed in the same rounds (a build of an older commit):
#                    its summary time is printed as a peer row, with after / before
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
quick=0
before=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --quick) quick=1; rounds=1; shift ;;
    --before) before="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "stated_figures: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x build/ncclshim ] || { echo "stated_figures: build/ncclshim is missing: run 'make all' first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "stated_figures: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
[ -z "$before" ] || [ -x "$before" ] || { echo "stated_figures: --before $before is not an executable" >&2; exit 2; }

work=$(mktemp -d /tmp/ncclshim-figures.XXXXXX)
trap 'rm -rf "$work"' EXIT
simai=tests/data/simai/workload_analytical.txt
ingest_records=2100000
[ "$quick" = 1 ] && ingest_records=500000
results="$work/results.txt"  # lines: figure value
: > "$results"

# Runs a command under /usr/bin/time; prints "seconds maxrss_kib".
timed() {
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" > /dev/null 2> "$work/err.txt" || {
    echo "stated_figures: '$*' failed:" >&2; tail -5 "$work/err.txt" >&2; exit 1; }
  tail -1 "$work/time.txt"
}

if [ "$quick" = 0 ]; then
  echo "# writing a trace of $ingest_records records" >&2
  records=$(python3 bench/make_ingest_trace.py "$work/trace" --records "$ingest_records")
fi
for round in $(seq 1 "$rounds"); do
  read -r s kib < <(timed build/ncclshim summary "$simai")
  echo "summary-simai-s $s" >> "$results"
  echo "summary-simai-mib $(awk -v k="$kib" 'BEGIN{printf "%.1f", k / 1024}')" >> "$results"
  if [ -n "$before" ]; then
    read -r s kib < <(timed "$before" summary "$simai")
    echo "before-summary-simai-s $s" >> "$results"
  fi
  if [ "$quick" = 0 ]; then
    read -r s kib < <(timed build/ncclshim summary "$work/trace")
    echo "summary-ingest $(awk -v n="$records" -v s="$s" 'BEGIN{printf "%.2f", n / s / 1e6}')" >> "$results"
    bash bench/rank_memory_bench.sh --worlds 16 --rounds 1 2>/dev/null |
      awk '$1 == 16 {print "rank-rss-16", $3}' >> "$results"
    bash bench/shm_bench.sh --rounds 1 2>/dev/null | awk '
      /^ratio shm\/memcpy/ {print "shm-memcpy", $4}
      /^ratio shm\/tcp/ {print "shm-tcp", $4}' >> "$results"
  fi
  echo "# round $round done" >&2
done

# figure | where stated | stated value | unit | the command
python3 - "$results" "$quick" <<'PY'
import statistics, sys
values = {}
for line in open(sys.argv[1]):
    name, value = line.split()
    values.setdefault(name, []).append(float(value))
stated = [
    ("summary-simai-s", "README.md (SimAI/AICB ops)", 1.3, "s", "ncclshim summary tests/data/simai/workload_analytical.txt"),
    ("summary-simai-mib", "README.md (SimAI/AICB ops)", 12, "MiB", "same run, peak RSS"),
    ("summary-ingest", "README.md, docs/bench_trace_ingest.md", 5, "M records/s", "ncclshim summary of bench/make_ingest_trace.py's trace"),
    ("rank-rss-16", "README.md (memory per rank)", 23.3, "MiB", "bench/rank_memory_bench.sh --worlds 16"),
    ("shm-memcpy", "README.md, docs/bench_shm.md", 0.8, "ratio", "bench/shm_bench.sh: 64 MiB, shm / memcpy"),
    ("shm-tcp", "README.md, docs/bench_shm.md", 2.0, "ratio", "bench/shm_bench.sh: 1 MiB allreduce, shm / tcp"),
]
print(f"{'figure':<18} {'stated':>8} {'measured (median, min-max)':>30} {'unit':<12} {'measured/stated':>15}  stated in")
for name, where, value, unit, command in stated:
    got = values.get(name)
    if not got:
        print(f"{name:<18} {value:>8g} {'(not measured: --quick)':>30} {unit:<12} {'':>15}  {where}")
        continue
    median = statistics.median(got)
    spread = f"{median:.2f} ({min(got):.2f}-{max(got):.2f})"
    print(f"{name:<18} {value:>8g} {spread:>30} {unit:<12} {median / value:>15.2f}  {where}")
if "before-summary-simai-s" in values:
    before = values["before-summary-simai-s"]
    after = values["summary-simai-s"]
    print(f"\nsummary of SimAI's file, the same rounds: before {statistics.median(before):.2f} s "
          f"({min(before):.2f}-{max(before):.2f}), after {statistics.median(after):.2f} s "
          f"({min(after):.2f}-{max(after):.2f}), after / before {statistics.median(after) / statistics.median(before):.3f}")
PY

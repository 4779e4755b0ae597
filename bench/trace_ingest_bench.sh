#!/usr/bin/env bash
# Trace ingest benchmark (issue 15): records per second and peak memory per record of ncclshim's
# trace readers, against Python's json module reading the same files in the same run.
#   summary   ncclshim summary <dir>            (phynet's trace loader + the distribution tables)
#   validate  ncclshim-trace validate <dir>     (every record kept, checked across ranks)
#   phynet    mpirun -np 2 phynet --check <dir> (each rank reads every file's structure and its own
#             file's records, as in a replay; the time and peak RSS are rank 0's, from its "loaded
#             it in" line, and its records are rank 0's file's)
#   general   as summary, with the op-line fast path off (NCCLSHIM_TRACE_GENERAL_PARSER=1)
#   python    json.loads of every line          (the peer: a well-kept C JSON parser, no checks)
# Rounds are interleaved (summary, validate, phynet, general, python, summary, ...) because this
# machine is noisy; the table gives the median and the spread (min-max) of each.
#
# --zstd: the rank files compressed (zstd -3, as NCCLSHIM_TRACE_COMPRESS=zstd writes them: .jsonl.zst)
# and read as such; the ratio is printed, the python round is left out.
#
# usage: bench/trace_ingest_bench.sh [--records N] [--rounds R] [--dir D] [--zstd]
#        (defaults: 2,100,000 records in two rank files, 3 rounds, a temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."

records=2100000
rounds=3
dir=""
compress=0
while [ $# -gt 0 ]; do
  case "$1" in
    --records) records="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --zstd) compress=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "trace_ingest_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

for tool in build/ncclshim build/ncclshim-trace build/phynet; do
  [ -x "$tool" ] || { echo "trace_ingest_bench: $tool is missing: run 'make all' first" >&2; exit 2; }
done
if [ -z "$dir" ]; then
  dir=$(mktemp -d /tmp/ncclshim-ingest.XXXXXX)
  trap 'rm -rf "$dir"' EXIT
fi
timings="$dir/timings.txt"
: > "$timings"

echo "# writing a trace of $records records into $dir" >&2
total=$(python3 bench/make_ingest_trace.py "$dir/trace" --records "$records")
bytes=$(cat "$dir"/trace/*.jsonl | wc -c)
echo "# $total records, $bytes bytes ($((bytes / total)) B per line)" >&2
own=$(($(wc -l < "$dir/trace/rank0.jsonl") - 4))  # rank 0's records: its file's lines but header, comms, footer
if [ "$compress" = 1 ]; then
  for f in "$dir"/trace/*.jsonl; do zstd -q -3 --rm "$f"; done
  zbytes=$(cat "$dir"/trace/*.jsonl.zst | wc -c)
  echo "# zstd -3: $zbytes bytes, ratio $(awk -v a="$bytes" -v b="$zbytes" 'BEGIN { printf "%.1f", a / b }')" >&2
fi

cat > "$dir/python_reader.py" <<'EOF'
import json, os, sys
n = 0
for name in sorted(os.listdir(sys.argv[1])):
    with open(os.path.join(sys.argv[1], name), "rb") as f:
        for line in f:
            json.loads(line)
            n += 1
print(n)
EOF

# One timed run: name, then the command. Appends "name seconds maxrss_kib" to $timings.
measure() {
  local name="$1"; shift
  local out="$dir/$name.out"
  if ! /usr/bin/time -f "%e %M" -o "$dir/time.txt" "$@" > "$out" 2> "$dir/$name.err"; then
    # validate exits 1 on an invalid trace: this one must be valid
    echo "trace_ingest_bench: '$name' failed:" >&2
    tail -5 "$dir/$name.err" "$out" >&2
    exit 1
  fi
  echo "$name $(tail -1 "$dir/time.txt")" >> "$timings"
  echo "# round $round: $name $(tail -1 "$dir/time.txt" | awk '{printf "%.2f s, %.0f MiB", $1, $2 / 1024}')" >&2
}

[ -x /usr/bin/time ] || { echo "trace_ingest_bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
# phynet's own figures for its load (mpirun's start-up is not part of it).
measure_phynet() {
  local log="$dir/phynet.log"
  if ! timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 --mca pml ob1 --mca btl self,tcp \
      --mca btl_tcp_if_include lo build/phynet --ifname lo --check "$dir/trace" > "$log" 2>&1; then
    echo "trace_ingest_bench: phynet --check failed:" >&2
    tail -5 "$log" >&2
    exit 1
  fi
  local figures
  figures=$(sed -n 's/^phynet: rank 0 loaded it in \([0-9.]*\) s, peak RSS \([0-9]*\) MiB$/\1 \2/p' "$log")
  [ -n "$figures" ] || { echo "trace_ingest_bench: no load line in phynet's output" >&2; cat "$log" >&2; exit 1; }
  echo "phynet $(echo "$figures" | awk '{print $1, $2 * 1024}')" >> "$timings"
  echo "# round $round: phynet $(echo "$figures" | awk '{printf "%.2f s, %.0f MiB", $1, $2}')" >&2
}

for round in $(seq 1 "$rounds"); do
  measure summary build/ncclshim summary "$dir/trace"
  measure validate build/ncclshim-trace validate "$dir/trace"
  measure_phynet
  measure general env NCCLSHIM_TRACE_GENERAL_PARSER=1 build/ncclshim summary "$dir/trace"
  [ "$compress" = 1 ] || measure python python3 "$dir/python_reader.py" "$dir/trace"
done
grep -q "^valid: 2 files, 0 errors" "$dir/validate.out" || { echo "trace_ingest_bench: validate did not pass" >&2; cat "$dir/validate.out" >&2; exit 1; }
[ "$compress" = 1 ] || [ "$(cat "$dir/python.out")" = "$((total + 4))" ] ||
  { echo "trace_ingest_bench: python read $(cat "$dir/python.out") lines" >&2; exit 1; }
python3 - "$timings" "$total" "$own" <<'EOF'
import statistics, sys
total = int(sys.argv[2])
own = int(sys.argv[3])  # phynet's rank 0 parses its own file's records (and skims the other file)
runs = {}
for line in open(sys.argv[1]):
    name, seconds, kib = line.split()
    runs.setdefault(name, []).append((float(seconds), int(kib)))
print(f"{'reader':<10} {'M records/s (median, min-max)':>32} {'B per record (median, min-max)':>32}")
rates = {}
for name, values in runs.items():
    records = own if name == "phynet" else total
    rate = sorted(records / s / 1e6 if s > 0 else float('inf') for s, _ in values)
    per = sorted(kib * 1024 / records for _, kib in values)
    rates[name] = statistics.median(rate)
    print(f"{name:<10} {statistics.median(rate):>14.2f} ({rate[0]:.2f}-{rate[-1]:.2f}) {'':>8}"
          f"{statistics.median(per):>10.0f} ({per[0]:.0f}-{per[-1]:.0f})")
for name in ("summary", "validate", "phynet", "general"):
    if "python" in rates:
        print(f"ratio {name}/python: {rates[name] / rates['python']:.2f}")
print(f"target: >= 2.00 M records/s and <= 200 B per record for summary, validate and phynet's load")
EOF

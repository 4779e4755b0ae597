#!/usr/bin/env bash
# tier: full
# Load test (run by tests/run_all.sh after `make`; about a minute on 2 cores): 64 ranks, oversubscribed
# on this host, over the TCP transport on loopback.
#   phynet/*  `mpirun -np 64 --oversubscribe phynet` replays a generated trace of a TP=8 x DP=8 job
#             (tests/phynet/tools/make_test_trace.cc, --repeat 10: 160 ops per rank, 10,240 ops on
#             17 communicators, every op kind, small messages) LOAD_ITERATIONS times (default 20,
#             plus one warmup) with --verify: every op moves a known pattern and every rank checks
#             every byte delivered to it (phynet/data_check.h). It must complete, every rank's op
#             count and op bytes must equal the trace's times the iterations, and every rank's wire
#             bytes the algorithms' model, with the bytes sent equal to the bytes received overall.
#   perf/*    `ncclshim perf -np 64` (the NCCL API on libncclshim.so, 64 forked ranks over TCP) runs
#             all_reduce, all_gather, reduce_scatter, alltoall, broadcast and sendrecv from 8 B to
#             256 KiB with -c 1: every element of every result is checked against its exact value.
# Peak RSS of every phynet rank (/usr/bin/time, else Python's getrusage, around each) is printed and
# must stay under LOAD_RSS_MB (default 256). Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
phynet="$BUILD/phynet"
gen="$BUILD/phynet_make_test_trace"
perf="$BUILD/ncclshim"
np=64
iterations=${LOAD_ITERATIONS:-20}
rss_limit_mb=${LOAD_RSS_MB:-256}
work=$(mktemp -d /tmp/load-tests-XXXXXX)
trap 'rm -rf "$work"' EXIT

source tests/lib/checks.sh  # result(), passed, failed
source tests/lib/rank_lines.sh  # rank_lines: the report's per-rank count lines, one per rank

for f in "$phynet" "$gen" "$perf"; do
  [ -x "$f" ] || { echo "missing $f: run make first"; echo "0 passed, 1 failed"; exit 1; }
done
# The command each rank runs under sh -c: writes its peak RSS in KiB to $0/rank.<rank> (GNU time
# when installed, else Python's getrusage).
if [ -x /usr/bin/time ]; then
  measure='exec /usr/bin/time -f "%M" -o "$0/rank.$OMPI_COMM_WORLD_RANK" "$@"'
else
  measure='exec python3 -c "import resource, subprocess, sys; rc = subprocess.call(sys.argv[2:]); open(sys.argv[1], \"w\").write(\"%d\\n\" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(rc)" "$0/rank.$OMPI_COMM_WORLD_RANK" "$@"'
fi

# rss_summary <files...>: "min/median/max MB" of the first fields (KiB).
rss_summary() {
  cat "$@" | awk '{print $1}' | sort -n |
    awk '{ v[NR] = $1 } END { if (NR) printf "%.1f/%.1f/%.1f MB", v[1] / 1024, v[int((NR + 1) / 2)] / 1024, v[NR] / 1024 }'
}
rss_max_mb() { cat "$@" | awk '$1 > m { m = $1 } END { print int(m / 1024) }'; }

# ---- phynet: 64 ranks replay a 10,240-op trace
"$gen" "$work/trace" --ranks $np --tp 8 --repeat 10 --elements 64 >/dev/null
mkdir -p "$work/rss"
start=$SECONDS
timeout 600 mpirun --allow-run-as-root --oversubscribe -np $np --mca pml ob1 --mca btl self,tcp \
  --mca btl_tcp_if_include lo sh -c "$measure" \
  "$work/rss" "$phynet" --ifname lo --timeout 120 --iterations "$iterations" --warmup 1 --verify --report "$work/load.csv" \
  "$work/trace" >"$work/phynet.log" 2>&1
rc=$?
took=$((SECONDS - start))
ops=$(sed -n 's/^phynet: validated \([0-9]*\) operations.*/\1/p' "$work/phynet.log")
result "$rc" "phynet/$np-ranks-replay-${ops:-?}-ops-x$iterations-completes (${took} s)" "$(tail -n 5 "$work/phynet.log")"

# Expected per-rank "rank ops bytes" from the trace (op lines without group start/end), times the
# iterations run (the per-rank counters include the warmup one).
want=$(for f in "$work"/trace/rank*.jsonl; do
  awk -v it="$((iterations + 1))" -v name="$(basename "$f" .jsonl)" '
    /"type":"op"/ && !/"op":"group(start|end)"/ { ops++; match($0, /"bytes":[0-9]+/); bytes += substr($0, RSTART + 8, RLENGTH - 8) }
    END { sub(/rank/, "", name); printf "%s %d %d\n", name, ops * it, bytes * it }' "$f"
done | sort -n)
got=$(rank_lines "$work/phynet.log" | sed -n 's/^# rank \([0-9]*\): ops \([0-9]*\) op_bytes \([0-9]*\) .*/\1 \2 \3/p' | sort -n)
[ -n "$got" ] && [ "$want" = "$got" ]
result $? "phynet/every-rank-ops-and-bytes-equal-the-trace" "$(diff <(echo "$want") <(echo "$got") | head -5)"
rank_lines "$work/phynet.log" | awk '/^# rank [0-9]+:/ { if ($9 != $13) bad = 1; sent += $9; recv += $11; n++ }
     END { exit (n != '$np' || bad || sent != recv) }'
result $? "phynet/wire-bytes-equal-the-model-sent-equals-received" "$(grep -m3 '^# ranks\? ' "$work/phynet.log")"
# --verify: every rank checked the bytes delivered to it (a wrong byte would have failed the run),
# and the total printed is the ranks' sum.
{ rank_lines "$work/phynet.log"; grep '^# data check' "$work/phynet.log"; } |
  awk '/^# rank [0-9]+:/ { if ($14 != "verified_bytes" || $15 <= 0) bad = 1; total += $15; n++ }
     /^# data check/ { match($0, /\(([0-9]+) bytes/); said = substr($0, RSTART + 1, RLENGTH - 7) }
     END { exit (n != '$np' || bad || said != total) }'
result $? "phynet/every-rank-verified-every-received-byte ($(grep -o '([0-9]* bytes over all ranks' "$work/phynet.log" | tr -d '('))" \
  "$(grep -m3 -E '^# (ranks?|data check) ' "$work/phynet.log")"
files=("$work"/rss/rank.*)
[ "${#files[@]}" -eq $np ] && [ "$(rss_max_mb "${files[@]}")" -lt "$rss_limit_mb" ]
result $? "phynet/peak-rss-per-rank-min/median/max $(rss_summary "${files[@]}") (${#files[@]} ranks, limit $rss_limit_mb MB)" \
  "${#files[@]} RSS files"

# ---- perf: 64 ranks, every element checked
for op in all_reduce all_gather reduce_scatter alltoall broadcast sendrecv; do
  start=$SECONDS
  timeout 300 "$perf" perf $op -np $np -b 8 -e 256K -f 8 -n 5 -w 1 -c 1 >"$work/perf-$op.log" 2>&1
  rc=$?
  rows=$(grep -cE '^ +[0-9]+ +[0-9]+ ' "$work/perf-$op.log")
  # #wrong of the out-of-place and in-place columns (N/A: the op has no in-place form).
  wrong=$(awk '/^ +[0-9]+ +[0-9]+ / && ($9 != "0" || ($13 != "0" && $13 != "N/A")) { bad++ } END { print bad + 0 }' \
    "$work/perf-$op.log")
  [ "$rc" -eq 0 ] && [ "$rows" -eq 6 ] && [ "$wrong" -eq 0 ] && grep -q "^# Out of bounds values : 0 OK" "$work/perf-$op.log"
  result $? "perf/$np-ranks-$op-8B-256KiB-every-element-checked ($((SECONDS - start)) s)" \
    "rc $rc, $rows rows, $wrong with wrong elements: $(tail -n 5 "$work/perf-$op.log")"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# The trace tools end to end (`ncclshim summary|diff|convert|plot`, run by tests/run_all.sh after
# `make`): summary numbers of the bundled Megatron TP=2 trace equal a hand count made here in Python
# from the JSON lines; the Chrome trace is valid JSON (python3 -m json.tool) with one event per op
# record; the CSV has one row per op; SimAI text converted from the trace replays in phynet (mpirun,
# 2 ranks) with the trace's per-rank op counts; a trace SimAI cannot express is refused; diff finds
# a planted divergence and names it, with exit status 0 / 1 / 2; a phynet report is summarised and
# compared with its trace; plot writes PNGs (or, without matplotlib, skips with exit 3 and a
# message); `perf` binds the ranks it forks like mpirun (--bind); workloads saved with a BOM and CRLF
# summarise as without; the summaries of SimAI's 9216-rank file and an AICB DP=128 file equal the
# committed digests; an AICB micro_test file's error names --world-size; an exception ends a
# command with one line and status 70 (the fence); `scale` of the GPU-captured Megatron TP2 x DP2 to
# DP4 equals the DP4 capture (plain DDP and the distributed optimizer; MoE EP2 from DP4 to DP8 too)
# and 1,024 ranks summarise.
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
tool="$BUILD/ncclshim"
phynet="$BUILD/phynet"
trace=examples/traces/megatron_tp2
work=$(mktemp -d /tmp/tools-tests-XXXXXX)
trap 'rm -rf "$work"' EXIT

source tests/lib/checks.sh  # result(), passed, failed
source tests/lib/rank_lines.sh  # rank_lines: the report's per-rank count lines, one per rank
[ -x "$tool" ] || { echo "missing $tool: run make first"; echo "0 passed, 1 failed"; exit 1; }

# ---- every subcommand has --help
for command in summary diff convert scale plot; do
  "$tool" "$command" --help >"$work/help.txt" 2>&1 && grep -q "usage: ncclshim $command" "$work/help.txt"
  result $? "help/$command"
done

# ---- summary equals a hand count (Python over the raw JSON lines, not our reader)
"$tool" summary "$trace" --format json -o "$work/summary.json" 2>"$work/summary.err"
result $? "summary/exit-0" "$(cat "$work/summary.err")"
python3 - "$trace" "$work/summary.json" >"$work/hand.txt" 2>&1 <<'PY'
import collections, glob, json, os, sys
trace, summary = sys.argv[1], json.load(open(sys.argv[2]))
ranks, buckets, comms = {}, collections.Counter(), collections.Counter()
for path in sorted(glob.glob(os.path.join(trace, "rank*.jsonl"))):
    rank = int(os.path.basename(path)[4:-6])
    calls = size = wire = 0
    for line in open(path):
        r = json.loads(line)
        if r["type"] != "op" or r["op"] in ("groupstart", "groupend"):
            continue
        n = r["nranks"]
        calls += 1
        size += r["bytes"]
        wire += 2 * (n - 1) * r["bytes"] // n  # ring allreduce: the only op of this trace
        bucket = 1
        while bucket < r["bytes"]:
            bucket *= 2
        buckets[(r["op"], n, bucket)] += 1
        comms[r["comm"]] += 1
    ranks[rank] = (calls, size, wire)
got_ranks = {r["rank"]: (r["calls"], r["bytes"], r["wire_bytes"]) for r in summary["ranks"]}
got_buckets = collections.Counter()
for row in summary["distribution"]:
    got_buckets[(row["op"], row["nranks"], row["size_bucket"])] += row["calls"]
got_comms = {c["comm"]: c["calls"] for c in summary["comms"]}
totals = tuple(map(sum, zip(*ranks.values())))
got_totals = (summary["totals"]["calls"], summary["totals"]["bytes"], summary["totals"]["wire_bytes"])
problems = [name for name, a, b in [("ranks", ranks, got_ranks), ("buckets", buckets, got_buckets),
                                    ("comms", dict(comms), got_comms), ("totals", totals, got_totals)] if a != b]
print("hand:", ranks, dict(buckets), dict(comms), totals)
print("tool:", got_ranks, dict(got_buckets), got_comms, got_totals)
sys.exit(1 if problems else 0)
PY
result $? "summary/equals-hand-count" "$(cat "$work/hand.txt")"
"$tool" summary "$trace" >"$work/summary.txt" && grep -q "^  allreduce .*world .* 2 .*128K" "$work/summary.txt" &&
  grep -q "^# per rank" "$work/summary.txt"
result $? "summary/text-table" "$(head -20 "$work/summary.txt")"
# ---- NCCL's decisions (format version 2): the algorithm / protocol mix equals a hand count
decisions=examples/traces/nccl_decisions_allreduce_n2
"$tool" summary "$decisions" --csv --table decisions >"$work/decisions.csv" 2>"$work/decisions.err"
result $? "summary/decisions-exit-0" "$(cat "$work/decisions.err")"
python3 - "$decisions" "$work/decisions.csv" >"$work/decisions_hand.txt" 2>&1 <<'PY'
import collections, csv, glob, json, sys
rows = collections.defaultdict(lambda: [0, 0, 99, 0, 0])  # calls, tasks, min ch, max ch, net sent
for path in glob.glob(sys.argv[1] + "/*.jsonl"):
    recs = [json.loads(l) for l in open(path)]
    ops = {(r["comm"], r["seq"]): r for r in recs if r["type"] == "op"}
    key_of = {}
    for t in (r for r in recs if r["type"] == "nccl_task"):
        op = ops[(t["comm"], t["seq"])]
        bucket = 1
        while bucket < op["bytes"]:
            bucket *= 2
        key = (op["op"], bucket, t["algo"], t["proto"])
        row = rows[key]
        row[1] += 1
        row[2], row[3] = min(row[2], t["channels"]), max(row[3], t["channels"])
        if (t["comm"], t["seq"]) not in key_of:
            row[0] += 1
            key_of[(t["comm"], t["seq"])] = key
    for p in (r for r in recs if r["type"] == "nccl_proxy" and r["dir"] == "send"):
        rows[key_of[(p["comm"], p["seq"])]][4] += p["bytes"]
tool = {(r["op"], int(r["size_bucket"]), r["algo"], r["proto"]):
        [int(r["calls"]), int(r["tasks"]), int(r["min_channels"]), int(r["max_channels"]), int(r["net_sent_bytes"])]
        for r in csv.DictReader(open(sys.argv[2]))}
print("hand:", dict(rows))
print("tool:", tool)
sys.exit(0 if tool == dict(rows) and len(tool) > 10 else 1)
PY
result $? "summary/decisions-equal-hand-count" "$(cat "$work/decisions_hand.txt")"
"$tool" summary "$decisions" >"$work/decisions.txt" &&
  grep -q "^# NCCL's decisions (profiler plugin): 208 tasks, 596 network proxy operations, 0 not joined" "$work/decisions.txt" &&
  grep -qE "^  allreduce +2M +RING +SIMPLE +26 +26 +2 +54525952$" "$work/decisions.txt"
result $? "summary/decisions-text" "$(tail -8 "$work/decisions.txt")"
"$tool" summary "$trace" >"$work/v1.txt" && ! grep -q "NCCL's decisions" "$work/v1.txt"
result $? "summary/no-decisions-in-v1-trace"
"$tool" summary "$trace" --csv --table ranks >"$work/ranks.csv" && [ "$(sed -n 1p "$work/ranks.csv")" = "rank,calls,bytes,wire_bytes" ] &&
  [ "$(wc -l <"$work/ranks.csv")" -eq 3 ]
result $? "summary/csv-ranks" "$(cat "$work/ranks.csv")"
"$tool" summary examples/workloads/simai_tp2_dp4_ep2.txt --format json | python3 -c '
import json, sys; d = json.load(sys.stdin); groups = {r["group"] for r in d["distribution"]}
sys.exit(0 if d["world_size"] == 8 and groups == {"tp", "dp", "ep", "dp_ep"} else 1)'
result $? "summary/simai-workload-groups"
# rows that move no data (zero-byte reduce-scatters, as in SimAI's workload_analytical.txt; TP=1 ops)
# are left out as phynet leaves them out, and said in one line: how many, of which kind, why
printf '%s\n' "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 all_gpus: 4" 3 \
  "a -1 10 ALLREDUCE 4096 20 NONE 0 30 ALLREDUCE 4096 1" "b -1 40 NONE 0 50 REDUCESCATTER 0 60 ALLREDUCE 4096 1" \
  "c -1 40 NONE 0 50 REDUCESCATTER 0 60 ALLREDUCE 4096 1" >"$work/zero-rows.txt"
"$tool" summary "$work/zero-rows.txt" >"$work/zero-rows.out" 2>"$work/zero-rows.err"
rc=$?
[ "$rc" -eq 0 ] && [ "$(wc -l <"$work/zero-rows.err")" -eq 1 ] &&
  grep -q "^ncclshim summary: note: rows that move no data are left out: 2 reducescatter rows on tp of 0 bytes (first .*zero-rows.txt:4); 1 allreduce row on tp on a group of one rank (first .*zero-rows.txt:3)$" "$work/zero-rows.err"
result $? "summary/says-the-rows-that-move-no-data" "rc $rc: $(cat "$work/zero-rows.err")"

# ---- the summaries of SimAI's 9216-rank workload_analytical.txt (37 M calls) and AICB's DP=128 ZeRO-3
# L65B CSV equal the committed ones (tests/lib/summary_digest.py: world, totals, distribution rows,
# SHA-256 of the per-communicator and per-rank tables), so that making summary faster never changes
# what it says. After a deliberate change of what a file means, regenerate the digest with
# `build/ncclshim summary FILE --json -o s.json && tests/lib/summary_digest.py s.json > DIGEST`.
zcat tests/data/aicb/L65B-D1-C07_Llama65B_zero3_mbs1.csv.gz >"$work/L65B-D1-C07_Llama65B_zero3_mbs1.csv"
for pair in "tests/data/simai/workload_analytical.txt tests/data/simai/workload_analytical.summary.json" \
            "$work/L65B-D1-C07_Llama65B_zero3_mbs1.csv tests/data/aicb/L65B-D1-C07_Llama65B_zero3_mbs1.summary.json"; do
  read -r input expected <<<"$pair"
  "$tool" summary "$input" --json -o "$work/digest-summary.json" 2>"$work/digest.err" &&
    python3 tests/lib/summary_digest.py "$work/digest-summary.json" >"$work/digest.json" &&
    diff "$expected" "$work/digest.json" >"$work/digest.diff"
  result $? "summary/equals-committed-$(basename "$input")" "$(cat "$work/digest.err"; head -20 "$work/digest.diff")"
done

# ---- files as spreadsheet tools save them: a UTF-8 BOM and CRLF line ends summarise the same
for w in examples/workloads/aicb_tp2_dp4_ep2.csv examples/workloads/simai_tp2_dp4_ep2.txt; do
  saved="$work/saved-$(basename "$w")"
  { printf '\xEF\xBB\xBF'; sed 's/$/\r/' "$w"; } >"$saved"
  "$tool" summary "$w" --csv >"$work/plain.csv" 2>&1 && "$tool" summary "$saved" --csv >"$work/saved.csv" 2>&1 &&
    cmp -s "$work/plain.csv" "$work/saved.csv"
  result $? "summary/bom-crlf-$(basename "$w")" "$(diff "$work/plain.csv" "$work/saved.csv" | head -5)"
done

# ---- an AICB micro_test file (no comm_group_size, only dp_group rows): the error names --world-size
printf '%s\n' "comm_type,comm_group,msg_size,stage,dst,src,additional,_elapsed_time,algbw,busbw,count" \
  "CommType.all_gather,CommGroup.dp_group,8192,warmup,None,None,,None,None,None,1" \
  "CommType.all_gather,CommGroup.dp_group,8192,test,None,None,,None,None,None,1" >"$work/micro_test.csv"
"$tool" summary "$work/micro_test.csv" >"$work/micro.txt" 2>&1
[ $? -ne 0 ] && grep -q "micro_test.csv:2: comm_group_size: size of dp_group unknown.*: pass --world-size N" "$work/micro.txt"
result $? "summary/aicb-micro-test-names-world-size" "$(cat "$work/micro.txt")"
"$tool" summary "$work/micro_test.csv" --world-size 4 >"$work/micro4.txt" 2>&1 && grep -q "TP=1 DP=4 EP=1 PP=1" "$work/micro4.txt"
result $? "summary/aicb-micro-test-with-world-size" "$(head -3 "$work/micro4.txt")"

# ---- the fence (common/main_fence.h): an exception ends a command with one line and status 70, no
# abort. A launcher rank reading a unique-id file of non-hex text threw out of std::stoi (abort, 134).
python3 -c 'print("z" * 256)' >"$work/bad.id"
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 timeout 30 "$tool" perf all_reduce --id-file "$work/bad.id" \
  >"$work/fence.out" 2>"$work/fence.err"
rc=$?
[ "$rc" -eq 70 ] && [ "$(wc -l <"$work/fence.err")" -eq 1 ] &&
  grep -q "^ncclshim perf: internal error while running all_reduce: " "$work/fence.err" &&
  ! grep -qi "terminate\|abort" "$work/fence.err"
result $? "fence/perf-bad-id-file-one-line" "rc=$rc $(cat "$work/fence.err")"

# ---- convert: Chrome trace JSON valid, every op an event with its fields
for t in "$trace" examples/traces/torch_collectives; do
  name=$(basename "$t")
  "$tool" convert "$t" --to chrome -o "$work/$name.json" 2>"$work/chrome.err"
  result $? "convert/chrome-$name-exit-0" "$(cat "$work/chrome.err")"
  python3 -m json.tool "$work/$name.json" >/dev/null 2>"$work/jsontool.err"
  result $? "convert/chrome-$name-valid-json" "$(cat "$work/jsontool.err")"
  python3 - "$t" "$work/$name.json" >"$work/events.txt" 2>&1 <<'PY'
import glob, json, os, sys
records = []
for path in glob.glob(os.path.join(sys.argv[1], "*.jsonl")):
    records += [json.loads(l) for l in open(path) if '"type":"op"' in l]
events = [e for e in json.load(open(sys.argv[2]))["traceEvents"] if e["ph"] == "X"]
want = sorted((r["comm"], r["seq"], r["op"], r["count"], r["bytes"]) for r in records)
got = sorted((e["args"]["comm"], e["args"]["seq"], e["name"], e["args"]["count"], e["args"]["bytes"]) for e in events)
tracks = {(e["pid"], e["tid"]) for e in events}
print(len(records), "records,", len(events), "events,", len(tracks), "tracks")
sys.exit(0 if want == got and all(e["dur"] >= 0 and e["ts"] >= 0 for e in events) else 1)
PY
  result $? "convert/chrome-$name-every-op-an-event" "$(cat "$work/events.txt")"
done
"$tool" convert "$trace" --to csv -o "$work/ops.csv" 2>/dev/null
[ "$(($(wc -l <"$work/ops.csv") - 1))" -eq "$(cat "$trace"/*.jsonl | grep -c '"type":"op"')" ]
result $? "convert/csv-one-row-per-op"

# ---- convert to SimAI; phynet replays it with the trace's per-rank op counts (65 per rank: the
# 1-rank communicators' ops move no data and are left out)
"$tool" convert "$trace" --to simai --tp 2 -o "$work/tp2.txt" 2>"$work/simai.err"
result $? "convert/simai-exit-0" "$(cat "$work/simai.err")"
"$tool" diff "$trace" "$work/tp2.txt" >"$work/simai-diff.txt"
[ $? -eq 1 ] && ! grep -Eq "field (count|bytes|dtype|op):" "$work/simai-diff.txt"
result $? "convert/simai-differs-only-in-dropped-comms-and-redop" "$(head -20 "$work/simai-diff.txt")"
if command -v mpirun >/dev/null && [ -x "$phynet" ]; then
  timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 --mca pml ob1 --mca btl self,tcp \
    --mca btl_tcp_if_include lo "$phynet" --ifname lo --rows 0 "$work/tp2.txt" >"$work/simai-replay.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] && [ "$(rank_lines "$work/simai-replay.log" | grep -c '^# rank [01]: ops 65 op_bytes 6568960 ')" -eq 2 ]
  result $? "convert/simai-replays-in-phynet" "$(tail -5 "$work/simai-replay.log")"
else
  echo "SKIP convert/simai-replays-in-phynet (no mpirun or $phynet)"
fi
"$tool" convert examples/traces/torch_collectives --to simai -o "$work/refused.txt" 2>"$work/refused.err"
[ $? -eq 2 ] && grep -q "send on .*SimAI workloads cannot express this op" "$work/refused.err"
result $? "convert/simai-refuses-send-recv" "$(cat "$work/refused.err")"

# ---- diff: same, planted divergence, error
"$tool" diff "$trace" "$trace" >"$work/same.txt"
result $? "diff/same-exit-0" "$(cat "$work/same.txt")"
mkdir -p "$work/planted" && cp "$trace"/*.jsonl "$work/planted/"
sed -i '/"rank":1,"seq":17,/s/"count":32768/"count":32769/' "$work/planted/rank1.jsonl"
comm=$(grep '"rank":1,"seq":17,' "$trace/rank1.jsonl" | sed 's/.*"comm":"\(0x[0-9a-f]*\)".*/\1/')
"$tool" diff "$trace" "$work/planted" >"$work/planted.txt"
rc=$?
[ "$rc" -eq 1 ] && grep -q "^first divergence: rank 1, comm $comm (world, 2 ranks), seq 17, field count: a 32768, b 32769$" \
  "$work/planted.txt"
result $? "diff/planted-divergence-named" "exit $rc: $(cat "$work/planted.txt")"
"$tool" diff "$trace" "$work/no-such-trace" >/dev/null 2>&1
result $([ $? -eq 2 ] && echo 0 || echo 1) "diff/missing-input-exit-2"

# ---- a phynet report: summary and diff against its trace
if command -v mpirun >/dev/null && [ -x "$phynet" ]; then
  timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 --mca pml ob1 --mca btl self,tcp \
    --mca btl_tcp_if_include lo "$phynet" --ifname lo --rows 0 --iterations 2 --report "$work/report.csv" \
    "$trace" >"$work/replay.log" 2>&1
  result $? "report/phynet-replay" "$(tail -5 "$work/replay.log")"
  "$tool" summary "$work/report.csv" --format json | python3 -c '
import json, sys; d = json.load(sys.stdin)
sys.exit(0 if d["kind"] == "report" and d["totals"]["ops"] == 150 and d["iterations"] == 2 else 1)'
  result $? "report/summary"
  "$tool" diff "$trace" "$work/report.csv" >"$work/report-diff.txt"
  result $? "report/diff-with-trace-same" "$(cat "$work/report-diff.txt")"
else
  echo "SKIP report/* (no mpirun or $phynet)"
fi

# ---- plot: PNGs when matplotlib is here; a clear skip (exit 3) when it is not
NCCLSHIM_PYTHON=false "$tool" plot "$trace" -o "$work/none.png" 2>"$work/skip.err"
[ $? -eq 3 ] && [ ! -e "$work/none.png" ] && grep -q "skipped: no Python 3 with matplotlib" "$work/skip.err"
result $? "plot/without-matplotlib-skips" "$(cat "$work/skip.err")"
if python3 -c 'import matplotlib' 2>/dev/null || /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  plots=("sizes $trace")
  [ -f "$work/report.csv" ] && plots+=("busbw $work/report.csv" "replay $work/report.csv")
  for p in "${plots[@]}"; do
    set -- $p
    "$tool" plot "$2" --kind "$1" -o "$work/$1.png" 2>"$work/plot.err" &&
      [ "$(head -c 4 "$work/$1.png" | od -An -c | tr -d ' ')" = "211PNG" ] && [ "$(stat -c %s "$work/$1.png")" -lt 200000 ]
    result $? "plot/$1-png" "$(cat "$work/plot.err")"
  done
else
  echo "SKIP plot/*-png (no matplotlib: apt-get install python3-matplotlib)"
fi

# ---- perf binds the ranks it forks like mpirun: one CPU each when they fit, none when they do not
cpus=$(nproc)
"$tool" perf all_reduce -np 2 -b 1K -e 1K -n 2 -w 1 >"$work/perf_bind.txt" 2>&1
rc=$?
if [ "$cpus" -ge 2 ]; then
  [ "$rc" -eq 0 ] && grep -q "^# ranks bound to CPUs [0-9]*,[0-9]* " "$work/perf_bind.txt"
else
  [ "$rc" -eq 0 ] && ! grep -q "ranks bound" "$work/perf_bind.txt"
fi
result $? "perf/bind-auto-fits" "$(head -3 "$work/perf_bind.txt")"
"$tool" perf all_reduce -np $((cpus + 1)) -b 1K -e 1K -n 2 -w 1 >"$work/perf_over.txt" 2>&1 &&
  ! grep -q "ranks bound" "$work/perf_over.txt"
result $? "perf/bind-auto-oversubscribed-none" "$(head -3 "$work/perf_over.txt")"
"$tool" perf all_reduce -np 2 -b 1K -e 1K -n 2 -w 1 --bind none >"$work/perf_none.txt" 2>&1 &&
  ! grep -q "ranks bound" "$work/perf_none.txt"
result $? "perf/bind-none" "$(head -3 "$work/perf_none.txt")"
"$tool" perf all_reduce -np 2 --bind sometimes >"$work/perf_bad.txt" 2>&1
[ $? -eq 2 ] && grep -q "option --bind: 'sometimes' is not auto, core or none" "$work/perf_bad.txt"
result $? "perf/bind-bad-value" "$(head -2 "$work/perf_bad.txt")"

# ---- env: the settings table (common/settings_list.h); a bad value stops every command but env
sed -n '/^<!-- settings table: generated/,/^<!-- end of settings table -->/p' docs/settings.md | sed '1d;$d' \
  >"$work/doc_settings.md"
"$tool" env --markdown >"$work/env.md"
[ -s "$work/env.md" ] && [ -s "$work/doc_settings.md" ] && diff "$work/env.md" "$work/doc_settings.md" >"$work/env.diff"
result $? "env/docs-settings-table-is-the-generated-one" "run scripts/settings_table.sh: $(head -6 "$work/env.diff")"
NCCLSHIM_NSOCKS_PERPEER=4 NCCLSHIM_TIMEOT=5 "$tool" env >"$work/env.txt" 2>&1
[ $? -eq 0 ] && grep -q "^NCCLSHIM_NSOCKS_PERPEER  *4  *environment$" "$work/env.txt" &&
  grep -q "^NCCLSHIM_TIMEOUT  *300  *default$" "$work/env.txt" &&
  grep -q "^NCCLSHIM_TIMEOT .*did you mean NCCLSHIM_TIMEOUT" "$work/env.txt"
result $? "env/values-and-sources" "$(grep -E 'NSOCKS|TIMEO' "$work/env.txt")"
NCCLSHIM_TIMEOUT=1e10 "$tool" env >"$work/env_bad.txt" 2>&1
[ $? -eq 1 ] && grep -q "^NCCLSHIM_TIMEOUT .*INVALID.*from 0.001 to 1000000" "$work/env_bad.txt"
result $? "env/invalid-value-marked-exit-1" "$(grep TIMEOUT "$work/env_bad.txt")"
for bad in NCCLSHIM_NSOCKS_PERPEER=100000 NCCLSHIM_TIMEOUT=nan NCCLSHIM_SPIN_YIELD=maybe; do
  env "$bad" timeout 30 "$tool" perf all_reduce -np 2 -b 1K -e 1K >"$work/perf_setting.txt" 2>&1
  rc=$?
  [ "$rc" -eq 2 ] && grep -q "^ncclshim perf: ${bad}: .*expected" "$work/perf_setting.txt"
  result $? "env/perf-refuses-$bad" "rc $rc: $(head -2 "$work/perf_setting.txt")"
done

# ---- scale: Megatron TP2 x DP2 captured on GPUs, scaled to DP4, equals the DP4 capture (ncclshim
# diff: op, count, dtype, peer, root, members per rank); 1,024 ranks summarise; refusals are clear
scale_data=tests/data/scale
for kind in plain distopt; do
  "$tool" scale "$scale_data/megatron_tp2_dp2_$kind" --dp 4 -o "$work/scaled_$kind" 2>"$work/scale.err"
  result $? "scale/dp2-to-dp4-$kind-exit-0" "$(cat "$work/scale.err")"
  "$tool" diff "$work/scaled_$kind" "$scale_data/megatron_tp2_dp4_$kind" >"$work/scale_diff.txt" 2>&1
  result $? "scale/dp2-to-dp4-$kind-equals-capture" "$(tail -3 "$work/scale_diff.txt")"
done
"$tool" scale "$scale_data/megatron_moe_tp1_dp4_ep2" --dp 8 -o "$work/scaled_moe" 2>"$work/scale.err" &&
  "$tool" diff "$work/scaled_moe" "$scale_data/megatron_moe_tp1_dp8_ep2" >"$work/scale_diff.txt" 2>&1 &&
  grep -q "TP=1 DP=4 EP=2 PP=1 (4 ranks) -> TP=1 DP=8 EP=2 PP=1 (8 ranks)" "$work/scale.err"
result $? "scale/moe-dp4-ep2-to-dp8-equals-capture" "$(cat "$work/scale.err"; tail -3 "$work/scale_diff.txt")"
"$tool" diff "$work/scaled_distopt" "$scale_data/megatron_tp2_dp4_plain" >/dev/null 2>&1
[ $? -eq 1 ]; result $? "scale/diff-tells-distopt-from-plain"
"$tool" scale "$scale_data/megatron_tp2_dp2_distopt" --dp 512 -o "$work/scaled_1024" 2>"$work/scale.err" &&
  "$tool" summary "$work/scaled_1024" >"$work/scale_summary.txt" 2>&1 &&
  grep -q "1024 ranks, 57344 calls" "$work/scale_summary.txt" &&
  grep -Eq "reducescatter +dp +512 +1M +3072 +2956984320" "$work/scale_summary.txt"
result $? "scale/1024-ranks-summary" "$(head -4 "$work/scale_summary.txt") $(tail -2 "$work/scale.err")"
grep -q "^# shape: TP=2 DP=512 PP=1 (1024 ranks), from the communicators' members" "$work/scale_summary.txt" &&
  grep -q "^# scaled from: $scale_data/megatron_tp2_dp2_distopt, TP=2 DP=2 PP=1 (4 ranks)" "$work/scale_summary.txt"
result $? "scale/summary-shows-both-shapes" "$(grep -E '^# (shape|scaled)' "$work/scale_summary.txt")"
"$tool" scale "$scale_data/megatron_tp2_dp2_plain" --dp 4 -o "$work/scaled_plain" >"$work/scale_again.txt" 2>&1
[ $? -eq 2 ] && grep -q "already holds trace files" "$work/scale_again.txt"
result $? "scale/refuses-a-used-directory" "$(cat "$work/scale_again.txt")"
# A version-3 capture (the job's NCCL settings in the header, a step mark before every 14 calls):
# the scaled files keep both, the marks between the same calls.
python3 - "$scale_data/megatron_tp2_dp2_plain" "$work/v3_in" <<'PY'
import json, os, sys
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
for name in sorted(os.listdir(src)):
    lines, calls, step, n = [], 0, 0, 0
    for raw in open(os.path.join(src, name)):
        rec = json.loads(raw)
        if rec["type"] == "header":
            rec["version"] = 3
            rec["nccl_env"] = {"NCCL_BUFFSIZE": "8388608", "NCCL_ALGO": "Ring"}
        if rec["type"] == "op" and calls % 14 == 0:
            step += 1
            lines.append(json.dumps({"type": "step", "n": n, "step": step, "t_ns": rec["t_start_ns"]}))
            n += 1
        if rec["type"] == "op":
            calls += 1
        if rec["type"] in ("op", "comm"):
            rec["n"] = n
            n += 1
        if rec["type"] == "footer":
            rec["records"], rec["steps"] = n, step
        lines.append(json.dumps(rec, separators=(",", ":")))
    open(os.path.join(out, name), "w").write("\n".join(lines) + "\n")
PY
"$tool" scale "$work/v3_in" --dp 4 -o "$work/v3_out" >/dev/null 2>"$work/v3.err" &&
  python3 - "$work/v3_in" "$work/v3_out" >"$work/v3.txt" 2>&1 <<'PY'
import json, os, sys
def read(d):
    files = {}
    for name in os.listdir(d):
        if name.endswith(".jsonl"):
            recs = [json.loads(l) for l in open(os.path.join(d, name))]
            files[recs[0]["global_rank"]] = recs
    return files
src, out = read(sys.argv[1]), read(sys.argv[2])
assert len(out) == 8, len(out)
for rank, recs in out.items():
    assert recs[0]["version"] == 3 and recs[0]["nccl_env"] == {"NCCL_BUFFSIZE": "8388608", "NCCL_ALGO": "Ring"}, recs[0]
    kinds = [r["type"] for r in recs if r["type"] in ("op", "step")]
    want = [r["type"] for r in src[rank % 4] if r["type"] in ("op", "step")]
    assert kinds == want, (rank, kinds[:30], want[:30])
print("ok")
PY
result $? "scale/version-3-settings-and-step-marks-kept" "$(cat "$work/v3.err" "$work/v3.txt" | tail -5)"
replays_without_error() {  # <dir under $work> <check>: phynet on 8 ranks checks every byte, 0 wrong
  if command -v mpirun >/dev/null && [ -x "$phynet" ]; then
    timeout 120 mpirun --allow-run-as-root --oversubscribe -np 8 --mca pml ob1 --mca btl self,tcp \
      "$phynet" "$work/$1" --verify >"$work/$1.replay" 2>&1 &&
      grep -q "every result byte verified (.*, 0 wrong)" "$work/$1.replay"
    result $? "$2" "$(tail -5 "$work/$1.replay")"
  fi
}
# A trace directory read back for the checks below: files by global rank, and every
# communicator's members in communicator-rank order.
cat >"$work/trace_files.py" <<'PY'
import glob, json, os
from collections import defaultdict
def read(d):
    files = [[json.loads(l) for l in open(path)] for path in glob.glob(os.path.join(d, "*.jsonl"))]
    files = {recs[0]["global_rank"]: recs for recs in files}
    members = defaultdict(dict)
    for recs in files.values():
        for r in recs:
            if r["type"] == "comm":
                members[r["comm"]][r["rank"]] = r["global_rank"]
    return files, {c: [m[i] for i in range(len(m))] for c, m in members.items()}
PY
# scale --ep: the MoE DP8 x EP2 capture at EP4 (docs/scale.md), checked here independently: every
# rank's op kinds, counts and communicator members; sends spread by expert ownership, receives
# matching them, the experts' gradient allreduce halved on DP/EP ranks, the rest byte for byte.
"$tool" scale "$scale_data/megatron_moe_tp1_dp8_ep2" --ep 4 -o "$work/scaled_ep4" 2>"$work/scale_ep.err" &&
  grep -q "TP=1 DP=8 EP=2 PP=1 (8 ranks) -> TP=1 DP=8 EP=4 PP=1 (8 ranks)" "$work/scale_ep.err" &&
  PYTHONPATH="$work" python3 - "$scale_data/megatron_moe_tp1_dp8_ep2" "$work/scaled_ep4" >"$work/scale_ep.txt" 2>&1 <<'PY'
import sys
from collections import defaultdict
from trace_files import read
(old, old_m), (new, new_m) = read(sys.argv[1]), read(sys.argv[2])
assert sorted(new) == list(range(8)), sorted(new)
def ops(files, mem, rank):
    return [(r["op"], r["count"], r["dtype"], mem[r["comm"]], r["peer"]) for r in files[rank]
            if r["type"] == "op" and r["comm"] != "0x0000000000000000"]
def exchanges(files, mem, kind):  # (from, to) -> counts in order
    out = defaultdict(list)
    for rank in files:
        for op, count, _, m, peer in ops(files, mem, rank):
            if op == kind:
                out[(rank, m[peer]) if kind == "send" else (m[peer], rank)].append(count)
    return out
before, after = exchanges(old, old_m, "send"), exchanges(new, new_m, "send")
assert after == exchanges(new, new_m, "recv"), "a send without its receive"
ep4 = lambda r: list(range(r // 4 * 4, r // 4 * 4 + 4))
for r in range(8):
    assert sorted(p for (s, p) in after if s == r) == ep4(r), (r, sorted(after))
    pos, old_group = r % 4, list(range(r // 2 * 2, r // 2 * 2 + 2))
    for q in range(4):  # new position q holds half of old position q // 2's experts
        for (peer, counts) in ((ep4(r)[q], after[(r, ep4(r)[q])]),):
            want = [c // 2 + (c % 2 if q % 2 == 0 else 0) for c in before[(r, old_group[q // 2])]]
            assert counts == want, (r, q, counts[:4], want[:4])
    assert sum(map(sum, (after[(r, p)] for p in ep4(r)))) == sum(map(sum, (before[(r, p)] for p in old_group)))
    rest = lambda files, mem: [o for o in ops(files, mem, r) if o[0] not in ("send", "recv")]
    want = []
    for op, count, dtype, m, peer in rest(old, old_m):
        if len(m) == 2:   # the expert group: its all-gather keeps 4 per rank over 4 ranks
            want.append((op, count, dtype, ep4(r), peer))
        elif len(m) == 4:  # expert-data parallel: half the experts' gradients, 8 / 4 ranks
            want.append((op, count // 2, dtype, [r % 4, r % 4 + 4], peer))
        else:
            want.append((op, count, dtype, m, peer))
    assert rest(new, new_m) == want, (r, rest(new, new_m)[:6], want[:6])
print("ok")
PY
result $? "scale/moe-ep2-to-ep4-as-the-rule-says" "$(cat "$work/scale_ep.err" "$work/scale_ep.txt" | tail -5)"
replays_without_error scaled_ep4 scale/moe-ep4-replays-0-wrong
"$tool" scale "$work/scaled_ep4" --ep 2 -o "$work/scaled_ep2" 2>"$work/scale_ep2.err" &&
  "$tool" diff "$work/scaled_ep2" "$scale_data/megatron_moe_tp1_dp8_ep2" >"$work/scale_ep2_diff.txt" 2>&1
result $? "scale/moe-ep4-back-to-ep2-equals-capture" "$(cat "$work/scale_ep2.err"; tail -3 "$work/scale_ep2_diff.txt")"
"$tool" scale "$scale_data/megatron_moe_tp1_dp8_ep2" --ep 3 -o "$work/scaled_ep3" >"$work/scale_ep3.txt" 2>&1
[ $? -eq 2 ] && grep -q -- "--ep 3: the captured EP=2 and 3 do not divide one another" "$work/scale_ep3.txt"
result $? "scale/ep-refuses-sizes-without-a-rule" "$(cat "$work/scale_ep3.txt")"
# Context parallelism (no GPU capture has it): a synthetic TP1 x CP2 x DP2 trace (Megatron's
# tp-cp-dp-pp order; an even send / receive ring on the CP groups, the gradients' allreduce on
# DP x CP, a small one on DP) is recognised; scale --dp 4 keeps the CP ring byte for byte. The
# generator's arguments: OUT DP [ring]: "ring" writes the CP ring alone (then CP or PP may fit).
cp_trace() {
python3 - "$@" <<'PY'
import json, os, sys
out = sys.argv[1]
os.makedirs(out)
tp, cp, dp = 1, 2, int(sys.argv[2])
world = tp * cp * dp
rank_of = lambda d, c, t: d * tp * cp + c * tp + t
groups = [  # (members, op, count): CP ring, DP x CP allreduce, DP allreduce
    ([[rank_of(d, c, t) for c in range(cp)] for d in range(dp) for t in range(tp)], "ring", 1024),
    ([[rank_of(d, c, t) for d in range(dp) for c in range(cp)] for t in range(tp)], "allreduce", 4096),
    ([[rank_of(d, c, t) for d in range(dp)] for c in range(cp) for t in range(tp)], "allreduce", 1)]
if sys.argv[3:] == ["ring"]:
    groups = groups[:1]
def op(n, comm, kind, count, rank, nranks, peer=-1, seq=0, group=0):
    size = count * 4 * (1 if kind in ("send", "recv", "allreduce") else nranks)
    return {"type": "op", "n": n, "comm": comm, "rank": rank, "seq": seq, "op": kind, "count": count,
            "dtype": "float32" if count else "none", "redop": "sum" if kind == "allreduce" else "none",
            "root": -1, "peer": peer, "nranks": nranks, "bytes": size, "stream": "0x0000000000000000",
            "group": group, "t_start_ns": 1000 + n, "t_end_ns": 1000 + n, "gpu_start_ns": 0, "gpu_end_ns": 0,
            "flags": 0, "result": 0}
for r in range(world):
    lines = [{"type": "header", "format": "ncclshim-trace", "version": 2, "abi": 1, "host": "cp", "pid": 100 + r,
              "ppid": 1, "global_rank": r, "clock": "CLOCK_MONOTONIC", "start_realtime_ns": 1, "start_monotonic_ns": 1,
              "ring_records": 4096}]
    n = comms = ops = 0
    for g, (members_list, kind, count) in enumerate(groups):
        members = next(m for m in members_list if r in m)
        me, size = members.index(r), len(members)
        comm = "0x%016x" % (0x1000 + g * 16 + members_list.index(members))
        lines.append({"type": "comm", "n": n, "event": "init", "comm": comm, "parent": "0x0000000000000000",
                      "split_seq": 0, "color": 0, "key": 0, "nranks": size, "rank": me, "global_rank": r,
                      "host": "cp", "pid": 100 + r, "device": 0, "t_ns": 1000 + n})
        n += 1; comms += 1
        for step in range(2):
            if kind == "ring":
                zero = "0x0000000000000000"
                batch = [op(0, zero, "groupstart", 0, -1, 0, group=1),
                         op(0, comm, "send", count, me, size, (me + 1) % size, 2 * step, 1),
                         op(0, comm, "recv", count, me, size, (me - 1) % size, 2 * step + 1, 1),
                         op(0, zero, "groupend", 0, -1, 0, group=1)]
            else:
                batch = [op(0, comm, kind, count, me, size, seq=step)]
            for o in batch:
                o["n"] = n; n += 1; ops += 1
                lines.append(o)
    lines.append({"type": "footer", "records": n, "comms": comms, "ops": ops, "dropped": 0, "invalid": 0,
                  "nccl_tasks": 0, "nccl_proxies": 0, "global_rank": r, "reason": "exit", "signal": 0,
                  "end_realtime_ns": 2, "end_monotonic_ns": 100000})
    with open(os.path.join(out, "ncclshim-cp-rank%d.jsonl" % r), "w") as f:
        f.write("".join(json.dumps(l, separators=(",", ":")) + "\n" for l in lines))
PY
}
cp_trace "$work/cp_in" 2
"$tool" summary "$work/cp_in" >"$work/cp_summary.txt" 2>&1 &&
  grep -q "^# shape: TP=1 CP=2 DP=2 PP=1 (4 ranks), from the communicators' members" "$work/cp_summary.txt"
result $? "scale/summary-shows-context-parallel-shape" "$(grep shape "$work/cp_summary.txt")"
"$tool" scale "$work/cp_in" --dp 4 -o "$work/cp_out" 2>"$work/cp_scale.err" &&
  grep -q "TP=1 CP=2 DP=2 PP=1 (4 ranks) -> TP=1 CP=2 DP=4 PP=1 (8 ranks)" "$work/cp_scale.err" &&
  PYTHONPATH="$work" python3 - "$work/cp_out" >"$work/cp_scale.txt" 2>&1 <<'PY'
import sys
from trace_files import read
files, members = read(sys.argv[1])
assert sorted(files) == list(range(8))
for rank, recs in files.items():
    got = [(r["op"], r["count"], members[r["comm"]], r["peer"])
           for r in recs if r["type"] == "op" and r["op"] not in ("groupstart", "groupend")]
    pair, me = [rank - rank % 2, rank - rank % 2 + 1], rank % 2
    ring = [("send", 1024, pair, 1 - me), ("recv", 1024, pair, 1 - me)] * 2
    want = ring + [("allreduce", 4096, list(range(8)), -1)] * 2 + [("allreduce", 1, list(range(me, 8, 2)), -1)] * 2
    assert got == want, (rank, got, want)
print("ok")
PY
result $? "scale/context-parallel-ring-kept-at-dp4" "$(cat "$work/cp_scale.err" "$work/cp_scale.txt" | tail -4)"
replays_without_error cp_out scale/context-parallel-dp4-replays-0-wrong
# The CP ring alone on 2 ranks fits TP=1 CP=2 and PP=2: phynet --resize refuses it naming --cp;
# with --cp 2 it replays at DP 2 (4 ranks), every byte checked.
cp_trace "$work/cp_ring" 1 ring
if command -v mpirun >/dev/null && [ -x "$phynet" ]; then
  resize_ring() {  # <log> [phynet options...]
    local log=$1; shift
    timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 --mca pml ob1 --mca btl self,tcp \
      "$phynet" "$work/cp_ring" --resize dp=2 --verify "$@" >"$work/$log" 2>&1
  }
  resize_ring cp_ring_ambiguous.log
  [ $? -ne 0 ] && grep -q "choose with --tp, --pp, --ep or --cp" "$work/cp_ring_ambiguous.log"
  result $? "resize/ambiguous-cp-or-pp-refused-naming-cp" "$(grep -m2 phynet "$work/cp_ring_ambiguous.log")"
  resize_ring cp_ring_cp2.log --cp 2 &&
    grep -q "every result byte verified (.*, 0 wrong)" "$work/cp_ring_cp2.log" &&
    grep -q "captured as TP=1 CP=2 DP=1 PP=1 (2 ranks), resized to TP=1 CP=2 DP=2 PP=1" "$work/cp_ring_cp2.log"
  result $? "resize/cp-2-chooses-the-shape-and-replays-0-wrong" "$(grep -E "phynet|captured as|data check" "$work/cp_ring_cp2.log" | head -4)"
fi
"$tool" scale "$scale_data/megatron_tp2_dp2_plain" -o "$work/scaled_x" >"$work/scale_nodp.txt" 2>&1
[ $? -eq 2 ] && grep -q -- "--dp or --ep is required" "$work/scale_nodp.txt"
result $? "scale/needs-dp" "$(cat "$work/scale_nodp.txt")"

# ---- iterations found in a trace: the Megatron TP2 trace's 5 steps of 14 calls; the distributed
# optimizer capture's first step (one more call) is warm-up; a collectives sweep has none
"$tool" summary "$trace" >"$work/iter.txt" 2>&1
grep -q "^# iterations: 5 of 14 calls per rank, 2627592 bytes per iteration (all ranks)" "$work/iter.txt"
result $? "iterations/megatron-tp2-five-steps" "$(grep -A2 '^# iterations' "$work/iter.txt")"
"$tool" summary tests/data/scale/megatron_tp2_dp2_distopt >"$work/iter.txt" 2>&1
grep -q "^# iterations: 2 of 17 calls per rank after 22 warm-up calls" "$work/iter.txt"
result $? "iterations/distopt-warm-up" "$(grep -A2 '^# iterations' "$work/iter.txt")"
"$tool" summary examples/traces/torch_collectives >"$work/iter.txt" 2>&1
grep -q "^# iterations: none found" "$work/iter.txt"
result $? "iterations/sweep-has-none" "$(grep -A2 '^# iterations' "$work/iter.txt")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# phynet's process tests (run by tests/run_all.sh after `make`): mpirun with 4 and 8 ranks over
# Open MPI's TCP (loopback) replays a generated trace (tests/phynet/tools/make_test_trace.cc) and the
# per-rank op counts and bytes must equal the trace's, and the transports' wire bytes the
# algorithms' formula; a trace edited so one rank disagrees is refused before any traffic with a
# message naming rank, communicator and seq; a rank killed mid-replay ends the others non-zero with
# a message naming it; SimAI / AICB example workloads (examples/workloads/) replay and report, with
# --verify checking every result byte; SimAI's tutorial case (a TP=8 file on 2 ranks) replays on
# SimAI-Phy's groups cut to the ranks there, said once, and --tp 8 given is refused; with
# --intra-node shm the hops within a node go over shared memory and only the hops between nodes over
# TCP (told apart by each transport's framing); --algo tree (and NCCL_ALGO=Tree) runs every allreduce
# on NCCL's double binary tree.
# `--resize dp=4` of the GPU-captured Megatron TP2 x DP2 replays with every byte verified and the
# per-rank ops, bytes and modelled traffic of the DP4 capture. The training iterations found in a
# trace are timed (the Megatron TP2 trace's 5 steps), or their absence said. The GPU ground-truth
# capture replays with NCCL's recorded algorithm, protocol and channels. `--delay 3:10000` makes rank 3
# a straggler that the report names in text, JSON and HTML. Recorded time is labelled for what it is
# (NCCL's GPU time, or a CPU call that is never divided into).
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
phynet="$BUILD/phynet"
gen="$BUILD/phynet_make_test_trace"
work=$(mktemp -d /tmp/phynet-tests-XXXXXX)
trap 'rm -rf "$work"' EXIT

source tests/lib/checks.sh  # result(), passed, failed
source tests/lib/rank_lines.sh  # rank_lines: the report's per-rank count lines, one per rank

for f in "$phynet" "$gen"; do
  [ -x "$f" ] || { echo "missing $f: run make first"; echo "0 passed, 1 failed"; exit 1; }
done

source tests/lib/loopback_replay.sh  # run <np> <log> <phynet args...>: mpirun over loopback TCP, bounded

# Expected per-rank "ops bytes" from a trace directory (op lines without group start/end).
trace_counts() {  # trace_counts <dir> <iterations> -> lines "rank ops bytes"
  local dir=$1 iters=$2 f
  for f in "$dir"/rank*.jsonl; do
    awk -v it="$iters" -v name="$(basename "$f" .jsonl)" '
      /"type":"op"/ && !/"op":"group(start|end)"/ {
        ops++; match($0, /"bytes":[0-9]+/); bytes += substr($0, RSTART + 8, RLENGTH - 8)
      }
      END { sub(/rank/, "", name); printf "%s %d %d\n", name, ops * it, bytes * it }' "$f"
  done | sort -n
}

# Per-rank "rank ops op_bytes" from phynet's report, and the wire checks.
report_counts() { rank_lines "$1" | sed -n 's/^# rank \([0-9]*\): ops \([0-9]*\) op_bytes \([0-9]*\) .*/\1 \2 \3/p' | sort -n; }
wire_ok() {  # every rank's wire_sent equals model_sent, and sent bytes equal received bytes overall
  rank_lines "$1" | awk '/^# rank [0-9]+:/ { if ($9 != $13) bad = 1; sent += $9; recv += $11; n++ }
       END { exit (n == 0 || bad || sent != recv) }'
}

check_replay() {  # check_replay <name> <np> <trace dir> <iterations> [phynet args...]
  local name=$1 np=$2 dir=$3 iters=$4; shift 4
  local log="$work/$name.log"
  run "$np" "$log" --report "$work/$name.csv" --json "$work/$name.json" "$@" "$dir"
  local rc=$?
  result "$rc" "$name/exit-0" "$(tail -5 "$log")"
  local want got
  want=$(trace_counts "$dir" "$iters")
  got=$(report_counts "$log")
  [ -n "$got" ] && [ "$want" = "$got" ]
  result $? "$name/ops-and-bytes-per-rank-equal-trace" "want [$want] got [$got]"
  wire_ok "$log"
  result $? "$name/wire-bytes-equal-model" "$(grep '^# ranks\? ' "$log")"
  local rows
  rows=$(($(wc -l <"$work/$name.csv") - 1))
  [ "$rows" -gt 0 ] && grep -q "^# Avg bus bandwidth" "$log" && grep -q "^# end-to-end time" "$log"
  result $? "$name/report-csv-and-summary" "csv rows $rows"
  if command -v python3 >/dev/null; then
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['ops'])==$rows and len(d['ranks'])==$np" \
      "$work/$name.json" 2>"$work/$name.jsonerr"
    result $? "$name/json-report" "$(cat "$work/$name.jsonerr")"
  fi
}

# ---- replays of a generated trace: 4 ranks (TP 2 x DP 2) and 8 ranks (TP 2 x DP 4)
"$gen" "$work/t4" --ranks 4 --tp 2 >/dev/null
"$gen" "$work/t8" --ranks 8 --tp 2 --elements 8192 >/dev/null
check_replay np4 4 "$work/t4" 1
check_replay np8 8 "$work/t8" 1
check_replay np4-iterations 4 "$work/t4" 4 --iterations 3 --warmup 1 --rate 5
rows=$(($(wc -l <"$work/np4-iterations.csv") - 1)); rows1=$(($(wc -l <"$work/np4.csv") - 1))
[ "$rows" -eq $((3 * rows1)) ]
result $? "np4-iterations/rows-per-measured-iteration" "$rows rows vs $rows1 per iteration"
awk -F, 'NR > 1 && ($15 == "" || $16 == "" || $17 == "") { bad++ } END { exit bad > 0 }' "$work/np4-iterations.csv"
result $? "np4-iterations/efficiency-recorded-ratio-columns" "$(sed -n 2p "$work/np4-iterations.csv")"

run 4 "$work/filter.log" --ops allreduce --groups tp --report "$work/filter.csv" "$work/t4"
rc=$?
others=$(tail -n +2 "$work/filter.csv" | awk -F, '$1 != "allreduce" || $2 != "tp"' | wc -l)
[ "$rc" -eq 0 ] && [ "$others" -eq 0 ] && [ "$(tail -n +2 "$work/filter.csv" | wc -l)" -eq 4 ]
result $? "filters/ops-and-groups" "rc $rc, $(cat "$work/filter.csv")"

run 4 "$work/pace.log" --pace recorded "$work/t4"
rc=$?
e2e=$(sed -n 's/^# end-to-end time *: \([0-9.]*\) s.*/\1/p' "$work/pace.log")
[ "$rc" -eq 0 ] && awk -v t="$e2e" 'BEGIN { exit !(t >= 0.002) }'
result $? "pace-recorded/keeps-the-recorded-gaps" "rc $rc, end-to-end $e2e s"

# ---- refusals before any traffic
mkdir -p "$work/bad"
cp "$work/t4"/*.jsonl "$work/bad/"
awk '!done && /"op":"allgather"/ { sub(/"count":16384/, "\"count\":8192"); sub(/"bytes":65536/, "\"bytes\":32768"); done = 1 }
     { print }' "$work/t4/rank3.jsonl" >"$work/bad/rank3.jsonl"
run 4 "$work/bad.log" --verbose "$work/bad"
rc=$?
msg=$(grep "refusing" "$work/bad.log")
[ "$rc" -ne 0 ] && echo "$msg" | grep -q "rank 3 (rank 1 of communicator 0x[0-9a-f]* (tp)) disagrees at seq 0" &&
  ! grep -q "connected over tcp\|^# ranks\? " "$work/bad.log"
result $? "refuse/collective-mismatch-names-rank-comm-seq" "rc $rc: $(tail -3 "$work/bad.log")"

mkdir -p "$work/badp2p"
cp "$work/t4"/*.jsonl "$work/badp2p/"
awk '!done && /"op":"recv"/ { sub(/"count":16384/, "\"count\":4096"); sub(/"bytes":65536/, "\"bytes\":16384"); done = 1 }
     { print }' "$work/t4/rank2.jsonl" >"$work/badp2p/rank2.jsonl"
run 4 "$work/badp2p.log" "$work/badp2p"
rc=$?
[ "$rc" -ne 0 ] && grep "refusing" "$work/badp2p.log" | grep -q "rank 0 on communicator 0x[0-9a-f]* (dp): its send #1 to rank 2 at seq 1"
result $? "refuse/send-recv-mismatch" "rc $rc: $(grep refusing "$work/badp2p.log")"

run 2 "$work/np.log" "$work/t4"
rc=$?
[ "$rc" -ne 0 ] && grep -q "the workload has 4 ranks but mpirun started 2" "$work/np.log"
result $? "refuse/wrong-rank-count" "rc $rc: $(tail -2 "$work/np.log")"

NCCLSHIM_TIMEOUT=inf run 2 "$work/setting.log" "$work/t4"
rc=$?
[ "$rc" -ne 0 ] && grep -q "NCCLSHIM_TIMEOUT=inf: not a finite number; expected a number from 0.001" "$work/setting.log"
result $? "refuse/bad-setting-named" "rc $rc: $(tail -2 "$work/setting.log")"

run 4 "$work/verbs.log" --transport ibverbs "$work/t4"
rc=$?
[ "$rc" -ne 0 ] && grep -q "no RDMA device found" "$work/verbs.log"
result $? "transport/ibverbs-without-rdma-device-refused" "rc $rc: $(tail -2 "$work/verbs.log")"

# ---- --intra-node shm: hops within a node over shared memory (16 bytes of framing per message),
#      hops between nodes over TCP (24 bytes), every result byte verified
run 8 "$work/shm.log" --rows 0 --verify --intra-node shm --gpus-per-node 2 --json "$work/shm.json" \
  examples/workloads/aicb_tp2_dp4_ep2.csv
rc=$?
[ "$rc" -eq 0 ] && grep -q "data check .*, 0 wrong)" "$work/shm.log" &&
  grep -q "transport tcp between nodes, shm within (nodes of 2 ranks)" "$work/shm.log"
result $? "intra-node-shm/verify-0-wrong" "rc $rc: $(tail -3 "$work/shm.log")"
python3 - "$work/shm.json" >"$work/shm-pairs.txt" 2>&1 <<'PY'
import json, sys
pairs = json.load(open(sys.argv[1]))["host_pairs"]
bad, inside, between = [], 0, 0
for p in pairs:
    t = p["traffic"]
    if t["messages"] == 0:
        continue
    framing = (t["wire_bytes"] - t["bytes"]) / t["messages"]
    want = 16 if p["from"] == p["to"] else 24
    if framing != want or t["bytes"] != t["model_bytes"]:
        bad.append(f'{p["from"]}->{p["to"]}: {framing} B framing per message (want {want}), {t["bytes"]} vs model {t["model_bytes"]}')
    inside += t["bytes"] if p["from"] == p["to"] else 0
    between += t["bytes"] if p["from"] != p["to"] else 0
print(f"within nodes {inside} B, between nodes {between} B")
for b in bad:
    print(b)
sys.exit(1 if bad or inside == 0 or between == 0 else 0)
PY
result $? "intra-node-shm/within-node-hops-on-shm-between-on-tcp" "$(cat "$work/shm-pairs.txt")"

# ---- --algo tree: NCCL's double binary tree between the nodes (chains inside), every allreduce
#      on it with 2 channels, every byte verified and each rank's bytes to each peer the model's;
#      NCCL_ALGO=Tree does the same as a job would set it; a wrong name is refused
run 8 "$work/tree.log" --rows 0 --verify --algo tree --intra-node shm --gpus-per-node 2 --json "$work/tree.json" \
  examples/workloads/simai_tp2_dp4_ep2.txt
rc=$?
[ "$rc" -eq 0 ] && grep -q "data check .*, 0 wrong)" "$work/tree.log"
result $? "algo-tree/verify-0-wrong" "rc $rc: $(tail -3 "$work/tree.log")"
tree_ok() {  # tree_ok <json>: every allreduce ran tree/2, every pair's bytes equal the model
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
algos = {(o["algorithm"], o["channels"]) for o in r["ops"] if o["op"] == "allreduce"}
assert algos == {("tree", 2)}, algos
bad = [(x["rank"], p["peer"]) for x in r["ranks"] for p in x["peer_bytes"] if p["sent"] != p["model_sent"]]
assert not bad, bad
print(f"allreduces on {algos}, every pair's bytes the model's")
PY
}
tree_ok "$work/tree.json" >"$work/tree.cmp" 2>&1
result $? "algo-tree/allreduce-on-tree-bytes-as-model" "$(cat "$work/tree.cmp")"
timeout 300 mpirun --allow-run-as-root --oversubscribe -np 8 --mca pml ob1 --mca btl self,tcp \
  --mca btl_tcp_if_include lo -x NCCL_ALGO=Tree "$phynet" --ifname lo --rows 0 --gpus-per-node 2 \
  --json "$work/nccl-algo.json" examples/workloads/simai_tp2_dp4_ep2.txt >"$work/nccl-algo.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] && tree_ok "$work/nccl-algo.json" >"$work/nccl-algo.cmp" 2>&1
result $? "algo-tree/nccl-algo-env-followed" "rc $rc: $(tail -3 "$work/nccl-algo.log") $(cat "$work/nccl-algo.cmp" 2>/dev/null)"
run 2 "$work/bad-algo.log" --algo nvls examples/traces/megatron_tp2
rc=$?
[ "$rc" -ne 0 ] && grep -q -- "--algo: 'nvls' (auto, ring, tree or pat)" "$work/bad-algo.log"
result $? "algo-tree/unknown-algorithm-refused" "rc $rc: $(tail -2 "$work/bad-algo.log")"

# ---- --pxn: NCCL's 4 nodes x 2 alltoall (tests/data/nccl_4x2) with PXN relays: every byte verified,
#      between nodes only the rails carry bytes (local index 0 to 0, 1 to 1), each pair the model's
mkdir -p "$work/pxn" && tar -xzf tests/data/nccl_4x2/traces.tgz -C "$work/pxn" topo-alltoall-n4x2
run 8 "$work/pxn.log" --rows 0 --verify --pxn --intra-node shm --gpus-per-node 2 --json "$work/pxn.json" \
  "$work/pxn/topo-alltoall-n4x2"
rc=$?
[ "$rc" -eq 0 ] && grep -q "data check .*, 0 wrong)" "$work/pxn.log"
result $? "pxn/verify-0-wrong" "rc $rc: $(tail -3 "$work/pxn.log")"
python3 - "$work/pxn.json" >"$work/pxn.cmp" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rails = off_rail = 0
for x in r["ranks"]:
    for p in x["peer_bytes"]:
        assert p["sent"] == p["model_sent"], (x["rank"], p)
        if p["sent"] and x["rank"] // 2 != p["peer"] // 2:
            if x["rank"] % 2 == p["peer"] % 2: rails += 1
            else: off_rail += 1
print(f"{rails} rail pairs carry bytes between nodes, {off_rail} other pairs")
sys.exit(0 if rails == 24 and off_rail == 0 else 1)
PY
result $? "pxn/only-rails-between-nodes-bytes-as-model" "$(cat "$work/pxn.cmp")"

# ---- rows that move no data are said, and a file of nothing else is refused saying why
printf 'HYBRID_TRANSFORMER model_parallel_NPU_group: 1 all_gpus: 2\n1\nz\t-1\t1\tALLREDUCE\t64\t1\tNONE\t0\t1\tREDUCESCATTER\t0\t1\n' \
  >"$work/nothing.txt"
run 2 "$work/nothing.log" "$work/nothing.txt"
rc=$?
[ "$rc" -ne 0 ] && grep -q "no operations to replay: every row moves no data" "$work/nothing.log" &&
  grep -Eq "1 allreduce row on tp on a group of one rank \(first [^ ]*nothing.txt:3\)" "$work/nothing.log" &&
  grep -Eq "1 reducescatter row on dp of 0 bytes \(first [^ ]*nothing.txt:3\)" "$work/nothing.log" &&
  ! grep -q -- "did --ops" "$work/nothing.log"
result $? "refuse/all-rows-skipped-says-why" "rc $rc: $(grep phynet "$work/nothing.log" | head -3)"

# ---- a rank killed mid-replay: the others end non-zero, naming it, well within the timeout
timeout=10
start=$SECONDS
run 4 "$work/kill.log" --iterations 50000 --timeout "$timeout" "$work/t4" &
launcher=$!
descendants() { local p; for p in $(pgrep -P "$1"); do echo "$p"; descendants "$p"; done; }
victim=""
for _ in $(seq 1 100); do  # the rank-2 process under our mpirun, once it is replaying
  sleep 0.2
  grep -q "^phynet: progress" "$work/kill.log" 2>/dev/null || continue
  for p in $(descendants "$launcher"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=2 && victim=$p
  done
  [ -n "$victim" ] && break
done
killed_at=$SECONDS
[ -n "$victim" ] && kill -9 "$victim"
wait "$launcher"
rc=$?
elapsed=$((SECONDS - killed_at))
[ -n "$victim" ] && [ "$rc" -ne 0 ] && [ "$elapsed" -le "$timeout" ] &&
  grep "replay failed" "$work/kill.log" | grep -q "rank [0-9]* (global rank 2) lost"
result $? "kill/peers-exit-naming-the-lost-rank" "victim ${victim:-none}, rc $rc, ${elapsed}s after kill: $(grep 'replay failed' "$work/kill.log" | head -2)"
grep -q "^phynet: progress: rank 0: [0-9]*/[0-9]* ops" "$work/kill.log"
result $? "kill/progress-lines-during-long-replay" "$(head -3 "$work/kill.log")"

# ---- a rank stopped mid-replay (SIGSTOP): after ~5 s without progress its peers say which
# communicator and op they wait in and on whom (once, not every progress tick); then it is killed
start_stopped() {  # the rank-2 process under $launcher once it is replaying, stopped
  victim=""
  for _ in $(seq 1 100); do
    sleep 0.2
    grep -q "^phynet: progress" "$work/stop.log" 2>/dev/null || continue
    for p in $(descendants "$launcher"); do
      tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=2 && victim=$p
    done
    [ -n "$victim" ] && break
  done
  [ -n "$victim" ] && kill -STOP "$victim"
}
run 4 "$work/stop.log" --iterations 50000 --timeout 20 "$work/t4" &
launcher=$!
start_stopped
stopped_at=$SECONDS
for _ in $(seq 1 60); do  # the first stall line is due ~5 s after the stop
  sleep 0.25
  grep -q "^phynet: rank [0-9]* waits" "$work/stop.log" && break
done
sleep 2.5  # every waiting rank has had its say (and a progress tick came)
[ -n "$victim" ] && kill -9 "$victim"
wait "$launcher"
waits=$(grep "^phynet: rank [0-9]* waits" "$work/stop.log")
[ -n "$victim" ] && [ $((SECONDS - stopped_at)) -le 20 ] &&
  grep -qE "^phynet: rank [013] waits [0-9]+\.[0-9] s on comm 0x[0-9a-f]+ \([a-z_]+\) [a-z]+ seq [0-9]+ \(iteration [0-9]+, [^)]*rank[013]\.jsonl:[0-9]+[^)]*\) for rank 2 \(a (send to|receive from) it\)$" <<<"$waits" &&
  ! grep -q "^phynet: rank 2 waits" <<<"$waits" &&
  [ "$(echo "$waits" | awk '{ print $3, $9 }' | sort | uniq -d)" = "" ]  # once per rank and communicator
result $? "stop/peers-say-who-waits-on-the-stopped-rank" "victim ${victim:-none}, $((SECONDS - stopped_at)) s after the stop: $waits"
grep -q "^phynet: progress: rank 0: .*, none completed for [0-9][0-9]* s" "$work/stop.log"
result $? "stop/progress-line-says-nothing-completes" "$(grep '^phynet: progress' "$work/stop.log" | tail -2)"

# ---- SimAI / AICB example workloads (when present): replay on up to 8 ranks and report
for f in examples/workloads/*.txt examples/workloads/*.csv; do
  [ -f "$f" ] || continue
  name="example-$(basename "$f")"
  np=8
  gpus=$(head -1 "$f" | sed -n 's/.*all_gpus: *\([0-9]*\).*/\1/p')
  [ -n "$gpus" ] && [ "$gpus" -le 8 ] && np=$gpus
  run "$np" "$work/$name.log" --world-size "$np" --scale 0.01 --verify --report "$work/$name.csv" "$f"
  rc=$?
  [ "$rc" -eq 0 ] && grep -q "^# Avg bus bandwidth" "$work/$name.log" && [ "$(wc -l <"$work/$name.csv")" -gt 1 ]
  result $? "$name/replays-and-reports" "rc $rc: $(tail -3 "$work/$name.log")"
  grep -qE "^# data check +: every result byte verified \([1-9][0-9]* bytes" "$work/$name.log"
  result $? "$name/verify-checks-every-result-byte" "$(grep -m1 '^# data check' "$work/$name.log")"
done

# ---- SimAI's tutorial: its TP=8 microAllReduce.txt (this file has its shape) on `mpirun -np 2`. SimAI-Phy
# forms its groups over all its GPUs whatever mpirun starts (TP groups i*TP+j), so the two ranks there
# share the TP group {0..7} cut to {0,1}: replayed, said in one line; --tp 8 given is still refused.
{
  echo "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 8 ga: 1 all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0"
  echo 2
  echo "embedding_layer     -1 556000  ALLREDUCE   16777216      1       NONE 0        1      NONE   0      1"
  echo "embedding_layer     -1 556000  ALLREDUCE   67108864      1       NONE 0        1      NONE   0      1"
} >"$work/microAllReduce.txt"
run 2 "$work/tutorial.log" --json "$work/tutorial.json" "$work/microAllReduce.txt"
rc=$?
said=$(grep -c "do not fit 2 ranks" "$work/tutorial.log")
[ "$rc" -eq 0 ] && [ "$said" -eq 1 ] &&
  grep -q "^phynet: WARN .*microAllReduce.txt:1: the file's TP=8 EP=1 PP=1 (all_gpus 8) do not fit 2 ranks: as SimAI-Phy.*: TP=2 DP=1 EP=1 PP=1 (2 ranks)" "$work/tutorial.log" &&
  ! grep -q "replaced by the world size" "$work/tutorial.log"
result $? "simai-tutorial/tp8-file-on-2-ranks-replays-and-says-so-once" "rc $rc, $said lines: $(head -3 "$work/tutorial.log")"
python3 - "$work/tutorial.json" >"$work/tutorial.check" 2>&1 <<'PY'
import json, struct, sys
def fnv(data, h=0xcbf29ce484222325):
    for b in data: h = ((h ^ b) * 0x100000001b3) & (2**64 - 1)
    return h
def comm_id(label, members):  # workload/rank_layout.h: FNV-1a 64 of the label, a 0 byte, the members
    return "0x%016x" % (fnv(struct.pack("<%dI" % len(members), *members), fnv(b"\0", fnv(label.encode()))) or 1)
tp, ranks = 8, 2
simai_phy_tp = lambda r: [r // tp * tp + j for j in range(tp)]  # MockNcclGroup: TP group i holds i*TP+j
want = {comm_id("tp", [m for m in simai_phy_tp(r) if m < ranks]) for r in range(ranks)}
ops = json.load(open(sys.argv[1]))["ops"]
got = {(o["group"], o["comm"], o["nranks"]) for o in ops}
print(len(ops), "ops on", got, "want", want)
assert sorted(o["bytes"] for o in ops) == [16777216, 67108864], ops
assert got == {("tp", c, 2) for c in want}, got
PY
result $? "simai-tutorial/groups-are-simai-phys-cut-to-the-ranks" "$(cat "$work/tutorial.check")"
run 2 "$work/tutorial-tp8.log" --tp 8 "$work/microAllReduce.txt"
rc=$?
[ "$rc" -ne 0 ] && grep -q "option tp: TP=8 is larger than the world (2 ranks)" "$work/tutorial-tp8.log"
result $? "simai-tutorial/--tp-8-given-is-still-refused" "rc $rc: $(head -3 "$work/tutorial-tp8.log")"

# ---- quiet at scale: 32 ranks of a SimAI file written for 9216 GPUs; the load warning every rank
# gives is said once with its ranks, equal per-rank count lines share a line, the JSON keeps all
f=examples/workloads/simai_tp2_dp4_ep2.txt
if [ -f "$f" ]; then
  sed '1s/all_gpus: *[0-9]*/all_gpus: 9216/' "$f" >"$work/w9216.txt"
  run 32 "$work/w32.log" --scale 0.01 --json "$work/w32.json" "$work/w9216.txt"
  rc=$?
  warned=$(grep -c "all_gpus 9216 replaced by the world size 32" "$work/w32.log")
  [ "$rc" -eq 0 ] && [ "$warned" -eq 1 ] &&
    grep -q "^phynet: WARN .*all_gpus 9216 replaced by the world size 32.* (on 32 ranks: 0-31)$" "$work/w32.log"
  result $? "scale/load-warning-said-once-with-its-ranks" "rc $rc, $warned lines: $(grep -m3 'all_gpus' "$work/w32.log")"
  lines=$(grep -c "^# ranks\? [0-9]" "$work/w32.log")
  [ "$lines" -ge 1 ] && [ "$lines" -le 8 ] && [ "$(rank_lines "$work/w32.log" | grep -c '^# rank [0-9]*: ops 8 ')" -eq 32 ] &&
    [ "$(rank_lines "$work/w32.log" | awk '{ print $3 }' | tr -d : | tr '\n' ' ')" = "$(seq -s ' ' 0 31) " ]
  result $? "scale/equal-count-lines-collapse-into-rank-ranges" "$lines lines: $(grep '^# ranks\? [0-9]' "$work/w32.log" | head -5)"
  if command -v python3 >/dev/null; then
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert [r['rank'] for r in d['ranks']]==list(range(32))" \
      "$work/w32.json" 2>"$work/w32.jsonerr"
    result $? "scale/json-keeps-every-rank" "$(cat "$work/w32.jsonerr")"
  fi
  [ "$(wc -l <"$work/w32.log")" -le 80 ]
  result $? "scale/32-rank-terminal-output-stays-short" "$(wc -l <"$work/w32.log") lines"
fi

# ---- bounded time and memory on any trace (issue 39; tests/lib/tiny_traces.sh)
source tests/lib/tiny_traces.sh
# A count of 2^62+1 floats is 4 bytes after a 64-bit wrap: refused naming file, line and field.
tiny_trace "$work/wrap" 1
sed -i 's/"count":1,/"count":4611686018427387905,/' "$work/wrap/rank0.jsonl"
"$BUILD/ncclshim-trace" validate "$work/wrap" >"$work/wrap.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "wrap/rank0.jsonl:3: field 'count'" "$work/wrap.log"
result $? "bounds/count-overflow-refused-by-validate" "rc $rc: $(tail -2 "$work/wrap.log")"
run 2 "$work/wrap-check.log" --check "$work/wrap"
rc=$?
[ "$rc" -ne 0 ] && grep -q "wrap/rank0.jsonl:3: field 'count'" "$work/wrap-check.log"
result $? "bounds/count-overflow-refused-by-phynet" "rc $rc: $(grep phynet "$work/wrap-check.log" | tail -2)"
# A second op recorded 285 years after the first: --pace recorded ends at once, naming --timeout.
tiny_trace "$work/pace" 1 9000000000000000000
start=$(date +%s)
RUN_LIMIT_S=60 run 2 "$work/pace.log" --pace recorded --timeout 5 "$work/pace"
rc=$?
took=$(($(date +%s) - start))
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$took" -lt 30 ] && grep -q "longer than --timeout 5 s" "$work/pace.log"
result $? "bounds/pacing-wait-past-timeout-refused" "rc $rc after $took s: $(grep phynet "$work/pace.log" | tail -2)"
# 1000 communicators with one 4-byte allreduce each: accepted, and each rank's peak RSS stays below
# 300 MiB (measured about 40 MiB; engine scratch sized for 16 MiB reductions was 31 GiB a rank).
tiny_trace "$work/comms1000" 1000
run 2 "$work/comms1000.log" --json "$work/comms1000.json" "$work/comms1000"
rc=$?
rss=$(grep -o '"peak_rss_bytes":[0-9]*' "$work/comms1000.json" 2>/dev/null | cut -d: -f2 | sort -n | tail -1)
[ "$rc" -eq 0 ] && [ -n "$rss" ] && [ "$rss" -lt $((300 << 20)) ]
result $? "bounds/1000-tiny-communicators-under-300MiB-per-rank" "rc $rc, peak RSS ${rss:-?} B: $(grep 'memory per rank\|refusing' "$work/comms1000.log")"

# ---- --resize dp=4 of the GPU-captured Megatron TP2 x DP2 (distributed optimizer): every byte
# verified, and each rank's ops, bytes and modelled traffic equal the replay of the DP4 capture
run 8 "$work/resize.log" --resize dp=4 --verify tests/data/scale/megatron_tp2_dp2_distopt; rc=$?
run 8 "$work/resize_truth.log" --verify tests/data/scale/megatron_tp2_dp4_distopt
per_rank() { grep -E "^# ranks? " "$1" | sed 's/wire_sent.*model_sent/model_sent/'; }
[ "$rc" -eq 0 ] && grep -q "0 wrong" "$work/resize.log" && grep -q "replayed as TP=2 DP=4 PP=1 (8 ranks)" "$work/resize.log" &&
  grep -q "^# phynet replay: .*captured as TP=2 DP=2 PP=1 (4 ranks), resized to TP=2 DP=4 PP=1" "$work/resize.log" &&
  [ -n "$(per_rank "$work/resize.log")" ] && [ "$(per_rank "$work/resize.log")" = "$(per_rank "$work/resize_truth.log")" ]
result $? "resize/dp2-to-dp4-equals-dp4-capture" "rc $rc: $(per_rank "$work/resize.log" | head -2) vs $(per_rank "$work/resize_truth.log" | head -2)"

# ---- --resize ep=4 of the MoE TP1 x DP8 x EP2 capture: every byte verified, and each rank's ops
# and bytes equal the replay of `ncclshim scale --ep 4` of it (the same rules, docs/scale.md)
run 8 "$work/resize_ep.log" --resize ep=4 --verify tests/data/scale/megatron_moe_tp1_dp8_ep2; rc=$?
"$BUILD/ncclshim" scale tests/data/scale/megatron_moe_tp1_dp8_ep2 --ep 4 -o "$work/moe_ep4" 2>/dev/null
run 8 "$work/resize_ep_files.log" --verify "$work/moe_ep4"
[ "$rc" -eq 0 ] && grep -q "0 wrong" "$work/resize_ep.log" &&
  grep -q "replayed as TP=1 DP=8 EP=4 PP=1 (8 ranks)" "$work/resize_ep.log" &&
  [ -n "$(per_rank "$work/resize_ep.log")" ] && [ "$(per_rank "$work/resize_ep.log")" = "$(per_rank "$work/resize_ep_files.log")" ]
result $? "resize/ep2-to-ep4-equals-scaled-files" "rc $rc: $(per_rank "$work/resize_ep.log" | head -2) vs $(per_rank "$work/resize_ep_files.log" | head -2)"

# ---- training iterations found in the trace: the bundled Megatron TP2 trace's 5 steps of 14 calls,
# each timed (text and JSON); a trace without a period says so
run 2 "$work/steps.log" --json "$work/steps.json" examples/traces/megatron_tp2; rc=$?
[ "$rc" -eq 0 ] && grep -q "^# training iterations : 5 per pass (14 calls each on rank 0" "$work/steps.log" &&
  python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['training_iterations']; sys.exit(not (t['per_pass']==5 and t['calls']==14 and len(t['time_us'])==5 and min(t['time_us'])>0))" "$work/steps.json"
result $? "steps/megatron-tp2-five-timed" "rc $rc: $(grep -A1 'training iterations' "$work/steps.log")"
run 2 "$work/nosteps.log" examples/traces/torch_collectives
grep -q "^# training iterations : none timed (no iterations found in rank 0's calls)" "$work/nosteps.log"
result $? "steps/none-said" "$(grep 'training iterations' "$work/nosteps.log")"

# ---- the committed ground-truth capture (tests/data/time_truth: NCCL over its Socket transport,
# GPU-timed, its decisions recorded) replays with NCCL's algorithm, protocol and channels on every
# collective, read here from the raw nccl_task lines, and with the trace's bytes
run 2 "$work/truth.log" --gpus-per-node 1 --report "$work/truth.csv" tests/data/time_truth; rc=$?
python3 - "$work/truth.csv" tests/data/time_truth >"$work/truth_check.txt" 2>&1 <<'PY'
import csv, glob, json, sys
report, trace = sys.argv[1], sys.argv[2]
decided, sizes = {}, {}
for line in open(sorted(glob.glob(trace + "/*rank0.jsonl"))[0]):
    r = json.loads(line)
    if r["type"] == "nccl_task" and r["task"] == "coll" and r["flags"] & 1:
        decided[(r["comm"], r["seq"])] = (r["algo"].lower(), r["proto"].lower(), r["channels"])
    if r["type"] == "op" and r["op"] not in ("groupstart", "groupend", "send", "recv"):
        sizes[(r["comm"], r["seq"])] = r["bytes"]
rows = [r for r in csv.DictReader(open(report)) if r["op"] != "alltoall"]
bad = [r for r in rows if (r["algorithm"], r["protocol"], int(r["channels"])) != decided.get((r["comm"], int(r["seq"])))
       or int(r["bytes"]) != sizes.get((r["comm"], int(r["seq"])))]
print(f"{len(rows)} collectives, {len(bad)} not as NCCL decided: {bad[:2]}")
sys.exit(1 if bad or len(rows) != 198 else 0)
PY
[ "$rc" -eq 0 ] && [ $? -eq 0 ]
result $? "truth/replays-nccls-decisions" "rc $rc: $(cat "$work/truth_check.txt")"

# ---- a straggler: --delay 3:10000 holds rank 3 for 10 ms before each of its operations (1 ms is
# within the scheduling noise of 4 ranks on 2 busy cores); the report
# names rank 3 and the wait it caused (at least the 10 ms per operation it was held) in text, JSON
# and HTML; a rank outside the job and a malformed spec are refused
run 4 "$work/delay.log" --delay 3:10000 --json "$work/delay.json" --html "$work/delay.html" \
  tests/data/scale/megatron_tp2_dp2_plain; rc=$?
[ "$rc" -eq 0 ] && grep -q "^# waiting for ranks  : rank 3 started last in" "$work/delay.log" &&
  python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['straggler']; sys.exit(not (s['rank']==3 and s['last_in']>=10 and s['wait_us']/s['last_in']>=9000))" "$work/delay.json" &&
  grep -q "rank 3 started last in" "$work/delay.html"
result $? "delay/rank-3-named-text-json-html" "rc $rc: $(grep 'waiting for ranks' "$work/delay.log"); $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['straggler'])" "$work/delay.json" 2>&1)"
run 4 "$work/delay_bad.log" --delay 9:1000 tests/data/scale/megatron_tp2_dp2_plain; rc=$?
[ "$rc" -ne 0 ] && grep -q -- "--delay: rank 9 is not a rank of this 4-rank job" "$work/delay_bad.log"
result $? "delay/rank-outside-refused" "rc $rc: $(grep -m2 delay "$work/delay_bad.log")"
"$phynet" --delay 3 x >"$work/delay_syntax.log" 2>&1; rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--delay: '3' (RANK\[,RANK...\]:MICROSECONDS\[:EVERY\])" "$work/delay_syntax.log"
result $? "delay/malformed-refused" "rc $rc: $(cat "$work/delay_syntax.log")"

# ---- recorded time for what it is: a trace captured without GPU timing holds CPU call times, which
# are labelled so and never divided into (no ratio); a GPU-timed capture's are NCCL's GPU times
run 4 "$work/cpuclock.log" --json "$work/cpuclock.json" --html "$work/cpuclock.html" tests/data/scale/megatron_tp2_dp2_plain; rc=$?
[ "$rc" -eq 0 ] && grep -q "^# recorded time      : the CPU time of each call" "$work/cpuclock.log" &&
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d['recorded_clock']=='cpu_call' and all(o['ratio'] is None for o in d['ops']) and any(o['recorded_us'] for o in d['ops'])))" "$work/cpuclock.json" &&
  grep -q "The capture recorded the CPU time of each call" "$work/cpuclock.html" && ! grep -q 'id="chart-recorded"' "$work/cpuclock.html"
result $? "recorded/cpu-call-labelled-no-ratio" "rc $rc: $(grep 'recorded time' "$work/cpuclock.log")"
run 2 "$work/gpuclock.log" --gpus-per-node 1 --json "$work/gpuclock.json" tests/data/time_truth; rc=$?
[ "$rc" -eq 0 ] && grep -q "^# recorded time      : NCCL's GPU time of each call" "$work/gpuclock.log" &&
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d['recorded_clock']=='gpu' and all(o['ratio'] is not None for o in d['ops'] if o['op']!='alltoall')))" "$work/gpuclock.json"
result $? "recorded/gpu-time-compared" "rc $rc: $(grep 'recorded time' "$work/gpuclock.log")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

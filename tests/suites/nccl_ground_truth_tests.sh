#!/usr/bin/env bash
# phynet against NCCL itself (issue 18): traces NCCL 2.28.9 ran with the shim's profiler plugin
# (the calls and the network bytes NCCL sent between every pair of ranks) are replayed by phynet
# with ring algorithms (NCCLSHIM_ALGO=ring, as NCCL chose for these sizes), and for every run
# (allreduce, allgather, reducescatter, broadcast, alltoall) and every ordered pair of ranks on
# different nodes, the payload phynet sent must be within 1% of NCCL's network bytes (NCCL's LL
# protocol puts 2 network bytes per payload byte); pairs NCCL left alone must stay empty.
#   nccl_4x1  4 nodes x 1 GPU (one H100, every rank its own node): 4 ranks, every hop a network hop.
#   nccl_4x2  4 nodes x 2 GPUs (two H100s, NVLink inside a node): 8 ranks, --intra-node shm
#             --gpus-per-node 2; the hops NCCL made over NVLink (no network bytes) must go over
#             shared memory in phynet (16 bytes of framing per message, none on TCP).
# The forced-Tree runs are data for the tree algorithm to come.
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
phynet="$BUILD/phynet"
work=$(mktemp -d /tmp/nccl-ground-truth-XXXXXX)
trap 'rm -rf "$work"' EXIT
source tests/lib/checks.sh  # result(), passed, failed

[ -x "$phynet" ] || { echo "missing $phynet: run make first"; echo "0 passed, 1 failed"; exit 1; }
# check_set <data dir> <ranks> <ranks per node> [phynet args...]
check_set() {
  local data=$1 np=$2 per=$3 set run rc; shift 3
  set=$(basename "$data")
  mkdir -p "$work/$set"
  tar -xzf "$data/traces.tgz" -C "$work/$set"
  for run in $(cd "$work/$set" && ls -d topo-* | grep -v Tree); do
    timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$np" --mca pml ob1 --mca btl self,tcp \
      --mca btl_tcp_if_include lo -x NCCLSHIM_ALGO=ring "$phynet" --ifname lo --rows 0 --verify "$@" \
      --json "$work/$set/$run.json" "$work/$set/$run" >"$work/$set/$run.log" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] && grep -q "data check .*, 0 wrong)" "$work/$set/$run.log"
    result $? "$set/$run/replays-with-verify" "rc $rc: $(tail -3 "$work/$set/$run.log")"
    python3 - "$data/bytes_per_pair.csv" "$run" "$work/$set/$run.json" "$per" >"$work/$set/$run.cmp" 2>&1 <<'PY'
import csv, json, sys
table, run, report, per = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
nccl = {}
for row in csv.DictReader(open(table)):
    if row["run"] != run:
        continue
    factor = 2 if " LL " in f' {row["nccl_algo_proto_channels"]} ' else 1
    key = (int(row["from_node"]), int(row["to_node"]))
    nccl[key] = nccl.get(key, 0) + int(row["net_bytes_per_op"]) * int(row["instances"]) // factor
ours, framing = {}, {}
for r in json.load(open(report))["ranks"]:
    for p in r["peer_bytes"]:
        if p["sent"]:
            ours[(r["rank"], p["peer"])] = p["sent"]
            framing[(r["rank"], p["peer"])] = (p["wire_sent"] - p["sent"]) / max(p["messages_sent"], 1)
bad = []
for key in sorted(set(nccl) | set(ours)):
    a, b = nccl.get(key, 0), ours.get(key, 0)
    if key[0] // per == key[1] // per:  # one node: NCCL used NVLink, phynet must use shared memory
        ok = a == 0 and framing.get(key, 16) == 16
        print(f"{run} {key[0]}->{key[1]} (one node): NCCL {a} network B, phynet {b} B over shm {'ok' if ok else 'WRONG'}")
    else:
        ok = (a == 0 and b == 0) or (a > 0 and abs(b - a) <= 0.01 * a)
        print(f"{run} {key[0]}->{key[1]}: NCCL {a} B, phynet {b} B {'ok' if ok else 'DIFFERENT'}")
    if not ok:
        bad.append(key)
sys.exit(1 if bad or not nccl else 0)
PY
    result $? "$set/$run/bytes-between-nodes-equal-NCCL" "$(cat "$work/$set/$run.cmp")"
    sed 's/^/    /' "$work/$set/$run.cmp"
  done
}

check_set tests/data/nccl_4x1 4 1
check_set tests/data/nccl_4x2 8 2 --intra-node shm --gpus-per-node 2
echo "$passed passed, $failed failed"

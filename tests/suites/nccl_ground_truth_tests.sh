#!/usr/bin/env bash
# phynet against NCCL itself (issue 18, 4 nodes x 1 GPU): the traces NCCL 2.28.9 ran on one H100
# with every rank its own node (tests/data/nccl_4x1: the calls and, from the profiler plugin, the
# network bytes NCCL sent between every pair of nodes) are replayed by phynet on 4 local ranks with
# ring algorithms (NCCLSHIM_ALGO=ring, as NCCL chose for these sizes); for every run (allreduce,
# allgather, reducescatter, broadcast, alltoall) and every ordered pair of ranks, the payload phynet
# sent must be within 1% of NCCL's (NCCL's LL protocol puts 2 network bytes per payload byte), and
# pairs NCCL left alone must stay empty. The forced-Tree run is data for the tree algorithm to come.
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
phynet="$BUILD/phynet"
data=tests/data/nccl_4x1
work=$(mktemp -d /tmp/nccl-ground-truth-XXXXXX)
trap 'rm -rf "$work"' EXIT
source tests/lib/checks.sh  # result(), passed, failed

[ -x "$phynet" ] || { echo "missing $phynet: run make first"; echo "0 passed, 1 failed"; exit 1; }
tar -xzf "$data/traces.tgz" -C "$work"

for run in topo-all_reduce-n4 topo-all_gather-n4 topo-reduce_scatter-n4 topo-broadcast-n4 topo-alltoall-n4; do
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np 4 --mca pml ob1 --mca btl self,tcp \
    --mca btl_tcp_if_include lo -x NCCLSHIM_ALGO=ring "$phynet" --ifname lo --rows 0 --verify \
    --json "$work/$run.json" "$work/$run" >"$work/$run.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] && grep -q "data check .*, 0 wrong)" "$work/$run.log"
  result $? "$run/replays-with-verify" "rc $rc: $(tail -3 "$work/$run.log")"
  python3 - "$data/bytes_per_pair.csv" "$run" "$work/$run.json" >"$work/$run.cmp" 2>&1 <<'PY'
import csv, json, sys
table, run, report = sys.argv[1:4]
nccl = {}
for row in csv.DictReader(open(table)):
    if row["run"] != run:
        continue
    factor = 2 if " LL " in f' {row["nccl_algo_proto_channels"]} ' else 1
    key = (int(row["from_node"]), int(row["to_node"]))
    nccl[key] = nccl.get(key, 0) + int(row["net_bytes_per_op"]) * int(row["instances"]) // factor
ours = {}
for r in json.load(open(report))["ranks"]:
    for p in r["peer_bytes"]:
        if p["sent"]:
            ours[(r["rank"], p["peer"])] = p["sent"]
bad = []
for key in sorted(set(nccl) | set(ours)):
    a, b = nccl.get(key, 0), ours.get(key, 0)
    ok = (a == 0 and b == 0) or (a > 0 and abs(b - a) <= 0.01 * a)
    print(f"{run} {key[0]}->{key[1]}: NCCL {a} B, phynet {b} B {'ok' if ok else 'DIFFERENT'}")
    if not ok:
        bad.append(key)
sys.exit(1 if bad or not nccl else 0)
PY
  result $? "$run/bytes-per-node-pair-equal-NCCL" "$(cat "$work/$run.cmp")"
  sed 's/^/    /' "$work/$run.cmp"
done
echo "$passed passed, $failed failed"

#!/usr/bin/env bash
# phynet against NCCL itself (issue 18): traces NCCL 2.28.9 ran with the shim's profiler plugin
# (the calls, NCCL's algorithm and channels per call, and the network bytes NCCL sent between every
# pair of ranks) are replayed by phynet as recorded (--algo auto: NCCL's algorithm and channels for
# every call), and for every run (allreduce, also with NCCL_ALGO=Tree, allgather, reducescatter,
# broadcast, alltoall) and every ordered pair of ranks on different nodes:
#   - the bytes phynet sent are within 1% of NCCL's network bytes (both in NCCL's protocol: LL puts
#     2 network bytes per payload byte); pairs NCCL left alone stay empty; every collective moved
#     in NCCL's protocol;
#   - as many connections carried data as NCCL used channels (ring hops 2, tree edges and alltoall
#     pairs 1; not checked for nccl_4x1's alltoall, where NCCL used 2 channels per peer);
#   - allreduce: the pairs between nodes that carried bytes are NCCL's connections (its ring order,
#     or its double binary tree), and every size ran NCCL's algorithm on NCCL's channels.
# The data sets (tests/data/*/README.md):
#   nccl_4x1        4 nodes x 1 GPU (nccl-tests, one H100): 4 ranks, --gpus-per-node 1 (NCCL's
#                   nodes: every rank its own), every hop a network hop.
#   nccl_4x2        4 nodes x 2 GPUs (nccl-tests, two H100s, NVLink inside a node): 8 ranks,
#                   --intra-node shm --gpus-per-node 2; the hops NCCL made over NVLink (no network
#                   bytes) must go over shared memory in phynet (16 bytes of framing per message).
#   nccl_torch_4x2  the same layout under PyTorch (two H200s): 8 KiB, 1 MiB and 64 MiB.
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
  for run in $(cd "$work/$set" && ls -d topo-*); do
    timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$np" --mca pml ob1 --mca btl self,tcp \
      --mca btl_tcp_if_include lo "$phynet" --ifname lo --rows 0 --verify "$@" \
      --json "$work/$set/$run.json" "$work/$set/$run" >"$work/$set/$run.log" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] && grep -q "data check .*, 0 wrong)" "$work/$set/$run.log"
    result $? "$set/$run/replays-with-verify" "rc $rc: $(tail -3 "$work/$set/$run.log")"
    local shape=(--flows)  # allreduce: NCCL's connections (ring or tree) and algorithm per size
    [[ $run == *all_reduce* ]] && shape+=(--ring-hops "$data/topology.txt" --algorithms)
    # Point to point runs on one connection per pair: NCCL used 2 channels per peer on 4 nodes of
    # 1 GPU (1 on 4 x 2); phynet does not replay NCCL's per-peer channels yet.
    [ "$run" = topo-alltoall-n4 ] && shape=()
    python3 tests/multihost/nccl_pair_bytes.py "$data/bytes_per_pair.csv" "$run" "$work/$set/$run.json" "$per" \
      "${shape[@]}" >"$work/$set/$run.cmp" 2>&1
    result $? "$set/$run/bytes-connections-and-algorithm-as-NCCL" "$(cat "$work/$set/$run.cmp")"
    sed 's/^/    /' "$work/$set/$run.cmp"
  done
}

check_set tests/data/nccl_4x1 4 1 --gpus-per-node 1
check_set tests/data/nccl_4x2 8 2 --intra-node shm --gpus-per-node 2
check_set tests/data/nccl_torch_4x2 8 2 --intra-node shm --gpus-per-node 2
echo "$passed passed, $failed failed"

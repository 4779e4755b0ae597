#!/usr/bin/env bash
# tier: full
# phynet against NCCL itself (issue 18): traces NCCL 2.28.9 ran with the shim's profiler plugin
# (the calls, NCCL's algorithm and channels per call, and the network bytes NCCL sent between every
# pair of ranks) are replayed by phynet as recorded (--algo auto: NCCL's algorithm and channels for
# every call), and for every run (allreduce, also with NCCL_ALGO=Tree, allgather, reducescatter,
# broadcast, alltoall) and every ordered pair of ranks on different nodes:
#   - the bytes phynet sent are within 1% of NCCL's network bytes (both in NCCL's protocol: LL puts
#     2 network bytes per payload byte); pairs NCCL left alone stay empty; every collective moved
#     in NCCL's protocol;
#   - as many connections carried data as NCCL used channels (ring hops 2, tree edges 1, alltoall
#     pairs 1 or, on 4 x 1 from 256 KiB per peer, 2: NCCL's recorded channels per transfer);
#   - allreduce: the pairs between nodes that carried bytes are NCCL's connections (its ring order,
#     or its double binary tree), and every size ran NCCL's algorithm on NCCL's channels.
# Every run is also replayed without NCCL's decisions (the trace's nccl_task lines taken out): phynet
# then chooses as NCCL's tuner does (model/nccl_tuner.h: algorithm, protocol, channels) and
# splits point-to-point transfers as NCCL does (p2p_channels.h), and the same checks must hold.
# The data sets (tests/data/*/README.md):
#   nccl_4x1        4 nodes x 1 GPU (nccl-tests, one H100): 4 ranks, --gpus-per-node 1 (NCCL's
#                   nodes: every rank its own), every hop a network hop.
#   nccl_4x2        4 nodes x 2 GPUs (nccl-tests, two H100s, NVLink inside a node): 8 ranks,
#                   --intra-node shm --gpus-per-node 2; the hops NCCL made over NVLink (no network
#                   bytes) must go over shared memory in phynet (16 bytes of framing per message).
#   nccl_torch_4x2  the same layout under PyTorch (two H200s): 8 KiB, 1 MiB and 64 MiB.
#   nccl_pat_8x1,   8 and 5 nodes x 1 GPU (nccl-tests, two H100s): allgather and reducescatter where
#   nccl_pat_5x1    NCCL picks PAT by itself and with NCCL_ALGO=PAT; every size must also run
#                   NCCL's algorithm (ring or PAT) on NCCL's channels.
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
    [[ $run == topo-pat-* ]] && shape+=(--algorithms)  # ring or PAT per size, as NCCL chose
    python3 tests/multihost/nccl_pair_bytes.py "$data/bytes_per_pair.csv" "$run" "$work/$set/$run.json" "$per" \
      "${shape[@]}" >"$work/$set/$run.cmp" 2>&1
    result $? "$set/$run/bytes-connections-and-algorithm-as-NCCL" "$(cat "$work/$set/$run.cmp")"
    sed 's/^/    /' "$work/$set/$run.cmp"
  done
}

# check_undecided <data dir> <ranks> <ranks per node> <run> [phynet args...]: the run replayed from
# its API calls alone (NCCL's decisions, the nccl_task lines, taken out): what phynet chooses as
# NCCL would must give NCCL's bytes and connections.
check_undecided() {
  local data=$1 np=$2 per=$3 run=$4 set rc f; shift 4
  set=$(basename "$data")
  mkdir -p "$work/undecided/$set/$run"
  for f in "$work/$set/$run"/*; do grep -v '"type":"nccl_task"' "$f" >"$work/undecided/$set/$run/$(basename "$f")"; done
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$np" --mca pml ob1 --mca btl self,tcp \
    --mca btl_tcp_if_include lo "$phynet" --ifname lo --rows 0 --verify "$@" \
    --json "$work/undecided/$set/$run.json" "$work/undecided/$set/$run" >"$work/undecided/$set/$run.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] && grep -q "data check .*, 0 wrong)" "$work/undecided/$set/$run.log"
  result $? "$set/$run/undecided/replays-with-verify" "rc $rc: $(tail -3 "$work/undecided/$set/$run.log")"
  local shape=(--flows)
  [[ $run == *all_reduce* ]] && shape+=(--ring-hops "$data/topology.txt" --algorithms)
  [[ $run == topo-pat-* ]] && shape+=(--algorithms)
  python3 tests/multihost/nccl_pair_bytes.py "$data/bytes_per_pair.csv" "$run" "$work/undecided/$set/$run.json" \
    "$per" "${shape[@]}" >"$work/undecided/$set/$run.cmp" 2>&1
  result $? "$set/$run/undecided/bytes-connections-algorithm-and-protocol-as-NCCL" \
    "$(cat "$work/undecided/$set/$run.cmp")"
  sed 's/^/    /' "$work/undecided/$set/$run.cmp"
}

check_set tests/data/nccl_4x1 4 1 --gpus-per-node 1
check_set tests/data/nccl_4x2 8 2 --intra-node shm --gpus-per-node 2
check_set tests/data/nccl_torch_4x2 8 2 --intra-node shm --gpus-per-node 2
check_set tests/data/nccl_pat_8x1 8 1 --gpus-per-node 1
check_set tests/data/nccl_pat_5x1 5 1 --gpus-per-node 1
# undecided_set <data dir> <ranks> <ranks per node> [phynet args...]: every run of the set; the
# forced-Tree runs with --algo tree (NCCL_ALGO=Tree was set for them).
undecided_set() {
  local data=$1 np=$2 per=$3 run; shift 3
  for run in $(cd "$work/$(basename "$data")" && ls -d topo-*/ | tr -d /); do
    if [[ $run == *-Tree ]]; then check_undecided "$data" "$np" "$per" "$run" --algo tree "$@"
    elif [[ $run == *-PAT ]]; then check_undecided "$data" "$np" "$per" "$run" --algo pat "$@"
    else check_undecided "$data" "$np" "$per" "$run" "$@"; fi
  done
}
undecided_set tests/data/nccl_4x1 4 1 --gpus-per-node 1
undecided_set tests/data/nccl_4x2 8 2 --intra-node shm --gpus-per-node 2
undecided_set tests/data/nccl_torch_4x2 8 2 --intra-node shm --gpus-per-node 2
undecided_set tests/data/nccl_pat_8x1 8 1 --gpus-per-node 1
undecided_set tests/data/nccl_pat_5x1 5 1 --gpus-per-node 1
# --nccl-log: the system read from NCCL's own log of 4 nodes x 2 (tests/data/nccl_tuning) gives the
# same choices; a log without NCCL's graph lines is refused, naming the file.
awk '/^# /{keep = ($2 == "4x2:")} keep' tests/data/nccl_tuning/init_lines.txt >"$work/nccl-4x2.log"
check_undecided tests/data/nccl_4x2 8 2 topo-all_reduce-n4x2 --intra-node shm --gpus-per-node 2 \
  --nccl-log "$work/nccl-4x2.log"
echo "NCCL INFO nothing else" >"$work/empty.log"
timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 --mca pml ob1 --mca btl self,tcp \
  --mca btl_tcp_if_include lo "$phynet" --ifname lo --nccl-log "$work/empty.log" \
  "$work/nccl_4x1/topo-all_reduce-n4" >"$work/empty-log.out" 2>&1
rc=$?
[ "$rc" -ne 0 ] && grep -q -- "--nccl-log: $work/empty.log: no ring graph line" "$work/empty-log.out"
result $? "nccl-log/without-graph-lines-refused" "rc $rc: $(tail -3 "$work/empty-log.out")"
echo "$passed passed, $failed failed"

#!/usr/bin/env bash
# Runs on VM A of tests/multihost/vm_pair.sh (VM_PAIR_DIR, VM_PAIR_SSH set): phynet over ibverbs
# between the two VMs, launched by mpirun over ssh.
#   main (2 rails): 1. the bundled Megatron trace, 1 rank per VM on rxe0, --verify: 0 wrong, two hosts
#        told apart (their hostnames are equal), with NCCL_IB_QPS_PER_CONNECTION=2 and
#        NCCL_IB_SPLIT_DATA_ON_QPS=1 (both listed as read; markers megatron-start / -end on rail 0
#        around it for the host's flow count); 2. SimAI folded to 4 ranks, data-parallel groups only
#        (ranks 0-2 and 1-3: rail-aligned), 2 ranks per VM with --hca rxe0,rxe1: local rank i on
#        rxe<i>, --verify 0 wrong; 3. SimAI TP + DP groups (TP pairs 0-1 and 2-3 inside a VM), 2 ranks
#        per VM on rxe0 and rxe1, --intra-node shm: --verify 0 wrong, the report's transport "ibverbs between
#        hosts, shm within"; markers (roce_pcap.py mark shm-start / shm-end) on every rail around it
#        let the host cut it out of the captures; 4. rxe1 removed on VM B: the rank there names its
#        host and device, every rank ends at once. The reports go to $VM_PAIR_DIR/report-*.json for
#        the host's pcap checks.
#   faults (2 rails; MPI and ssh on rail 0, the checked traffic on rail 1): 1. an RDMA background
#        flow (phynet_flow ... rdma) alone from A to B at 40 Mbit/s for 3 s: achieved within 15 % of
#        it, the sink told the bytes, and markers (flow-start / flow-end) let the host find exactly
#        those bytes in rail 1's capture ($VM_PAIR_DIR/flow-bytes.txt); 2. phynet --jobs: the
#        Megatron trace over verbs on rail 1 alone, then beside an RDMA flow of 150 Mbit/s on the
#        same rail: the flow runs and the replay's busbw shared / alone is below 0.9; 3. a verbs replay on rail 1,
#        VM B's r1 taken down (ip link, inside B) once 2 MB crossed it: the run ends within its
#        --timeout + 10 s naming the host pair and the NICs, no message calls a peer dead, then r1
#        comes back up; 4. as stop.
#   stop (1 rail): a long replay; VM B is frozen (SIGSTOP of its QEMU) mid-replay; the rank on VM A
#        must name the lost rank within its --timeout.
# Ends with 'N passed, N failed'.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
source tests/lib/checks.sh  # result(), passed, failed
dir=${VM_PAIR_DIR:?run through tests/multihost/vm_pair.sh}
ssh_agent=${VM_PAIR_SSH:?}

# run <timeout s> <hosts spec> <np> <log> <phynet args...>: mpirun across the VMs over ssh; the
# variables named in RUN_EXPORT go to every rank (mpirun -x).
run() {
  local limit=$1 hosts=$2 np=$3 log=$4 exports=() name; shift 4
  for name in ${RUN_EXPORT:-}; do exports+=(-x "$name"); done
  timeout "$limit" mpirun --allow-run-as-root --host "$hosts" -np "$np" "${exports[@]}" --mca plm_rsh_agent "$ssh_agent" \
    --mca oob_tcp_if_include 10.88.0.0/24 --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include 10.88.0.0/24 \
    "$PWD/$BUILD/phynet" --transport ibverbs --timeout 60 "$@" >"$log" 2>&1
}

# placement <json> <ranks per host> [devices per host]: one host per VM, local rank i on rxe<i mod
# devices> (default: one per rank), port 1, a RoCE v2 GID.
placement() {
  python3 - "$1" "$2" "${3:-$2}" <<'PY'
import json, sys
report, per, devices = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
ranks = report["ranks"]
assert report["hosts"] == 2, f"{report['hosts']} hosts"
for r in ranks:
    vm, i = r["rank"] // per + 1, r["local_rank"] % devices
    want = (f"rxe{i}", f"10.88.{i}.{vm}", f"::ffff:10.88.{i}.{vm}")
    assert (r["nic"], r["address"], r["gid"]) == want, f"rank {r['rank']}: {r}"
    assert r["port"] == 1 and r["local_rank"] == r["rank"] % per, r
print("placement ok:", [(r["rank"], r["host"], r["nic"], r["gid"]) for r in ranks])
PY
}

main_checks() {
  echo "== 1. Megatron trace, 1 rank per VM, rail 0, NCCL_IB_QPS_PER_CONNECTION=2 NCCL_IB_SPLIT_DATA_ON_QPS=1"
  # Markers around it let the host count its flows in rail 0's capture (roce_pcap.py qps).
  python3 tests/multihost/roce_pcap.py mark megatron-start 10.88.0.2
  NCCL_IB_QPS_PER_CONNECTION=2 NCCL_IB_SPLIT_DATA_ON_QPS=1 RUN_EXPORT="NCCL_IB_QPS_PER_CONNECTION NCCL_IB_SPLIT_DATA_ON_QPS" \
    run 300 10.88.0.1:1,10.88.0.2:1 2 "$dir/megatron.log" --ifname r0 --hca rxe0 --verify --verbose \
    --json "$dir/report-megatron.json" examples/traces/megatron_tp2
  local rc=$?
  python3 tests/multihost/roce_pcap.py mark megatron-end 10.88.0.2
  result $rc "megatron-2-vms/exit-0" "$(tail -5 "$dir/megatron.log")"
  grep -q "^#   NCCL_IB_SPLIT_DATA_ON_QPS=1  from the environment, read" "$dir/megatron.log" &&
    grep -q "^#   NCCL_IB_QPS_PER_CONNECTION=2  from the environment, read" "$dir/megatron.log"
  result $? "megatron-2-vms/qp-settings-read" "$(grep -A12 '^# NCCL settings' "$dir/megatron.log")"
  grep -q "^# data check .*, 0 wrong)" "$dir/megatron.log"
  result $? "megatron-2-vms/verify-0-wrong"
  grep -E "NIC rxe|^  [^ ]+ +rxe" "$dir/megatron.log" | sed 's/^/    /'
  placement "$dir/report-megatron.json" 1
  result $? "megatron-2-vms/placement"

  echo "== 2. SimAI data-parallel groups, 2 ranks per VM, one rxe per rank"
  run 300 10.88.0.1:2,10.88.0.2:2 4 "$dir/simai.log" --ifname r0,r1 --hca rxe0,rxe1 --world-size 4 --groups dp \
    --scale 0.25 --verify --verbose --json "$dir/report-simai.json" examples/workloads/simai_tp2_dp4_ep2.txt
  result $? "simai-2x2-rails/exit-0" "$(tail -5 "$dir/simai.log")"
  grep -q "^# data check .*, 0 wrong)" "$dir/simai.log"
  result $? "simai-2x2-rails/verify-0-wrong"
  grep -E "NIC rxe|^  [^ ]+ +rxe" "$dir/simai.log" | sed 's/^/    /'
  placement "$dir/report-simai.json" 2
  result $? "simai-2x2-rails/one-rxe-per-rank"

  echo "== 3. SimAI tensor + data parallel, 2 ranks per VM, one rxe each, --intra-node shm: TP pairs over shared memory"
  # One rxe per rank, as NCCL has one NIC per GPU. Two rxe devices of one kernel cannot reach each
  # other (moving the QP to RTR times out), so this runs only because the network transport connects
  # just the pairs on different VMs; the TP pairs of a VM have no QP at all.
  # Markers on every rail around the run let the host cut this run out of the captures.
  local rail rails=()
  for ((rail = 0; rail < ${VM_PAIR_RAILS:-2}; rail++)); do rails+=("10.88.$rail.2"); done
  local begin=$EPOCHREALTIME
  python3 tests/multihost/roce_pcap.py mark shm-start "${rails[@]}"
  run 300 10.88.0.1:2,10.88.0.2:2 4 "$dir/simai-shm.log" --ifname r0,r1 --hca rxe0,rxe1 --world-size 4 \
    --groups tp,dp --scale 0.0625 --intra-node shm --verify --verbose --json "$dir/report-simai-shm.json" \
    examples/workloads/simai_tp2_dp4_ep2.txt
  local rc=$?
  python3 tests/multihost/roce_pcap.py mark shm-end "${rails[@]}"
  echo "    markers and replay took $(awk -v a="$begin" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
  result $rc "simai-2x2-shm/exit-0" "$(tail -5 "$dir/simai-shm.log")"
  grep -q "^# data check .*, 0 wrong)" "$dir/simai-shm.log" &&
    grep -q "transport ibverbs between hosts, shm within" "$dir/simai-shm.log"
  result $? "simai-2x2-shm/verify-0-wrong-shm-within-vms" "$(grep -E '^# (data check|world)' "$dir/simai-shm.log")"
  grep -A8 "traffic between hosts" "$dir/simai-shm.log" | sed 's/^/    /'
  placement "$dir/report-simai-shm.json" 2
  result $? "simai-2x2-shm/placement-one-rxe-per-rank"

  echo "== 4. rxe1 missing on VM B"
  $ssh_agent 10.88.0.2 rdma link delete rxe1
  local start=$SECONDS
  run 120 10.88.0.1:2,10.88.0.2:2 4 "$dir/missing.log" --ifname r0,r1 --hca rxe0,rxe1 --world-size 4 --groups dp \
    examples/workloads/simai_tp2_dp4_ep2.txt
  local rc=$? elapsed=$((SECONDS - start))
  [ "$rc" -ne 0 ] && [ "$elapsed" -lt 60 ] &&
    grep -q "rank 3: no usable NIC: host [^ ]*#2, local rank 1: RDMA device 'rxe1'" "$dir/missing.log"
  result $? "missing-rxe-on-one-host-named/all-end" "rc $rc after ${elapsed}s: $(grep -m3 phynet "$dir/missing.log")"
  grep "no usable NIC" "$dir/missing.log" | sed 's/^/    /'
}

stop_check() {
  echo "== VM B frozen mid-replay"
  local log="$dir/stop.log"
  run 150 10.88.0.1:1,10.88.0.2:1 2 "$log" --ifname r0 --hca rxe0 --iterations 1000 --timeout 20 \
    examples/traces/megatron_tp2 &
  local pid=$!
  local t
  for t in $(seq 1 600); do grep -q "progress:" "$log" 2>/dev/null && break; sleep 0.2; done
  grep -q "progress:" "$log" || echo "    (no progress line yet; freezing VM B anyway)"
  local start=$SECONDS
  touch "$dir/stop-b"
  # The surviving rank names its lost peer; mpirun itself may then wait for the frozen VM's daemon.
  for t in $(seq 1 300); do grep -q "phynet: rank 0: replay failed" "$log" && break; sleep 0.2; done
  local elapsed=$((SECONDS - start))
  grep -q "phynet: rank 0: replay failed.*rank 1" "$log" && [ "$elapsed" -le 45 ]
  result $? "frozen-vm/survivor-names-rank-1-within-timeout" \
    "after ${elapsed}s (timeout 20 s): $(grep -m3 'phynet: rank' "$log")"
  grep -m2 "replay failed" "$log" | cut -c1-400 | sed 's/^/    /'
  echo "    named after ${elapsed} s"
  # mpirun may still wait on the frozen VM's daemon: end it and the local rank, and do not wait long.
  pkill -KILL -f "mpirun .*$BUILD/phynet" 2>/dev/null
  pkill -KILL -f "$BUILD/phynet" 2>/dev/null
  for t in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
}

# seconds_since <EPOCHREALTIME at the start>
seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

flow_check() {
  echo "== RDMA background flow alone, rail 1, A -> B, 40 Mbit/s for 3 s"
  local rate=40 port=47100
  python3 tests/multihost/roce_pcap.py mark flow-start 10.88.1.2
  # stdin from /dev/null: phynet_flow stops at the end of a piped stdin (what ssh would give it).
  $ssh_agent 10.88.0.2 "cd '$PWD' && timeout 40 '$BUILD/phynet_flow' sink 10.88.1.2 $port rdma </dev/null" \
    >"$dir/flow-sink.log" 2>&1 </dev/null &
  local sink=$!
  timeout 40 "$BUILD/phynet_flow" send 10.88.1.1 "10.88.1.2:$port" "$rate" 0 0 3 rdma </dev/null \
    >"$dir/flow-send.log" 2>&1
  local rc=$?
  wait "$sink"
  python3 tests/multihost/roce_pcap.py mark flow-end 10.88.1.2
  sed 's/^/    /' "$dir/flow-send.log" "$dir/flow-sink.log"
  local bytes achieved
  bytes=$(sed -n 's/^phynet_flow send: \([0-9]*\) bytes .* by RDMA write on rxe1$/\1/p' "$dir/flow-send.log")
  achieved=$(sed -n 's/^phynet_flow send: .*(\([0-9.]*\) Mbit\/s) by RDMA.*/\1/p' "$dir/flow-send.log")
  [ "$rc" -eq 0 ] && [ -n "$bytes" ] && awk -v a="$achieved" -v r="$rate" 'BEGIN { exit !(a >= 0.85 * r && a <= 1.15 * r) }'
  result $? "rdma-flow/achieved-within-15-percent-of-40-mbit" "rc $rc, achieved ${achieved:-?} Mbit/s"
  grep -q "^phynet_flow sink: received $bytes bytes by RDMA write on rxe1$" "$dir/flow-sink.log"
  result $? "rdma-flow/sink-told-the-bytes" "$(cat "$dir/flow-sink.log")"
  echo "${bytes:-0}" >"$dir/flow-bytes.txt"  # the host finds them in rail 1's capture
}

jobs_check() {
  echo "== phynet --jobs on rail 1: a verbs replay alone, then beside an RDMA background flow A -> B of 150 Mbit/s"
  local out="$dir/jobs" file="$dir/jobs.toml"
  cat >"$file" <<EOF2
launcher = ["mpirun", "--allow-run-as-root", "--mca", "plm_rsh_agent", "$ssh_agent", "--mca", "oob_tcp_if_include",
            "10.88.0.0/24", "--mca", "pml", "ob1", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "10.88.0.0/24"]
exec = [$(printf '"%s", ' $ssh_agent)]
timeout_s = 60
launch_s = 8
[hosts.a]
address = "10.88.0.1"
nics = { r1 = "10.88.1.1" }
[hosts.b]
address = "10.88.0.2"
nics = { r1 = "10.88.1.2" }
[[job]]
name = "tp"
input = "examples/traces/megatron_tp2"
hosts = ["a", "b"]
nics = ["r1"]
args = ["--transport", "ibverbs", "--hca", "rxe1", "--iterations", "5"]
[[job]]
name = "load"
kind = "background"
transport = "rdma"
hosts = ["a", "b"]
nics = ["r1"]
rate_mbit = 150
port = 47200
EOF2
  local begin=$EPOCHREALTIME
  timeout 200 "$BUILD/phynet" --jobs "$file" --out "$out" >"$dir/jobs.log" 2>&1
  local rc=$?
  echo "    phynet --jobs exit $rc after $(seconds_since "$begin") s"
  sed 's/^/    /' "$dir/jobs.log" | tail -12
  sed 's/^/    /' "$out/load.send.log" "$out/load.sink.log" 2>/dev/null
  # The flow moved bytes while the replay ran (it sets up before the shared start, then waits for it).
  [ "$rc" -eq 0 ] && grep -qE "send: [1-9][0-9]* bytes in .* by RDMA write on rxe1" "$out/load.send.log"
  result $? "jobs-rdma-flow/ran-beside-the-replay" "$(tail -5 "$dir/jobs.log")"
  python3 tests/multihost/jobs_check.py busbw "$out" tp 0 0.9
  result $? "jobs-rdma-flow/replay-busbw-drops-beside-the-flow"
}

portdown_check() {
  echo "== VM B's r1 down mid-replay over verbs (rail 1)"
  local log="$dir/portdown.log" limit=15
  rm -f "$dir/down-at"
  # Inside B: r1 down once 2 MB arrived on it (the replay is running, whatever its launch took).
  $ssh_agent 10.88.0.2 "nohup bash -c 'f=/sys/class/net/r1/statistics/rx_bytes; b=\$(cat \$f);
    for i in \$(seq 1 1200); do (( \$(cat \$f) - b > 2000000 )) && break; sleep 0.05; done;
    ip link set r1 down; touch $dir/down-at' >/dev/null 2>&1 &"
  run 150 10.88.0.1:1,10.88.0.2:1 2 "$log" --ifname r1 --hca rxe1 --iterations 100000 --timeout "$limit" \
    examples/traces/megatron_tp2 &
  local pid=$! t
  for t in $(seq 1 1200); do [ -f "$dir/down-at" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  local down=$EPOCHREALTIME
  [ -f "$dir/down-at" ] || echo "    (r1 of VM B never went down)"
  wait "$pid"
  local rc=$? took
  took=$(seconds_since "$down")
  $ssh_agent 10.88.0.2 ip link set r1 up
  echo "    ended rc $rc, ${took} s after r1 went down (--timeout $limit)"
  grep -m2 "replay failed" "$log" | cut -c1-600 | sed 's/^/    /'
  [ -f "$dir/down-at" ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] &&
    awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t <= l + 10) }'
  result $? "port-down/verbs-run-ends-within-timeout" "rc $rc after ${took} s: $(tail -3 "$log")"
  grep -Eq "on the fabric: global rank [01] on host [^ ]+ NIC [^ ]+( port 1)? \(10\.88\.1\.[12]\), global rank [01] on host [^ ]+ NIC [^ ]+( port 1)? \(10\.88\.1\.[12]\): host pair [^ ]+ - [^ ]+" "$log"
  result $? "port-down/names-the-host-pair-and-nics" "$(grep -m3 'phynet: rank' "$log" | cut -c1-600)"
  # Both ranks lived on: no message may say that a peer exited.
  ! grep -q "replay failed.*peer exited or was killed" "$log"
  result $? "port-down/no-peer-called-dead" "$(grep -m2 'peer exited or was killed' "$log" | cut -c1-400)"
  # r1 is back: its rxe port active again.
  for t in $(seq 1 50); do $ssh_agent 10.88.0.2 ibv_devinfo -d rxe1 2>/dev/null | grep -q PORT_ACTIVE && break; sleep 0.2; done
  $ssh_agent 10.88.0.2 ibv_devinfo -d rxe1 | grep -q PORT_ACTIVE
  result $? "port-down/r1-back-up"
}

case "${1:-main}" in
  main) main_checks ;;
  stop) stop_check ;;
  faults) flow_check; jobs_check; portdown_check; stop_check ;;
  *) echo "usage: $0 main|stop|faults" >&2; exit 2 ;;
esac
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

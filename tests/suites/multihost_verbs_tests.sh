#!/usr/bin/env bash
# tier: full
# Several hosts over RoCEv2: two QEMU/TCG VMs with soft-RoCE on their own virtio NICs, joined by QEMU
# socket links, mpirun across them over ssh (tests/multihost/vm_pair.sh). Two boots:
#   1. two rails: the checks of tests/multihost/in_vm_pair_checks.sh main (Megatron trace 1 rank per
#      VM with NCCL_IB_QPS_PER_CONNECTION=2 and NCCL_IB_SPLIT_DATA_ON_QPS=1: the report lists both as
#      read, and rail 0's capture of that run has 2 flows of RDMA writes per direction, as the
#      report's links (roce_pcap.py qps); SimAI 2 ranks per VM with one rxe per rank, the SimAI TP + DP groups 2 ranks per VM, one
#      rxe each, with --intra-node shm, all --verify; a device missing on one VM), then, on the host, the RoCEv2
#      payload of every flow in QEMU's capture of each rail, summed per NIC pair, must equal exactly
#      what the reports say each rank's NIC sent to ranks on the other VM, with the largest packet
#      payload at the 4096 path MTU and no flow between two addresses of one VM (roce_pcap.py check);
#      the --intra-node shm run alone (cut out of the captures by markers sent around it) must put
#      exactly its inter-VM bytes (= the model's) on the wire per NIC pair, and the TP pairs inside
#      each VM must have moved their bytes over shared memory (16 B of framing per message in the
#      report) with none of them in the captures (roce_pcap.py shm); that run has one rxe per rank,
#      which works only because the network transport connects just the pairs on different VMs (two
#      rxe devices of one kernel cannot connect). The captures are not compared with a flat
#      (--intra-node net) run: its TP hops do not reach the wire either (two ranks of a VM meet
#      inside its kernel), so it puts the same bytes between the VMs;
#   2. two rails, faults (tests/multihost/in_vm_pair_checks.sh faults): an RDMA background flow alone
#      on rail 1 at 40 Mbit/s (achieved within 15 %; on the host, exactly its bytes as RoCEv2
#      payload A -> B in rail 1's capture between its markers: roce_pcap.py bytes); VM B's r1 taken
#      down mid verbs replay (the run ends within --timeout + 10 s naming the host pair and NICs, r1
#      back up after); VM B frozen mid-replay, the rank on VM A names it within its timeout.
# When the VMs cannot start it prints SKIPPED and passes. About 7 minutes on 2 cores.
# Ends with 'N passed, N failed'.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}
source tests/lib/checks.sh  # result(), passed, failed
[ -x "$BUILD/phynet" ] || { echo "missing $BUILD/phynet: run make first"; echo "0 passed, 1 failed"; exit 1; }
export VM_PAIR_DIR=${VM_PAIR_DIR:-$ROOT/$BUILD/vm-pair-tests}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# in_vms <rails> <mode>: one boot; adds the in-VM counts to ours. Returns 2 when the VMs were not had.
in_vms() {
  # vm_pair.sh passes only NCCLSHIM_* into the VMs: BUILD goes on the command line.
  bash tests/multihost/vm_pair.sh --rails "$1" -- env BUILD="$BUILD" bash tests/multihost/in_vm_pair_checks.sh "$2" \
    2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  grep -q "^0 passed, 0 failed, 1 skipped" "$log" && return 2
  local line
  line=$(grep -E "^[0-9]+ passed, [0-9]+ failed$" "$log" | tail -1)
  if [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
    [ "$rc" -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ] && result 1 "vm-run-$2/exit" "exit $rc"
  else
    result 1 "vm-run-$2/finished" "exit $rc without a count"
  fi
  return 0
}

in_vms 2 main
if [ $? -eq 2 ]; then
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
d=$VM_PAIR_DIR
python3 tests/multihost/roce_pcap.py check "$d/report-megatron.json,$d/report-simai.json,$d/report-simai-shm.json" \
  "$d"/rail*.pcap >"$d/pcap-check.txt" 2>&1
result $? "roce-capture/payload-per-nic-pair-equals-report" "$(tail -8 "$d/pcap-check.txt")"
sed 's/^/    /' "$d/pcap-check.txt"
# The --intra-node shm run alone: between the markers sent around it.
python3 tests/multihost/roce_pcap.py check "$d/report-simai-shm.json" "$d"/rail*.pcap --window shm-start,shm-end \
  >"$d/pcap-shm-check.txt" 2>&1
result $? "roce-capture-shm/payload-per-nic-pair-equals-inter-vm-report" "$(tail -8 "$d/pcap-shm-check.txt")"
sed 's/^/    /' "$d/pcap-shm-check.txt"
python3 tests/multihost/roce_pcap.py shm "$d/report-simai-shm.json" "$d"/rail*.pcap --window shm-start,shm-end \
  >"$d/pcap-shm-within.txt" 2>&1
result $? "roce-capture-shm/intra-vm-pairs-on-shm-none-on-wire" "$(tail -8 "$d/pcap-shm-within.txt")"
sed 's/^/    /' "$d/pcap-shm-within.txt"

# The Megatron run alone (NCCL_IB_QPS_PER_CONNECTION=2, split data on QPs): 2 flows of data per rank pair.
python3 tests/multihost/roce_pcap.py qps "$d/report-megatron.json" 2 "$d/rail0.pcap" \
  --window megatron-start,megatron-end >"$d/pcap-qps.txt" 2>&1
result $? "roce-capture/qps-per-connection-flows" "$(tail -4 "$d/pcap-qps.txt")"
sed 's/^/    /' "$d/pcap-qps.txt"

in_vms 2 faults
python3 tests/multihost/roce_pcap.py bytes 10.88.1.1 10.88.1.2 "$(cat "$d/flow-bytes.txt" 2>/dev/null || echo 0)" \
  "$d/rail1.pcap" --window flow-start,flow-end >"$d/pcap-flow.txt" 2>&1
result $? "roce-capture/rdma-flow-bytes-on-the-wire" "$(tail -3 "$d/pcap-flow.txt")"
sed 's/^/    /' "$d/pcap-flow.txt"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

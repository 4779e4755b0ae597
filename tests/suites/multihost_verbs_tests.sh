#!/usr/bin/env bash
# Several hosts over RoCEv2: two QEMU/TCG VMs with soft-RoCE on their own virtio NICs, joined by QEMU
# socket links, mpirun across them over ssh (tests/multihost/vm_pair.sh). Two boots:
#   1. two rails: the checks of tests/multihost/in_vm_pair_checks.sh main (Megatron trace 1 rank per
#      VM, SimAI 2 ranks per VM with one rxe per rank, both --verify; a device missing on one VM),
#      then, on the host, the RoCEv2 payload of every flow in QEMU's capture of each rail, summed per
#      NIC pair, must equal exactly what the reports say each rank's NIC sent to the other's, with
#      the largest packet payload at the 4096 path MTU (tests/multihost/roce_pcap.py);
#   2. one rail: VM B frozen mid-replay, the rank on VM A names it within its timeout.
# When the VMs cannot start it prints SKIPPED and passes. About 3-4 minutes on 2 cores.
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
  bash tests/multihost/vm_pair.sh --rails "$1" -- bash tests/multihost/in_vm_pair_checks.sh "$2" 2>&1 | tee "$log"
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
python3 tests/multihost/roce_pcap.py check "$VM_PAIR_DIR/report-megatron.json,$VM_PAIR_DIR/report-simai.json" \
  "$VM_PAIR_DIR"/rail*.pcap >"$VM_PAIR_DIR/pcap-check.txt" 2>&1
result $? "roce-capture/payload-per-nic-pair-equals-report" "$(tail -8 "$VM_PAIR_DIR/pcap-check.txt")"
sed 's/^/    /' "$VM_PAIR_DIR/pcap-check.txt"

in_vms 1 stop
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# tier: full
# The tests that need a real (soft-RoCE) RDMA device: boots the VM of scripts/soft_roce_vm.sh and
# runs tests/verbs/in_vm_checks.sh inside on rxe0 ([ibverbs] unit tests, the shim over verbs,
# phynet over verbs) (ranks as processes, a few MB per test: rxe under
# QEMU TCG moves ~0.4 Gb/s), prints the VM log and ends with 'N passed, N failed' (Catch2's test
# cases). When the VM cannot start it prints SKIPPED and '0 passed, 0 failed, 1 skipped' and
# passes. About 1-2 minutes: ~20-40 s of boot, ~30 s of tests.
# Environment: VERBS_VM_FILTER ["[ibverbs]"] the Catch2 filter; VM_* as in soft_roce_vm.sh.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}
FILTER=${VERBS_VM_FILTER:-[ibverbs]}
if [ ! -x "$BUILD/unit_tests" ]; then
  echo "verbs-vm-tests: $BUILD/unit_tests is missing: build first (make all)"
  echo "0 passed, 1 failed"
  exit 1
fi
export VM_LOG_DIR=${VM_LOG_DIR:-$ROOT/$BUILD/soft-roce-tests}
log=$(mktemp)
bash scripts/soft_roce_vm.sh bash tests/verbs/in_vm_checks.sh 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if grep -q "^0 passed, 0 failed, 1 skipped" "$log"; then
  rm -f "$log"
  exit 0  # the VM was not available: already reported as skipped
fi
line=$(grep -E "^[0-9]+ passed, [0-9]+ failed$" "$log" | tail -1)
passed=0
failed=0
if [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
  passed=${BASH_REMATCH[1]}; failed=${BASH_REMATCH[2]}
fi
skipped=$(grep -c "SKIPPED:" "$log")
rm -f "$log"
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  echo "verbs-vm-tests: the VM run failed (exit $rc) without a failure count"
  failed=1
fi
if [ "$skipped" -gt 0 ]; then
  echo "($skipped test(s) printed SKIPPED inside the VM; Catch2 v2 counts them as passed)"
fi
echo "$passed passed, $failed failed"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]

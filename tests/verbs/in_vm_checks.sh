#!/usr/bin/env bash
# Everything that needs the soft-RoCE device, run inside one boot of the VM (scripts/soft_roce_vm.sh):
#   1. the [ibverbs] Catch2 tests (transport, collectives over verbs with every byte checked, errors);
#   2. the shim's NCCL-API test program, GPU-free, with NCCLSHIM_TRANSPORT=ibverbs (2 ranks);
#   3. phynet replaying the bundled Megatron trace over --transport ibverbs (mpirun, 2 ranks): the
#      per-rank op counts and bytes must equal the trace's and the wire bytes the model's.
# Ends with 'N passed, N failed' (Catch2 test cases + shim checks + phynet checks).
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
passed=0
failed=0
result() {  # result <ok:0|1> <name> [why]
  if [ "$1" -eq 0 ]; then echo "PASS $2"; passed=$((passed + 1)); else echo "FAIL $2: ${3:-}"; failed=$((failed + 1)); fi
}
export NCCLSHIM_IB_HCA=${NCCLSHIM_IB_HCA:-rxe0}
export NCCLSHIM_TIMEOUT=${NCCLSHIM_TIMEOUT:-60}

echo "== 1. [ibverbs] unit tests"
out=$("$BUILD/unit_tests" "${VERBS_VM_FILTER:-[ibverbs]}" --durations yes 2>&1)
rc=$?
echo "$out" | tail -n 25
line=$(echo "$out" | grep -E "^All tests passed|^test cases:" | tail -1)
if [[ $line =~ All\ tests\ passed.*in\ ([0-9]+)\ test\ case ]]; then
  passed=$((passed + BASH_REMATCH[1]))
elif [[ $line =~ test\ cases:\ +([0-9]+)\ \|\ +([0-9]+)\ passed\ \|\ +([0-9]+)\ failed ]]; then
  passed=$((passed + BASH_REMATCH[2])); failed=$((failed + BASH_REMATCH[3]))
else
  result 1 "unit-tests/ran" "exit $rc, no Catch2 summary"
fi
[ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && result 1 "unit-tests/exit" "exit $rc"

echo "== 2. the shim's NCCL-API test program over ibverbs (GPU-free, 2 ranks)"
out=$(NCCLSHIM_TRANSPORT=ibverbs bash tests/shim/run_shim_tests.sh "$BUILD" 2 2>&1)
rc=$?
echo "$out" | grep -E "FAIL|passed, " | tail -n 8
line=$(echo "$out" | grep -E "^[0-9]+ passed, [0-9]+ failed" | tail -1)
if [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
  passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
fi
[ "$rc" -eq 0 ]; result $? "shim-over-ibverbs/exit" "exit $rc"

echo "== 3. phynet replays examples/traces/megatron_tp2 over ibverbs"
mpi=(mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,tcp)
log=$(mktemp)
"${mpi[@]}" -np 2 "$BUILD/phynet" --transport ibverbs --timeout 60 --rows 3 examples/traces/megatron_tp2 >"$log" 2>&1
rc=$?
tail -n 12 "$log"
[ "$rc" -eq 0 ]; result $? "phynet-ibverbs/exit" "exit $rc"
for rank in 0 1; do
  expected_ops=$(grep -c '"type":"op"' "examples/traces/megatron_tp2/rank$rank.jsonl")
  row=$(grep "^# rank $rank: ops" "$log")
  [[ $row =~ ops\ ([0-9]+)\ op_bytes\ ([0-9]+)\ wire_sent\ ([0-9]+)\ wire_received\ ([0-9]+)\ model_sent\ ([0-9]+) ]]
  ok=$?
  [ $ok -eq 0 ] && [ "${BASH_REMATCH[1]}" -eq "$expected_ops" ] && [ "${BASH_REMATCH[3]}" -eq "${BASH_REMATCH[5]}" ]
  result $? "phynet-ibverbs/rank$rank-ops-and-wire-bytes" "row '$row', trace has $expected_ops ops"
done
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

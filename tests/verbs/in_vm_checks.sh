#!/usr/bin/env bash
# Everything that needs the soft-RoCE device, run inside one boot of the VM (scripts/soft_roce_vm.sh):
#   1. the [ibverbs] Catch2 tests (transport, collectives over verbs with every byte checked, errors);
#   2. the shim's NCCL-API test program, GPU-free, with NCCLSHIM_TRANSPORT=ibverbs (2 ranks);
#   3. phynet replaying the bundled Megatron trace over --transport ibverbs (mpirun, 2 ranks): the
#      per-rank op counts and bytes must equal the trace's and the wire bytes the model's; then
#      again with --verify (every result byte checked; phynet's buffers are registered: zero copy);
#   4. SIGKILL of a rank of `ncclshim perf -np 3` over ibverbs mid-all_reduce: the others fail
#      within the timeout naming it.
# Ends with 'N passed, N failed' (Catch2 test cases + shim checks + phynet checks).
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
source tests/lib/checks.sh  # result(), passed, failed
source tests/lib/processes.sh  # wait_for_busy_ranks
source tests/lib/rank_lines.sh  # rank_lines: the report's per-rank count lines, one per rank
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
  row=$(rank_lines "$log" | grep "^# rank $rank: ops")
  [[ $row =~ ops\ ([0-9]+)\ op_bytes\ ([0-9]+)\ wire_sent\ ([0-9]+)\ wire_received\ ([0-9]+)\ model_sent\ ([0-9]+) ]]
  ok=$?
  [ $ok -eq 0 ] && [ "${BASH_REMATCH[1]}" -eq "$expected_ops" ] && [ "${BASH_REMATCH[3]}" -eq "${BASH_REMATCH[5]}" ]
  result $? "phynet-ibverbs/rank$rank-ops-and-wire-bytes" "row '$row', trace has $expected_ops ops"
done

# --scale 4: the 128 KiB allreduces become 512 KiB, so each of NCCL's 2 channels moves 128 KiB
# messages, above the zero-copy threshold (64 KiB).
echo "== 3b. the same with --verify: every result byte checked (phynet's registered buffers: zero copy)"
"${mpi[@]}" -np 2 "$BUILD/phynet" --transport ibverbs --timeout 60 --rows 3 --verify --scale 4 examples/traces/megatron_tp2 \
  >"$log" 2>&1
rc=$?
tail -n 3 "$log"
[ "$rc" -eq 0 ] && grep -q "data check *: every result byte verified (.*, 0 wrong)" "$log"
result $? "phynet-ibverbs/verify-every-byte" "exit $rc: $(tail -n 2 "$log")"
rank_lines "$log" | grep "^# rank [01]:" | grep -q "wire_zero_copy [1-9]"
result $? "phynet-ibverbs/zero-copy-used" "$(grep "^# ranks\? " "$log")"

echo "== 4. SIGKILL of a rank mid-collective over ibverbs (ncclshim perf, NCCL API, 3 ranks)"
# As tests/suites/fault_tests.sh does over TCP: once the three forked ranks are busy in their
# all_reduce loop, rank 1 is killed; the job must fail within the timeout and ranks 0 and 2 must exit
# non-zero naming rank 1.
kill_timeout=30
NCCLSHIM_TRANSPORT=ibverbs NCCLSHIM_TIMEOUT=$kill_timeout "$BUILD/ncclshim" perf all_reduce -np 3 -b 256K -e 256K \
  -w 2 -n 1000000 -c 1 >"$log" 2>&1 &
launcher=$!
wait_for_busy_ranks "$launcher" 3 100 60  # up to 60 s: the verbs set-up is slow under TCG
victim=${ranks[1]:-}
killed_at=$SECONDS
[ -n "$victim" ] && kill -9 "$victim"
wait "$launcher"
rc=$?
elapsed=$((SECONDS - killed_at))
tail -n 6 "$log"
[ -n "$victim" ] && [ "$rc" -ne 0 ] && [ "$elapsed" -le "$kill_timeout" ] &&
  grep -q "ncclshim perf: rank 1 was killed by signal 9" "$log"
result $? "kill-over-ibverbs/rank-1-sigkilled-mid-collective-job-fails-within-${kill_timeout}s (${elapsed}s)" \
  "victim ${victim:-none}, rc $rc after ${elapsed}s: $(tail -n 4 "$log")"
for r in 0 2; do
  grep -q "ncclshim perf: rank $r exited with code [1-9]" "$log" &&
    grep "^ncclshim perf: rank $r: " "$log" | grep -q "rank 1\b\|ranks \(.*,\)\?1\(,\|\b\)"
  result $? "kill-over-ibverbs/rank-$r-exits-non-zero-naming-rank-1" "$(grep "rank $r" "$log" | tail -n 3)"
done
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Runs the shim's process tests: the NCCL-API test program (linked against a stub libnccl.so.2 that
# aborts) with LD_PRELOAD=libncclshim.so for 2, 3 and 4 ranks, plus checks of the library itself:
# only nccl*/pnccl* symbols exported, no libibverbs/MPI/libstdc++ needed at load time, and the stub
# really is what the program would call without the preload. The program tests GPU-free execution:
# NCCLSHIM_MODE=gpufree, since on a GPU host auto mode would forward to the stub (it looks like a real
# NCCL), and NCCLSHIM_CHECK_CALLS=1 (ranks check that they make the same collective calls; set it to
# 0 to run the scenarios without; the callcheck scenario always has it). Forward mode:
# tests/suites/forward_tests.sh. Ends with "N passed, N failed".
# Usage: tests/shim/run_shim_tests.sh [build dir] [rank counts...]   (after `make`)
set -uo pipefail
build=${1:-build}
shift || true
counts=${*:-2 3 4}
lib=$(realpath "$build/libncclshim.so")
program="$build/tests/nccl_api_test_program"
passed=0
failed=0

result() {  # result <ok:0|1> <name> [why]
  if [ "$1" -eq 0 ]; then echo "PASS $2"; passed=$((passed + 1)); else echo "FAIL $2: ${3:-}"; failed=$((failed + 1)); fi
}

for f in "$lib" "$program"; do
  [ -e "$f" ] || { echo "missing $f: run make first"; echo "0 passed, 1 failed"; exit 1; }
done

others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -Ev '^p?nccl' | tr '\n' ' ')
result "$([ -z "$others" ]; echo $?)" "library/exports-only-nccl-symbols" "also exports: $others"
count=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -Ec '^nccl')
result "$([ "$count" -ge 41 ]; echo $?)" "library/exports-the-nccl-api" "only $count nccl* symbols"
needed=$(readelf -d "$lib" | grep NEEDED | grep -Ei 'ibverbs|mpi|stdc\+\+|gcc_s' | tr '\n' ' ')
result "$([ -z "$needed" ]; echo $?)" "library/no-verbs-mpi-libstdc++-at-load" "$needed"

# Without the preload the stub answers and aborts: the passes below come from interposition.
out=$("$program" 2 initall 2>&1)
echo "$out" | grep -q "not a real NCCL"
result $? "library/stub-aborts-without-preload" "$(echo "$out" | tail -3)"

for n in $counts; do
  log=$(mktemp)
  NCCLSHIM_MODE=gpufree NCCLSHIM_CHECK_CALLS=${NCCLSHIM_CHECK_CALLS:-1} LD_PRELOAD="$lib" "$program" "$n" | tee "$log" | grep -Ev '^PASS|^[0-9]+ passed, [0-9]+ failed$'
  p=$(grep -c '^PASS' "$log")
  f=$(grep -c '^FAIL' "$log")
  passed=$((passed + p))
  failed=$((failed + f))
  echo "ranks $n: $p passed, $f failed"
  rm -f "$log"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

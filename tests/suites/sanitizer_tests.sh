#!/usr/bin/env bash
# tier: full
# The test suite again under AddressSanitizer + UndefinedBehaviorSanitizer (run by tests/run_all.sh;
# budget about 15 minutes on 2 cores, most of it the build). Builds into a separate folder
# ($ASAN_BUILD, default $BUILD/asan: `make BUILD=build/asan SAN=... OPT=-O1`) the engine, the shim
# and ncclshim-trace, links the unit tests' objects of the main build against them, then runs, with halt_on_error, leak detection
# and UBSan's -fno-sanitize-recover=all:
#   - build/asan/unit_tests, except the in-process big matrix "every collective, type and op over
#     in-process ranks" (6 rank counts x 5 counts up to 1M elements x every type and op: 3 minutes
#     at -O2, too slow under ASan); every collective, type and op still runs under ASan in "deep
#     pipelines with small slices and chunks" (in-process, 2/3/5/8 ranks) and in the TCP matrix
#     (2/3/4 ranks as processes). Set SANITIZER_FULL=1 to run it too.
#   - the shim's process tests (2, 3 and 4 ranks) with the ASan build of libncclshim.so preloaded
#     behind the ASan runtime (LD_PRELOAD="libasan.so build/asan/libncclshim.so"; the test program
#     itself is not instrumented). The shim's objects are built without UBSan's enum check: the
#     NCCL C API takes ncclDataType_t / ncclRedOp_t from C callers, who may pass any int (the
#     process tests pass 99 on purpose and expect ncclInvalidArgument), and the shim reads them as
#     C++ enums before it validates them, which that check reports as loads of invalid values;
#   - ncclshim-trace validate / dump of the example traces, whole and cut mid-line.
# A unit-test case failing because a forked rank got stuck is rerun, up to three tries (see "libasan fork
# deadlock" below). A sanitizer report fails the step that produced it (exit status and "ERROR: AddressSanitizer",
# "runtime error:", "LeakSanitizer" in its log). Ends with "N passed, N failed" (unit-test cases
# and shim checks counted one by one).
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
ASAN_BUILD=${ASAN_BUILD:-$BUILD/asan}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
work=$(mktemp -d /tmp/sanitizer-tests-XXXXXX)
trap 'rm -rf "$work"' EXIT

source tests/lib/checks.sh  # result(), passed, failed
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }
sanitizer_clean() { ! grep -qE "ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|SUMMARY: UndefinedBehavior" "$1"; }

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:allocator_may_return_null=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="report_objects=0"

# ---- build (the NCCL header flags are the main build's: fetched once by `make`)
mkdir -p "$ASAN_BUILD"
if [ ! -f "$ASAN_BUILD/nccl_cflags.txt" ] && [ -f "$BUILD/nccl_cflags.txt" ]; then
  cp "$BUILD/nccl_cflags.txt" "$ASAN_BUILD/nccl_cflags.txt"
fi
start=$SECONDS
# Only the code under test is instrumented: the engine, trace, phynet, tools and shim libraries are
# compiled again with ASan + UBSan, while the unit tests' own objects and the shim's process-test
# program (never instrumented) are the main build's, linked as they are (TEST_OBJ_BUILD), so the
# ~80 test files are compiled once, not twice. What that gives up: inline functions from headers
# that a test file and the engine both use may be linked in the test file's uninstrumented copy.
# -g1 (line tables: file:line in every report) compiles a quarter faster than -g. The engine, trace
# and phynet libraries are built by the second make with every check; the shim's own objects by the
# third, without UBSan's enum check (see the header).
make --no-print-directory -j"$(nproc)" BUILD="$BUILD" "$BUILD/unit_tests" "$BUILD/tests/nccl_api_test_program" \
  >"$work/build.log" 2>&1 &&
  make --no-print-directory -j"$(nproc)" BUILD="$ASAN_BUILD" TEST_OBJ_BUILD="$BUILD" SAN="$SAN" OPT=-O1 EXTRA_CXXFLAGS=-g1 \
    "$ASAN_BUILD/unit_tests" "$ASAN_BUILD/ncclshim-trace" >>"$work/build.log" 2>&1 &&
  make --no-print-directory -j"$(nproc)" BUILD="$ASAN_BUILD" SAN="$SAN -fno-sanitize=enum" OPT=-O1 EXTRA_CXXFLAGS=-g1 \
    "$ASAN_BUILD/libncclshim.so" >>"$work/build.log" 2>&1
rc=$?
result "$rc" "build/asan-ubsan ($((SECONDS - start)) s)" "$(grep -m5 -E 'error|Error' "$work/build.log")"
[ "$rc" -eq 0 ] || finish

# LeakSanitizer needs ptrace-like access to stop the process; where it cannot (some containers)
# it dies at exit with a fatal error. Probe once and say so instead of failing every step.
echo 'int main() { return 0; }' >"$work/probe.c"
if gcc -fsanitize=address -o "$work/probe" "$work/probe.c" 2>/dev/null && ! "$work/probe" >"$work/probe.log" 2>&1; then
  echo "note: LeakSanitizer does not work here ($(head -1 "$work/probe.log")): leaks not checked"
  export ASAN_OPTIONS="${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}"
fi

# ---- unit tests
# One Catch2 spec, its terms ANDed ('*': a comma would split the spec in two, ORed). '~[.]' keeps
# the hidden by-hand benchmarks out: a spec of exclusions alone would select them.
skip='~[.] ~"*type and op over in-process ranks"'
[ "${SANITIZER_FULL:-0}" = 1 ] && skip='~[.]'
start=$SECONDS
"$ASAN_BUILD/unit_tests" "$skip" -r xml -o "$work/unit.xml" >"$work/unit.log" 2>&1
rc=$?
# "passed failed" test-case counts, then the names of the failed cases, from a Catch2 XML report.
xml_results() {
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("0 1"); sys.exit()
cases = root.findall("OverallResultsCases")
print(cases[-1].get("successes"), cases[-1].get("failures")) if cases else print("0 1")
for tc in root.iter("TestCase"):
    result = tc.find("OverallResult")
    if result is not None and result.get("success") != "true":
        print(tc.get("name"))
PY
}
mapfile -t results < <(xml_results "$work/unit.xml")
read -r ok bad <<<"${results[0]}"
failed_cases=("${results[@]:1}")
# A forked rank can deadlock inside ASan's allocator: GCC 12's libasan does not lock it across
# fork(), so a child inherits whatever allocator lock another thread of the parent held (gdb: the
# child waits in SizeClassAllocator64::GetFromAllocator forever; the harness kills it, "still running
# after N s", and its peers time out). The threads in question are bootstrap roots in the parent,
# also those of earlier tests (idle, waking once a second): they now hold their mutex whenever they
# are not in poll(), and fork takes it first (bootstrap_root.cc); before that the shared-memory
# exchange hung in about half of the runs, 90 s each. What follows stays as a safety net: such a
# failure is rerun (only the failed cases, each alone, up to three tries) without ASan's quarantine
# (the stuck children seen earlier waited while allocating a quarantine batch) and must then pass
# clean. That rerun still checks bounds, leaks and undefined behaviour, but not use after free.
if [ "$rc" -ne 0 ] && grep -q "still running after .* s, killed" "$work/unit.log" && [ "${#failed_cases[@]}" -gt 0 ]; then
  echo "note: rerunning ${failed_cases[*]} without ASan's quarantine: a rank was stuck (libasan fork deadlock?):" \
    "$(grep -m2 'still running after' "$work/unit.log" | tr '\n' ' ')"
  retry_ok=0
  for name in "${failed_cases[@]}"; do
    spec=$name
    [[ $name == *,* ]] && spec="*${name##*,}"  # a comma would split the spec
    # Up to three tries, each a fresh process running the case alone: a CI run (2026-11-29) saw the
    # shared-memory exchange hang on its first retry too. Only a stuck rank is tried again; any other
    # failure (or a sanitizer report) on a try ends the retries and fails the step.
    for try in 1 2 3; do
      ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=0" "$ASAN_BUILD/unit_tests" "$spec" >"$work/try.log" 2>&1
      try_rc=$?
      cat "$work/try.log" >>"$work/retry.log"
      [ "$try_rc" -eq 0 ] && break
      if [ "$try" -eq 3 ] || ! grep -q "still running after .* s, killed" "$work/try.log"; then retry_ok=1; break; fi
      echo "note: try $try of '$name' had a stuck rank again; trying once more"
    done
  done
  if [ "$retry_ok" -eq 0 ] && sanitizer_clean "$work/retry.log"; then
    ok=$((ok + bad)); bad=0; rc=0
    cp "$work/retry.log" "$work/unit.log"
  fi
fi
passed=$((passed + ${ok:-0})); failed=$((failed + ${bad:-1}))
[ "$rc" -eq 0 ] && sanitizer_clean "$work/unit.log"
result $? "unit-tests/clean-under-asan-ubsan ($((SECONDS - start)) s: ${ok:-0} test cases passed, ${bad:-?} failed)" \
  "exit $rc; failed: ${failed_cases[*]}
$(grep -m1 -A30 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$work/unit.log" || grep -B3 -A10 'FAILED\|still running' "$work/unit.log" | head -40)"

# ---- the shim's process tests, libncclshim.so (ASan) preloaded behind the ASan runtime
asan_rt=$(gcc -print-file-name=libasan.so)
lib=$(realpath "$ASAN_BUILD/libncclshim.so")
program="$BUILD/tests/nccl_api_test_program"  # the main build's: never instrumented
for n in 2 3 4; do
  log="$work/shim$n.log"
  start=$SECONDS
  NCCLSHIM_MODE=gpufree LD_PRELOAD="$asan_rt $lib" timeout 600 "$program" "$n" >"$log" 2>&1
  rc=$?
  p=$(grep -c '^PASS' "$log")
  f=$(grep -c '^FAIL' "$log")
  passed=$((passed + p)); failed=$((failed + f))
  [ "$rc" -eq 0 ] && [ "$p" -gt 0 ] && sanitizer_clean "$log"
  result $? "shim-process-tests/$n-ranks-clean-under-asan-ubsan ($((SECONDS - start)) s: $p passed, $f failed)" \
    "exit $rc; $(grep -m1 -A30 -E 'ERROR: AddressSanitizer|runtime error:' "$log" || grep -m5 '^FAIL' "$log" || tail -20 "$log")"
done

# ---- ncclshim-trace on the example traces, whole and cut mid-line
trace_tool="$ASAN_BUILD/ncclshim-trace"
for dir in examples/traces/*/; do
  name=$(basename "$dir")
  "$trace_tool" validate "$dir" >"$work/$name.log" 2>&1 && "$trace_tool" dump --format csv --comms "$dir" \
    >/dev/null 2>>"$work/$name.log"
  rc=$?
  [ "$rc" -eq 0 ] && sanitizer_clean "$work/$name.log"
  result $? "trace-tool/$name" "exit $rc; $(tail -20 "$work/$name.log")"
  mkdir -p "$work/cut-$name"
  for f in "$dir"*.jsonl; do head -c $(($(wc -c <"$f") * 2 / 3)) "$f" >"$work/cut-$name/$(basename "$f")"; done
  "$trace_tool" validate "$work/cut-$name" >"$work/cut-$name.log" 2>&1
  "$trace_tool" dump "$work/cut-$name" >/dev/null 2>>"$work/cut-$name.log"
  sanitizer_clean "$work/cut-$name.log" && grep -q "cut at line" "$work/cut-$name.log"
  result $? "trace-tool/$name-cut-mid-line" "$(tail -20 "$work/cut-$name.log")"
done

finish

#!/usr/bin/env bash
# tier: full
# The parsers under libFuzzer (run by tests/run_all.sh): builds the targets of fuzz/ with clang
# (fuzz/fuzz.mk: -fsanitize=fuzzer,address,undefined into $BUILD/fuzz) and runs each for a bounded
# time from its committed seed corpus (fuzz/corpus/<target>/; new inputs go to a scratch copy):
#   trace_reader    parseTrace, then validation and phynet's trace -> workload conversion
#   simai_workload  parseSimAiWorkload (+ phynet's cross-rank check)
#   aicb_workload   parseAicbWorkload (+ the check)
#   bootstrap       the bootstrap wire messages (hellos, acknowledgement, root reply and table)
#   unique_id       decodeUniqueId
# Any crash, sanitizer report, leak, timeout (-timeout) or memory blow-up (-rss_limit_mb) fails the
# target; the input that did it is kept in $FUZZ_ARTIFACTS (default $BUILD/fuzz/artifacts) and
# printed in base64. Prints the executions of each target. FUZZ_SECONDS (default 15) is the time
# per target; FUZZ_JOBS (default 2) targets run at once. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
FUZZ_BUILD=${FUZZ_BUILD:-$BUILD/fuzz}
seconds=${FUZZ_SECONDS:-15}
artifacts=${FUZZ_ARTIFACTS:-$FUZZ_BUILD/artifacts}
targets="trace_reader simai_workload aicb_workload bootstrap unique_id chakra_et pytorch_et"
work=$(mktemp -d /tmp/fuzz-tests-XXXXXX)
trap 'rm -rf "$work"' EXIT

source tests/lib/checks.sh  # result(), passed, failed

cxx=${FUZZ_CXX:-clang++-14}
if ! command -v "$cxx" >/dev/null; then
  result 1 "build/fuzzers" "$cxx not found (install clang-14)"
  echo "$passed passed, $failed failed"
  exit 1
fi
start=$SECONDS
make --no-print-directory -f fuzz/fuzz.mk -j"$(nproc)" FUZZ_CXX="$cxx" FUZZ_BUILD="$FUZZ_BUILD" >"$work/build.log" 2>&1
rc=$?
result "$rc" "build/fuzzers ($((SECONDS - start)) s)" "$(grep -m5 -E 'error' "$work/build.log")"
[ "$rc" -eq 0 ] || { echo "$passed passed, $failed failed"; exit 1; }

mkdir -p "$artifacts"
# One job per target, two targets at a time (the suites have 2 cores; each target is one process):
# the same time per target as one after another, in half the wall time. Leaks are checked
# (libFuzzer's -detect_leaks=1 under ASan); a committed seed that fails is a regression of a fixed bug.
run_target() {
  local t=$1
  mkdir -p "$work/corpus-$t"
  ASAN_OPTIONS="halt_on_error=1:detect_leaks=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    timeout $((seconds + 60)) "$FUZZ_BUILD/${t}_fuzz" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=5 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$t-" "$work/corpus-$t" "fuzz/corpus/$t" >"$work/$t.log" 2>&1
  echo $? >"$work/$t.rc"
}
jobs_at_once=${FUZZ_JOBS:-2}
running=0
for t in $targets; do
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs_at_once" ]; then wait -n; running=$((running - 1)); fi
done
wait
total=0
for t in $targets; do
  corpus="$work/corpus-$t"
  log="$work/$t.log"
  rc=$(cat "$work/$t.rc" 2>/dev/null || echo 1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
  total=$((total + ${runs:-0}))
  ok=1
  [ "$rc" -eq 0 ] && [ -n "$runs" ] && ! grep -qE "^==[0-9]+==ERROR|runtime error:|FUZZ_CHECK failed" "$log" && ok=0
  result "$ok" "$t (${runs:-0} executions in ${seconds} s, peak RSS ${rss:-?} MB, corpus $(ls "fuzz/corpus/$t" | wc -l) seeds -> $(ls "$corpus" | wc -l) inputs)" \
    "exit $rc: $(grep -m1 -A20 -E '^==[0-9]+==ERROR|runtime error:|FUZZ_CHECK failed' "$log" || tail -20 "$log"); $(grep -E '^Base64:|Test unit written' "$log")"
done
echo "fuzz executions in total: $total"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

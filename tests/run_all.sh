#!/usr/bin/env bash
# Runs every test suite of ncclshim and ends with one line 'N passed, N failed' (suites' test cases
# summed). Suites: the Catch2 unit tests (engine, transports, collectives), the shim's process
# tests (LD_PRELOAD), and those added by later components. Exit status 0 only if all pass.
# --fast (`make check`): the fast tier only: the unit tests without those tagged [full], and the
# suites whose header has no line '# tier: full' (tests/suites/README.md lists both tiers).
set -uo pipefail
cd "$(dirname "$0")/.."
fast=0
case "${1:-}" in
  --fast) fast=1 ;;
  "") ;;
  *) echo "usage: tests/run_all.sh [--fast]" >&2; exit 2 ;;
esac
BUILD=${BUILD:-build}
log_dir="$BUILD/test-logs"
mkdir -p "$log_dir"
passed=0
failed=0
failed_suites=()

# Adds a Catch2 binary's test-case counts to the totals.
count_catch2() {
  local log=$1 rc=$2 line
  line=$(grep -E "^All tests passed|^test cases:" "$log" | tail -1)
  if [[ $line =~ All\ tests\ passed.*in\ ([0-9]+)\ test\ case ]]; then
    passed=$((passed + BASH_REMATCH[1]))
  elif [[ $line =~ test\ cases:\ +([0-9]+)\ \|\ +([0-9]+)\ passed\ \|\ +([0-9]+)\ failed ]]; then
    passed=$((passed + BASH_REMATCH[2])); failed=$((failed + BASH_REMATCH[3]))
  elif [[ $line =~ test\ cases:\ +([0-9]+)\ \|\ +([0-9]+)\ failed ]]; then
    failed=$((failed + BASH_REMATCH[2]))
  elif [ "$rc" -ne 0 ]; then
    failed=$((failed + 1))
  fi
}

# Adds a script's closing 'N passed, N failed' line to the totals.
count_plain() {
  local log=$1 rc=$2 line
  line=$(grep -E "[0-9]+ passed, [0-9]+ failed" "$log" | tail -1)
  if [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
    [ "$rc" -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ] && failed=$((failed + 1))
  elif [ "$rc" -ne 0 ]; then
    failed=$((failed + 1))
  fi
}

run_suite() {
  local name=$1 kind=$2; shift 2
  local log="$log_dir/$name.log" start=$SECONDS rc
  echo "== $name: $*"
  "$@" >"$log" 2>&1
  rc=$?
  tail -n 3 "$log" | sed 's/^/   /'
  # What failed, in the CI log itself (the full log stays in $log_dir).
  [ "$rc" -eq 0 ] || grep -m 20 -E "^FAIL|FAILED|error:" "$log" | cut -c1-400 | sed 's/^/   ! /'
  echo "   ($((SECONDS - start)) s, exit $rc, full log $log)"
  "count_$kind" "$log" "$rc"
  [ "$rc" -eq 0 ] || failed_suites+=("$name")
}

if [ "$fast" -eq 1 ]; then
  # '~[.]' keeps the hidden by-hand benchmarks out: a spec of exclusions alone would select them.
  run_suite unit-tests catch2 "$BUILD/unit_tests" "~[.] ~[full]"
else
  run_suite unit-tests catch2 "$BUILD/unit_tests"
fi
run_suite shim-process-tests plain bash tests/shim/run_shim_tests.sh
for extra in tests/suites/*.sh; do
  [ -f "$extra" ] || continue
  if [ "$fast" -eq 1 ] && grep -qx "# tier: full" "$extra"; then
    echo "== $(basename "$extra" .sh): full tier only (make test)"
    continue
  fi
  run_suite "$(basename "$extra" .sh)" plain bash "$extra"
done

if [ ${#failed_suites[@]} -gt 0 ]; then
  echo "failing suites: ${failed_suites[*]} (logs in $log_dir)"
  for suite in "${failed_suites[@]}"; do
    # CI keeps only the end of its output: show each failure's own block here, then the tail.
    echo "---- failures in $suite"
    grep -B 12 -A 12 -E "FAILED|^FAIL" "$log_dir/$suite.log" | tail -n 80 | cut -c1-300
    echo "---- last lines of $suite"; tail -n 8 "$log_dir/$suite.log"
  done
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ ${#failed_suites[@]} -eq 0 ]

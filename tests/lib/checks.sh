# Sourced by the test scripts (from the repository root): the PASS/FAIL lines and their counters.
# A script ends with: echo "$passed passed, $failed failed" (the line tests/run_all.sh sums).
passed=0
failed=0
result() {  # result <ok:0|1> <name> [why]
  if [ "$1" -eq 0 ]; then echo "PASS $2"; passed=$((passed + 1)); else echo "FAIL $2: ${3:-}"; failed=$((failed + 1)); fi
}

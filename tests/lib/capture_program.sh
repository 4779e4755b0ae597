# Sourced by the suites that capture a real NCCL program (fault_tests.sh, shared_host_tests.sh):
# builds tests/faults/programs/capture_until_killed.cc (nccl.h only, linked against the aborting
# stub libnccl.so.2, to be run under LD_PRELOAD=libncclshim.so) into $program when missing or older
# than its source, and records the outcome as the check "build/capture-program".
build_capture_program() {
  mkdir -p "$(dirname "$program")"
  : >"$work/program-build.log"
  if [ ! -x "$program" ] || [ tests/faults/programs/capture_until_killed.cc -nt "$program" ]; then
    # shellcheck disable=SC2046
    g++ -std=c++20 -O2 -g -Wall -Wextra $(cat "$BUILD/nccl_cflags.txt") -o "$program" \
      tests/faults/programs/capture_until_killed.cc "$BUILD/tests/stub/libnccl.so.2" \
      -Wl,-rpath,"$(realpath "$BUILD/tests/stub")" 2>"$work/program-build.log"
  fi
  [ -x "$program" ]
  result $? "build/capture-program" "$(head -5 "$work/program-build.log")"
}

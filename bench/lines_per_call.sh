#!/usr/bin/env bash
# Cache lines a recorded ncclAllReduce touches, code and data, per call: bench/hotpath_bench (fake
# NCCL) under valgrind's lackey, every instruction fetch and data access of the run, split at each
# entry into the library's ncclAllReduce; bench/lines_per_call.py counts the distinct 64-byte lines
# of 100 steady calls (the median call) by mapping, and with DETAIL=1 lists them with the symbol
# each line holds and (data) the code that first read it. On a VM whose caches the job has cooled
# each such line is a miss (docs/profiler_plugin.md, "sixth pass": about 10 ns each on the H100
# machines), so this count is the recording path's cost model; it is exact and noise-free where
# the device's timings are not.
# Usage: bench/lines_per_call.sh LIBNCCLSHIM LABEL [VAR=value ...]
#   e.g. bench/lines_per_call.sh build/libncclshim.so fwd
#        bench/lines_per_call.sh build/libncclshim.so rec NCCLSHIM_TRACE_DIR=/tmp/lpc_trace
# valgrind's CPUID hides the invariant TSC, so under it the recorder stamps with clock_gettime:
# about 5 code and 3 data lines more than on the real machine, in every build alike.
set -euo pipefail
cd "$(dirname "$0")/.."
lib=$(realpath "$1")
label=$2
shift 2
command -v valgrind >/dev/null || { echo "lines_per_call: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
[ -x build/hotpath_bench ] || { echo "lines_per_call: build/hotpath_bench missing: make build/hotpath_bench" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
env "$@" LD_PRELOAD="$lib" NCCLSHIM_MODE=forward valgrind --tool=lackey --trace-mem=yes --log-file="$work/trace" \
  build/hotpath_bench 120 40 2000 > /dev/null 2>&1 &
runner=$!
# The mappings of the program under valgrind (the same addresses as the trace's), read while it runs.
for _ in $(seq 1 100); do
  sleep 0.2
  pid=$(pgrep -f "lackey.*$work/trace" | head -1 || true)
  [ -n "$pid" ] && grep -q libncclshim "/proc/$pid/maps" && { cp "/proc/$pid/maps" "$work/maps"; break; }
done
wait "$runner" || true
[ -s "$work/maps" ] || { echo "lines_per_call: could not read the program's mappings" >&2; exit 1; }
entry=$(nm -D "$lib" | awk '$3 == "ncclAllReduce" { print $1 }')
echo "# $label"
python3 bench/lines_per_call.py "$work/trace" "$work/maps" "$lib" "$entry"

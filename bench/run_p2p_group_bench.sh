#!/usr/bin/env bash
# What libncclshim.so adds to grouped point-to-point as nccl-tests `sendrecv_perf -g 2` issues it
# (one thread, two communicators, 14 API calls per iteration: bench/p2p_group_bench.cc), against the
# fake libnccl.so.2 of tests/shim/fake_nccl.c. Sides, interleaved round by round: direct (no shim),
# forward (LD_PRELOAD, NCCLSHIM_MODE=forward, recording off), hook (the record hook's path with an
# empty body, NCCLSHIM_HOOK_DEBUG=noop) and record (NCCLSHIM_TRACE_DIR). Prints per side the median
# over rounds of each run's median ns per iteration (the busy wait that stands for NCCL excluded),
# the spread (min..max over rounds), and the ns added per iteration and per API call.
# Usage: bench/run_p2p_group_bench.sh     Environment: P2P_ITERS [20] P2P_WINDOWS [2000]
#        P2P_WORK_NS [15000] P2P_GAP_US [200] P2P_REPEAT [5] P2P_CPU [1] ("" to not pin) BUILD [build]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
bench="$build/p2p_group_bench"
lib=$(realpath "$build/libncclshim.so")
iters=${P2P_ITERS:-20}
windows=${P2P_WINDOWS:-2000}
work=${P2P_WORK_NS:-15000}
gap=${P2P_GAP_US:-200}
repeat=${P2P_REPEAT:-5}
cpu=${P2P_CPU-1}
calls=14  # API calls per iteration (bench/p2p_group_bench.cc)
for f in "$bench" "$lib"; do
  [ -e "$f" ] || { echo "missing $f: run make first" >&2; exit 1; }
done
pin=()
if [ -n "$cpu" ] && command -v taskset >/dev/null && [ "$cpu" -lt "$(nproc)" ]; then pin=(taskset -c "$cpu"); fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# side <name> <env...>: one run, "<name> <median>" appended to $out/all.
side() {
  local name=$1
  shift
  if ! env "$@" "${pin[@]}" "$bench" "$iters" "$windows" "$work" "$gap" >"$out/run" 2>"$out/err"; then
    echo "p2p_group_bench failed ($name): $(cat "$out/err")" >&2
    exit 1
  fi
  sed -n 's/^p2p_iteration median_ns=\([0-9.]*\) .*/\1/p' "$out/run" | sed "s/^/$name /" >>"$out/all"
}

for ((i = 0; i < repeat; ++i)); do
  side direct
  side forward LD_PRELOAD="$lib" NCCLSHIM_MODE=forward NCCLSHIM_DEBUG=INFO
  grep -q "NCCLSHIM_MODE=forward: forwarding to the real NCCL" "$out/err" ||
    { echo "the shim did not forward: $(cat "$out/err")" >&2; exit 1; }
  side hook LD_PRELOAD="$lib" NCCLSHIM_MODE=forward NCCLSHIM_HOOK_DEBUG=noop
  rm -rf "$out/trace"
  side record LD_PRELOAD="$lib" NCCLSHIM_MODE=forward NCCLSHIM_TRACE_DIR="$out/trace"
done

echo "# grouped send/recv, nccl-tests sendrecv_perf -g 2 pattern ($calls API calls per iteration): ns per"
echo "# iteration, median of $repeat interleaved runs (each the median over $windows windows of $iters"
echo "# iterations, ${work} ns of busy wait per iteration excluded, ${gap} us between windows)"
echo "# $(uname -n), $(nproc) CPUs${pin[*]:+, pinned to CPU $cpu}"
awk -v calls="$calls" '
  { v[$1] = v[$1] " " $2 }
  function sorted(list, a,   k, i, j, t) {
    k = split(list, a, " ")
    for (i = 1; i <= k; ++i) for (j = i + 1; j <= k; ++j) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return k
  }
  function median(list,   a, k) { k = sorted(list, a); return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
  function spread(list,   a, k) { k = sorted(list, a); return sprintf("%.0f..%.0f", a[1], a[k]) }
  END {
    printf "%-8s %14s %14s %16s %14s\n", "side", "ns/iteration", "spread", "added/iteration", "added/call"
    d = median(v["direct"])
    n = split("direct forward hook record", names, " ")
    for (i = 1; i <= n; ++i) {
      s = names[i]; m = median(v[s])
      printf "%-8s %14.1f %14s %16.1f %14.1f\n", s, m, spread(v[s]), m - d, (m - d) / calls
    }
  }' "$out/all"

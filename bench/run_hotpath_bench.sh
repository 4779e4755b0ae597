#!/usr/bin/env bash
# What libncclshim.so adds to an NCCL call in forward mode: build/hotpath_bench (linked against the
# fake libnccl.so.2 of tests/shim/fake_nccl.c) run directly, through the shim (LD_PRELOAD,
# NCCLSHIM_MODE=forward, recording off), and through the shim with the record hook's path on and an
# empty body (NCCLSHIM_HOOK_DEBUG=noop: timestamps, comm lookup, sequence number). Each side runs
# HOTPATH_REPEAT times, interleaved; the table shows the median of the runs' medians (ns per call)
# and the ns added; the last columns record every call to a trace (NCCLSHIM_TRACE_DIR). Target:
# the shim, recording, adds <= 150 ns per call; outside a trace window (NCCLSHIM_TRACE_START that does
# not open) the recorder adds <= 200 ns per call to forwarding alone.
# Usage: bench/run_hotpath_bench.sh        Environment: HOTPATH_CALLS [1000000] HOTPATH_BATCH [1000]
#        HOTPATH_GAP_US [2000] HOTPATH_REPEAT [5] HOTPATH_CPU [1] (pinned with taskset when available; "" to not pin) BUILD [build]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
bench="$build/hotpath_bench"
lib=$(realpath "$build/libncclshim.so")
calls=${HOTPATH_CALLS:-1000000}
batch=${HOTPATH_BATCH:-1000}
gap=${HOTPATH_GAP_US:-2000}  # between batches: 1000 calls per 2 ms = 500k calls/s, above any training job
repeat=${HOTPATH_REPEAT:-5}
cpu=${HOTPATH_CPU-1}
target=150
window_target=200
for f in "$bench" "$lib"; do
  [ -e "$f" ] || { echo "missing $f: run make first" >&2; exit 1; }
done
pin=()
if [ -n "$cpu" ] && command -v taskset >/dev/null && [ "$cpu" -lt "$(nproc)" ]; then pin=(taskset -c "$cpu"); fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# side <name> <env...>: one run, "<name> <case> <median>" lines appended to $out/all.
side() {
  local name=$1
  shift
  if ! env "$@" "${pin[@]}" "$bench" "$calls" "$batch" "$gap" >"$out/run" 2>"$out/err"; then
    echo "hotpath_bench failed ($name): $(cat "$out/err")" >&2
    exit 1
  fi
  sed -n 's/^\([^ ]*\) median_ns=\([0-9.]*\) .*/\1 \2/p' "$out/run" | sed "s/^/$name /" >>"$out/all"
}

for ((i = 0; i < repeat; ++i)); do
  side direct
  side forward LD_PRELOAD="$lib" NCCLSHIM_MODE=forward NCCLSHIM_DEBUG=INFO
  grep -q "NCCLSHIM_MODE=forward: forwarding to the real NCCL" "$out/err" ||
    { echo "the shim did not forward: $(cat "$out/err")" >&2; exit 1; }
  side hook LD_PRELOAD="$lib" NCCLSHIM_MODE=forward NCCLSHIM_HOOK_DEBUG=noop
  rm -rf "$out/trace"
  side record LD_PRELOAD="$lib" NCCLSHIM_MODE=forward NCCLSHIM_TRACE_DIR="$out/trace"
  # Outside a trace window (docs/capture.md): every call counted, the iterations followed, nothing recorded.
  rm -rf "$out/window"
  side window LD_PRELOAD="$lib" NCCLSHIM_MODE=forward NCCLSHIM_TRACE_DIR="$out/window" NCCLSHIM_TRACE_START=iter:1000000000
done

echo "# hot path, ns per call (median of $repeat runs; each the median over batches of $batch of $calls calls,"
echo "# ${gap} us between batches)"
echo "# $(uname -n), $(nproc) CPUs${pin[*]:+, pinned to CPU $cpu}"
awk -v target="$target" -v windowTarget="$window_target" '
  { v[$1, $2] = v[$1, $2] " " $3; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
  function median(list,   a, k, i, j, t) {
    k = split(list, a, " ")
    for (i = 1; i <= k; ++i) for (j = i + 1; j <= k; ++j) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  END {
    printf "%-24s %10s %10s %10s %14s %10s %16s %10s %16s %14s\n", "call", "direct", "forward", "added", "forward+hook",
           "added", "forward+record", "added", "outside window", "vs forward"
    worst = 0; worstWindow = 0
    for (i = 1; i <= n; ++i) {
      c = order[i]; d = median(v["direct", c]); f = median(v["forward", c]); h = median(v["hook", c])
      r = median(v["record", c]); w = median(v["window", c])
      printf "%-24s %10.1f %10.1f %10.1f %14.1f %10.1f %16.1f %10.1f %16.1f %14.1f\n", c, d, f, f - d, h, h - d, r, r - d,
             w, w - f
      if (r - d > worst) worst = r - d
      if (w - f > worstWindow) worstWindow = w - f
    }
    printf "target: the shim recording every call adds <= %d ns per call: %s (worst %.1f ns)\n", target,
           worst <= target ? "met" : "MISSED", worst
    printf "target: outside a trace window the recorder adds <= %d ns per call to forwarding alone: %s (worst %.1f ns)\n",
           windowTarget, worstWindow <= windowTarget ? "met" : "MISSED", worstWindow
    exit worst <= target && worstWindow <= windowTarget ? 0 : 1
  }' "$out/all"

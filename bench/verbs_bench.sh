#!/usr/bin/env bash
# Throughput of the ibverbs transport against perftest's ib_write_bw on the same RDMA device, in one
# soft-RoCE VM run (scripts/soft_roce_vm.sh) unless an RDMA device is already there (--inside).
# Measures: ib_write_bw -d <dev> -x <gid> writing BENCH_BYTES as BENCH_MSG writes; ncclshim's
# point-to-point stream of BENCH_BYTES as BENCH_MSG messages between two processes, one way and then
# both ways at once; two-rank allreduces of BENCH_ALLREDUCE bytes of int32 and of float32 (busbw).
# Each ncclshim row runs from plain memory (staged through the transport's registered rings) and
# from buffers registered with the transport ("zero copy": Transport::registerMemory, like
# ncclCommRegister; ib_write_bw's own buffers are registered too).
# The defaults give every row ib_write_bw's shape: 48 MiB per direction (a two-rank allreduce of
# S bytes sends S/2 reduce-scatter + S/2 all-gather each way). Prints a table and the
# ratios to ib_write_bw (target >= 0.9). Under QEMU TCG rxe moves ~0.3 Gb/s, so the defaults are
# small; and a float32 sum runs in software there (about 5 ms per MiB, 8x int32), taking CPU from
# soft-RoCE, so the int32 allreduce is the one that measures the transport.
#
# Usage: bench/verbs_bench.sh [--inside]
# Environment: BENCH_DEVICE [rxe0] BENCH_GID [1] BENCH_MSG [1M] BENCH_BYTES [48M]
#   BENCH_ALLREDUCE [48M] BENCH_ITERS [3] BENCH_ROUNDS [5]; NCCLSHIM_IB_* apply to ncclshim.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}

if [ "${1:-}" != "--inside" ]; then
  [ -x "$BUILD/unit_tests" ] || { echo "build first: make all" >&2; exit 2; }
  exec bash scripts/soft_roce_vm.sh bash bench/verbs_bench.sh --inside
fi

DEVICE=${BENCH_DEVICE:-rxe0}
GID=${BENCH_GID:-1}
MSG=${BENCH_MSG:-1M}
BYTES=${BENCH_BYTES:-48M}
ALLREDUCE=${BENCH_ALLREDUCE:-48M}
ITERS=${BENCH_ITERS:-3}
ROUNDS=${BENCH_ROUNDS:-5}
to_bytes() {  # 1M -> 1048576
  local v=$1
  case "$v" in
    *K) echo $(( ${v%K} << 10 )) ;; *M) echo $(( ${v%M} << 20 )) ;; *G) echo $(( ${v%G} << 30 )) ;; *) echo "$v" ;;
  esac
}
msg_bytes=$(to_bytes "$MSG")
out=$(mktemp -d)

# One round: ib_write_bw (two processes, same device, the same bytes as BENCH_MSG writes), then
# ncclshim (stream + allreduce). Rounds interleave; the table shows the median of each (soft-RoCE
# under emulation swings by tens of percent from run to run, ib_write_bw -b most) and the best.
perftest_round() {  # [-b]: both directions at once (perftest reports the sum)
  local iters=$(( $(to_bytes "$BYTES") / msg_bytes ))
  [ "$iters" -ge 5 ] || iters=5
  port=$((port + 1))  # a fresh port each run: a stuck server must not break the next one
  timeout 120 ib_write_bw -d "$DEVICE" -x "$GID" -s "$msg_bytes" -n "$iters" -p "$port" --report_gbits "$@" \
    >"$out/server.txt" 2>&1 &
  local server=$!
  sleep 1.5
  timeout 120 ib_write_bw -d "$DEVICE" -x "$GID" -s "$msg_bytes" -n "$iters" -p "$port" --report_gbits "$@" \
    127.0.0.1 >"$out/client.txt" 2>&1
  wait "$server"
  local bw
  bw=$(awk -v s="$msg_bytes" '$1 == s && NF >= 4 { print $4 }' "$out/client.txt" | tail -1)
  if [ -z "$bw" ]; then
    echo "ib_write_bw produced no result:" >&2; cat "$out/client.txt" "$out/server.txt" >&2
  fi
  echo "${bw:-0}"
}
shim_round() {
  NCCLSHIM_BENCH_BYTES=$BYTES NCCLSHIM_BENCH_MSG=$MSG NCCLSHIM_BENCH_ALLREDUCE=$ALLREDUCE NCCLSHIM_BENCH_ITERS=$ITERS \
    "$BUILD/unit_tests" "[verbsbench]" >"$out/shim.txt" 2>&1
  local rc=$?
  if [ "$rc" -ne 0 ] || ! grep -q "verbs-bench p2p" "$out/shim.txt"; then
    echo "the ncclshim benchmark failed (exit $rc):" >&2; cat "$out/shim.txt" >&2
    return 1
  fi
  grep -h "verbs-bench" "$out/shim.txt" | tee -a "$out/all.txt" >&2
}
# Failed runs (0, e.g. an ib_write_bw that timed out) are left out.
best() { awk '$1 > 0' | sort -g | tail -1; }
median() { awk '$1 > 0' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2];
                                              else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# field FILE MEASUREMENT NAME: the NAME= values of FILE's "verbs-bench MEASUREMENT" lines.
field() { sed -n "s/.*verbs-bench $2 .*$3=\\([0-9.]*\\).*/\\1/p" "$1" 2>/dev/null; }
# round_ratio MEASUREMENT NAME REFERENCE [DIVISOR]: this round's ncclshim figure / (REFERENCE / DIVISOR).
round_ratio() {
  field "$out/shim.txt" "$1" "$2" | tail -1 | awk -v r="$3" -v d="${4:-1}" '{ if (r > 0) printf "%.4f\n", $1 / (r / d) }'
}
port=18600
shim_rc=0
for round in $(seq 1 "$ROUNDS"); do
  bw=$(perftest_round)
  bidi=$(perftest_round -b)
  echo "round $round: ib_write_bw ${bw} Gb/s, ib_write_bw -b ${bidi} Gb/s (both directions)" >&2
  echo "$bw" >>"$out/perftest.txt"
  awk -v b="$bidi" 'BEGIN { printf "%.4f\n", b / 2 }' >>"$out/perftest_bidi.txt"
  shim_round || shim_rc=1
  # This round's ratios, each against the reference measured just before it: the reference itself
  # drifts by tens of percent over a run, so these are steadier than a ratio of two medians.
  round_ratio p2p gbps "$bw" >>"$out/ratio_p2p.txt"
  round_ratio bidir gbps "$bidi" 2 >>"$out/ratio_bidir.txt"
  round_ratio "allreduce type=int32" busbw_gbps "$bidi" 2 >>"$out/ratio_int32.txt"
  round_ratio "allreduce type=float32" busbw_gbps "$bidi" 2 >>"$out/ratio_float32.txt"
  round_ratio p2p-zero-copy gbps "$bw" >>"$out/ratio_p2p_zc.txt"
  round_ratio bidir-zero-copy gbps "$bidi" 2 >>"$out/ratio_bidir_zc.txt"
  round_ratio "allreduce-zero-copy type=int32" busbw_gbps "$bidi" 2 >>"$out/ratio_int32_zc.txt"
  round_ratio "allreduce-zero-copy type=float32" busbw_gbps "$bidi" 2 >>"$out/ratio_float32_zc.txt"
done
values() { field "$out/all.txt" "$1" "$2"; }
perftest=$(median <"$out/perftest.txt")
perftest_bidi=$(median <"$out/perftest_bidi.txt")
p2p=$(values p2p gbps | median)
bidir=$(values bidir gbps | median)
busbw=$(values "allreduce type=int32" busbw_gbps | median)
busbw_float=$(values "allreduce type=float32" busbw_gbps | median)
p2p_zc=$(values p2p-zero-copy gbps | median)
bidir_zc=$(values bidir-zero-copy gbps | median)
busbw_zc=$(values "allreduce-zero-copy type=int32" busbw_gbps | median)
busbw_float_zc=$(values "allreduce-zero-copy type=float32" busbw_gbps | median)
bests="best: ib_write_bw $(best <"$out/perftest.txt"), -b $(best <"$out/perftest_bidi.txt"), send/recv $(values p2p gbps | best), both ways $(values bidir gbps | best), allreduce int32 $(values "allreduce type=int32" busbw_gbps | best), float32 $(values "allreduce type=float32" busbw_gbps | best); zero copy: send/recv $(values p2p-zero-copy gbps | best), both ways $(values bidir-zero-copy gbps | best), allreduce int32 $(values "allreduce-zero-copy type=int32" busbw_gbps | best), float32 $(values "allreduce-zero-copy type=float32" busbw_gbps | best)"
ratio() { awk -v a="${1:-0}" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo
echo "## ibverbs transport vs ib_write_bw on $DEVICE (GID index $GID), $(uname -r), $(nproc) CPUs"
row() { printf "| %-50s | %8s | %13s | %15s | %11s |\n" "$@"; }
per_round() {
  cat "$out/ratio_$1.txt" 2>/dev/null | median | awk 'NF { printf "%.2f", $1; ok = 1 } END { if (!ok) printf "n/a" }'
}
row "measurement (median Gb/s per direction)" "Gb/s" "vs same-shape" "per-round ratio" "vs one-way"
row "--------------------------------------------------" "--------" "-------------" "---------------" "-----------"
row "ib_write_bw -d $DEVICE -x $GID, $MSG writes, one way" "$perftest" "1.00" "1.00" "1.00"
row "ib_write_bw -b, both ways at once" "$perftest_bidi" "1.00" "1.00" "$(ratio "$perftest_bidi" "$perftest")"
row "ncclshim send/recv, $MSG messages, one way" "${p2p:-fail}" "$(ratio "$p2p" "$perftest")" "$(per_round p2p)" \
  "$(ratio "$p2p" "$perftest")"
row "ncclshim send/recv, both ways at once" "${bidir:-fail}" "$(ratio "$bidir" "$perftest_bidi")" "$(per_round bidir)" \
  "$(ratio "$bidir" "$perftest")"
row "ncclshim allreduce busbw, 2 ranks, $ALLREDUCE int32" "${busbw:-fail}" "$(ratio "$busbw" "$perftest_bidi")" \
  "$(per_round int32)" "$(ratio "$busbw" "$perftest")"
row "ncclshim allreduce busbw, 2 ranks, $ALLREDUCE float32" "${busbw_float:-fail}" \
  "$(ratio "$busbw_float" "$perftest_bidi")" "$(per_round float32)" "$(ratio "$busbw_float" "$perftest")"
row "zero copy: send/recv, one way" "${p2p_zc:-fail}" "$(ratio "$p2p_zc" "$perftest")" "$(per_round p2p_zc)" \
  "$(ratio "$p2p_zc" "$perftest")"
row "zero copy: send/recv, both ways at once" "${bidir_zc:-fail}" "$(ratio "$bidir_zc" "$perftest_bidi")" \
  "$(per_round bidir_zc)" "$(ratio "$bidir_zc" "$perftest")"
row "zero copy: allreduce busbw, 2 ranks, $ALLREDUCE int32" "${busbw_zc:-fail}" \
  "$(ratio "$busbw_zc" "$perftest_bidi")" "$(per_round int32_zc)" "$(ratio "$busbw_zc" "$perftest")"
row "zero copy: allreduce busbw, 2 ranks, $ALLREDUCE float32" "${busbw_float_zc:-fail}" \
  "$(ratio "$busbw_float_zc" "$perftest_bidi")" "$(per_round float32_zc)" "$(ratio "$busbw_float_zc" "$perftest")"
echo "A two-rank allreduce sends both ways at once: its same-shape reference is ib_write_bw -b (one soft-RoCE"
echo "device on shared CPUs, so both directions together move about what one direction does alone)."
echo "float32 sums run in software under QEMU TCG (about 5 ms per MiB, against 0.6 ms for int32) and take"
echo "that CPU from soft-RoCE: int32 measures the transport, float32 adds the emulator's extra cost."
echo "zero copy: the same with buffers registered with the transport (Transport::registerMemory, as"
echo "ncclCommRegister): messages from NCCLSHIM_IB_ZERO_COPY_MIN go straight into the receiver's buffer."
echo "Medians of $ROUNDS interleaved rounds ($bests); target ratio >= 0.9."
echo "per-round ratio: the median over rounds of ncclshim's figure / the same-shape ib_write_bw run just"
echo "before it in the same round."
rm -rf "$out"
[ "$shim_rc" -eq 0 ]

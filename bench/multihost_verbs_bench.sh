#!/usr/bin/env bash
# Throughput of the ibverbs transport between two hosts against perftest's ib_write_bw between the
# same two hosts, in one boot of the two-VM RoCEv2 bed (tests/multihost/vm_pair.sh: one rail, rxe0
# on each VM's own virtio NIC). Rounds interleave, each measuring in turn:
#   ib_write_bw -d rxe0 -x 1, BENCH_MSG writes of BENCH_BYTES, one way (server on VM B over ssh);
#   ib_write_bw -b, both ways at once (perftest reports the sum: halved per direction);
#   ncclshim perf sendrecv of BENCH_BYTES, 1 rank per VM (mpirun over ssh, GPU-free shim over ibverbs;
#     as in nccl-tests each rank sends to the next and receives from the previous: both ways at once);
#   ncclshim perf all_reduce of BENCH_ALLREDUCE int32, same ranks (busbw: per-direction bytes).
# Prints each round, then a table of medians and the ratios against ib_write_bw -b per direction
# (the same shape: send/recv between 2 ranks goes both ways at once, and an allreduce between 2 ranks
# sends half the buffer each way twice); ib_write_bw one way is shown beside. Target >= 0.9. QEMU
# TCG moves ~0.2 Gb/s through rxe. The rails are a lossless stream link and not captured.
#
# Usage: bench/multihost_verbs_bench.sh [--inside]
# Environment: BENCH_MSG [1M] BENCH_BYTES [32M] BENCH_ALLREDUCE [32M] BENCH_ITERS [3] BENCH_ROUNDS [3]
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}
if [ "${1:-}" != "--inside" ]; then
  [ -x "$BUILD/ncclshim" ] || { echo "build first: make all" >&2; exit 2; }
  export VM_PAIR_DIR=${VM_PAIR_DIR:-$ROOT/$BUILD/vm-pair-bench}
  export VM_PAIR_LINK=${VM_PAIR_LINK:-stream}  # a lossless link: the UDP one drops frames under load
  export VM_PAIR_CAPTURE=${VM_PAIR_CAPTURE:-0}   # gigabytes of pcap otherwise
  exec bash tests/multihost/vm_pair.sh --rails 1 -- bash bench/multihost_verbs_bench.sh --inside
fi

MSG=${BENCH_MSG:-1M}
BYTES=${BENCH_BYTES:-32M}
ALLREDUCE=${BENCH_ALLREDUCE:-32M}
ITERS=${BENCH_ITERS:-3}
ROUNDS=${BENCH_ROUNDS:-3}
dir=${VM_PAIR_DIR:?}
ssh_agent=${VM_PAIR_SSH:?}
to_bytes() { numfmt --from=iec "$1"; }
msg_bytes=$(to_bytes "$MSG")
out="$dir/bench"  # on the shared folder: readable from the host afterwards
mkdir -p "$out"
port=18700

perftest() {  # perftest [-b] -> Gb/s (the sum of both directions with -b)
  local iters=$(( $(to_bytes "$BYTES") / msg_bytes ))
  port=$((port + 1))
  $ssh_agent 10.88.0.2 "timeout 120 ib_write_bw -d rxe0 -x 1 -s $msg_bytes -n $iters -p $port --report_gbits $*" \
    >"$out/server.txt" 2>&1 &
  local server=$! try
  # The server starts over ssh on a slow VM: retry the client until it connects (or 60 s pass).
  for try in $(seq 1 30); do
    sleep 2
    timeout 120 ib_write_bw -d rxe0 -x 1 -s "$msg_bytes" -n "$iters" -p "$port" --report_gbits "$@" 10.88.0.2 \
      >"$out/client.txt" 2>&1 && break
    grep -q "Couldn't connect" "$out/client.txt" || break
  done
  wait "$server"
  local bw
  bw=$(awk -v s="$msg_bytes" '$1 == s && NF >= 4 { print $4 }' "$out/client.txt" | tail -1)
  [ -n "$bw" ] || { echo "ib_write_bw gave no result:" >&2; tail -n 5 "$out/client.txt" "$out/server.txt" >&2; }
  echo "$bw"
}

shim() {  # shim <op> <bytes> [perf args] -> busbw Gb/s from the out-of-place time
  local op=$1 bytes=$2; shift 2
  rm -f "$dir/perf.id"
  timeout 300 mpirun --allow-run-as-root --host 10.88.0.1:1,10.88.0.2:1 -np 2 --mca plm_rsh_agent "$ssh_agent" \
    --mca oob_tcp_if_include 10.88.0.0/24 --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include 10.88.0.0/24 \
    -x NCCLSHIM_TRANSPORT=ibverbs -x NCCLSHIM_IB_HCA=rxe0 -x NCCLSHIM_SOCKET_IFNAME=r0 -x NCCLSHIM_TIMEOUT=120 \
    "$PWD/$BUILD/ncclshim" perf "$op" -b "$bytes" -e "$bytes" -n "$ITERS" -w 1 --id-file "$dir/perf.id" "$@" \
    >"$out/perf.txt" 2>&1
  # nccl-tests columns: size count type redop root | time(us) algbw busbw #wrong (out of place) | ...
  # Between 2 ranks busbw = algbw for both ops: Gb/s from the time column (the GB/s columns have 2 decimals).
  awk -v s="$(to_bytes "$bytes")" '$1 == s && NF >= 9 && $6 > 0 { printf "%.4f\n", s * 8 / ($6 * 1000) }' "$out/perf.txt" | head -1
  grep -q "#wrong\|Avg bus" "$out/perf.txt" || cat "$out/perf.txt" >&2
}

median() { awk '$1 > 0' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2];
                                              else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
for round in $(seq 1 "$ROUNDS"); do
  one=$(perftest)
  both=$(perftest -b)
  both_per_dir=$(awk -v b="${both:-0}" 'BEGIN { printf "%.4f", b / 2 }')
  p2p=$(shim sendrecv "$BYTES")
  ar=$(shim all_reduce "$ALLREDUCE" -d int32)
  echo "round $round: ib_write_bw ${one:-fail} Gb/s, -b ${both:-fail} (${both_per_dir} per direction);" \
       "ncclshim sendrecv ${p2p:-fail} Gb/s ($(ratio "$p2p" "$both_per_dir")), allreduce busbw ${ar:-fail} Gb/s" \
       "($(ratio "$ar" "$both_per_dir"))"
  echo "$one" >>"$out/one"; echo "$both_per_dir" >>"$out/both"; echo "$p2p" >>"$out/p2p"; echo "$ar" >>"$out/ar"
  echo "$(ratio "$p2p" "$both_per_dir")" >>"$out/ratio_p2p"; echo "$(ratio "$ar" "$both_per_dir")" >>"$out/ratio_ar"
done
m_one=$(median <"$out/one"); m_both=$(median <"$out/both"); m_p2p=$(median <"$out/p2p"); m_ar=$(median <"$out/ar")
echo
echo "## ibverbs between two VMs (rxe0 on each VM's NIC, path MTU 4096), $ROUNDS rounds, medians"
printf "| %-58s | %9s | %-23s |\n" "measurement" "Gb/s" "ratio (per-round median)" \
  "----------------------------------------------------------" "---------" "-----------------------"
printf "| %-58s | %9s | %-23s |\n" "ib_write_bw -s $MSG, $BYTES one way" "$m_one" "1.00" \
  "ib_write_bw -b, per direction" "$m_both" "1.00" \
  "ncclshim perf sendrecv $BYTES (vs -b per direction)" "${m_p2p:-fail}" \
  "$(ratio "$m_p2p" "$m_both") ($(median <"$out/ratio_p2p"))" \
  "ncclshim perf all_reduce $ALLREDUCE int32 busbw (vs -b per direction)" "${m_ar:-fail}" \
  "$(ratio "$m_ar" "$m_both") ($(median <"$out/ratio_ar"))"

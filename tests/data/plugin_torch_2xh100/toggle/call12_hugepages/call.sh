#!/usr/bin/env bash
# Sixth pass, call 1: rings on 2 MB pages vs 4 KB pages, same build (NCCLSHIM_TRACE_HUGEPAGES).
cd "$(dirname "$0")"
{ lscpu | grep -E "Model name|^CPU\(s\)|L1d|L2|L3"; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag
  uname -r; perf stat -e dTLB-load-misses true 2>&1 | tail -4; } > "$OUT/probe.txt" 2>&1
export LD_LIBRARY_PATH=$PWD/fake
for r in 1 2 3; do
  for side in fwd hp k4; do
    for mode in warm cache tlb; do
      ev=(); calls=(200000 1000 500)
      [ $mode = cache ] && ev=(HOTPATH_EVICT=4096) && calls=(3000)
      [ $mode = tlb ] && ev=(HOTPATH_EVICT=65536 HOTPATH_EVICT_STRIDE=4096) && calls=(2000)
      st=(); [ $side != fwd ] && st=(NCCLSHIM_TRACE_DIR=/tmp/hpt NCCLSHIM_TRACE_HUGEPAGES=$([ $side = hp ] && echo 1 || echo 0))
      rm -rf /tmp/hpt
      echo "$r $side $mode $(env "${ev[@]}" "${st[@]}" LD_PRELOAD=$PWD/new.so NCCLSHIM_MODE=forward taskset -c 5 ./hotpath_bench "${calls[@]}" 2>&1 | tr '\n' ' ')" >> "$OUT/hotpath.txt"
    done
  done
done
( sleep 25; for p in $(pgrep -f torch_busbw.py); do echo "$p $(grep AnonHugePages /proc/$p/smaps_rollup)"; done >> "$OUT/thp_check.txt" ) &
SHIM_NEW=$PWD/new.so SHIM_NEW4K=$PWD/new.so ENV_NEW4K="NCCLSHIM_TRACE_HUGEPAGES=0" TRACE_TOOL=$PWD/ncclshim-trace \
  VARIANTS="allNEW allNEW4K" ROUNDS=3 SELF_BUILDS="hp=$PWD/self_new.so k4=$PWD/self_new.so" \
  SELFENV_k4="NCCLSHIM_TRACE_HUGEPAGES=0" SELF_RUNS=all SELF_ROUNDS=2 bash plugin_toggle.sh

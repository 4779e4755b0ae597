#!/usr/bin/env bash
# Seventh pass, call 2: the final build (NEW: shared recorded-operation body, tasks reset in place)
# against the sixth pass (OLD, f0c3dc3): fake-NCCL bench, the toggle with recording + plugin and
# recording alone, and the self-timed spans of both (self_old: the sixth pass build of call 13).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/fake
for r in 1 2 3; do
  for side in fwd old new; do
    for mode in warm cache; do
      ev=(); calls=(200000 1000 500)
      [ $mode = cache ] && ev=(HOTPATH_EVICT=4096) && calls=(3000)
      so=$PWD/new.so; st=()
      [ $side = old ] && so=$PWD/old.so
      [ $side != fwd ] && st=(NCCLSHIM_TRACE_DIR=/tmp/hpt)
      rm -rf /tmp/hpt
      echo "$r $side $mode $(env "${ev[@]}" "${st[@]}" LD_PRELOAD=$so NCCLSHIM_MODE=forward taskset -c 5 ./hotpath_bench "${calls[@]}" 2>&1 | tr '\n' ' ')" >> "$OUT/hotpath.txt"
    done
  done
done
SHIM_NEW=$PWD/new.so SHIM_OLD=$PWD/old.so TRACE_TOOL=$PWD/ncclshim-trace \
  VARIANTS="allOLD allNEW recOLD recNEW" ROUNDS=3 SELF_BUILDS="new=$PWD/self_new.so old=$PWD/self_old.so" SELF_RUNS=all SELF_ROUNDS=2 bash plugin_toggle.sh

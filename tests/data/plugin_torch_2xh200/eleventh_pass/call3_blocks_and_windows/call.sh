#!/usr/bin/env bash
# Eleventh pass, call 3 (call 2 ran out of time with 6 rounds: window runs take ~44 s against ~30):
# what the blocks leave out. One build (new.so), the six ops, recording + events on / off three
# ways, 3 launches each, rotated: switched every 20 calls (allNEW), every 100 calls (allNEWB100),
# window by window (allNEWW: 400-call windows, which include the trace writer's share and any effect
# lasting past a switch). Then the join check of a short traced run. Tables made on the build host.
cd "$(dirname "$0")"
BUSBW_BLOCK=20 BUSBW_OPS=all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv SHIM_NEW=$PWD/new.so \
  SHIM_NEWB100=$PWD/new.so ENV_NEWB100="BUSBW_BLOCK=100" SHIM_NEWW=$PWD/new.so ENV_NEWW="BUSBW_BLOCK=0" \
  TRACE_TOOL=$PWD/ncclshim-trace VARIANTS="allNEW allNEWB100 allNEWW" ROUNDS=3 timeout 440 bash plugin_toggle.sh
rc=$?
# whatever the runs left, in one file (the device returns few files)
if ls "$OUT"/toggle_*.jsonl > /dev/null 2>&1; then
  tar -C "$OUT" -czf "$OUT/toggle_runs_partial.tar.gz" $(cd "$OUT" && ls toggle_*.jsonl) && rm -f "$OUT"/toggle_*.jsonl
fi
exit $rc

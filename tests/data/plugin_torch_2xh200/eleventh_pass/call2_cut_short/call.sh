#!/usr/bin/env bash
# Eleventh pass, call 2: what the blocks leave out. One build (new.so), the six ops, recording +
# events on / off, three ways in one call, 6 launches each, rotated: switched every 20 calls
# (allNEW, the tenth pass's blocks), every 100 calls (allNEWB100), and window by window (allNEWW:
# 400-call windows, the ninth pass's method, which includes the trace writer's share and any effect
# lasting past a switch). Tables made on the build host from the returned runs.
cd "$(dirname "$0")"
BUSBW_BLOCK=20 BUSBW_OPS=all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv SHIM_NEW=$PWD/new.so \
  SHIM_NEWB100=$PWD/new.so ENV_NEWB100="BUSBW_BLOCK=100" SHIM_NEWW=$PWD/new.so ENV_NEWW="BUSBW_BLOCK=0" \
  TRACE_TOOL=$PWD/ncclshim-trace VARIANTS="allNEW allNEWB100 allNEWW" ROUNDS=6 bash plugin_toggle.sh

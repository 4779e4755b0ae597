#!/usr/bin/env bash
# Eleventh pass, call 1: the six ops, recording + events switched every 20 calls (BUSBW_BLOCK=20),
# two builds in one call, 8 launches each, rotated: OLD = the ninth/tenth pass's library (final.so),
# NEW = the same with no recorder-wide order counter (the locked add at every push gone: the writer
# merges the threads' rings by a per-push time key and numbers the lines itself).
cd "$(dirname "$0")"
BUSBW_BLOCK=20 BUSBW_OPS=all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv SHIM_NEW=$PWD/new.so \
  SHIM_OLD=$PWD/old.so TRACE_TOOL=$PWD/ncclshim-trace \
  VARIANTS="allOLD allNEW" ROUNDS=8 bash plugin_toggle.sh

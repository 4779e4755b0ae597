#!/usr/bin/env bash
# Eighth pass, call 5: the final build (FIN: + ApiCall holding OpArgs / OpFacts, hot functions aligned
# to a line) against OLD = 843b642, recording + plugin over forwarding, the five collectives and
# PyTorch's grouped sendrecv, 4 rounds (positions balanced); the join check runs FIN.
cd "$(dirname "$0")"
BUSBW_OPS=all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv SHIM_NEW=$PWD/final.so SHIM_FIN=$PWD/final.so \
  SHIM_OLD=$PWD/old.so TRACE_TOOL=$PWD/ncclshim-trace VARIANTS="allOLD allFIN" ROUNDS=4 bash plugin_toggle.sh

#!/usr/bin/env bash
# Ninth pass, call 4: the library this pass leaves (final.so), recording + plugin over forwarding, the
# five collectives and PyTorch's grouped send / receive, 9 launches: the per-run spread of one build.
cd "$(dirname "$0")"
BUSBW_OPS=all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv SHIM_NEW=$PWD/final.so \
  TRACE_TOOL=$PWD/ncclshim-trace VARIANTS="allNEW" ROUNDS=9 bash plugin_toggle.sh

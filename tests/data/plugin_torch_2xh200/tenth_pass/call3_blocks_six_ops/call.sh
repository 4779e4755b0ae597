#!/usr/bin/env bash
# Tenth pass, call 3: the six ops with the recording + events switched every 20 calls inside each
# window, every call timed on its own (torch_busbw.py BUSBW_BLOCK), one build (final.so), 7 launches
# each of allNEW (recording + plugin over forwarding: the target's measure) and allFLOOR (the same
# with NCCLSHIM_PROFILER_NOOP=1: recording and NCCL's raising, callbacks returning at once), rotated.
cd "$(dirname "$0")"
BUSBW_BLOCK=20 BUSBW_OPS=all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv SHIM_NEW=$PWD/final.so \
  SHIM_FLOOR=$PWD/final.so ENV_FLOOR="NCCLSHIM_PROFILER_NOOP=1" TRACE_TOOL=$PWD/ncclshim-trace \
  VARIANTS="allNEW allFLOOR" ROUNDS=7 bash plugin_toggle.sh

#!/usr/bin/env bash
# Tenth pass, call 4: the floor taken apart, switched every 20 calls (BUSBW_BLOCK), one build
# (final.so), 3 launches each, rotated, all_reduce / alltoall / sendrecv:
#   recNEW   recording on / off, the plugin's events off in both halves: the recording alone
#   noopNEW  the events on / off with NCCLSHIM_PROFILER_NOOP=1 (callbacks return at once), recording
#            on in both halves: NCCL's own raising of the events
cd "$(dirname "$0")"
BUSBW_BLOCK=20 BUSBW_OPS=all_reduce,alltoall,sendrecv SHIM_NEW=$PWD/final.so TRACE_TOOL=$PWD/ncclshim-trace \
  VARIANTS="recNEW noopNEW" ROUNDS=3 bash plugin_toggle.sh

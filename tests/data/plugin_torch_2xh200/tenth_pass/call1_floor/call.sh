#!/usr/bin/env bash
# Tenth pass, call 1: the floor of any recording plugin. Three variants of one build (final.so, the
# library the ninth pass left), rotated, 6 rounds, all_reduce / alltoall / sendrecv:
#   allNEW    recording + events on / off (the target's measure: recording + plugin over forwarding)
#   allFLOOR  the same with NCCLSHIM_PROFILER_NOOP=1: recording, and NCCL raising the same events into
#             callbacks that return at once -- what recording + a plugin that does nothing would cost
#   recNEW    recording on / off, events off throughout
cd "$(dirname "$0")"
BUSBW_OPS=all_reduce,alltoall,sendrecv SHIM_NEW=$PWD/final.so SHIM_FLOOR=$PWD/final.so \
  ENV_FLOOR="NCCLSHIM_PROFILER_NOOP=1" TRACE_TOOL=$PWD/ncclshim-trace VARIANTS="allNEW allFLOOR recNEW" ROUNDS=6 \
  bash plugin_toggle.sh

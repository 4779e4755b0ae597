#!/usr/bin/env bash
# Tenth pass, call 2: does the trace writer's rhythm set the recording's cost? One build (final.so),
# recording + events on / off (all), three ring settings, rotated, 5 rounds, all_reduce and alltoall:
#   allNEW    the defaults: 4,096 slots per thread (622 KB), drained every 10 ms
#   allR1K    NCCLSHIM_TRACE_RING=1024 (156 KB, drained when nearly full or every 10 ms)
#   allQUIET  NCCLSHIM_TRACE_RING=262144 NCCLSHIM_TRACE_FLUSH_MS=1000 (the writer mostly asleep)
cd "$(dirname "$0")"
BUSBW_OPS=all_reduce,alltoall SHIM_NEW=$PWD/final.so SHIM_R1K=$PWD/final.so SHIM_QUIET=$PWD/final.so \
  ENV_R1K="NCCLSHIM_TRACE_RING=1024" ENV_QUIET="NCCLSHIM_TRACE_RING=262144 NCCLSHIM_TRACE_FLUSH_MS=1000" \
  TRACE_TOOL=$PWD/ncclshim-trace VARIANTS="allNEW allR1K allQUIET" ROUNDS=5 bash plugin_toggle.sh

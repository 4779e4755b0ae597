#!/usr/bin/env bash
# (new.so: the prototype build of call 1, prefetch at its default of 2 slots: the hot path of the library left.)
# Ninth pass, call 2: where an alltoall's cost goes, one build (NEW, prefetch default), all_reduce
# beside it; 4 rounds, order rotated. Variants: all (recording + events on / off), rec (recording
# on / off, events off), events (events on / off, recording on), noop (events with every callback
# returning at once: NCCL's raising), eventsNOREC (events with NCCLSHIM_PROFILER_RECORD=0: the
# callbacks' work without their records).
cd "$(dirname "$0")"
BUSBW_OPS=alltoall,all_reduce SHIM_NEW=$PWD/new.so SHIM_NOREC=$PWD/new.so ENV_NOREC="NCCLSHIM_PROFILER_RECORD=0" \
  TRACE_TOOL=$PWD/ncclshim-trace VARIANTS="allNEW recNEW eventsNEW noopNEW eventsNOREC" ROUNDS=4 bash plugin_toggle.sh

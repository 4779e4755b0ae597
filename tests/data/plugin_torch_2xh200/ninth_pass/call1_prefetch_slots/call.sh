#!/usr/bin/env bash
# (new.so was the prototype build with NCCLSHIM_TRACE_PREFETCH, reverted after this call: no difference.)
# Ninth pass, call 1: one build (NEW), the recording's prefetch of ring slots at a call's start set to
# 2 (the default) or 6 (NCCLSHIM_TRACE_PREFETCH), recording + plugin over forwarding; and noop (the
# plugin's events on / off with every callback returning at once: NCCL's own cost of raising them).
# all_reduce, alltoall (one ncclAlltoAll: 4 tasks), sendrecv (batch_isend_irecv: 4 NCCL calls, 2 tasks).
# 6 rounds, order rotated.
cd "$(dirname "$0")"
BUSBW_OPS=all_reduce,alltoall,sendrecv SHIM_NEW=$PWD/new.so SHIM_PF2=$PWD/new.so SHIM_PF6=$PWD/new.so \
  ENV_PF2="NCCLSHIM_TRACE_PREFETCH=2" ENV_PF6="NCCLSHIM_TRACE_PREFETCH=6" TRACE_TOOL=$PWD/ncclshim-trace \
  VARIANTS="allPF2 allPF6 noopPF2" ROUNDS=6 bash plugin_toggle.sh

#!/usr/bin/env bash
# Ninth pass, call 3: the library this pass leaves (NEW: the eighth pass's, with ncclGroupEnd's
# nesting rule in one place, api_current_op.h leaveGroupLevel) against the eighth pass's (OLD,
# ef53ed5), recording + plugin over forwarding, the five collectives and PyTorch's grouped
# send / receive, 4 rounds, order rotated; the join check runs NEW.
cd "$(dirname "$0")"
BUSBW_OPS=all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv SHIM_NEW=$PWD/final.so SHIM_OLD=$PWD/old.so \
  TRACE_TOOL=$PWD/ncclshim-trace VARIANTS="allOLD allNEW" ROUNDS=4 bash plugin_toggle.sh

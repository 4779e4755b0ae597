#!/usr/bin/env bash
# Eighth pass, call 3: grouped point-to-point through PyTorch (batch_isend_irecv: ncclGroupStart,
# ncclSend, ncclRecv, ncclGroupEnd), with all_reduce beside it: NEW against OLD = 843b642, recording
# + plugin over forwarding, 6 rounds (positions balanced).
cd "$(dirname "$0")"
BUSBW_OPS=sendrecv,all_reduce SHIM_NEW=$PWD/new.so SHIM_OLD=$PWD/old.so TRACE_TOOL=$PWD/ncclshim-trace \
  VARIANTS="allOLD allNEW" ROUNDS=6 bash plugin_toggle.sh

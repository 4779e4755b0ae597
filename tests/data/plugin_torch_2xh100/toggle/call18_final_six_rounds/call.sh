#!/usr/bin/env bash
# Seventh pass, call 3: the final build (NEW: shared recorded-operation body) against the sixth pass
# (OLD, f0c3dc3), recording + plugin over forwarding, 6 rounds (positions balanced).
cd "$(dirname "$0")"
SHIM_NEW=$PWD/new.so SHIM_OLD=$PWD/old.so TRACE_TOOL=$PWD/ncclshim-trace \
  VARIANTS="allOLD allNEW" ROUNDS=6 bash plugin_toggle.sh

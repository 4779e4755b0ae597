#!/usr/bin/env bash
# Eighth pass, call 2: NEW (group calls straight to the trace; tasks launched in a recorded
# ncclGroupEnd held for its record) against OLD = 843b642 (seventh pass), recording + plugin over
# forwarding, 6 rounds (positions balanced).
cd "$(dirname "$0")"
SHIM_NEW=$PWD/new.so SHIM_OLD=$PWD/old.so TRACE_TOOL=$PWD/ncclshim-trace \
  VARIANTS="allOLD allNEW" ROUNDS=6 bash plugin_toggle.sh

#!/usr/bin/env bash
# Eighth pass, call 6: OLD = 843b642, NEW = changes 1 - 2 (1fa8680's library, as in calls 2 - 4), FIN =
# the final build (+ ApiCall holding OpArgs / OpFacts, hot functions aligned to a line), recording +
# plugin over forwarding, the five collectives, 4 rounds, order rotated; the join check runs NEW.
cd "$(dirname "$0")"
SHIM_NEW=$PWD/new.so SHIM_FIN=$PWD/final.so SHIM_OLD=$PWD/old.so TRACE_TOOL=$PWD/ncclshim-trace \
  VARIANTS="allOLD allNEW allFIN" ROUNDS=4 bash plugin_toggle.sh

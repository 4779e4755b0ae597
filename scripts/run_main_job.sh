#!/usr/bin/env bash
# The main job on the embedded default: GPU-free collectives over TCP on loopback with 4 local
# ranks, through the NCCL API of libncclshim.so (until phynet replays the bundled trace here).
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${RANKS:-4}
for op in all_reduce all_gather reduce_scatter broadcast alltoall; do
  ./build/ncclshim perf "$op" -np "$ranks" -b 1K -e 16M -f 4 -w 3 -n 10
done

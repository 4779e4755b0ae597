#!/usr/bin/env bash
# Puts what tests/gpu/plugin_overhead.sh needs on the GPU machine into one folder DEST (default
# build/gpu-plugin), to be carried there: the stripped libncclshim.so and ncclshim-trace, the
# callback bench, and the scripts, so that the run needs nothing else of this checkout:
#   cd DEST && OUT=... SHIM=$PWD/libncclshim.so SIDES="plain fwd rec plugin" bash plugin_overhead.sh
# (a helper working in another worktree copies DEST into an ignored folder of the checkout that
# travels, e.g. <checkout>/build-<name>/, as the device machine's notes say).
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=${1:-build/gpu-plugin}
mkdir -p "$dest"
strip -o "$dest/libncclshim.so" build/libncclshim.so
strip -o "$dest/ncclshim-trace" build/ncclshim-trace
g++ -O2 -std=c++20 -I. bench/profiler_callback_bench.cc -ldl -o "$dest/profiler_callback_bench"
cp tests/gpu/plugin_overhead.sh tests/gpu/plugin_table.py tests/gpu/torch_busbw.py "$dest/"
du -sh "$dest"

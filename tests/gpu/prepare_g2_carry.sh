#!/usr/bin/env bash
# Puts what tests/gpu/g2_overhead.sh needs into $BUILD/gpu (carried to the GPU machine; BUILD
# defaults to build): stripped libncclshim.so and ncclshim-trace, the nccl-tests sources as NVIDIA
# publishes them (NCCL_TESTS_GIT: a local mirror of github.com/NVIDIA/nccl-tests; the GPU machine
# has no internet), and the megatron-core wheel for the moe stages (pip download, once).
# OLD_LIB=<a libncclshim.so of another build> adds it as libncclshim-old.so (sides recold / pluginold).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
out=$build/gpu
mkdir -p "$out"
strip -o "$out/libncclshim.so" "$build/libncclshim.so"
strip -o "$out/ncclshim-trace" "$build/ncclshim-trace"
[ -n "${OLD_LIB:-}" ] && strip -o "$out/libncclshim-old.so" "$OLD_LIB"
git_dir=${NCCL_TESTS_GIT:-/work/.mirror/NVIDIA+nccl-tests/repo}
rm -rf "$out/nccl-tests"
mkdir -p "$out/nccl-tests"
git --git-dir="$git_dir" archive HEAD | tar -x -C "$out/nccl-tests"
ls "$out"/megatron_core-*.whl >/dev/null 2>&1 || python3 -m pip download -q --no-deps --only-binary=:all: \
  --python-version 3.12 -d "$out" megatron-core==0.19.2
du -sh "$out"

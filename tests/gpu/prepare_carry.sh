#!/usr/bin/env bash
# Puts what the GPU checks need into build/gpu/ (carried to the GPU machine): a stripped
# libncclshim.so, ncclshim-trace, and the megatron-core wheel from PyPI (the GPU machine has no registry).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build/gpu
strip -o build/gpu/libncclshim.so build/libncclshim.so
strip -o build/gpu/ncclshim-trace build/ncclshim-trace
ls build/gpu/megatron_core-*.whl >/dev/null 2>&1 || python3 -m pip download -q --no-deps --only-binary=:all: \
  --python-version 3.12 -d build/gpu megatron-core==0.19.2
du -sh build/gpu

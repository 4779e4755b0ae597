#!/usr/bin/env bash
# Puts what tests/gpu/profiler_gpu_checks.sh needs into build/gpu/ (carried to the GPU machine):
# stripped libncclshim.so, ncclshim and ncclshim-trace, and the nccl-tests sources as NVIDIA
# publishes them (from a local mirror of github.com/NVIDIA/nccl-tests: NCCL_TESTS_GIT, a bare or
# normal git directory; the GPU machine has no internet), built there with MPI=1.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build/gpu
strip -o build/gpu/libncclshim.so build/libncclshim.so
strip -o build/gpu/ncclshim build/ncclshim
strip -o build/gpu/ncclshim-trace build/ncclshim-trace
git_dir=${NCCL_TESTS_GIT:-/work/.mirror/NVIDIA+nccl-tests/repo}
rm -rf build/gpu/nccl-tests
mkdir -p build/gpu/nccl-tests
git --git-dir="$git_dir" archive HEAD | tar -x -C build/gpu/nccl-tests
git --git-dir="$git_dir" log -1 --format='nccl-tests %H %s' > build/gpu/nccl-tests/SOURCE.txt
du -sh build/gpu

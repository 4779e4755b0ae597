#!/usr/bin/env bash
# mpirun wrapper for the one-GPU multi-node emulation (tests/gpu/profiler_gpu_checks.sh): each MPI
# rank becomes its own node to NCCL (NCCL_HOSTID), so ranks sharing the GPU talk over NCCL's
# network transport; SHIM_PRELOAD, when set, is preloaded into the rank only (not into mpirun).
export NCCL_HOSTID="node${OMPI_COMM_WORLD_RANK:-0}"
[ -n "${SHIM_PRELOAD:-}" ] && export LD_PRELOAD="$SHIM_PRELOAD"
exec "$@"

#!/usr/bin/env bash
# mpirun wrapper for N nodes x 1 GPU on a machine of several GPUs (tests/gpu/profiler_gpu_checks.sh
# stage tuning): each MPI rank is its own node to NCCL (NCCL_HOSTID), as in as_node.sh, but rank r
# runs on GPU r % SPREAD_GPUS (default 2) instead of all on GPU 0; every hop between ranks crosses
# NCCL's network transport. SHIM_PRELOAD, when set, is preloaded into the rank only.
rank=${OMPI_COMM_WORLD_RANK:-0}
export NCCL_HOSTID="node$rank" CUDA_VISIBLE_DEVICES=$((rank % ${SPREAD_GPUS:-2}))
[ -n "${SHIM_PRELOAD:-}" ] && export LD_PRELOAD="$SHIM_PRELOAD"
exec "$@"

#!/usr/bin/env bash
# mpirun wrapper for NCCL's 4 nodes x 2 GPUs on one 2-GPU machine (tests/gpu/profiler_gpu_checks.sh
# stage topology2): ranks 2k and 2k+1 are node k to NCCL (NCCL_HOSTID), each on its own GPU (rank
# parity), so the two GPUs of a node talk over P2P/NVLink and nodes over NCCL's network transport;
# SHIM_PRELOAD, when set, is preloaded into the rank only.
rank=${OMPI_COMM_WORLD_RANK:-0}
export NCCL_HOSTID="node$((rank / 2))" CUDA_VISIBLE_DEVICES=$((rank % 2))
[ -n "${SHIM_PRELOAD:-}" ] && export LD_PRELOAD="$SHIM_PRELOAD"
exec "$@"

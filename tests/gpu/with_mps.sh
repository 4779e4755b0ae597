#!/usr/bin/env bash
# Runs a command with CUDA MPS on (GPU machine): the processes of a multi-rank job that share one GPU
# then run their kernels side by side instead of in turns. Without it, two NCCL ranks on one GPU
# time-slice it and every call waits ~4.5 ms for the other rank's slice (docs/time_truth.md), so a
# one-GPU machine can stand in for one GPU per rank only under MPS. Starts a private MPS daemon
# (pipe and log folders 0700 under /tmp), runs "$@" with CUDA_MPS_PIPE_DIRECTORY set, and stops the
# daemon however the command ends. The GPU's compute mode and other settings are left as they are.
# Exit 3 when MPS is not available here. Usage: tests/gpu/with_mps.sh COMMAND [ARG...]
set -u
[[ $# -ge 1 ]] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }
command -v nvidia-cuda-mps-control > /dev/null || { echo "$0: nvidia-cuda-mps-control not found: no MPS here" >&2; exit 3; }
dir=$(mktemp -d /tmp/ncclshim-mps.XXXXXX) || exit 1
export CUDA_MPS_PIPE_DIRECTORY=$dir/pipe CUDA_MPS_LOG_DIRECTORY=$dir/log
mkdir -m 0700 "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
stop() {
  echo quit | nvidia-cuda-mps-control > /dev/null 2>&1
  rm -rf "$dir"
}
nvidia-cuda-mps-control -d || { echo "$0: the MPS daemon did not start" >&2; rm -rf "$dir"; exit 3; }
trap stop EXIT
echo "$0: MPS daemon started (pipe $CUDA_MPS_PIPE_DIRECTORY)" >&2
"$@"
status=$?
if [[ -s $CUDA_MPS_LOG_DIRECTORY/control.log ]]; then
  grep -c "NEW CLIENT" "$CUDA_MPS_LOG_DIRECTORY/control.log" | sed "s|^|$0: MPS clients served: |" >&2
fi
exit $status

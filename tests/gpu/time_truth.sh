#!/usr/bin/env bash
# Ground truth for a replay's per-op time (GPU machine, 2 GPUs): NCCL 2.28 over its Socket
# transport on loopback between 2 emulated nodes, one GPU per rank, GPU-timed under the shim with
# NCCL's decisions recorded (its profiler plugin); then phynet, built here, replays that capture
# over TCP loopback on the same machine with the same placement and NCCL's recorded algorithm,
# protocol and channels; tests/gpu/time_truth_table.py prints replay / NCCL per (op, size), and
# tests/gpu/wire_part.py the same with NCCL's time split into its wire and hardware parts (the
# capture's proxy steps, timed by NCCLSHIM_PROFILER_STEPS).
# Needs build/gpu/ (tests/gpu/prepare_carry.sh). Writes the tables, the capture and logs under $OUT.
# One GPU per rank, or both ranks on one GPU under MPS: tests/gpu/with_mps.sh bash tests/gpu/time_truth.sh
# (docs/time_truth.md compares the two). CAPTURE_ENV='VAR=VALUE ...' sets NCCL variables for the
# capture only: the replay must take them from the capture (its report lists where each came from).
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PY=${PY:-/opt/torch/.venv/bin/python}
SHIM=$PWD/build/gpu/libncclshim.so
NCCL_INC=$($PY -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "include"))')
( NCCL_INCLUDE_DIR=$NCCL_INC make -j12 build/phynet > "$OUT/build.log" 2>&1; echo "build exit $?" >> "$OUT/build.log" ) &
build=$!
rm -rf /tmp/truth /tmp/truth_steps
env ${CAPTURE_ENV:-} NCCL_IB_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo LD_PRELOAD=$SHIM NCCLSHIM_MODE=forward \
  NCCLSHIM_GPU_TIMING=1 NCCLSHIM_PROFILER=1 NCCLSHIM_TRACE_DIR=/tmp/truth NCCLSHIM_PROFILER_STEPS=/tmp/truth_steps \
  timeout 300 $PY -m torch.distributed.run --standalone --nproc-per-node 2 tests/gpu/time_truth.py \
  > "$OUT/capture.log" 2>&1
echo "capture exit $?" | tee -a "$OUT/capture.log"
build/gpu/ncclshim-trace validate /tmp/truth | tail -1 | tee -a "$OUT/capture.log"
tar -C /tmp -czf "$OUT/truth_capture.tgz" truth truth_steps
wait $build
tail -1 "$OUT/build.log"
timeout 400 mpirun --allow-run-as-root --oversubscribe -np 2 --mca pml ob1 --mca btl self,tcp \
  --mca btl_tcp_if_include lo build/phynet --ifname lo --gpus-per-node 1 --report "$OUT/replay.csv" \
  --json "$OUT/replay.json" /tmp/truth > "$OUT/replay.log" 2>&1
echo "replay exit $?" | tee -a "$OUT/replay.log"
$PY tests/gpu/time_truth_table.py "$OUT/replay.csv" | tee "$OUT/table.md"
$PY tests/gpu/wire_part.py /tmp/truth_steps "$OUT/replay.csv" | tee "$OUT/wire_part.md"

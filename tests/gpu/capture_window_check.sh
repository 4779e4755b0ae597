#!/usr/bin/env bash
# Capture windows on the GPU machine (2 GPUs, PyTorch + NCCL; build/gpu/ from tests/gpu/prepare_carry.sh),
# about 4 minutes. Writes logs and traces under $OUT and prints one table (tests/gpu/capture_window_table.py):
#   megatron   Megatron-Core TP=2, 20 steps: without the shim; with NCCLSHIM_TRACE_START=iter:10,
#              NCCLSHIM_TRACE_ITERATIONS=3 and ncclshimMarkStep() after each step; the same window
#              without marks (iterations found while it runs). Each rank's file must hold exactly
#              three iterations (step lines 10..13, the three marked iterations' op counts equal,
#              the found window's op count the same), and the losses equal the run without the shim.
#   usr2       a PyTorch loop of 60 steps of 3 collectives, NCCLSHIM_TRACE_START=signal, SIGUSR2
#              before steps 40 and 50: exactly steps 40-49 (30 ops per rank); results unchanged.
#   cost       small all-reduces timed on the host: the shim forwarding alone vs the shim with a
#              window that never opens (every call counted, iterations followed): ns per call, 3
#              interleaved rounds each, and the difference (target <= 200 ns).
# usage: OUT=/some/dir [COST_ROUNDS=3] bash tests/gpu/capture_window_check.sh (COST_ROUNDS=0: no cost part;
# on one GPU the two ranks time-slice it and 20,000 calls take minutes)
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PY=${PY:-/opt/torch/.venv/bin/python}
TORCHRUN="$PY -m torch.distributed.run --standalone --nproc-per-node 2"
SHIM=$PWD/build/gpu/libncclshim.so
shim() { env LD_PRELOAD="$SHIM" NCCLSHIM_MODE=forward NCCLSHIM_DEBUG=WARN "$@"; }
$PY -c 'import megatron.core' 2>/dev/null ||
  $PY -m pip install -q --no-deps --no-index build/gpu/megatron_core-*.whl > "$OUT/pip.log" 2>&1
rm -rf "$OUT"/window_*
# One GPU: the two ranks share it, each its own node to NCCL (NCCL_HOSTID); times then include the
# GPU's time-slicing, the window's correctness does not.
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
node=""
[ "$gpus" -lt 2 ] && node="--gpus-per-node 1"

# Megatron-Core, 20 steps: plain, a marked window of steps 10-12, the same window found.
$TORCHRUN tests/gpu/megatron_gpt.py --tp 2 --steps 20 $node > "$OUT/window_megatron_plain.log" 2>&1
shim NCCLSHIM_TRACE_DIR="$OUT/window_marked" NCCLSHIM_TRACE_START=iter:10 NCCLSHIM_TRACE_ITERATIONS=3 \
  $TORCHRUN tests/gpu/megatron_gpt.py --tp 2 --steps 20 $node --mark-steps > "$OUT/window_megatron_marked.log" 2>&1
shim NCCLSHIM_TRACE_DIR="$OUT/window_found" NCCLSHIM_TRACE_START=iter:10 NCCLSHIM_TRACE_ITERATIONS=3 \
  $TORCHRUN tests/gpu/megatron_gpt.py --tp 2 --steps 20 $node > "$OUT/window_megatron_found.log" 2>&1

# PyTorch loop: SIGUSR2 before steps 40 and 50.
$TORCHRUN tests/gpu/torch_window_loop.py > "$OUT/window_usr2_plain.log" 2>&1
shim NCCLSHIM_TRACE_DIR="$OUT/window_usr2" NCCLSHIM_TRACE_START=signal \
  $TORCHRUN tests/gpu/torch_window_loop.py --usr2 40,50 > "$OUT/window_usr2_shim.log" 2>&1

# The cost outside a window, against forwarding alone.
for ((round = 1; round <= ${COST_ROUNDS:-3}; round++)); do
  shim $TORCHRUN tests/gpu/torch_window_loop.py --cost 20000 > "$OUT/window_cost_forward$round.log" 2>&1
  shim NCCLSHIM_TRACE_DIR="$OUT/window_cost_trace$round" NCCLSHIM_TRACE_START=iter:1000000000 \
    $TORCHRUN tests/gpu/torch_window_loop.py --cost 20000 > "$OUT/window_cost_closed$round.log" 2>&1
done

for dir in window_marked window_found window_usr2; do
  build/gpu/ncclshim-trace validate "$OUT/$dir" > "$OUT/$dir.validate.txt" 2>&1
done
$PY tests/gpu/capture_window_table.py "$OUT" | tee "$OUT/window_table.md"

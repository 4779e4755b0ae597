#!/usr/bin/env bash
# Runs the capture checks on the GPU machine (2 GPUs, PyTorch + NCCL; tests/gpu/prepare_carry.sh says what travels) and writes
# logs, traces and tables under $OUT. Needs build/gpu/ carried from a build host: libncclshim.so,
# ncclshim-trace and the megatron-core wheel (tests/gpu/prepare_carry.sh makes it).
#   stage "capture": PyTorch collectives and Megatron-Core TP=2 / DP=2, without and with the shim
#   stage "overhead": allreduce/allgather busbw 8 B..1 GiB without and with the shim, interleaved
#   stage "overhead-small": the same for 8 B..256 KiB only, more rounds, CPUs pinned
set -u
stage=${1:-capture}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PY=${PY:-/opt/torch/.venv/bin/python}
TORCHRUN="$PY -m torch.distributed.run --standalone --nproc-per-node 2"
SHIM=$PWD/build/gpu/libncclshim.so
TRACE_TOOL=$PWD/build/gpu/ncclshim-trace
shim_env() { echo "LD_PRELOAD=$SHIM NCCLSHIM_MODE=forward NCCLSHIM_DEBUG=INFO"; }
nvidia-smi -L > "$OUT/gpus.txt" 2>&1

if [ "$stage" = capture ]; then
  $PY -m pip install -q --no-deps --no-index build/gpu/megatron_core-*.whl > "$OUT/pip.log" 2>&1 || echo "pip install failed" >> "$OUT/pip.log"
  $TORCHRUN tests/gpu/torch_collectives.py > "$OUT/collectives_plain.log" 2>&1; echo "plain exit $?" >> "$OUT/collectives_plain.log"
  env $(shim_env) NCCLSHIM_TRACE_DIR="$OUT/trace_collectives" $TORCHRUN tests/gpu/torch_collectives.py \
    > "$OUT/collectives_shim.log" 2>&1; echo "shim exit $?" >> "$OUT/collectives_shim.log"
  $TRACE_TOOL validate "$OUT/trace_collectives" > "$OUT/collectives_trace_validate.txt" 2>&1
  for par in tp dp; do
    flag=$([ $par = tp ] && echo "--tp 2" || echo "--tp 1")
    for run in 1 2; do
      $TORCHRUN tests/gpu/megatron_gpt.py $flag > "$OUT/megatron_${par}_plain$run.log" 2>&1
    done
    env $(shim_env) NCCLSHIM_TRACE_DIR="$OUT/trace_megatron_$par" $TORCHRUN tests/gpu/megatron_gpt.py $flag \
      > "$OUT/megatron_${par}_shim.log" 2>&1
    $TRACE_TOOL validate "$OUT/trace_megatron_$par" > "$OUT/megatron_${par}_trace_validate.txt" 2>&1
  done
  grep -h "LOSSES\|CHECKS\|exit\|Error\|error" "$OUT"/*.log | head -60
fi

# busbw_rounds <rounds> <trace prefix>: interleaved rounds of torch_busbw.py on three sides: plain,
# the shim forwarding without recording ("fwd"), the shim recording ("shim"), and with BUSBW_PLUGIN=1
# a fourth, recording with the shim as NCCL's profiler plugin ("plugin"), so that an added cost can
# be placed; then the table (each side's best time per size over the rounds).
busbw_rounds() {
  for round in $(seq 1 "$1"); do
    $TORCHRUN tests/gpu/torch_busbw.py > "$OUT/busbw_plain$round.jsonl" 2> /tmp/busbw_plain$round.err
    env $(shim_env) NCCLSHIM_DEBUG=WARN $TORCHRUN tests/gpu/torch_busbw.py \
      > "$OUT/busbw_fwd$round.jsonl" 2> /tmp/busbw_fwd$round.err
    env $(shim_env) NCCLSHIM_DEBUG=WARN NCCLSHIM_TRACE_DIR="$2$round" $TORCHRUN tests/gpu/torch_busbw.py \
      > "$OUT/busbw_shim$round.jsonl" 2> /tmp/busbw_shim$round.err
    if [ -n "${BUSBW_PLUGIN:-}" ]; then
      env $(shim_env) NCCLSHIM_DEBUG=WARN NCCLSHIM_TRACE_DIR="$2plugin$round" NCCL_PROFILER_PLUGIN=$SHIM \
        NCCLSHIM_PROFILER=1 $TORCHRUN tests/gpu/torch_busbw.py > "$OUT/busbw_plugin$round.jsonl" \
        2> /tmp/busbw_plugin$round.err
    fi
  done
  $PY tests/gpu/busbw_table.py "$OUT" | tee "$OUT/busbw_table.md"
}

if [ "$stage" = overhead ]; then
  busbw_rounds "${ROUNDS:-4}" /tmp/trace_busbw
fi

if [ "$stage" = overhead-small ]; then
  # Small sizes only (8 B..256 KiB), more rounds, processes pinned to their GPU's local CPUs: the
  # added time per call, with each side's best over ROUNDS x 5 windows of 1000 calls.
  export BUSBW_MAX_BYTES=$((256 << 10)) BUSBW_PIN=1
  busbw_rounds "${ROUNDS:-6}" /tmp/trace_small
fi

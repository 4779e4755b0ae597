#!/usr/bin/env bash
# Captures Megatron-Core GPT at data parallel 2 and 4 (tensor parallel 2), with and without the
# distributed optimizer, under the shim on the GPU machine, for `ncclshim scale`'s ground truth
# (issue: a capture replayed at the size of the cluster). NCCL sees nodes of 2 ranks (NCCL_HOSTID),
# each node using both GPUs once; ranks share GPUs, so these captures are for shape, not for time.
# Needs build/gpu/ from tests/gpu/prepare_carry.sh. Writes one tarball per capture under $OUT.
set -u
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export NCCL_IB_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo
PY=${PY:-/opt/torch/.venv/bin/python}
$PY -m pip install -q --no-deps --no-index build/gpu/megatron_core-*.whl > "$OUT/scale_captures.log" 2>&1
for dp in ${SCALE_DPS-2 4}; do
  for opt in ${SCALE_OPTS:-plain distopt}; do
    name=megatron_tp2_dp${dp}_$opt
    flag=$([ $opt = distopt ] && echo --dist-opt)
    dir=/tmp/$name
    rm -rf "$dir"
    echo "== $name" >> "$OUT/scale_captures.log"
    LD_PRELOAD=$PWD/build/gpu/libncclshim.so NCCLSHIM_MODE=forward NCCLSHIM_TRACE_DIR=$dir \
      timeout 240 $PY -m torch.distributed.run --standalone --nproc-per-node $((2 * dp)) \
      tests/gpu/megatron_gpt.py --tp 2 --steps 3 --gpus-per-node 2 $flag >> "$OUT/scale_captures.log" 2>&1
    echo "exit $?" >> "$OUT/scale_captures.log"
    build/gpu/ncclshim-trace validate "$dir" >> "$OUT/scale_captures.log" 2>&1
    tar -C /tmp -czf "$OUT/$name.tgz" "$name"
  done
done
# Mixture of experts, tensor parallel 1, expert parallel 2, data parallel 4 and 8: replicas read the
# data of replica d mod 4, so the token all-to-alls (data-dependent sizes) repeat in the larger job.
for dp in ${SCALE_MOE_DPS:-}; do
  name=megatron_moe_tp1_dp${dp}_ep2
  dir=/tmp/$name
  rm -rf "$dir"
  echo "== $name" >> "$OUT/scale_captures.log"
  LD_PRELOAD=$PWD/build/gpu/libncclshim.so NCCLSHIM_MODE=forward NCCLSHIM_TRACE_DIR=$dir \
    timeout 240 $PY -m torch.distributed.run --standalone --nproc-per-node $dp \
    tests/gpu/megatron_moe.py --tp 1 --ep 2 --steps 3 --gpus-per-node 2 --seed-period 4 >> "$OUT/scale_captures.log" 2>&1
  echo "exit $?" >> "$OUT/scale_captures.log"
  build/gpu/ncclshim-trace validate "$dir" >> "$OUT/scale_captures.log" 2>&1
  tar -C /tmp -czf "$OUT/$name.tgz" "$name"
done
grep -E "^==|LOSSES|exit|rror" "$OUT/scale_captures.log" | head -40

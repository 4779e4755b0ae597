#!/usr/bin/env bash
# Eleventh pass, call 4: the final library (final.so: merge keys are the records' end times, no
# clock read in the push) on real NCCL: one short traced run of the six ops, its tasks joined to
# their calls (task_join_check.py) and the files valid (ncclshim-trace validate).
cd "$(dirname "$0")"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PY=/opt/torch/.venv/bin/python; [ -x "$PY" ] || PY=python3
rm -rf /tmp/join_traces
env LD_PRELOAD=$PWD/final.so NCCLSHIM_MODE=forward NCCLSHIM_DEBUG=WARN NCCLSHIM_TRACE_DIR=/tmp/join_traces \
  NCCL_PROFILER_PLUGIN=$PWD/final.so NCCLSHIM_PROFILER=1 BUSBW_OPS=all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv \
  BUSBW_WINDOWS=1 BUSBW_ITERS=20 BUSBW_MAX_BYTES=32768 BUSBW_BLOCK=0 \
  "$PY" -m torch.distributed.run --standalone --nproc-per-node 2 torch_busbw.py > /dev/null 2> /tmp/join.err
rc=$?
echo "join run rc $rc" > "$OUT/join_check.txt"
[ $rc -eq 0 ] || tail -5 /tmp/join.err >> "$OUT/join_check.txt"
"$PY" task_join_check.py /tmp/join_traces >> "$OUT/join_check.txt" 2>&1
./ncclshim-trace validate /tmp/join_traces >> "$OUT/join_check.txt" 2>&1
head -c 1500 /tmp/join_traces/*rank0.jsonl | tail -c 700 >> "$OUT/join_check.txt"
nvidia-smi -L > "$OUT/machine.txt"
cat "$OUT/join_check.txt"

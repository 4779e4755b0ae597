#!/usr/bin/env bash
# Eighth pass, call 1 (device run from the repository root, carry build/gpu made by
# OLD_LIB=<843b642's libncclshim.so> tests/gpu/prepare_g2_carry.sh): nccl-tests sendrecv and alltoall
# -g 2, 8 B .. 32 KiB, 5 rounds of NCCL alone / forwarding / recording + plugin (NEW) / recording +
# plugin (OLD = 843b642); then one traced run of each, checked (task_join_check.py, validate).
OPS="sendrecv alltoall" SIDES="none fwd plugin pluginold" SIZES="-b 8 -e 32K -f 8" ITERS="-n 1000 -w 100" ROUNDS=5 \
  BUDGET_S=430 bash tests/gpu/g2_overhead.sh build table > "$OUT/g2.txt" 2>&1
for op in alltoall sendrecv; do
  CUDA_VISIBLE_DEVICES=0,1 LD_PRELOAD=$PWD/build/gpu/libncclshim.so NCCLSHIM_MODE=forward NCCLSHIM_PROFILER=1 \
    NCCLSHIM_TRACE_DIR=/tmp/jc/$op timeout 60 /tmp/nt-bin/${op}_perf -b 8 -e 1K -f 8 -g 2 -n 20 -w 5 > "$OUT/jc_$op.log" 2>&1
done
python3 tests/gpu/task_join_check.py /tmp/jc > "$OUT/join_check.txt" 2>&1
for op in alltoall sendrecv; do build/gpu/ncclshim-trace validate /tmp/jc/$op >> "$OUT/join_check.txt" 2>&1; done

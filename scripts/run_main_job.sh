#!/usr/bin/env bash
# The main job on the embedded default: phynet replays the bundled Megatron-Core trace (captured on
# 2 GPUs, tensor parallel 2) and the bundled SimAI workload (TP=2 x DP=4, 8 ranks) over TCP on
# loopback with local ranks (mpirun, oversubscribed), then the GPU-free NCCL API benchmark runs
# allreduce over 4 local ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
mpi=(mpirun --oversubscribe --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
echo "== phynet: Megatron-Core GPT, tensor parallel 2 (examples/traces/megatron_tp2)"
"${mpi[@]}" -np 2 ./build/phynet --iterations 3 --rows 10 examples/traces/megatron_tp2
echo "== phynet: SimAI workload TP=2 DP=4 EP=2 (examples/workloads/simai_tp2_dp4_ep2.txt)"
"${mpi[@]}" -np 8 ./build/phynet --rows 10 examples/workloads/simai_tp2_dp4_ep2.txt
echo "== ncclshim perf: allreduce, 4 local ranks, GPU-free over TCP"
./build/ncclshim perf all_reduce -np 4 -b 1K -e 16M -f 4 -w 3 -n 10

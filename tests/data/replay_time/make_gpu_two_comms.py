#!/usr/bin/env python3
"""Writes gpu_two_comms/: a hand-made GPU-timed capture (FORMAT version 3) of 2 ranks with two
communicators over both ranks, W and S, whose ops overlap as TP and DP do on different streams.
Two identical iterations; in iteration i (base b = 4000 us * i), GPU times in us:
  rank 0: W allreduce 8 MiB [b, b+2000], S allreduce 64 KiB [b+500, b+800], W allgather 1 MiB [b+2500, b+2900]
  rank 1: W allreduce 8 MiB [b, b+2100], S allreduce 64 KiB [b+600, b+900], W allgather 1 MiB [b+2500, b+3000]
NCCL's decisions (nccl_task): the W allreduce TREE/SIMPLE on 2 channels, the S allreduce RING/LL on 1,
the allgather RING/SIMPLE on 2. The header's nccl_env: what the job ran with.
The figures docs/replay_time.md derives from it by hand are checked in tests/suites/report_tests.sh.
Run from this folder: python3 make_gpu_two_comms.py
"""
import json
import os

W, S = "0x1111111111111111", "0x2222222222222222"
T0 = 1_000_000_000  # the capture's CLOCK_MONOTONIC origin, ns
ENV = {"NCCL_P2P_NET_CHUNKSIZE": "131072", "NCCL_BUFFSIZE": "4194304", "NCCL_IB_HCA": "mlx5_0,mlx5_1",
       "NCCL_IB_TC": "106", "NCCL_SOCKET_NTHREADS": "1", "NCCL_NSOCKS_PERTHREAD": "2"}
# (comm, op, count, bytes, algo, proto, channels), and per rank (start, end) in us within an iteration
OPS = [(W, "allreduce", 2097152, 8388608, "TREE", "SIMPLE", 2),
       (S, "allreduce", 16384, 65536, "RING", "LL", 1),
       (W, "allgather", 131072, 1048576, "RING", "SIMPLE", 2)]
TIMES = {0: [(0, 2000), (500, 800), (2500, 2900)], 1: [(0, 2100), (600, 900), (2500, 3000)]}


def lines(rank):
    out = [{"type": "header", "format": "ncclshim-trace", "version": 3, "abi": 1, "host": "gpu-node", "pid": 100 + rank,
            "ppid": 1, "global_rank": rank, "clock": "CLOCK_MONOTONIC", "start_realtime_ns": 0,
            "start_monotonic_ns": T0 - 10_000_000, "ring_records": 4096, "nccl_env": ENV}]
    n = 0
    for comm in (W, S):
        out.append({"type": "comm", "n": n, "event": "init", "comm": comm, "parent": "0x0000000000000000",
                    "split_seq": 0, "color": 0, "key": 0, "nranks": 2, "rank": rank, "global_rank": rank,
                    "host": "gpu-node", "pid": 100 + rank, "device": rank, "t_ns": T0 - 5_000_000})
        n += 1
    seq = {W: 0, S: 0}
    for iteration in range(2):
        base = 4000 * iteration
        for (comm, op, count, size, algo, proto, channels), (start, end) in zip(OPS, TIMES[rank]):
            gpu_start, gpu_end = T0 + (base + start) * 1000, T0 + (base + end) * 1000
            host = gpu_start - 20_000  # the call, 20 us before the GPU starts it; it returns after 8 us
            out.append({"type": "nccl_task", "n": n, "task": "coll", "comm": comm, "seq": seq[comm], "flags": 3,
                        "nccl_comm": "0x00000000000000" + comm[-2:], "nccl_seq": seq[comm], "rank": rank,
                        "nranks": 2, "nnodes": 2, "func": "AllReduce" if op == "allreduce" else "AllGather",
                        "count": count if op == "allreduce" else count * 4, "dtype": "float32" if op == "allreduce"
                        else "int8", "root": -1, "peer": -1, "algo": algo, "proto": proto, "channels": channels,
                        "warps": 16, "t_start_ns": host, "t_end_ns": host + 8000})
            n += 1
            out.append({"type": "op", "n": n, "comm": comm, "rank": rank, "seq": seq[comm], "op": op, "count": count,
                        "dtype": "float32", "redop": "sum" if op == "allreduce" else "none", "root": -1, "peer": -1,
                        "nranks": 2, "bytes": size, "stream": "0x00000000000000a" + ("1" if comm == W else "2"),
                        "group": 0, "t_start_ns": host, "t_end_ns": host + 8000, "gpu_start_ns": gpu_start,
                        "gpu_end_ns": gpu_end, "flags": 2, "result": 0})
            n += 1
            seq[comm] += 1
    out.append({"type": "footer", "records": n, "comms": 2, "ops": 6, "dropped": 0, "invalid": 0, "nccl_tasks": 6,
                "nccl_proxies": 0, "global_rank": rank, "reason": "exit", "signal": 0, "end_realtime_ns": 0,
                "end_monotonic_ns": T0 + 10_000_000})
    return out


os.makedirs("gpu_two_comms", exist_ok=True)
for rank in (0, 1):
    with open(f"gpu_two_comms/rank{rank}.jsonl", "w") as f:
        for line in lines(rank):
            f.write(json.dumps(line, separators=(",", ":")) + "\n")

"""A PyTorch training-like loop on 2 GPUs for the capture-window checks (tests/gpu/capture_window_check.sh):
STEPS steps of three collectives (an all-reduce of 1 Mi floats, an all-gather, a small all-reduce).
--usr2 A,B: every rank sends SIGUSR2 to itself before steps A and B (the operator's start and
stop, NCCLSHIM_TRACE_START=signal). --cost N: instead, N small all-reduces timed on the host (the
call's issue, no synchronisation between calls), printing 'COST_NS <ns per call>'. Rank 0 prints
'CHECKSUM <sum of the results>' so that runs with and without the shim can be compared."""
import argparse
import os
import signal
import time

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--usr2", default="")
    parser.add_argument("--cost", type=int, default=0)
    args = parser.parse_args()
    rank = int(os.environ["RANK"])
    gpus = torch.cuda.device_count()
    if gpus < int(os.environ["LOCAL_WORLD_SIZE"]):  # ranks share a GPU: each its own node to NCCL
        os.environ["NCCL_HOSTID"] = f"node{rank}"
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]) % gpus)
    dist.init_process_group("nccl")
    world = dist.get_world_size()
    if args.cost:
        small = torch.ones(2, device="cuda")
        for _ in range(200):  # warm-up: communicators made, the window's period locked
            dist.all_reduce(small)
        torch.cuda.synchronize()
        best = None
        for _ in range(5):
            start = time.perf_counter_ns()
            for _ in range(args.cost):
                dist.all_reduce(small)
            elapsed = time.perf_counter_ns() - start
            torch.cuda.synchronize()
            best = elapsed if best is None else min(best, elapsed)
        if rank == 0:
            print(f"COST_NS {best / args.cost:.1f}", flush=True)
        dist.destroy_process_group()
        return
    usr2 = {int(k) for k in args.usr2.split(",") if k}
    big = torch.arange(1 << 20, device="cuda", dtype=torch.float32) * (rank + 1)
    gathered = [torch.empty(4096, device="cuda") for _ in range(world)]
    part = torch.full((4096,), float(rank), device="cuda")
    small = torch.ones(8, device="cuda")
    checksum = 0.0
    for step in range(args.steps):
        if step in usr2:
            os.kill(os.getpid(), signal.SIGUSR2)
        x = big.clone()
        dist.all_reduce(x)
        dist.all_gather(gathered, part)
        dist.all_reduce(small)
        checksum += x[-1].item() + sum(g.sum().item() for g in gathered) + small.sum().item()
    if rank == 0:
        print(f"CHECKSUM {checksum:.6e}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

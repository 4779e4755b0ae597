"""PyTorch NCCL collectives on 2 GPUs, every result checked: all_reduce, all_gather_into_tensor,
reduce_scatter_tensor, broadcast, all_to_all_single, send/recv, on the default group, a sub-group
(new_group) and a split group (split_group). Run with torchrun --nproc-per-node 2, with or without
LD_PRELOAD=libncclshim.so; prints one line 'CHECKS <rank> passed=N failed=M'."""
import os
import sys

import torch
import torch.distributed as dist


def main():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", device_id=dev)  # eager init: new groups are made by ncclCommSplit
    passed, failed = 0, 0

    def check(name, got, want):
        nonlocal passed, failed
        if torch.equal(got.cpu(), want.cpu()):
            passed += 1
        else:
            failed += 1
            print(f"rank {rank}: {name} wrong: got {got.flatten()[:8].tolist()} want {want.flatten()[:8].tolist()}",
                  file=sys.stderr)

    sub = dist.new_group(list(range(world)))
    groups = [("world", None), ("subgroup", sub)]
    if hasattr(dist, "split_group"):
        groups.append(("split", dist.split_group(split_ranks=[list(range(world))])))
    n = 1 << 16
    for label, group in groups:
        for dtype in (torch.float32, torch.bfloat16, torch.int32):
            base = torch.arange(n, device=dev, dtype=torch.float32).remainder(17).to(dtype)
            x = base + rank
            dist.all_reduce(x, group=group)
            check(f"{label} all_reduce {dtype}", x, base * world + sum(range(world)))
            out = torch.empty(n * world, device=dev, dtype=dtype)
            dist.all_gather_into_tensor(out, base + rank, group=group)
            check(f"{label} all_gather {dtype}", out, torch.cat([base + r for r in range(world)]))
            inp = torch.cat([base + r for r in range(world)]) + rank
            rs = torch.empty(n, device=dev, dtype=dtype)
            dist.reduce_scatter_tensor(rs, inp, group=group)
            check(f"{label} reduce_scatter {dtype}", rs, (base + rank) * world + sum(range(world)))
            b = base + rank
            dist.broadcast(b, src=0, group=group)
            check(f"{label} broadcast {dtype}", b, base)
            a2a_in = torch.cat([base + 100 * rank + r for r in range(world)])
            a2a_out = torch.empty_like(a2a_in)
            dist.all_to_all_single(a2a_out, a2a_in, group=group)
            check(f"{label} all_to_all {dtype}", a2a_out, torch.cat([base + 100 * r + rank for r in range(world)]))
            peer = (rank + 1) % world
            src = (rank - 1 + world) % world
            send = base + rank
            recv = torch.empty_like(send)
            ops = [dist.P2POp(dist.isend, send, dist.get_global_rank(group, peer) if group else peer, group),
                   dist.P2POp(dist.irecv, recv, dist.get_global_rank(group, src) if group else src, group)]
            for req in dist.batch_isend_irecv(ops):
                req.wait()
            check(f"{label} send/recv {dtype}", recv, base + src)
    torch.cuda.synchronize()
    dist.barrier()
    print(f"CHECKS {rank} passed={passed} failed={failed}", flush=True)
    dist.destroy_process_group()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

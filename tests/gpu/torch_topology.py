"""PyTorch collectives on NCCL's 4 nodes x 2 GPUs on one 2-GPU machine, for issue 18's ground truth:
rank r is node r // 2 to NCCL (NCCL_HOSTID, set here before NCCL starts) on GPU r % 2, so the two
GPUs of a node talk over NVLink and nodes over NCCL's network transport (NCCL_NET=Socket over
loopback, set by the caller). Runs one op (argv[1]: all_reduce, all_gather, reduce_scatter,
broadcast, all_to_all) at 8 KiB, 1 MiB and 64 MiB (the whole buffer, as nccl-tests counts it),
ITERS times each, every result checked. Run under torchrun --nproc-per-node 8 with the shim
preloaded (recording, NCCLSHIM_PROFILER=1) so that NCCL's choices and network bytes are traced;
prints 'CHECKS <rank> passed=N failed=M'."""
import os
import sys

rank = int(os.environ["RANK"])
os.environ["NCCL_HOSTID"] = f"node{rank // 2}"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def main():
    op = sys.argv[1]
    iters = int(os.environ.get("ITERS", "3"))
    world = int(os.environ["WORLD_SIZE"])
    dev = torch.device("cuda", rank % 2)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    passed = failed = 0
    for size in (8 << 10, 1 << 20, 64 << 20):
        n = size // 4  # float32 elements of the whole buffer
        for it in range(iters):
            seed = float(it + 1)
            if op == "all_reduce":
                t = torch.full((n,), seed * (rank + 1), device=dev)
                dist.all_reduce(t)
                want = torch.full((n,), seed * world * (world + 1) / 2, device=dev)
            elif op == "all_gather":
                mine = torch.full((n // world,), seed + rank, device=dev)
                t = torch.empty(n, device=dev)
                dist.all_gather_into_tensor(t, mine)
                want = torch.cat([torch.full((n // world,), seed + r, device=dev) for r in range(world)])
            elif op == "reduce_scatter":
                src = torch.full((n,), seed * (rank + 1), device=dev)
                t = torch.empty(n // world, device=dev)
                dist.reduce_scatter_tensor(t, src)
                want = torch.full((n // world,), seed * world * (world + 1) / 2, device=dev)
            elif op == "broadcast":
                t = torch.full((n,), seed if rank == 0 else -1.0, device=dev)
                dist.broadcast(t, 0)
                want = torch.full((n,), seed, device=dev)
            elif op == "all_to_all":
                src = torch.arange(n, device=dev, dtype=torch.float32) + rank * n
                t = torch.empty(n, device=dev)
                dist.all_to_all_single(t, src)
                block = n // world
                want = torch.cat([torch.arange(block, device=dev, dtype=torch.float32) + r * n + rank * block
                                  for r in range(world)])
            else:
                raise SystemExit(f"unknown op {op}")
            torch.cuda.synchronize()
            if torch.equal(t, want):
                passed += 1
            else:
                failed += 1
                print(f"rank {rank}: {op} {size} B wrong", file=sys.stderr)
    print(f"CHECKS {rank} passed={passed} failed={failed}", flush=True)
    dist.destroy_process_group()


main()

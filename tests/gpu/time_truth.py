"""NCCL's own time for collectives, the ground truth a replay's time is checked against: allreduce,
allgather, reducescatter and alltoall of 8 B .. 256 MiB (nccl-tests sizes: the whole buffer), each
size REPS times, on 2 ranks that NCCL sees as 2 nodes (NCCL_HOSTID, set here before NCCL starts),
one GPU each. Run under torchrun --nproc-per-node 2 with the shim recording GPU times
(NCCLSHIM_GPU_TIMING=1); prints 'TRUTH <rank> calls=N'."""
import os

rank = int(os.environ["RANK"])
os.environ["NCCL_HOSTID"] = f"node{rank}"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

SIZES = [8, 1 << 10, 1 << 16, 1 << 17, 1 << 20, 1 << 21, 1 << 24, 1 << 25, 1 << 26, 1 << 27, 1 << 28]
REPS = int(os.environ.get("REPS", "6"))


def main():
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dev = torch.device("cuda", rank % torch.cuda.device_count())
    dist.init_process_group("nccl", device_id=dev)
    calls = 0
    for size in SIZES:
        elems = max(size // 4, world)  # float32, at least one element per rank
        elems -= elems % world
        buf = torch.ones(elems, device=dev)
        out = torch.empty(elems, device=dev)
        shard = torch.empty(elems // world, device=dev)
        for _ in range(REPS):
            dist.all_reduce(buf)
            dist.all_gather_into_tensor(out, buf[: elems // world])
            dist.reduce_scatter_tensor(shard, buf)
            dist.all_to_all_single(out, buf)
            calls += 4
        torch.cuda.synchronize()
    print(f"TRUTH {rank} calls={calls}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""allreduce and allgather bus bandwidth through PyTorch (NCCL) from 8 B to 1 GiB on 2 GPUs; rank 0
prints one JSON line per size: {"op", "bytes", "us", "busbw"}. Run with and without the shim."""
import json
import os
import time

import torch
import torch.distributed as dist


def main():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    size = 8
    while size <= (1 << 30):
        for op in ("all_reduce", "all_gather"):
            numel = max(1, size // 4)
            x = torch.ones(numel, device="cuda")
            out = torch.empty(numel * world, device="cuda") if op == "all_gather" else None
            iters = 300 if size < (1 << 24) else 20
            def run():
                if op == "all_reduce":
                    dist.all_reduce(x)
                else:
                    dist.all_gather_into_tensor(out, x)
            for _ in range(5):
                run()
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(iters):
                run()
            torch.cuda.synchronize()
            sec = (time.perf_counter() - start) / iters
            nbytes = numel * 4 * (world if op == "all_gather" else 1)
            factor = 2 * (world - 1) / world if op == "all_reduce" else (world - 1) / world
            if rank == 0:
                print(json.dumps({"op": op, "bytes": nbytes, "us": sec * 1e6, "busbw": nbytes / sec / 1e9 * factor}),
                      flush=True)
        size *= 4
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

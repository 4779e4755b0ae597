"""GPU timing under the shim (NCCLSHIM_GPU_TIMING=1): 20 eager allreduces of 64 MiB (timed with CUDA
events) and one allreduce captured into a CUDA graph and replayed (must be marked, not timed).
Run with torchrun --nproc-per-node 2; rank 0 prints 'GRAPH ok'."""
import os

import torch
import torch.distributed as dist


def main():
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    x = torch.ones(16 << 20, device="cuda")
    for _ in range(20):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    y = torch.ones(1 << 20, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        dist.all_reduce(y)  # warm up on the capture stream
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        dist.all_reduce(y)
    graph.replay()
    torch.cuda.synchronize()
    if rank == 0:
        print("GRAPH ok", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

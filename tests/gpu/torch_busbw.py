"""allreduce and allgather bus bandwidth through PyTorch (NCCL) from 8 B to 1 GiB on 2 GPUs; rank 0
prints one JSON line per size: {"op", "bytes", "us", "busbw"} (the best of WINDOWS timed windows of
`iters` back-to-back calls). Run with and without the shim."""
import json
import os
import time

import torch
import torch.distributed as dist

WINDOWS = 5


def pin_to_gpu_local_cpus(device):
    """BUSBW_PIN=1: restrict this process (and the threads it starts later: NCCL's, PyTorch's, the
    shim's writer) to the CPUs local to its GPU, so the calling thread does not wander across NUMA
    nodes between timing windows. Left alone when the topology cannot be read."""
    try:
        props = torch.cuda.get_device_properties(device)
        bus = f"{props.pci_domain_id:04x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
        text = open(f"/sys/bus/pci/devices/{bus}/local_cpulist").read().strip()
    except (AttributeError, OSError):
        return None
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    os.sched_setaffinity(0, cpus)
    return text


def main():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(rank)
    if os.environ.get("BUSBW_PIN") == "1":
        pinned = pin_to_gpu_local_cpus(rank)
        print(json.dumps({"rank": rank, "pinned_cpus": pinned}), flush=True)
    max_bytes = int(os.environ.get("BUSBW_MAX_BYTES", 1 << 30))
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    size = 8
    while size <= max_bytes:
        for op in ("all_reduce", "all_gather"):
            numel = max(1, size // 4)
            x = torch.ones(numel, device="cuda")
            out = torch.empty(numel * world, device="cuda") if op == "all_gather" else None
            iters = 1000 if size < (1 << 20) else (100 if size < (1 << 24) else 20)
            def run():
                if op == "all_reduce":
                    dist.all_reduce(x)
                else:
                    dist.all_gather_into_tensor(out, x)
            for _ in range(5):
                run()
            torch.cuda.synchronize()
            # The best of several windows: a window that met a hiccup (another process, a clock
            # change) says nothing about the per-call cost.
            sec = float("inf")
            for _ in range(WINDOWS):
                dist.barrier()
                torch.cuda.synchronize()
                start = time.perf_counter()
                for _ in range(iters):
                    run()
                torch.cuda.synchronize()
                sec = min(sec, (time.perf_counter() - start) / iters)
            nbytes = numel * 4 * (world if op == "all_gather" else 1)
            factor = 2 * (world - 1) / world if op == "all_reduce" else (world - 1) / world
            if rank == 0:
                print(json.dumps({"op": op, "bytes": nbytes, "us": sec * 1e6, "busbw": nbytes / sec / 1e9 * factor}),
                      flush=True)
        size *= 4
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

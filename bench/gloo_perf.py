#!/usr/bin/env python3
"""The Gloo peer of `ncclshim perf`: PyTorch's Gloo backend on CPU tensors over loopback TCP.

Usage: gloo_perf.py <all_reduce|all_gather|reduce_scatter|broadcast|alltoall> -np N
                    [-b minBytes] [-e maxBytes] [-f factor] [-w warmup] [-n iters] [-c 0|1]

Starts N local processes (torch.multiprocessing), one Gloo process group over 127.0.0.1, and prints
an nccl-tests table as `ncclshim perf` and bench/mpi_peer_bench.cc do: sizes are nccl-tests' (whole
buffer; per-rank block = size / N for all_gather, reduce_scatter and alltoall), float32, sum; the
time of a size is the slowest rank's mean over the iterations; busbw = algbw x the nccl-tests factor.
Out-of-place only (the in-place columns are N/A): all_reduce and broadcast, whose Gloo calls work
in place, first copy the input into the output (broadcast: at the root), as an out-of-place call
must. With -c 1 (default) every element of every result is checked against its exact value (inputs
are small integers) and counted in #wrong.
Needs a Python with torch (run_bench.sh uses $GLOO_PYTHON, default /opt/gloo-venv/bin/python).
"""
import argparse
import os
import socket
import sys
import time

BUS_FACTOR = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
}


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("op", choices=sorted(BUS_FACTOR))
    parser.add_argument("-np", type=int, required=True, dest="nranks")
    parser.add_argument("-b", default="1K", dest="min_bytes")
    parser.add_argument("-e", default="64M", dest="max_bytes")
    parser.add_argument("-f", type=float, default=2.0, dest="factor")
    parser.add_argument("-w", type=int, default=5, dest="warmup")
    parser.add_argument("-n", type=int, default=20, dest="iters")
    parser.add_argument("-c", type=int, default=1, dest="check")
    args = parser.parse_args(argv)
    args.min_bytes, args.max_bytes = parse_size(args.min_bytes), parse_size(args.max_bytes)
    if args.nranks < 1 or args.factor <= 1.0 or args.iters < 1:
        parser.error("need -np >= 1, -f > 1, -n >= 1")
    return args


def sizes(args):
    size = args.min_bytes
    granularity = 4 * args.nranks  # float32, divisible into per-rank blocks
    while size <= args.max_bytes:
        yield max(granularity, size // granularity * granularity)
        size = int(size * args.factor)


def make_op(torch, dist, op, size, rank, n):
    """(run(), check() -> wrong elements) for one size. Inputs are rank + 1 + (index % 7): exact sums."""
    count = size // 4
    block = count // n if op in ("all_gather", "reduce_scatter", "alltoall") else count

    def pattern(elements, base):
        return (torch.arange(elements, dtype=torch.int64) % 7 + base).to(torch.float32)

    if op == "all_reduce":
        send, recv = pattern(count, rank + 1), torch.empty(count)
        def run():
            recv.copy_(send)
            dist.all_reduce(recv)
        expected = lambda: pattern(count, 0) * n + n * (n + 1) / 2
    elif op == "all_gather":
        send, recv = pattern(block, rank + 1), torch.empty(block * n)
        run = lambda: dist.all_gather_into_tensor(recv, send)
        expected = lambda: torch.cat([pattern(block, r + 1) for r in range(n)])
    elif op == "reduce_scatter":
        send, recv = pattern(block * n, rank + 1), torch.empty(block)
        run = lambda: dist.reduce_scatter_tensor(recv, send)
        expected = lambda: pattern(block * n, 0)[rank * block:(rank + 1) * block] * n + n * (n + 1) / 2
    elif op == "alltoall":
        send, recv = pattern(block * n, rank + 1), torch.empty(block * n)
        run = lambda: dist.all_to_all_single(recv, send)
        expected = lambda: torch.cat([pattern(block * n, r + 1)[rank * block:(rank + 1) * block] for r in range(n)])
    else:  # broadcast from rank 0, out of place as nccl-tests times it: the root fills recv from send
        send, recv = pattern(count, 1), torch.empty(count)
        def run():
            if rank == 0:
                recv.copy_(send)
            dist.broadcast(recv, src=0)
        expected = lambda: pattern(count, 1)
    return run, lambda: int((recv != expected()).sum().item()), count


def worker(rank, args, port, queue):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=args.nranks)
    n = args.nranks
    rows = []
    for size in sizes(args):
        run, check, count = make_op(torch, dist, args.op, size, rank, n)
        for _ in range(args.warmup):
            run()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(args.iters):
            run()
        elapsed = torch.tensor([(time.perf_counter() - start) / args.iters], dtype=torch.float64)
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        wrong = torch.tensor([check() if args.check else 0], dtype=torch.int64)
        dist.all_reduce(wrong)
        rows.append((size, count, elapsed.item(), int(wrong.item())))
    if rank == 0:
        queue.put(rows)
    dist.barrier()
    dist.destroy_process_group()


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    import torch
    import torch.multiprocessing as mp
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, args, port, queue)) for r in range(args.nranks)]
    for p in procs:
        p.start()
    rows = queue.get(timeout=3600)
    for p in procs:
        p.join()
    if any(p.exitcode != 0 for p in procs):
        print(f"gloo_perf: a rank failed: exit codes {[p.exitcode for p in procs]}", file=sys.stderr)
        return 1
    n, factor = args.nranks, BUS_FACTOR[args.op](args.nranks)
    print(f"# gloo_perf {args.op}: torch {torch.__version__} Gloo, {n} ranks, loopback TCP")
    print(f"# nThread 1 nGpus 1 minBytes {args.min_bytes} maxBytes {args.max_bytes} step: {args.factor:g}(factor) "
          f"warmup iters: {args.warmup} iters: {args.iters} agg iters: 1 validation: {args.check} graph: 0")
    print("#")
    print(f"#{'':>58}out-of-place{'':>23}in-place")
    print(f"#{'size':>11} {'count':>13} {'type':>9} {'redop':>7} {'root':>7} {'time':>8} {'algbw':>7} {'busbw':>7} "
          f"{'#wrong':>6} {'time':>8} {'algbw':>7} {'busbw':>7} {'#wrong':>6}")
    busbw_sum, wrong_total = 0.0, 0
    root = 0 if args.op == "broadcast" else -1
    redop = "sum" if args.op in ("all_reduce", "reduce_scatter") else "none"
    for size, count, seconds, wrong in rows:
        algbw = size / seconds / 1e9
        busbw = algbw * factor
        busbw_sum += busbw
        wrong_total += wrong
        print(f"{size:>12} {count:>13} {'float':>9} {redop:>7} {root:>7} {seconds * 1e6:>8.2f} {algbw:>7.2f} "
              f"{busbw:>7.2f} {wrong:>6} {'N/A':>8} {'N/A':>7} {'N/A':>7} {'N/A':>6}")
    print(f"# Out of bounds values : {wrong_total} {'OK' if wrong_total == 0 else 'FAILED'}")
    print(f"# Avg bus bandwidth    : {busbw_sum / max(len(rows), 1):g} ")
    return 0 if wrong_total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes a large two-rank ncclshim trace (FORMAT.md) for bench/trace_ingest_bench.sh: rank0.jsonl and
rank1.jsonl, each a header, a world communicator (init) and a split of it, then `--records` / 2
records per rank of a repeated training-step mix (allreduce, allgather, reducescatter, broadcast,
alltoall, a grouped send/recv exchange, reduce, gather, scatter, small allreduces on the split),
half of them GPU-timed, and a footer. Written independently of trace/trace_format.cc so that the
benchmark also checks that the reader takes what another writer produces.

usage: make_ingest_trace.py <out dir> [--records N]   (default 2,100,000 records in all)
"""
import argparse
import os

WORLD_ID = 0x5A17E5B0DEADBEEF
SPLIT_ID = 0x0BE7C0FFEE123457
# (op, comm, count, dtype, redop, root, peer(+1: the other rank), group depth)
STEP = [
    ("allreduce", "w", 1 << 20, "float32", "sum", -1, None, 0),
    ("allgather", "w", 1 << 16, "bfloat16", "none", -1, None, 0),
    ("reducescatter", "w", 1 << 16, "float32", "sum", -1, None, 0),
    ("broadcast", "w", 4096, "float32", "none", 0, None, 0),
    ("alltoall", "w", 8192, "float32", "none", -1, None, 0),
    ("groupstart", None, 0, "none", "none", -1, None, 1),
    ("send", "w", 16384, "float32", "none", -1, 1, 1),
    ("recv", "w", 16384, "float32", "none", -1, 1, 1),
    ("groupend", None, 0, "none", "none", -1, None, 1),
    ("reduce", "w", 1 << 18, "float32", "max", 1, None, 0),
    ("gather", "w", 2048, "float32", "none", 0, None, 0),
    ("scatter", "w", 2048, "float32", "none", 1, None, 0),
    ("allreduce", "s", 1024, "float32", "sum", -1, None, 0),
    ("allreduce", "s", 65536, "bfloat16", "avg", -1, None, 0),
]
SIZES = {"float32": 4, "bfloat16": 2, "none": 0}
PER_RANK_COUNT = {"allgather", "reducescatter", "alltoall", "gather", "scatter"}


def write_rank(path, rank, records):
    host = "benchhost"
    pid = 4000 + rank
    t = 1_000_000_000
    lines = [
        '{"type":"header","format":"ncclshim-trace","version":1,"abi":1,"host":"%s","pid":%d,"ppid":1,'
        '"global_rank":%d,"clock":"CLOCK_MONOTONIC","start_realtime_ns":1700000000000000000,'
        '"start_monotonic_ns":%d,"ring_records":4096}\n' % (host, pid, rank, t)]
    comm_line = ('{"type":"comm","n":%d,"event":"%s","comm":"0x%016x","parent":"0x%016x","split_seq":0,'
                 '"color":0,"key":%d,"nranks":2,"rank":%d,"global_rank":%d,"host":"%s","pid":%d,"device":%d,'
                 '"t_ns":%d}\n')
    lines.append(comm_line % (0, "init", WORLD_ID, 0, 0, rank, rank, host, pid, rank, t))
    lines.append(comm_line % (1, "split", SPLIT_ID, WORLD_ID, rank, rank, rank, host, pid, rank, t + 100))
    op_line = ('{"type":"op","n":%d,"comm":"0x%016x","rank":%d,"seq":%d,"op":"%s","count":%d,"dtype":"%s",'
               '"redop":"%s","root":%d,"peer":%d,"nranks":%d,"bytes":%d,"stream":"0x000055d0c8a3e2b0",'
               '"group":%d,"t_start_ns":%d,"t_end_ns":%d,"gpu_start_ns":%d,"gpu_end_ns":%d,"flags":%d,'
               '"result":0}\n')
    seq = {"w": 0, "s": 0}
    n = 2
    ops = 0
    with open(path, "w") as out:
        out.writelines(lines)
        batch = []
        while ops < records - 2:
            for op, comm, count, dtype, redop, root, peer, depth in STEP:
                if comm is None:
                    cid, crank, nranks, s = 0, -1, 0, 0
                else:
                    cid, crank, nranks = (WORLD_ID if comm == "w" else SPLIT_ID), rank, 2
                    s = seq[comm]
                    seq[comm] += 1
                size = count * SIZES[dtype] * (2 if op in PER_RANK_COUNT else 1)
                timed = ops % 2 == 0
                g0, g1 = (t + 3000, t + 18000 + size // 20) if timed else (0, 0)
                batch.append(op_line % (n, cid, crank, s, op, count, dtype, redop, root,
                                        1 - rank if peer else -1, nranks, size, depth, t, t + 20000,
                                        g0, g1, 2 if timed else 0))
                n += 1
                ops += 1
                t += 170_000
            if len(batch) >= 65536:
                out.writelines(batch)
                batch.clear()
        out.writelines(batch)
        out.write('{"type":"footer","records":%d,"comms":2,"ops":%d,"dropped":0,"invalid":0,"global_rank":%d,'
                  '"reason":"close","signal":0,"end_realtime_ns":1700000001000000000,"end_monotonic_ns":%d}\n'
                  % (ops + 2, ops, rank, t))
    return ops + 2


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--records", type=int, default=2_100_000)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    total = sum(write_rank(os.path.join(args.out, "rank%d.jsonl" % r), r, args.records // 2) for r in (0, 1))
    print(total)


if __name__ == "__main__":
    main()

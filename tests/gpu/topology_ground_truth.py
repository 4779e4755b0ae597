#!/usr/bin/env python3
"""NCCL's own traffic between nodes, from the runs of `tests/gpu/profiler_gpu_checks.sh topology`
(4 nodes x 1 GPU, each rank its own node): writes <out>/topology.txt (NCCL's rings, channels and
trees as its GRAPH log prints them) and <out>/bytes_per_pair.csv (per run, op, size, NCCL's
algorithm / protocol / channels, and for every ordered pair of nodes the network bytes one
instance of the op sent, summed over channels from the nccl_proxy send records, with the channels
used). Every value comes from NCCL itself (its log, and the proxy operations the profiler plugin
saw); nothing is modelled here.  Usage: topology_ground_truth.py <logs dir> <traces dir> <out dir>"""
import collections, glob, json, os, re, sys

logs, traces, out = sys.argv[1:4]

with open(os.path.join(out, "topology.txt"), "w") as f:
    for log in sorted(glob.glob(os.path.join(logs, "topo-*.log"))):
        run = os.path.basename(log)[:-4]
        lines = set()
        for line in open(log, errors="replace"):
            m = re.search(r"NCCL INFO ((Channel \d+/\d+ : [\d ]+$)|(Trees .*)|(Channel \d+/0 : .* via .*))", line.rstrip())
            if m:
                lines.add(m.group(1).strip())
        f.write(f"# {run}\n")
        for l in sorted(lines):
            f.write(l + "\n")

rows = []
for run_dir in sorted(glob.glob(os.path.join(traces, "topo-*"))):
    run = os.path.basename(run_dir)
    # (op, bytes) -> instances seen on a rank; (op, bytes) -> {(from, to): [bytes, set(channels)]}
    pair = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, set()]))
    decisions = {}
    instances = collections.Counter()
    for path in sorted(glob.glob(os.path.join(run_dir, "*.jsonl"))):
        ops, rank = {}, None
        records = [json.loads(l) for l in open(path)]
        for r in records:
            if r["type"] == "op" and r["op"] not in ("groupstart", "groupend") and r["bytes"] > 0:
                ops[(r["comm"], r["seq"])] = (r["op"], r["bytes"])
                rank = r["rank"] if rank is None else rank
        for (op, size) in ops.values():
            if rank == 0:
                instances[(op, size)] += 1
        for r in records:
            key = ops.get((r.get("comm"), r.get("seq")))
            if key is None:
                continue
            if r["type"] == "nccl_task":
                decisions.setdefault(key, set()).add((r["algo"], r["proto"], r["channels"]))
            elif r["type"] == "nccl_proxy" and r["dir"] == "send":
                cell = pair[key][(r["rank"], r["peer"])]
                cell[0] += r["bytes"]
                cell[1].add(r["channel"])
    for key in sorted(pair):
        op, size = key
        n = instances[key]
        algo = "/".join(sorted({f"{a} {p} {c}" for a, p, c in decisions.get(key, set())}))
        for (src, dst), (total, channels) in sorted(pair[key].items()):
            rows.append((run, op, size, algo, src, dst, total // n, total % n, len(channels), n))

with open(os.path.join(out, "bytes_per_pair.csv"), "w") as f:
    f.write("run,op,bytes,nccl_algo_proto_channels,from_node,to_node,net_bytes_per_op,remainder,channels_used,instances\n")
    for r in rows:
        f.write(",".join(str(x) for x in r) + "\n")
print(f"{len(rows)} rows")

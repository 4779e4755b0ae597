#!/usr/bin/env python3
"""NCCL's own choices and tuning inputs per emulated layout, from the runs of
`tests/gpu/profiler_gpu_checks.sh tuning` (runs tune-<op>-n<N>x<G>: N nodes of G ranks).
Writes <out>/choices.csv (nodes, gpus_per_node, op, bytes, algo, proto, channels: one row per
distinct op and size of a layout, from the profiler plugin's nccl_task records of every rank, joined
to the call's op line; bytes is the op line's `bytes`, the nccl-tests size) and <out>/init_lines.txt
(per layout, rank 0's init lines as NCCL printed them: NCCL version, the system topology, GRAPH
patterns with their channels, rings and trees, the TUNING table, threadThresholds, channel counts).
Checks, and prints: every rank recorded the same choice for a size; rank 0's recorded choices equal
its own TUNING lines ("AllReduce: N Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}") call for
call, and N equals the op line's bytes (divided by the ranks for allgather / reducescatter: NCCL
prints its count x type size, the per-rank size); the init lines of the runs of one layout agree (comm pointers
aside). Then where the choice changes with size, per layout and op, and the 4x2 choices against
tests/data/nccl_4x2/bytes_per_pair.csv.  Usage: tuning_ground_truth.py <logs dir> <traces dir> <out dir>
Exit 1 when a check fails."""
import collections, csv, glob, json, os, re, sys

logs, traces, out = sys.argv[1:4]
OPS = ["allreduce", "allgather", "reducescatter", "broadcast"]
PREFIX = re.compile(r"^(\S+:\d+):\d+ \[\d+\] NCCL INFO (.*)$")
DECISION = re.compile(r"^(\w+): (\d+) Bytes -> Algo (\S+) proto (\S+) channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}")
KEEP = re.compile(r"^(NCCL version|NET/Socket : Using|=== System|CPU/|\+ |\s+\+ |====|Pattern \d+, crossNic|"
                  r"\s*\d+ : |comm 0x\S+ rank 0 nRanks|Tree \d+ :|Channel \d+/\d+ : [\d ]+$|Ring \d+ :|Trees |"
                  r"P2P Chunksize|\s*Algorithm\s+\||\s*Protocol\s+\||\s*Max NThreads \||"
                  r"\s*(Broadcast|Reduce|AllGather|ReduceScatter|AllReduce) \||threadThresholds|"
                  r"\d+ coll channels|CC Off)")
failures = []


def layout_of(name):  # tune-all_reduce-n4x2 -> ("all_reduce", 4, 2)
    m = re.match(r"tune-(\w+)-n(\d+)x(\d+)$", name)
    return m.group(1), int(m.group(2)), int(m.group(3))


def rank0_lines(log):
    """Rank 0's NCCL INFO messages (its process, every thread), in order. nccl-tests' own output can
    precede one on the same line, so its lines are found by rank 0's host:pid anywhere in a line."""
    text = open(log, errors="replace").read().splitlines()
    pid = next((m.group(1) for m in map(PREFIX.match, text)
                if m and re.match(r"comm 0x\S+ rank 0 nRanks", m.group(2))), None)
    if pid is None:
        failures.append(f"{log}: no rank 0 init line")
        return []
    mine = re.compile(re.escape(pid) + r":\d+ \[\d+\] NCCL INFO (.*)$")
    return [m.group(1) for m in map(mine.search, text) if m]


choices = {}     # (nodes, g, op, bytes) -> set of (algo, proto, channels)
init = collections.defaultdict(dict)   # (nodes, g) -> run -> kept lines
joined = collections.Counter()
for run_dir in sorted(glob.glob(os.path.join(traces, "tune-*"))):
    run = os.path.basename(run_dir)
    _, nodes, g = layout_of(run)
    rank0_tasks = []
    for path in sorted(glob.glob(os.path.join(run_dir, "*.jsonl"))):
        records = [json.loads(l) for l in open(path)]
        ops = {(r["comm"], r["seq"]): r for r in records
               if r["type"] == "op" and r["op"] in OPS and r["bytes"] > 0}
        for r in records:
            if r["type"] != "nccl_task" or r["task"] != "coll":
                continue
            op = ops.get((r["comm"], r["seq"]))
            if op is None:
                failures.append(f"{run}: unjoined task n={r['n']} in {os.path.basename(path)}")
                continue
            choices.setdefault((nodes, g, op["op"], op["bytes"]), set()).add((r["algo"], r["proto"], r["channels"]))
            if r["rank"] == 0:
                # NCCL's line prints count x type size: per rank for AllGather / ReduceScatter
                per = op["nranks"] if op["op"] in ("allgather", "reducescatter") else 1
                rank0_tasks.append((op["bytes"] // per, r["algo"], r["proto"], r["channels"]))
    log = os.path.join(logs, run + ".log")
    lines = rank0_lines(log)
    logged = []
    for l in lines:
        m = DECISION.match(l)
        if m:
            logged.append((int(m.group(2)), m.group(3), m.group(4), int(m.group(6)) - int(m.group(5)) + 1))
    if logged != rank0_tasks:
        failures.append(f"{run}: rank 0's TUNING lines ({len(logged)}) differ from its nccl_task records ({len(rank0_tasks)})")
    else:
        joined[run] = len(logged)
    init[(nodes, g)][run] = [l for l in lines if KEEP.match(l) and not DECISION.match(l)]

for key, s in choices.items():
    if len(s) != 1:
        failures.append(f"{key}: ranks or calls disagree: {sorted(s)}")

os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "choices.csv"), "w") as f:
    f.write("nodes,gpus_per_node,op,bytes,algo,proto,channels\n")
    for key in sorted(choices, key=lambda k: (k[0] * k[1], k[1], OPS.index(k[2]), k[3])):
        for a, p, c in sorted(choices[key]):
            f.write(",".join(str(x) for x in (*key, a, p, c)) + "\n")

norm = lambda ls: [re.sub(r"0x[0-9a-f]+", "0x", l) for l in ls]
with open(os.path.join(out, "init_lines.txt"), "w") as f:
    for nodes, g in sorted(init, key=lambda k: (k[0] * k[1], k[1])):
        runs = init[(nodes, g)]
        first = next((r for r in runs if "all_reduce" in r), sorted(runs)[0])
        same = [r for r in sorted(runs) if r != first and norm(runs[r]) == norm(runs[first])]
        differ = [r for r in sorted(runs) if r != first and r not in same]
        f.write(f"# {nodes}x{g}: {nodes} nodes x {g} GPUs, {nodes * g} ranks; rank 0 of {first}; "
                f"the same in {', '.join(same) or 'no other run'}"
                + (f"; DIFFERENT in {', '.join(differ)}" if differ else "") + "\n")
        for l in runs[first]:
            f.write(l + "\n")
        f.write("\n")
        if differ:
            print(f"note: init lines of {nodes}x{g} differ in {differ}")

print(f"{len(choices)} (layout, op, size) rows; rank 0's TUNING lines equal its nccl_task records in "
      f"{len(joined)} runs ({sum(joined.values())} calls)")

# Where the choice changes with size.
for nodes, g in sorted({k[:2] for k in choices}, key=lambda k: (k[0] * k[1], k[1])):
    print(f"\n## {nodes}x{g}")
    for op in OPS:
        sizes = sorted(k[3] for k in choices if k[:3] == (nodes, g, op))
        spans, prev = [], None
        for b in sizes:
            c = "/".join(f"{a} {p} {n}" for a, p, n in sorted(choices[(nodes, g, op, b)]))
            if c != prev:
                spans.append([b, b, c])
                prev = c
            else:
                spans[-1][1] = b
        print(f"{op:14s} " + "; ".join(f"{lo}-{hi}: {c}" for lo, hi, c in spans))

# The 4x2 choices against tests/data/nccl_4x2 (topology2 stage, H100 x2).
ref = os.path.join(os.path.dirname(__file__), "..", "data", "nccl_4x2", "bytes_per_pair.csv")
if os.path.exists(ref) and any(k[:2] == (4, 2) for k in choices):
    same, diff = set(), set()
    for row in csv.DictReader(open(ref)):
        if "-Tree" in row["run"] or row["op"] not in OPS:
            continue
        key = (4, 2, row["op"], int(row["bytes"]))
        if key not in choices:
            continue
        want = {tuple(x.split(" ")) for x in row["nccl_algo_proto_channels"].split("/")}
        have = {(a, p, str(c)) for a, p, c in choices[key]}
        (same if want == have else diff).add(key)
        if want != have:
            print(f"4x2 differs from nccl_4x2: {key[2]} {key[3]}: here {sorted(have)}, there {sorted(want)}")
    print(f"\n4x2 against tests/data/nccl_4x2/bytes_per_pair.csv: {len(same)} (op, size) agree, "
          f"{len(diff)} differ")

for fl in failures:
    print("FAIL:", fl)
sys.exit(1 if failures else 0)

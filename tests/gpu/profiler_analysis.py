#!/usr/bin/env python3
"""Checks the traces of tests/gpu/profiler_gpu_checks.sh (one directory per nccl-tests run, named
<op>-n<nodes>[-<Algo>-<Proto>], every rank its own node) and prints markdown tables:

  * joins: every recorded collective / send / recv op has its nccl_task lines (joined by comm + seq);
    every nccl_proxy line is joined too;
  * decisions: per op and size, the algorithm / protocol / channels NCCL chose; with NCCL_ALGO and
    NCCL_PROTO forced (the directory name says), every collective task follows them;
  * network bytes: per op instance (same comm + seq on every rank), the bytes the proxy operations
    sent, summed over ranks, against what NCCL's algorithm moves between nodes: allreduce
    2(n-1)·S (ring and tree alike), allgather / reducescatter / alltoall (n-1)·S (S = the whole
    buffer), broadcast / reduce (n-1)·S, send / recv S per call; times the protocol's wire factor
    (SIMPLE 1, LL 2: 8 data bytes per 16-byte line, LL128 128/120); and sent == received.
  * with a second argument, the directory of the runs' logs (<run>.log, NCCL_DEBUG=INFO with the
    TUNING subsystem): NCCL's own INFO line per collective ("AllReduce: 4096 Bytes -> Algo RING
    proto LL channel{Lo..Hi}={0..0}", printed by rank 0) against rank 0's nccl_task lines: the
    same (function, bytes, algorithm, protocol, channels) multiset.
Exit status 1 when a check fails. Standard library only (runs here or on the GPU machine).
Usage: profiler_analysis.py <traces dir> [<logs dir>]"""
import collections
import glob
import json
import os
import re
import sys

WIRE = {"SIMPLE": 1.0, "LL": 2.0, "LL128": 128.0 / 120.0}
COLL_FUNC = {"allreduce": "AllReduce", "allgather": "AllGather", "reducescatter": "ReduceScatter",
             "broadcast": "Broadcast", "reduce": "Reduce"}


def read_run(path):
    files = []
    for name in sorted(glob.glob(os.path.join(path, "*.jsonl"))):
        ops, tasks, proxies = [], collections.defaultdict(list), collections.defaultdict(list)
        with open(name) as f:
            for line in f:
                rec = json.loads(line)
                t = rec.get("type")
                if t == "op" and rec["op"] not in ("groupstart", "groupend") and rec["result"] == 0:
                    ops.append(rec)
                elif t == "nccl_task":
                    tasks[(rec["comm"], rec["seq"])].append(rec)
                elif t == "nccl_proxy":
                    proxies[(rec["comm"], rec["seq"])].append(rec)
        files.append((name, ops, tasks, proxies))
    return files


ELEMENT = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "float16": 2, "float32": 4,
           "float64": 8, "bfloat16": 2, "float8e4m3": 1, "float8e5m2": 1}
TUNING = re.compile(r"(\w+): (\d+) Bytes -> Algo (\w+) proto (\w+) channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}")


def compare_logs(root, logs, failures):
    """NCCL's INFO tuning lines (rank 0) against rank 0's recorded collective tasks, per run."""
    rows = []
    for run in sorted(os.listdir(root)):
        log = os.path.join(logs, run + ".log")
        if not os.path.isfile(log):
            continue
        said = collections.Counter()
        for line in open(log, errors="replace"):
            m = TUNING.search(line)
            if m:
                said[(m[1], int(m[2]), m[3], m[4], int(m[6]) - int(m[5]) + 1)] += 1
        recorded = collections.Counter()
        for _, _, tasks, _ in read_run(os.path.join(root, run)):
            for tlist in tasks.values():
                for t in tlist:
                    if t["task"] == "coll" and t["rank"] == 0:
                        recorded[(t["func"], t["count"] * ELEMENT.get(t["dtype"], 0), t["algo"], t["proto"], t["channels"])] += 1
        same = said == recorded
        rows.append((run, sum(said.values()), sum(recorded.values()), "yes" if same else "NO"))
        if not same:
            failures.append(f"{run}: NCCL's INFO lines and rank 0's tasks differ: {list((said - recorded).items())[:3]} / "
                            f"{list((recorded - said).items())[:3]}")
    print("\n## NCCL's own INFO line per collective vs the recorded task (rank 0)\n")
    print("| run | NCCL INFO lines | rank-0 collective tasks | same (func, bytes, algo, proto, channels) multiset |")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")


def expected_total(op, s, n):
    if op == "allreduce":
        return 2 * (n - 1) * s
    if op in ("allgather", "reducescatter", "alltoall", "broadcast", "reduce"):
        return (n - 1) * s
    return s  # send / recv: per call


def main(root, logs=None):
    failures = []
    decisions = collections.OrderedDict()  # (run, op, bytes) -> {algo/proto/channels: count}
    bytes_rows = collections.OrderedDict()  # (run, op, bytes, algo/proto) -> [ratios], mismatches
    summary = []
    for run in sorted(os.listdir(root)):
        path = os.path.join(root, run)
        if not os.path.isdir(path):
            continue
        parts = run.split("-")
        nodes = int(parts[1][1:])
        forced = (parts[2].upper(), parts[3].upper()) if len(parts) >= 4 else None
        files = read_run(path)
        n_empty = n_ops = n_unjoined = n_tasks = n_proxies = n_proxy_unjoined = n_forced_bad = 0
        instances = collections.defaultdict(lambda: {"send": 0, "recv": 0, "op": None, "bytes": 0, "proto": set()})
        for name, ops, tasks, proxies in files:
            for key, plist in proxies.items():
                n_proxies += len(plist)
                n_proxy_unjoined += sum(1 for p in plist if not p["flags"] & 1)
            for op in ops:
                key = (op["comm"], op["seq"])
                ts = tasks.get(key, [])
                if op["bytes"] == 0:  # NCCL drops empty collectives: no task, nothing on the wire
                    n_empty += 1
                    if ts:
                        failures.append(f"{run}: an empty {op['op']} has tasks")
                    continue
                n_ops += 1
                n_tasks += len(ts)
                if not ts or any(not t["flags"] & 1 for t in ts):
                    n_unjoined += 1
                    continue
                coll = [t for t in ts if t["task"] == "coll"]
                for t in coll:
                    if not t["algo"] or not t["proto"] or t["channels"] < 1:
                        failures.append(f"{run}: {op['op']} seq {op['seq']}: task without algo/proto/channels: {t}")
                    if forced and (t["algo"].upper(), t["proto"].upper()) != forced:
                        n_forced_bad += 1
                    d = decisions.setdefault((run, op["op"], op["bytes"]), collections.Counter())
                    d[f"{t['algo']}/{t['proto']}/{t['channels']}ch"] += 1
                if not coll:
                    d = decisions.setdefault((run, op["op"], op["bytes"]), collections.Counter())
                    d[f"p2p/{max(t['channels'] for t in ts)}ch"] += 1
                inst = instances[(op["comm"], op["seq"], op["op"] if op["op"] in ("send", "recv") else "", name if op["op"] in ("send", "recv") else "")]
                inst["op"], inst["bytes"] = op["op"], op["bytes"]
                for t in coll:
                    inst["proto"].add(t["proto"].upper())
                for p in proxies.get(key, []):
                    inst["send" if p["dir"] == "send" else "recv"] += p["bytes"]
        for (comm, seq, _, _), inst in instances.items():
            op = inst["op"]
            proto = "/".join(sorted(inst["proto"])) or "p2p"
            want = expected_total(op, inst["bytes"], nodes) * (WIRE.get(proto, 1.0) if proto != "p2p" else 1.0)
            got = inst["recv"] if op == "recv" else inst["send"]
            row = bytes_rows.setdefault((run, op, inst["bytes"], proto), {"ratios": [], "unbalanced": 0})
            row["ratios"].append(got / want if want else float("nan"))
            if op not in ("send", "recv") and inst["send"] != inst["recv"]:
                row["unbalanced"] += 1
        if n_unjoined:
            failures.append(f"{run}: {n_unjoined} of {n_ops} ops without joined nccl_task lines")
        if n_proxy_unjoined:
            failures.append(f"{run}: {n_proxy_unjoined} of {n_proxies} nccl_proxy lines not joined")
        if n_forced_bad:
            failures.append(f"{run}: {n_forced_bad} collective tasks do not follow the forced {forced}")
        if n_proxies == 0:
            failures.append(f"{run}: no nccl_proxy lines")
        summary.append((run, len(files), f"{n_ops} (+{n_empty} empty)", n_tasks, n_proxies, n_unjoined, n_proxy_unjoined,
                        "-" if not forced else ("followed" if not n_forced_bad else f"{n_forced_bad} not")))

    print("## Runs\n")
    print("| run | ranks (= nodes) | ops | nccl_task | nccl_proxy | ops not joined | proxies not joined | forced algo/proto |")
    print("|---|---|---|---|---|---|---|---|")
    for r in summary:
        print("| " + " | ".join(str(x) for x in r) + " |")
    print("\n## NCCL's decisions per op and size (algo/proto/channels: tasks)\n")
    print("| run | op | bytes | decisions |")
    print("|---|---|---|---|")
    for (run, op, size), counter in decisions.items():
        print(f"| {run} | {op} | {size} | " + ", ".join(f"{k}: {v}" for k, v in sorted(counter.items())) + " |")
    print("\n## Network bytes: recorded / expected (sum over ranks per op instance; send/recv per call)\n")
    print("| run | op | bytes | proto | instances | ratio min | ratio max | sent != received |")
    print("|---|---|---|---|---|---|---|---|")
    for (run, op, size, proto), row in bytes_rows.items():
        rs = row["ratios"]
        print(f"| {run} | {op} | {size} | {proto} | {len(rs)} | {min(rs):.4f} | {max(rs):.4f} | {row['unbalanced']} |")
        if proto == "SIMPLE" and size >= 65536 and (abs(min(rs) - 1) > 1e-9 or abs(max(rs) - 1) > 1e-9):
            failures.append(f"{run}: {op} {size} B SIMPLE: network bytes {min(rs):.4f}..{max(rs):.4f} of expected")
        if row["unbalanced"]:
            failures.append(f"{run}: {op} {size} B: sent != received in {row['unbalanced']} instances")
    if logs:
        compare_logs(root, logs, failures)
    print("\n## Checks\n")
    for f in failures:
        print(f"- FAIL {f}")
    print(f"\n{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "traces", sys.argv[2] if len(sys.argv) > 2 else None))

"""Reads toggle_<what>_r<N>.jsonl written by tests/gpu/torch_busbw.py with BUSBW_BLOCK (the shim's
recording / events switched every few calls, every call timed on its own) from a folder and prints,
per <what> and op, over the sizes below 1 MiB: per run (one process launch) the median of its
block pairs' on − off, then the median over runs, the lowest … highest run and how many runs were
above TARGET_US (0.5); and the pooled median of all pairs with a bootstrap 95 % interval that
resamples whole runs (a launch moves all its pairs together, so resampling pairs would understate
the spread).
Usage: block_toggle_table.py DIR"""
import glob
import json
import os
import random
import re
import statistics
import sys
from collections import defaultdict

TARGET_US = 0.5


def read_runs(folder):
    """{what: {run path: {op: [pair differences, µs]}}} for the block rows below 1 MiB."""
    runs = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for path in sorted(glob.glob(f"{folder}/toggle_*.jsonl")):
        what = re.match(r"toggle_([a-z0-9]+)", os.path.basename(path)).group(1)
        for line in open(path):
            if not line.startswith("{") or '"blk_diffs"' not in line:
                continue
            row = json.loads(line)
            if row["bytes"] < (1 << 20):
                runs[what][path][row["op"]].extend(row["blk_diffs"])
                runs[what][path]["all"].extend(row["blk_diffs"])
    return runs


def run_level_interval(per_run):
    """Bootstrap 95 % interval of the pooled median, resampling runs whole."""
    lists = list(per_run)
    if len(lists) < 2:
        return None
    medians = []
    for _ in range(2000):
        pooled = [d for chosen in random.choices(lists, k=len(lists)) for d in chosen]
        medians.append(statistics.median(pooled))
    medians.sort()
    return medians[50], medians[1949]


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: block_toggle_table.py DIR (holding toggle_<what>_r<N>.jsonl from BUSBW_BLOCK runs)")
    runs = read_runs(sys.argv[1])
    if not runs:
        sys.exit(f"{sys.argv[1]}: no BUSBW_BLOCK lines (\"blk_diffs\") in toggle_*.jsonl")
    random.seed(1)
    print("Block pairs (adjacent blocks of calls, on − off), sizes below 1 MiB, µs per call: per run the median")
    print(f"of its pairs; median over runs [lowest … highest], runs above {TARGET_US} µs; pooled median of all pairs")
    print("[bootstrap 95 % over whole runs], pairs")
    print()
    print("| on − off | op | runs: median [lowest … highest] | above | pooled [95 %] | pairs |")
    print("|---|---|---:|---:|---:|---:|")
    for what, by_run in sorted(runs.items()):
        ops = sorted({op for per_op in by_run.values() for op in per_op}, key=lambda op: (op == "all", op))
        for op in ops:
            lists = [per_op[op] for per_op in by_run.values() if per_op.get(op)]
            medians = [statistics.median(values) for values in lists]
            pooled = [d for values in lists for d in values]
            interval = run_level_interval(lists)
            spread = f"[{interval[0]:+.2f} … {interval[1]:+.2f}]" if interval else ""
            print(f"| {what} | {op} | {statistics.median(medians):+.2f} [{min(medians):+.2f} … {max(medians):+.2f}] | "
                  f"{sum(m > TARGET_US for m in medians)}/{len(medians)} | {statistics.median(pooled):+.2f} {spread} | "
                  f"{len(pooled)} |")


if __name__ == "__main__":
    main()

"""Reads toggle_<what>_r<N>.jsonl written by tests/gpu/torch_busbw.py with BUSBW_BLOCK (the shim's
recording / events switched every few calls, every call timed on its own) from a folder and prints,
per <what> and op, over the sizes below 1 MiB: per run (one process launch) the median of its
block pairs' on − off, then the median over runs, the lowest … highest run and how many runs were
above TARGET_US (0.5); and the pooled median of all pairs with a bootstrap 95 % interval that
resamples whole runs (a launch moves all its pairs together, so resampling pairs would understate
the spread). Where the lines carry "blk_mean_diffs" (the pairs' on − off of the blocks' means, which
keep a cost only some calls pay), a second table gives the same with means: a run's figure is the
mean of its pairs with the highest and lowest TRIM (2 %) left out against the machine's slow
episodes (a median would drop a cost that only some pairs carry, as the block's median drops one
that only some calls pay).
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
TRIM = 0.02  # of the pairs left out at each end of the means


def read_runs(folder, key):
    """{what: {run path: {op: [pair differences, µs]}}} of the block rows below 1 MiB that carry `key`."""
    runs = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for path in sorted(glob.glob(f"{folder}/toggle_*.jsonl")):
        what = re.match(r"toggle_([a-z0-9]+)", os.path.basename(path)).group(1)
        for line in open(path):
            if not line.startswith("{") or f'"{key}"' not in line:
                continue
            row = json.loads(line)
            if row["bytes"] < (1 << 20):
                runs[what][path][row["op"]].extend(row[key])
                runs[what][path]["all"].extend(row[key])
    return runs


def trimmed_mean(values):
    """The mean with the highest and lowest TRIM of the values left out."""
    ordered = sorted(values)
    cut = int(len(ordered) * TRIM)
    return statistics.fmean(ordered[cut:len(ordered) - cut])


def run_level_interval(per_run, stat):
    """Bootstrap 95 % interval of `stat` over the pooled values, resampling runs whole."""
    lists = list(per_run)
    if len(lists) < 2:
        return None
    figures = []
    for _ in range(2000):
        pooled = [d for chosen in random.choices(lists, k=len(lists)) for d in chosen]
        figures.append(stat(pooled))
    figures.sort()
    return figures[50], figures[1949]


def print_table(runs, stat):
    """One row per <what> and op: `stat` of each run's pairs, their median over runs [lowest …
    highest], how many runs above TARGET_US, and `stat` over all pairs with its run-level interval."""
    print("| on − off | op | runs: median [lowest … highest] | above | pooled [95 %] | pairs |")
    print("|---|---|---:|---:|---:|---:|")
    for what, by_run in sorted(runs.items()):
        ops = sorted({op for per_op in by_run.values() for op in per_op}, key=lambda op: (op == "all", op))
        for op in ops:
            lists = [per_op[op] for per_op in by_run.values() if per_op.get(op)]
            figures = [stat(values) for values in lists]
            pooled = [d for values in lists for d in values]
            interval = run_level_interval(lists, stat)
            spread = f"[{interval[0]:+.2f} … {interval[1]:+.2f}]" if interval else ""
            print(f"| {what} | {op} | {statistics.median(figures):+.2f} [{min(figures):+.2f} … {max(figures):+.2f}] | "
                  f"{sum(f > TARGET_US for f in figures)}/{len(figures)} | {stat(pooled):+.2f} {spread} | "
                  f"{len(pooled)} |")


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: block_toggle_table.py DIR (holding toggle_<what>_r<N>.jsonl from BUSBW_BLOCK runs)")
    runs = read_runs(sys.argv[1], "blk_diffs")
    if not runs:
        sys.exit(f"{sys.argv[1]}: no BUSBW_BLOCK lines (\"blk_diffs\") in toggle_*.jsonl")
    random.seed(1)
    print("Block pairs (adjacent blocks of calls, on − off), sizes below 1 MiB, µs per call: per run the median")
    print(f"of its pairs; median over runs [lowest … highest], runs above {TARGET_US} µs; pooled median of all pairs")
    print("[bootstrap 95 % over whole runs], pairs")
    print()
    print_table(runs, statistics.median)
    mean_runs = read_runs(sys.argv[1], "blk_mean_diffs")
    if mean_runs:
        print()
        print("The same pairs by the blocks' means (each block's mean call instead of its median, so that a")
        print("cost only some calls pay counts), a run's figure the mean of its pairs without the highest and")
        print(f"lowest {TRIM:.0%}; pooled: the same over all pairs")
        print()
        print_table(mean_runs, trimmed_mean)


if __name__ == "__main__":
    main()

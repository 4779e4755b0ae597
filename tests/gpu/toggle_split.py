"""Reads toggle_<what>_*.jsonl (tests/gpu/torch_busbw.py with BUSBW_TOGGLE=1: the plugin's events on
and off in alternate windows of one process) from a folder, groups them by <what> (e.g. record,
norecord: NCCLSHIM_PROFILER_RECORD=0, noop: NCCLSHIM_PROFILER_NOOP=1) and prints, per group, over
all its sizes below 1 MiB: the median of (best window on - best window off), a bootstrap 95 %
interval of that median, how many pairs were positive, and the median of (median on - median off);
then the same median and interval per op; then per run (one file: one process launch), the median
of its window pairs, per op and over all ops: the median over runs, the range, and how many runs
were above TARGET_US (0.5). Window pairs of one run are not independent of each other: the machine
and the launch (where the pages fell) move a whole run, so an interval over pooled pairs is
narrower than the spread between runs; the run table shows that spread.
Usage: toggle_split.py DIR"""
import glob
import json
import os
import random
import re
import statistics
import sys
from collections import defaultdict


def main():
    groups = defaultdict(list)
    for path in sorted(glob.glob(f"{sys.argv[1]}/toggle_*.jsonl")):
        what = re.match(r"toggle_([a-z0-9]+)", os.path.basename(path)).group(1)
        for line in open(path):
            if line.startswith("{") and '"us_off"' in line:
                row = json.loads(line)
                if row["bytes"] < (1 << 20):
                    row["run"] = path
                    groups[what].append(row)
    random.seed(1)
    print("| events on − off, per call | pairs | median of best − best, µs | bootstrap 95 % | positive | median of median − median, µs |")
    print("|---|---:|---:|---:|---:|---:|")
    for what, rows in sorted(groups.items()):
        best = [r["us"] - r["us_off"] for r in rows]
        med = [r["med_on"] - r["med_off"] for r in rows]
        boot = sorted(statistics.median(random.choices(best, k=len(best))) for _ in range(4000))
        print(f"| {what} | {len(best)} | {statistics.median(best):+.2f} | {boot[100]:+.2f} … {boot[3900]:+.2f} | "
              f"{sum(b > 0 for b in best)} | {statistics.median(med):+.2f} |")
    paired = {what: [on - off for r in rows if "win_on" in r for on, off in zip(r["win_on"], r["win_off"])]
              for what, rows in groups.items()}
    if any(paired.values()):
        print()
        print("Window pairs (window i on, window i off, back to back), all sizes below 1 MiB: per call, µs")
        print()
        print("| events on − off | pairs | median of (on − off) | bootstrap 95 % | positive | mean of the middle half |")
        print("|---|---:|---:|---:|---:|---:|")
        for what, diffs in sorted(paired.items()):
            if not diffs:
                continue
            boot = sorted(statistics.median(random.choices(diffs, k=len(diffs))) for _ in range(2000))
            mid = sorted(diffs)[len(diffs) // 4: len(diffs) - len(diffs) // 4]
            print(f"| {what} | {len(diffs)} | {statistics.median(diffs):+.3f} | {boot[50]:+.3f} … {boot[1950]:+.3f} | "
                  f"{sum(d > 0 for d in diffs)} | {statistics.mean(mid):+.3f} |")
    print()
    print("Per op (sizes below 1 MiB): median of the window pairs' on − off (of best − best where a run")
    print("kept no windows), µs [bootstrap 95 %], pairs")
    print()
    ops = sorted({r["op"] for rows in groups.values() for r in rows})
    print("| events on − off | " + " | ".join(ops) + " |")
    print("|---|" + "---:|" * len(ops))
    for what, rows in sorted(groups.items()):
        cells = []
        for op in ops:
            mine = [r for r in rows if r["op"] == op]
            if mine and all("win_on" in r for r in mine):  # window pairs where the run kept them
                best = [on - off for r in mine for on, off in zip(r["win_on"], r["win_off"])]
            else:
                best = [r["us"] - r["us_off"] for r in mine]
            if not best:
                cells.append("")
                continue
            boot = sorted(statistics.median(random.choices(best, k=len(best))) for _ in range(2000))
            cells.append(f"{statistics.median(best):+.2f} [{boot[50]:+.2f} … {boot[1950]:+.2f}], {len(best)}")
        print(f"| {what} | " + " | ".join(cells) + " |")
    print_per_run(groups, ops)


TARGET_US = 0.5


def print_per_run(groups, ops):
    """Per variant and op: the median of each run's window pairs, then over runs."""
    runs = defaultdict(list)  # variant -> [{op: [pair differences]}], one entry per run (file)
    for what, rows in sorted(groups.items()):
        by_run = defaultdict(lambda: defaultdict(list))
        for r in rows:
            if "win_on" in r:
                by_run[r["run"]][r["op"]] += [on - off for on, off in zip(r["win_on"], r["win_off"])]
        for pairs in by_run.values():
            pairs["all"] = [d for op in ops if op in pairs for d in pairs[op]]
            runs[what].append(pairs)
    if not runs:
        return
    print()
    print("Per run (one process launch each): the median of the run's window pairs, µs; median over runs")
    print(f"[lowest … highest run], runs above {TARGET_US} µs of runs")
    print()
    columns = ["all"] + ops
    print("| events on − off | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for what, per_run in sorted(runs.items()):
        cells = []
        for op in columns:
            medians = sorted(statistics.median(r[op]) for r in per_run if r.get(op))
            if not medians:
                cells.append("")
                continue
            above = sum(m > TARGET_US for m in medians)
            cells.append(f"{statistics.median(medians):+.2f} [{medians[0]:+.2f} … {medians[-1]:+.2f}], "
                         f"{above}/{len(medians)}")
        print(f"| {what} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

"""Reads toggle_<what>_*.jsonl (tests/gpu/torch_busbw.py with BUSBW_TOGGLE=1: the plugin's events on
and off in alternate windows of one process) from a folder, groups them by <what> (e.g. record,
norecord: NCCLSHIM_PROFILER_RECORD=0, noop: NCCLSHIM_PROFILER_NOOP=1) and prints, per group, over
all its sizes below 1 MiB: the median of (best window on - best window off), a bootstrap 95 %
interval of that median, how many pairs were positive, and the median of (median on - median off).
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


if __name__ == "__main__":
    main()

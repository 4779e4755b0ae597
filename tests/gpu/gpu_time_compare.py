"""NCCL's GPU time per (op, size) in two GPU-timed captures of the same program, side by side: the
median over calls and ranks of each, their ratio (B / A) and B's spread. Used to check that a
capture made on one GPU shared by both ranks through MPS (tests/gpu/mps.sh) measures what the
two-GPU ground truth (tests/data/time_truth) measured. Usage: gpu_time_compare.py DIR_A DIR_B."""
import glob
import json
import os
import statistics
import sys
from collections import defaultdict

from size_text import human


def gpu_times(directory):
    times = defaultdict(list)
    for path in glob.glob(os.path.join(directory, "*.jsonl")):
        with open(path) as trace:
            for line_number, line in enumerate(trace, 1):
                record = json.loads(line)
                if record.get("type") != "op" or "gpu_start_ns" not in record:
                    continue
                elapsed = record["gpu_end_ns"] - record["gpu_start_ns"]
                if elapsed <= 0:
                    sys.exit(f"{path}:{line_number}: gpu_end_ns is not after gpu_start_ns")
                times[(record["op"], record["bytes"])].append(elapsed / 1e3)
    if not times:
        sys.exit(f"{directory}: no GPU-timed op records")
    return times



def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = gpu_times(sys.argv[1]), gpu_times(sys.argv[2])
    print(f"| op | size | A median (us) | B median (us) | B / A | B min-max (us) |")
    print("|---|---|---|---|---|---|")
    for key in sorted(a.keys() & b.keys()):
        ma, mb = statistics.median(a[key]), statistics.median(b[key])
        print(f"| {key[0]} | {human(key[1])} | {ma:.1f} | {mb:.1f} | {mb / ma:.2f} | "
              f"{min(b[key]):.1f}-{max(b[key]):.1f} |")


if __name__ == "__main__":
    main()

"""Replay time against NCCL's GPU time per (op, size), from phynet's --report CSV of a replay of a
GPU-timed capture (recorded_us is NCCL's GPU time of the call, time_us the replay's): the median of
each over the calls, their ratio, and the spread of the per-call ratio. Usage: time_truth_table.py
REPORT.csv [MIN_CALLS]. Prints a Markdown table."""
import csv
import statistics
import sys
from collections import defaultdict

from size_text import human



def main():
    rows = defaultdict(list)
    for row in csv.DictReader(open(sys.argv[1])):
        if row["recorded_us"] in ("", "-", "nan"):
            continue
        rows[(row["op"], int(row["bytes"]))].append((float(row["time_us"]), float(row["recorded_us"]),
                                                     row["algorithm"], row["protocol"], row["channels"]))
    min_calls = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    print("| op | size | calls | algorithm / protocol / channels | replay median (us) | NCCL GPU median (us) "
          "| ratio | ratio spread |")
    print("|---|---|---|---|---|---|---|---|")
    for (op, size), calls in sorted(rows.items()):
        if len(calls) < min_calls:
            continue
        replay = statistics.median(c[0] for c in calls)
        nccl = statistics.median(c[1] for c in calls)
        ratios = sorted(c[0] / c[1] for c in calls if c[1] > 0)
        how = "/".join(sorted({f"{c[2]} {c[3]} {c[4]}" for c in calls}))
        print(f"| {op} | {human(size)} | {len(calls)} | {how} | {replay:.1f} | {nccl:.1f} | "
              f"{replay / nccl:.2f} | {ratios[0]:.2f}-{ratios[-1]:.2f} |")


if __name__ == "__main__":
    main()

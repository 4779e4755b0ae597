"""Reads busbw_<side><round>.jsonl (tests/gpu/torch_busbw.py output of tests/gpu/plugin_overhead.sh)
for the sides named on the command line (the first is the base, normally plain) and prints, per op,
a markdown table: per size the base's median [best] time over the rounds (each round's figure is
that run's best window), its spread (max - min over the rounds), and per side the microseconds
added to the base, median - median [best - best]; from 1 MiB also the busbw ratio of each side,
median / median [best / best]. Then per op and side: the mean added time over the sizes below 1 MiB
(median-based and best-based), the largest, and the lowest ratio from 1 MiB. Where OUT also holds
toggle*.jsonl (torch_busbw.py with BUSBW_TOGGLE=1: the plugin's events on and off in alternate
windows of one process), per op the median over its sizes below 1 MiB of on - off (best windows, and
median windows), with every pair's figures.
Usage: plugin_table.py OUT plain fwd rec plugin ..."""
import glob
import json
import os
import re
import statistics
import sys
from collections import defaultdict

BIG = 1 << 20


def load(out, side):
    rounds = defaultdict(list)  # (op, bytes) -> one time per round (that run's best window)
    for path in sorted(glob.glob(f"{out}/busbw_{side}*.jsonl")):
        if not re.fullmatch(rf"busbw_{re.escape(side)}\d+\.jsonl", os.path.basename(path)):
            continue
        for line in open(path):
            if not line.startswith("{"):
                continue
            row = json.loads(line)
            if "op" in row:
                rounds[(row["op"], row["bytes"])].append(row["us"])
    return rounds


def main():
    out, sides = sys.argv[1], sys.argv[2:]
    data = {side: load(out, side) for side in sides}
    base, others = sides[0], sides[1:]
    ops = sorted({op for op, _ in data[base]})
    nrounds = {side: max((len(v) for v in data[side].values()), default=0) for side in sides}
    print("rounds per side: " + ", ".join(f"{s} {nrounds[s]}" for s in sides) + "\n")
    summary = []
    for op in ops:
        sizes = sorted(b for o, b in data[base] if o == op)
        print(f"#### {op}\n")
        print(f"| bytes | {base} median [best] us | spread | " +
              " | ".join(f"+{s} us" for s in others) + " | " + " | ".join(f"ratio {s}" for s in others) + " |")
        print("|---:|---:|---:|" + "---:|" * (2 * len(others)))
        added = defaultdict(list)  # side -> (median-added, best-added) per small size
        lowest = defaultdict(lambda: [9.9, 9.9])
        for size in sizes:
            b = data[base][(op, size)]
            bmed, bbest = statistics.median(b), min(b)
            cells, ratios = [], []
            for s in others:
                v = data[s].get((op, size))
                if not v:
                    cells.append("-")
                    ratios.append("")
                    continue
                med, best = statistics.median(v), min(v)
                cells.append(f"{med - bmed:+.2f} [{best - bbest:+.2f}]")
                if size < BIG:
                    added[s].append((med - bmed, best - bbest))
                    ratios.append("")
                else:
                    rm, rb = bmed / med, bbest / best
                    lowest[s] = [min(lowest[s][0], rm), min(lowest[s][1], rb)]
                    ratios.append(f"{rm:.4f} [{rb:.4f}]")
            print(f"| {size} | {bmed:.2f} [{bbest:.2f}] | {max(b) - min(b):.2f} | " + " | ".join(cells) + " | " +
                  " | ".join(ratios) + " |")
        print()
        for s in others:
            if not added[s]:
                continue
            meds = [a for a, _ in added[s]]
            bests = [b for _, b in added[s]]
            summary.append(f"| {op} | {s} | {statistics.mean(meds):+.2f} [{statistics.mean(bests):+.2f}] | "
                           f"{max(meds):+.2f} [{max(bests):+.2f}] | " +
                           (f"{lowest[s][0]:.4f} [{lowest[s][1]:.4f}]" if lowest[s][0] < 9 else "-") + " |")
    print("#### summary: added us per call below 1 MiB (mean over sizes, median [best]); lowest busbw ratio from 1 MiB\n")
    print("| op | side | mean added < 1 MiB | largest added < 1 MiB | lowest ratio >= 1 MiB |")
    print("|---|---|---:|---:|---:|")
    print("\n".join(summary))
    toggles = sorted(glob.glob(f"{out}/toggle*.jsonl"))
    if toggles:
        pairs = defaultdict(list)  # op -> (bytes, file, best on, best off, median on, median off)
        for path in toggles:
            for line in open(path):
                if line.startswith("{") and '"us_off"' in line:
                    r = json.loads(line)
                    pairs[r["op"]].append((r["bytes"], os.path.basename(path), r["us"], r["us_off"], r["med_on"],
                                           r["med_off"]))
        print(f"\n#### the plugin's events on - off inside one process ({len(toggles)} runs, alternate windows)\n")
        print("| op | pairs < 1 MiB | median of best on - best off | median of median on - median off |")
        print("|---|---:|---:|---:|")
        every = []
        for op in sorted(pairs):
            small = [p for p in pairs[op] if p[0] < BIG]
            every += small
            print(f"| {op} | {len(small)} | {statistics.median(p[2] - p[3] for p in small):+.2f} | "
                  f"{statistics.median(p[4] - p[5] for p in small):+.2f} |")
        print(f"| all | {len(every)} | {statistics.median(p[2] - p[3] for p in every):+.2f} | "
              f"{statistics.median(p[4] - p[5] for p in every):+.2f} |")


if __name__ == "__main__":
    main()

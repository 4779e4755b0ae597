#!/usr/bin/env python3
"""Tables of tests/gpu/g2_overhead.sh's nccl-tests runs (<prefix>-<op>-<side>-r<round>.log): per op,
size and side, the best out-of-place time over the rounds and its median; each side's added time
against NCCL alone (side 'none') by best and by median; the spread of NCCL alone (max - min over
rounds); from 1 MiB, the busbw ratio side / NCCL alone (best against best).
Usage: g2_table.py <dir with the logs> [prefix, default overhead] [sides in order]"""
import collections
import glob
import os
import re
import statistics
import sys

NAMES = {"none": "NCCL alone", "fwd": "forwarding", "rec": "recording", "plugin": "recording + plugin",
         "pluginold": "recording + old plugin"}


def rows(path):
    """size -> (out-of-place us, out-of-place busbw) of one nccl-tests log."""
    out = {}
    for line in open(path, errors="replace"):
        f = line.split()
        if len(f) >= 12 and f[0].isdigit() and f[1].isdigit():
            try:
                out[int(f[0])] = (float(f[5]), float(f[7]))
            except ValueError:
                pass
    return out


def name(side):
    if side.startswith("mask"):
        return f"plugin, events {side[4:]}"
    return NAMES.get(side, side)


def main(root, prefix="overhead", order=None):
    runs = collections.defaultdict(lambda: collections.defaultdict(list))  # (op, side) -> size -> [(us, busbw)]
    for path in glob.glob(os.path.join(root, f"{prefix}-*.log")):
        m = re.match(re.escape(prefix) + r"-([a-z_]+)-([a-z0-9x]+)-r(\d+)\.log$", os.path.basename(path))
        if m:
            for size, v in rows(path).items():
                runs[(m.group(1), m.group(2))][size].append(v)
    for op in sorted({op for op, _ in runs}):
        sides = [s for s in (order or []) if (op, s) in runs] + sorted(
            s for o, s in runs if o == op and s not in (order or []) and s != "none")
        sides = ["none"] + [s for s in sides if s != "none"]
        rounds = len(next(iter(runs[(op, "none")].values()), []))
        print(f"\n### {op} (one process, 2 GPUs; out-of-place us per iteration: best of {rounds} rounds, median)\n")
        print("| bytes | NCCL alone best / median | spread | " +
              " | ".join(f"{name(s)} best / median" for s in sides[1:]) +
              " | " + " | ".join(f"+{s} best / median" for s in sides[1:]) + " | busbw ratio " +
              " / ".join(sides[1:]) + " |")
        print("|---" * (3 + 2 * (len(sides) - 1) + 1) + "|")
        for size in sorted(runs[(op, "none")]):
            best, med = {}, {}
            for s in sides:
                us = [v[0] for v in runs[(op, s)].get(size, [])]
                best[s] = min(us) if us else float("nan")
                med[s] = statistics.median(us) if us else float("nan")
            base = [v[0] for v in runs[(op, "none")][size]]
            cells = [f"{best[s]:.2f} / {med[s]:.2f}" for s in sides[1:]]
            adds = [f"{best[s] - best['none']:+.2f} / {med[s] - med['none']:+.2f}" for s in sides[1:]]
            ratio = ""
            if size >= 1 << 20:
                bw = {s: max((v[1] for v in runs[(op, s)].get(size, [])), default=float("nan")) for s in sides}
                ratio = " / ".join(f"{bw[s] / bw['none']:.4f}" for s in sides[1:])
            print(f"| {size} | {best['none']:.2f} / {med['none']:.2f} | {max(base) - min(base):.2f} | " +
                  " | ".join(cells) + " | " + " | ".join(adds) + f" | {ratio} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".", sys.argv[2] if len(sys.argv) > 2 else "overhead",
         sys.argv[3].split(",") if len(sys.argv) > 3 else None)

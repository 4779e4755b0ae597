#!/usr/bin/env python3
"""Table of the host cost of the shim per call from tests/gpu/profiler_gpu_checks.sh's overhead
stage: logs overhead-<op>-<side>-r<round>.log of nccl-tests (one process, one rank), sides none
(NCCL alone), fwd (forwarding), noop (the record hook's path, empty body), rec (recording), quiet
(recording, the writer asleep), plugin (recording + profiler plugin); the sides present are shown. Per op, side
and size: the best out-of-place time over the rounds; then each side's added microseconds against
NCCL alone, and the spread over rounds of NCCL alone (max - min) to judge the noise.
Usage: nt_overhead_table.py <dir with the logs>"""
import collections
import glob
import os
import re
import sys

SIDES = ["none", "fwd", "noop", "rec", "quiet", "ring", "fast", "plugin", "after", "afterplugin"]
NAMES = {"none": "NCCL alone", "fwd": "forwarding", "noop": "hook path (noop)", "rec": "recording",
         "quiet": "recording, writer asleep", "ring": "recording, ring never full",
         "fast": "recording, drain every 1 ms", "plugin": "recording + plugin",
         "after": "recording, adaptive drain", "afterplugin": "recording + plugin, adaptive drain"}


def times(path):
    out = {}
    for line in open(path, errors="replace"):
        f = line.split()
        if len(f) >= 13 and f[0].isdigit() and f[1].isdigit():
            try:
                out[int(f[0])] = float(f[5])
            except ValueError:
                pass
    return out


def main(root):
    runs = collections.defaultdict(lambda: collections.defaultdict(list))  # (op, side) -> size -> [us]
    for path in glob.glob(os.path.join(root, "overhead-*.log")):
        m = re.match(r"overhead-(.+)-(none|fwd|noop|rec|quiet|ring|fast|plugin|after|afterplugin)-r(\d+)\.log$", os.path.basename(path))
        if not m:
            continue
        for size, us in times(path).items():
            runs[(m.group(1), m.group(2))][size].append(us)
    for op in sorted({op for op, _ in runs}):
        rounds = len(next(iter(runs[(op, "none")].values()), []))
        print(f"\n### {op} (one rank; out-of-place time per iteration, best of {rounds} rounds, us)\n")
        sides = [side for side in SIDES if (op, side) in runs]
        print("| bytes | NCCL alone | spread | " + " | ".join(NAMES[x] for x in sides[1:]) + " | " +
              " | ".join("+" + x for x in sides[1:]) + " |")
        print("|---" * (2 + 2 * (len(sides) - 1) + 1) + "|")
        for size in sorted(runs[(op, "none")]):
            best = {x: min(runs[(op, x)].get(size, [float("nan")])) for x in sides}
            base = runs[(op, "none")][size]
            cells = [f"{best[x]:.2f}" for x in sides[1:]] + [f"{best[x] - best['none']:+.2f}" for x in sides[1:]]
            print(f"| {size} | {best['none']:.2f} | {max(base) - min(base):.2f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")

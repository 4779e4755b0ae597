#!/usr/bin/env python3
"""Table of the host cost of the shim per call from tests/gpu/profiler_gpu_checks.sh's overhead
stage: logs overhead-<op>-<side>-r<round>.log of nccl-tests (one process, one rank), sides none
(NCCL alone), fwd (forwarding), rec (recording), plugin (recording + profiler plugin). Per op, side
and size: the best out-of-place time over the rounds; then each side's added microseconds against
NCCL alone, and the spread over rounds of NCCL alone (max - min) to judge the noise.
Usage: nt_overhead_table.py <dir with the logs>"""
import collections
import glob
import os
import re
import sys

SIDES = ["none", "fwd", "rec", "plugin"]


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
        m = re.match(r"overhead-(.+)-(none|fwd|rec|plugin)-r(\d+)\.log$", os.path.basename(path))
        if not m:
            continue
        for size, us in times(path).items():
            runs[(m.group(1), m.group(2))][size].append(us)
    for op in sorted({op for op, _ in runs}):
        rounds = len(next(iter(runs[(op, "none")].values()), []))
        print(f"\n### {op} (one rank; out-of-place time per iteration, best of {rounds} rounds, us)\n")
        print("| bytes | NCCL alone | spread | forwarding | recording | recording + plugin | +fwd | +rec | +rec+plugin |")
        print("|---|---|---|---|---|---|---|---|---|")
        for size in sorted(runs[(op, "none")]):
            best = {s: min(runs[(op, s)].get(size, [float("nan")])) for s in SIDES}
            base = runs[(op, "none")][size]
            print(f"| {size} | {best['none']:.2f} | {max(base) - min(base):.2f} | {best['fwd']:.2f} | {best['rec']:.2f} | "
                  f"{best['plugin']:.2f} | {best['fwd'] - best['none']:+.2f} | {best['rec'] - best['none']:+.2f} | "
                  f"{best['plugin'] - best['none']:+.2f} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")

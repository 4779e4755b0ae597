"""Reads busbw_plain*.jsonl, busbw_fwd*.jsonl, busbw_shim*.jsonl and busbw_plugin*.jsonl where present
(torch_busbw.py output: without the shim, with the shim forwarding only, recording, recording with
the shim as NCCL's profiler plugin) and prints a markdown table: per op and size, the best time of
plain over the rounds, the microseconds each shim side adds to it and the busbw ratios of the
recording sides; then, per op for sizes >= 1 MiB and below, each side's mean and largest added time
and lowest ratio (the per-size differences of small ops scatter by about +-2 us either way on these
machines; their mean is the estimate)."""
import glob
import json
import sys
from collections import defaultdict


def load(pattern):
    best = {}
    for path in glob.glob(pattern):
        for line in open(path):
            if not line.startswith("{"):
                continue
            row = json.loads(line)
            if "op" not in row:
                continue  # e.g. the pinned-CPU line
            key = (row["op"], row["bytes"])
            if key not in best or row["us"] < best[key]["us"]:
                best[key] = row
    return best


def main():
    out = sys.argv[1]
    plain = load(f"{out}/busbw_plain*.jsonl")
    sides = [(name, load(f"{out}/busbw_{name}*.jsonl")) for name in ("fwd", "shim", "plugin")]
    sides = [(name, rows) for name, rows in sides if rows]  # the plugin side only where it ran
    label = {"fwd": "fwd", "shim": "record", "plugin": "record+plugin"}
    print("| op | bytes | plain us | " + " | ".join(f"{label[n]} added us" for n, _ in sides) + " | plain busbw | " +
          " | ".join(f"{label[n]} ratio" for n, _ in sides if n != "fwd") + " |")
    print("|---|---:|---:|" + "---:|" * len(sides) + "---:|" + "---:|" * sum(n != "fwd" for n, _ in sides))
    added_all = defaultdict(list)  # (op, big, side) -> added microseconds per size
    lowest = defaultdict(lambda: 9.9)  # (op, big, side) -> lowest busbw ratio
    for key in sorted(plain):
        p = plain[key]
        big = key[1] >= (1 << 20)
        cells, ratios = [], []
        for name, rows in sides:
            row = rows.get(key)
            cells.append(f"{row['us'] - p['us']:+.2f}" if row else "-")
            if row:
                added_all[(key[0], big, name)].append(row["us"] - p["us"])
            if name != "fwd":
                ratio = p["us"] / row["us"] if row else None
                ratios.append(f"{ratio:.3f}" if ratio else "-")
                if ratio:
                    lowest[(key[0], big, name)] = min(lowest[(key[0], big, name)], ratio)
        print(f"| {key[0]} | {key[1]} | {p['us']:.2f} | " + " | ".join(cells) + f" | {p['busbw']:.2f} | " +
              " | ".join(ratios) + " |")
    mean = lambda values: sum(values) / len(values) if values else float("nan")
    for op, big in sorted({(op, big) for op, big, _ in added_all}):
        parts = []
        for name, _ in sides:
            values = added_all[(op, big, name)]
            text = f"{label[name]}: mean added {mean(values):+.2f} us, largest {max(values, default=float('nan')):+.2f} us"
            if name != "fwd":
                text += f", lowest ratio {lowest[(op, big, name)]:.3f}"
            parts.append(text)
        print(f"\n{op} {'>= 1 MiB' if big else '< 1 MiB'}: " + "; ".join(parts))


if __name__ == "__main__":
    main()

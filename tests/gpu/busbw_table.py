"""Reads busbw_plain*.jsonl, busbw_fwd*.jsonl and busbw_shim*.jsonl (torch_busbw.py output: without the
shim, with the shim forwarding only, with the shim forwarding and recording) and prints a markdown
table: per op and size, the best time of each side over the rounds, the busbw ratio recording/plain
and the added microseconds of each shim side; then, per op for sizes >= 1 MiB and below, the worst
ratio, the largest added time and the mean added time over the sizes (the per-size differences of
small ops scatter by about +-2 us either way on this machine; their mean is the estimate)."""
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
    plain, fwd, shim = (load(f"{out}/busbw_{side}*.jsonl") for side in ("plain", "fwd", "shim"))
    print("| op | bytes | plain us | fwd us | record us | fwd added us | record added us | plain busbw | "
          "record busbw | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = defaultdict(lambda: (9.9, -99.0, -99.0))
    added_all = defaultdict(list)  # (op, big, side) -> added microseconds per size
    for key in sorted(plain):
        if key not in shim:
            continue
        p, s, f = plain[key], shim[key], fwd.get(key)
        ratio = p["us"] / s["us"]
        f_us = f"{f['us']:.2f}" if f else "-"
        f_added = f"{f['us'] - p['us']:+.2f}" if f else "-"
        print(f"| {key[0]} | {key[1]} | {p['us']:.2f} | {f_us} | {s['us']:.2f} | {f_added} | "
              f"{s['us'] - p['us']:+.2f} | {p['busbw']:.2f} | {s['busbw']:.2f} | {ratio:.3f} |")
        big = key[1] >= (1 << 20)
        lo, added, fadded = worst[(key[0], big)]
        worst[(key[0], big)] = (min(lo, ratio), max(added, s["us"] - p["us"]),
                                max(fadded, f["us"] - p["us"]) if f else fadded)
        added_all[(key[0], big, "record")].append(s["us"] - p["us"])
        if f:
            added_all[(key[0], big, "fwd")].append(f["us"] - p["us"])
    mean = lambda values: sum(values) / len(values) if values else float("nan")
    for (op, big), (ratio, added, fadded) in sorted(worst.items()):
        print(f"\n{op} {'>= 1 MiB' if big else '< 1 MiB'}: lowest ratio (record/plain) {ratio:.3f}, largest added "
              f"time: recording {added:+.2f} us, forwarding only {fadded:+.2f} us; mean added time over the "
              f"sizes: recording {mean(added_all[(op, big, 'record')]):+.2f} us, forwarding only "
              f"{mean(added_all[(op, big, 'fwd')]):+.2f} us")


if __name__ == "__main__":
    main()

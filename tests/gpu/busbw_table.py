"""Reads busbw_plain*.jsonl / busbw_shim*.jsonl (torch_busbw.py output) and prints a markdown table:
per op and size, the best time of each side, the busbw ratio shim/plain and the added microseconds."""
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
            key = (row["op"], row["bytes"])
            if key not in best or row["us"] < best[key]["us"]:
                best[key] = row
    return best


def main():
    out = sys.argv[1]
    plain, shim = load(f"{out}/busbw_plain*.jsonl"), load(f"{out}/busbw_shim*.jsonl")
    print("| op | bytes | plain us | shim us | added us | plain busbw GB/s | shim busbw GB/s | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    worst = defaultdict(lambda: (9.9, 0.0))
    for key in sorted(plain):
        if key not in shim:
            continue
        p, s = plain[key], shim[key]
        ratio = p["us"] / s["us"]
        print(f"| {key[0]} | {key[1]} | {p['us']:.2f} | {s['us']:.2f} | {s['us'] - p['us']:+.2f} | "
              f"{p['busbw']:.2f} | {s['busbw']:.2f} | {ratio:.3f} |")
        big = key[1] >= (1 << 20)
        lo, added = worst[(key[0], big)]
        worst[(key[0], big)] = (min(lo, ratio), max(added, s["us"] - p["us"]))
    for (op, big), (ratio, added) in sorted(worst.items()):
        print(f"\n{op} {'>= 1 MiB' if big else '< 1 MiB'}: lowest ratio {ratio:.3f}, largest added time {added:+.2f} us")


if __name__ == "__main__":
    main()

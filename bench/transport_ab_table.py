#!/usr/bin/env python3
"""Tables bench/transport_ab.sh's rows: per (op, ranks, size), each variant's median out-of-place
time over the rounds (us) with its spread (min-max), and the ratio of its median to the first
variant's. Usage: transport_ab_table.py ROWS.tsv (columns variant, op, ranks, size, time_us, round).
"""
import csv
import statistics
import sys


def fmt_size(size):
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return f"{size}B"


def main(path):
    times, variants = {}, []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["variant"] not in variants:
                variants.append(row["variant"])
            key = (row["op"], int(row["ranks"]), int(row["size"]))
            times.setdefault(key, {}).setdefault(row["variant"], []).append(float(row["time_us"]))
    if not times:
        print(f"{path}: no rows", file=sys.stderr)
        return 1
    header = ["op", "ranks", "size"]
    for v in variants:
        header += [f"{v} median us (min-max)"] + ([f"{v}/{variants[0]}"] if v != variants[0] else [])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for key in sorted(times):
        cells = [key[0], str(key[1]), fmt_size(key[2])]
        base = statistics.median(times[key].get(variants[0], [float("nan")]))
        for v in variants:
            series = times[key].get(v, [])
            if not series:
                cells += ["-"] + (["-"] if v != variants[0] else [])
                continue
            med = statistics.median(series)
            cells.append(f"{med:.1f} ({min(series):.1f}-{max(series):.1f})")
            if v != variants[0]:
                cells.append(f"{med / base:.2f}")
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))

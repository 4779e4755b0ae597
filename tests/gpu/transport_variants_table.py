"""Tables tests/gpu/transport_variants.sh's replays: per (op, size), for each variant, the median over
every call of every round of replay time / NCCL's recorded GPU time (phynet --report CSV: time_us,
recorded_us) and the spread of that per-call ratio (min-max). Usage: transport_variants_table.py
OUT_DIR NAME=... [NAME=...]; reads OUT_DIR/variant.<NAME>.<round>.csv. Prints a Markdown table."""
import csv
import glob
import statistics
import sys
from collections import defaultdict

from time_truth_table import human  # the same size labels as the ground-truth table


def main():
    out, names = sys.argv[1], [v.split("=", 1)[0] for v in sys.argv[2:]]
    ratios = defaultdict(lambda: defaultdict(list))
    for name in names:
        for path in sorted(glob.glob(f"{out}/variant.{name}.*.csv")):
            for row in csv.DictReader(open(path)):
                if row.get("recorded_us") in (None, "", "-", "nan") or float(row["recorded_us"]) <= 0:
                    continue
                ratios[(row["op"], int(row["bytes"]))][name].append(float(row["time_us"]) / float(row["recorded_us"]))
    if not ratios:
        print(f"no replayed calls with a recorded GPU time under {out}", file=sys.stderr)
        return 1
    print("| op | size | " + " | ".join(f"{n}: replay/NCCL (spread)" for n in names) + " |")
    print("|---|---|" + "---|" * len(names))
    for (op, size), by_name in sorted(ratios.items()):
        cells = []
        for n in names:
            r = sorted(by_name.get(n, []))
            cells.append(f"{statistics.median(r):.2f} ({r[0]:.2f}-{r[-1]:.2f})" if r else "-")
        print(f"| {op} | {human(size)} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""PNG charts for `ncclshim plot` (tools/inspect/plot_command.cc runs this script).

Kinds:
  sizes   message-size histogram by op and group: calls (top) and bytes (bottom) per size bucket,
          stacked by "op group(n)"; input: `ncclshim summary --format csv` of a trace or workload.
  busbw   bus bandwidth vs message size, one marker per replayed op and the mean per size bucket,
          by op and group (one-rank communicators left out); input: phynet's per-op report CSV (phynet --report FILE).
  replay  replayed vs recorded time per op (log-log, with the y = x line), by op and group;
          input: a phynet report CSV with recorded times (a trace replay).
Exit status: 0 written, 2 bad input, 3 matplotlib is not installed (nothing written).
"""
import argparse
import csv
import math
import sys
from collections import OrderedDict, defaultdict


def human_bytes(n):
    for unit in ["B", "K", "M", "G", "T"]:
        if n < 1024 or unit == "T":
            return f"{n:g}{unit}"
        n /= 1024.0
    return f"{n:g}"


def read_rows(path, required):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path}: no rows")
    missing = [c for c in required if c not in rows[0]]
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
    return rows


def series_name(row):
    return f"{row['op']} {row['group']}({row['nranks']})"


def plot_sizes(plt, path, title):
    rows = read_rows(path, ["op", "group", "nranks", "size_bucket", "calls", "bytes"])
    buckets = sorted({int(r["size_bucket"]) for r in rows})
    position = {b: i for i, b in enumerate(buckets)}
    series = OrderedDict()
    for r in sorted(rows, key=lambda r: (r["op"], r["group"], int(r["nranks"]))):
        s = series.setdefault(series_name(r), ([0] * len(buckets), [0] * len(buckets)))
        s[0][position[int(r["size_bucket"])]] += int(r["calls"])
        s[1][position[int(r["size_bucket"])]] += int(r["bytes"])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    colors = plt.get_cmap("tab10" if len(series) <= 10 else "tab20")
    x = list(range(len(buckets)))
    base_calls = [0] * len(buckets)
    base_bytes = [0] * len(buckets)
    for i, (name, (calls, sizes)) in enumerate(series.items()):
        mib = [b / 2**20 for b in sizes]
        top.bar(x, calls, bottom=base_calls, color=colors(i % colors.N), label=name, width=0.8)
        bottom.bar(x, mib, bottom=base_bytes, color=colors(i % colors.N), width=0.8)
        base_calls = [a + b for a, b in zip(base_calls, calls)]
        base_bytes = [a + b for a, b in zip(base_bytes, mib)]
    top.set_ylabel("calls (all ranks)")
    bottom.set_ylabel("MiB (nccl-tests size)")
    bottom.set_xticks(x)
    bottom.set_xticklabels(["\u2264" + human_bytes(b) for b in buckets], rotation=45 if len(x) > 12 else 0)
    bottom.set_xlabel("message size bucket")
    top.legend(fontsize=8, ncol=2 if len(series) > 6 else 1, loc="upper left")
    for ax in (top, bottom):
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylim(bottom=0)
    top.set_title(title or f"message sizes by op and group ({sum(base_calls)} calls)")
    return fig


def report_series(rows):
    series = OrderedDict()
    for r in sorted(rows, key=lambda r: (r["op"], r["group"], int(r["nranks"]))):
        series.setdefault(series_name(r), []).append(r)
    return series


def plot_busbw(plt, path, title):
    rows = read_rows(path, ["op", "group", "nranks", "bytes", "busbw_gbps"])
    rows = [r for r in rows if int(r["nranks"]) > 1]  # one-rank communicators move no data
    if not rows:
        raise ValueError(f"{path}: no op on a communicator of more than one rank")
    fig, ax = plt.subplots(figsize=(9, 5.5))
    colors = plt.get_cmap("tab10")
    for i, (name, items) in enumerate(report_series(rows).items()):
        color = colors(i % 10)
        xs = [int(r["bytes"]) for r in items]
        ys = [float(r["busbw_gbps"]) for r in items]
        ax.scatter(xs, ys, s=12, alpha=0.35, color=color)
        by_bucket = defaultdict(list)
        for b, y in zip(xs, ys):
            by_bucket[2 ** math.ceil(math.log2(max(b, 1)))].append(y)
        keys = sorted(by_bucket)
        ax.plot(keys, [sum(by_bucket[k]) / len(by_bucket[k]) for k in keys], marker="o", color=color,
                label=f"{name}: {len(items)} ops")
    ax.set_xscale("log", base=2)
    ticks = sorted({2 ** math.ceil(math.log2(max(int(r["bytes"]), 1))) for r in rows})
    ax.set_xticks(ticks)
    ax.set_xticklabels([human_bytes(t) for t in ticks], rotation=45 if len(ticks) > 12 else 0)
    ax.set_xlabel("message size (nccl-tests size, bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title or "phynet replay: bus bandwidth vs message size (line: mean per size bucket)")
    return fig


def plot_replay(plt, path, title):
    rows = read_rows(path, ["op", "group", "nranks", "time_us", "recorded_us"])
    rows = [r for r in rows if r["recorded_us"] not in ("", None)]
    if not rows:
        raise ValueError(f"{path}: no row has a recorded time (replay a trace to get them)")
    fig, ax = plt.subplots(figsize=(7.5, 6))
    colors = plt.get_cmap("tab10")
    lo, hi = math.inf, 0.0
    for i, (name, items) in enumerate(report_series(rows).items()):
        xs = [max(float(r["recorded_us"]), 1e-3) for r in items]
        ys = [max(float(r["time_us"]), 1e-3) for r in items]
        lo, hi = min(lo, *xs, *ys), max(hi, *xs, *ys)
        ratios = sorted(y / x for x, y in zip(xs, ys))
        ax.scatter(xs, ys, s=14, alpha=0.6, color=colors(i % 10),
                   label=f"{name}: {len(items)} ops, median replayed/recorded {ratios[len(ratios) // 2]:.2f}")
    ax.plot([lo, hi], [lo, hi], color="gray", linestyle="--", linewidth=1, label="replayed = recorded")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("recorded time (us)")
    ax.set_ylabel("replayed time (us)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    ax.set_title(title or "phynet replay vs recorded time per op")
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["sizes", "busbw", "replay"])
    parser.add_argument("input", help="CSV input (see above)")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    parser.add_argument("--title", default="", help="chart title")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("ncclshim plot: matplotlib is not installed for " + sys.executable +
              " (Debian: apt-get install python3-matplotlib); no plot written", file=sys.stderr)
        return 3
    try:
        fig = {"sizes": plot_sizes, "busbw": plot_busbw, "replay": plot_replay}[args.kind](plt, args.input,
                                                                                      args.title)
    except (OSError, ValueError, KeyError) as error:
        print(f"ncclshim plot: {error}", file=sys.stderr)
        return 2
    fig.tight_layout()
    fig.savefig(args.output, dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The report's charts, each a matplotlib figure (the caller turns it into inline SVG): busbw
against message size per op and group with the ideal line, replayed against recorded time, bytes
per rank / host / NIC, the traffic matrix as a heat map, and the timeline per rank and
communicator. Layers with many marks are rasterized inside the SVG so that a 10,000-op report stays
small; axes and text stay vector.
"""
import math
from collections import OrderedDict, defaultdict

from report_data import human_bytes, size_bucket

RASTER_ABOVE = 2000  # marks in one chart above which the marks are drawn as an embedded image


def series_of(ops):
    """[(name, rows)] by op, group and communicator size, in a stable order."""
    series = OrderedDict()
    for r in sorted(ops, key=lambda r: (r["op"], r["group"], r["nranks"])):
        series.setdefault(f'{r["op"]} {r["group"]}({r["nranks"]})', []).append(r)
    return list(series.items())


def _size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ticks = sorted({size_bucket(max(s, 1)) for s in sizes})
    if len(ticks) > 16:
        ticks = ticks[::math.ceil(len(ticks) / 16)]
    ax.set_xticks(ticks)
    ax.set_xticklabels([human_bytes(t) for t in ticks], rotation=45 if len(ticks) > 8 else 0)
    ax.set_xlabel("message size (nccl-tests size)")


def busbw_chart(plt, runs, rate_gbps):
    """runs: [(label, ops)]; one marker per op (and iteration), a line through the mean per size
    bucket, per op x group (and per run when several); returns (figure, points drawn)."""
    fig, ax = plt.subplots(figsize=(9, 5.5))
    colors = plt.get_cmap("tab10" if len(runs) == 1 else "tab20")
    points, sizes, index = 0, [], 0
    styles = ["-", "--", ":", "-."]
    for run_index, (run_label, ops) in enumerate(runs):
        ops = [r for r in ops if r["nranks"] > 1]
        many = len(ops) > RASTER_ABOVE
        for name, rows in series_of(ops):
            color = colors(index % colors.N)
            index += 1
            xs = [max(r["bytes"], 1) for r in rows]
            ys = [r["busbw_gbps"] for r in rows]
            sizes += xs
            points += len(rows)
            ax.scatter(xs, ys, s=14, alpha=0.45, color=color, rasterized=many, linewidths=0)
            by_bucket = defaultdict(list)
            for x, y in zip(xs, ys):
                by_bucket[size_bucket(x)].append(y)
            keys = sorted(by_bucket)
            label = f"{name}: {len(rows)} ops" + (f" [{run_label}]" if len(runs) > 1 else "")
            ax.plot(keys, [sum(by_bucket[k]) / len(by_bucket[k]) for k in keys], marker="o", markersize=4,
                    color=color, linestyle=styles[run_index % len(styles)], label=label)
    if rate_gbps:
        ax.axhline(rate_gbps, color="black", linestyle="--", linewidth=1, label=f"ideal busbw = rate {rate_gbps:g} GB/s")
    if sizes:
        _size_axis(ax, sizes)
    ax.set_ylabel("busbw (GB/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=2 if index > 24 else 1)
    return fig, points


RECORDED_AXIS = {"gpu": "NCCL's GPU time of the call, recorded (us)",
                 "file": "time the workload file states (us)"}


def recorded_chart(plt, ops, clock="gpu"):
    """Replayed against recorded time per op (log-log, y = x); None when no op has a recorded time."""
    rows = [r for r in ops if isinstance(r.get("recorded_us"), (int, float)) and r["recorded_us"] is not None]
    if not rows:
        return None, 0
    fig, ax = plt.subplots(figsize=(8, 6))
    colors = plt.get_cmap("tab10")
    lo, hi = math.inf, 0.0
    for i, (name, items) in enumerate(series_of(rows)):
        xs = [max(float(r["recorded_us"]), 1e-3) for r in items]
        ys = [max(float(r["time_us"]), 1e-3) for r in items]
        lo, hi = min(lo, *xs, *ys), max(hi, *xs, *ys)
        ratios = sorted(y / x for x, y in zip(xs, ys))
        ax.scatter(xs, ys, s=14, alpha=0.6, color=colors(i % 10), rasterized=len(rows) > RASTER_ABOVE,
                   label=f"{name}: {len(items)} ops, median replayed/recorded {ratios[len(ratios) // 2]:.2f}")
    ax.plot([lo, hi], [lo, hi], color="gray", linestyle="--", linewidth=1, label="replayed = recorded")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(RECORDED_AXIS.get(clock, "recorded time (us)"))
    ax.set_ylabel("replayed time (us)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return fig, len(rows)


def bytes_chart(plt, labels, sent, received, model=None, xlabel="rank"):
    """Grouped bars of bytes sent and received per rank (or host, or NIC), the model as markers."""
    n = len(labels)
    fig, ax = plt.subplots(figsize=(min(14, max(7, 0.22 * n + 4)), 4.2))
    x = list(range(n))
    width = 0.4
    ax.bar([i - width / 2 for i in x], [v / 2**20 for v in sent], width, label="sent", color="#3a78b5")
    ax.bar([i + width / 2 for i in x], [v / 2**20 for v in received], width, label="received", color="#e3883a")
    if model is not None:
        ax.scatter([i - width / 2 for i in x], [v / 2**20 for v in model], marker="_", s=120, color="black",
                   label="model (sent)", zorder=3)
    step = max(1, math.ceil(n / 32))
    longest = max((len(str(l)) for l in labels), default=0)
    ax.set_xticks(x[::step])
    ax.set_xticklabels([str(l) for l in labels][::step], rotation=45 if longest > 4 else 0,
                       ha="right" if longest > 4 else "center")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("MiB (payload)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return fig, 2 * n


def heatmap_chart(plt, labels, matrix, what):
    """Bytes from row to column as a heat map (log colour scale), values written in small matrices."""
    from matplotlib.colors import LogNorm
    n = len(labels)
    size = min(11, max(5, 0.16 * n + 3.5))
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    values = [v for row in matrix for v in row if v > 0]
    data = [[v if v > 0 else float("nan") for v in row] for row in matrix]
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("#f2f2f2")
    norm = LogNorm(vmin=min(values), vmax=max(values)) if values and min(values) < max(values) else None
    image = ax.imshow(data, cmap=cmap, norm=norm, interpolation="nearest", aspect="equal")
    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    bar.set_label(f"{what} bytes (sender row -> receiver column)")
    step = max(1, math.ceil(n / 32))
    ax.set_xticks(range(0, n, step))
    ax.set_yticks(range(0, n, step))
    ax.set_xticklabels([str(l) for l in labels][::step], rotation=90 if n > 8 else 0, fontsize=8)
    ax.set_yticklabels([str(l) for l in labels][::step], fontsize=8)
    ax.set_xlabel("receiver")
    ax.set_ylabel("sender")
    if n <= 12:
        for i, row in enumerate(matrix):
            for j, v in enumerate(row):
                if v > 0:  # dark text on the bright end of the colour map
                    bright = norm is not None and norm(v) > 0.6
                    ax.text(j, i, human_bytes(v), ha="center", va="center", fontsize=7,
                            color="black" if bright else "white")
    return fig, n * n


def timeline_chart(plt, lanes, bars, op_names):
    """lanes: [label]; bars: [(lane index, start_us, time_us, op)]: one horizontal bar per op and
    participant, coloured by op."""
    fig, ax = plt.subplots(figsize=(12, min(16, max(3, 0.18 * len(lanes) + 1.5))))
    colors = plt.get_cmap("tab10")
    many = len(bars) > RASTER_ABOVE
    linewidth = max(1.0, min(9.0, 300.0 / max(len(lanes), 1)))
    by_op = defaultdict(lambda: ([], [], []))
    for lane, start, width, op in bars:
        ys, x0, x1 = by_op[op]
        ys.append(lane)
        x0.append(start / 1000.0)
        x1.append((start + max(width, 0.0)) / 1000.0)
    for op in op_names:
        if op in by_op:
            ys, x0, x1 = by_op[op]
            ax.hlines(ys, x0, x1, colors=colors(op_names.index(op) % 10), linewidth=linewidth, label=op,
                      rasterized=many)
    for op in op_names:  # a thin white tick where each op starts: back-to-back ops stay apart
        if op in by_op:
            ys, x0, _ = by_op[op]
            ax.scatter(x0, ys, marker="|", s=linewidth * linewidth * 1.5, color="white", linewidths=0.6,
                       rasterized=many, zorder=3)
    ax.set_yticks(range(len(lanes)))
    step = max(1, math.ceil(len(lanes) / 64))
    ax.set_yticks(range(0, len(lanes), step))
    ax.set_yticklabels(lanes[::step], fontsize=7)
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_xlabel("time since the rank's replay start (ms)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig, len(bars)


def ratio_chart(plt, labels, ratios_by_run, what):
    """Horizontal bars of ratio per compared row (one bar per run against the baseline), 1 = same."""
    n = len(labels)
    fig, ax = plt.subplots(figsize=(10, min(14, max(3, 0.28 * n * max(1, len(ratios_by_run)) + 1.5))))
    colors = plt.get_cmap("tab10")
    height = 0.8 / max(1, len(ratios_by_run))
    points = 0
    for k, (run_label, ratios) in enumerate(ratios_by_run):
        ys = [i + (k - (len(ratios_by_run) - 1) / 2) * height for i in range(n)]
        # bars grow from 1 (the same) to the ratio, to the right when B is larger
        ax.barh(ys, [(r - 1.0) if r else 0.0 for r in ratios], height, left=1.0, color=colors(k % 10),
                label=run_label)
        points += n
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks(range(n))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(what)
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return fig, points

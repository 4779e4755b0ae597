#!/usr/bin/env python3
"""Compares `ncclshim perf` with its peers from run_bench.sh's raw tables and checks the targets.

Reads <results>/{ncclshim,mpi,gloo}_<op>_np<N>.txt (nccl-tests format), prints per op x ranks a table
of size, busbw of each side, the ratios, and the times, then the targets:
  * busbw at 1 MiB and at 64 MiB: ncclshim >= MPI        (every op and rank count)
  * busbw at 1 MiB and at 64 MiB: ncclshim >= 1.5 x Gloo (where Gloo was measured)
  * 1 KiB allreduce latency:      ncclshim <= MPI        (every rank count)
The nearest size present on both sides is used (within a factor of 2). Out-of-place columns are
compared. Ratios come from the times (for equal sizes, busbw ratio = MPI time / ncclshim time), which
keeps precision the 2-decimal busbw column loses at small sizes. Repeated runs (<base>.rep<R>.txt)
are reduced per size (--stat median, or best). Missing or broken runs, and runs that started on a
busy machine, are reported, never fatal. The same tables go to --markdown as markdown.
"""
import argparse
import glob
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parse_table import parse_file  # noqa: E402

DEFAULT_OPS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall"]
SIDES = ("ncclshim", "mpi", "gloo")
GLOO_FACTOR = 1.5
KIB, MIB = 1024, 1024 * 1024
BUSBW_TARGETS = (("busbw @ 1 MiB", MIB), ("busbw @ 64 MiB", 64 * MIB))
LATENCY_TARGET = ("latency @ 1 KiB", KIB)
_IDLE_LINE = re.compile(r"^#\s*run_bench: cpu idle before run:\s*(\d+)%")
MIN_IDLE_PERCENT = 80
_RESULT_NAME = re.compile(r"^(ncclshim|mpi|gloo)_(\w+?)_np(\d+)\.txt$")


def human_size(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


class Run:
    """One side's table for one op and rank count (the median over repeats), or why there is none.

    Repeats are <base>.txt, <base>.rep2.txt, ...; per size the row with the median out-of-place time
    (the faster middle one for an even count), or with stat="best" the fastest, is kept, so time and
    busbw stay one measurement. Runs that run_bench.sh found starting on a busy machine are noted.
    """

    def __init__(self, path, stat="median"):
        self.path, self.rows, self.problem, self.repeats = path, {}, None, 0
        self.wrong_sizes, self.busy = set(), []
        if not os.path.exists(path):
            self.problem = "missing"
            return
        base = path[:-len(".txt")]
        paths = [path] + sorted(glob.glob(glob.escape(base) + ".rep*.txt"))
        per_size, incomplete = {}, 0
        for one in paths:
            table = parse_file(one)
            for line in table.header:
                match = _IDLE_LINE.match(line)
                if match and int(match.group(1)) < MIN_IDLE_PERCENT:
                    self.busy.append(int(match.group(1)))
            if table.rows:
                self.repeats += 1
            if table.avg_busbw is None:
                incomplete += 1
            for row in table.rows:
                per_size.setdefault(row["size"], []).append(row)
        if not per_size:
            self.problem = "no result rows (see the .err file)"
            return
        for size, rows in per_size.items():
            rows.sort(key=lambda r: r["oop_time_us"])
            self.rows[size] = rows[0] if stat == "best" else rows[(len(rows) - 1) // 2]
        self.wrong_sizes = {size for size, rows in per_size.items()
                            if any((r.get(k) or 0) > 0 for r in rows for k in ("oop_wrong", "ip_wrong"))}
        if incomplete:
            self.problem = f"incomplete ({incomplete} of {len(paths)} runs lack '# Avg bus bandwidth')"

    def wrong(self, size):
        return size in self.wrong_sizes


def nearest_common(a, b, target):
    """The size present in both runs closest to target on a log scale, if within a factor of 2."""
    common = set(a.rows) & set(b.rows)
    common = [s for s in common if s > 0]
    if not common:
        return None
    best = min(common, key=lambda s: abs(math.log2(s / target)))
    return best if abs(math.log2(best / target)) <= 1.0 else None


def time_ratio(a_row, b_row):
    """peer time / ncclshim time: > 1 means ncclshim is faster (higher busbw)."""
    ta, tb = a_row["oop_time_us"], b_row["oop_time_us"]
    return tb / ta if ta and tb else None


def render(headers, rows, markdown):
    if markdown:
        out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" for _ in headers) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def comparison_rows(shim, mpi, gloo):
    rows = []
    for size in sorted(set(shim.rows) | set(mpi.rows) | set(gloo.rows)):
        s, m, g = shim.rows.get(size), mpi.rows.get(size), gloo.rows.get(size)
        note = [f"{name} wrong" for name, run in zip(("ncclshim", "MPI", "Gloo"), (shim, mpi, gloo)) if run.wrong(size)]
        rows.append([str(size), fmt(s and s["oop_busbw"], ".2f"), fmt(m and m["oop_busbw"], ".2f"),
                     fmt(time_ratio(s, m) if s and m else None, ".2f"), fmt(g and g["oop_busbw"], ".2f"),
                     fmt(time_ratio(s, g) if s and g else None, ".2f"), fmt(s and s["oop_time_us"], ".2f"),
                     fmt(m and m["oop_time_us"], ".2f"), fmt(g and g["oop_time_us"], ".2f"), ", ".join(note)])
    return rows


def evaluate_target(name, target, op, np, shim, mpi, latency, need=1.0, peer_name="mpi"):
    """One line of the targets table: op, ranks, target, size, ncclshim, peer, ratio, verdict.
    The busbw ratio must reach `need` (1.0 against MPI, 1.5 against Gloo)."""
    base = [op, str(np), name]
    if shim.problem == "missing" or mpi.problem == "missing" or not shim.rows or not mpi.rows:
        why = "; ".join(f"{side} {run.problem}" for side, run in (("ncclshim", shim), (peer_name, mpi)) if not run.rows)
        return base + ["-", "-", "-", "-", f"MISSING ({why})"]
    size = nearest_common(shim, mpi, target)
    if size is None:
        return base + ["-", "-", "-", "-", "MISSING (size not measured on both sides)"]
    s, m = shim.rows[size], mpi.rows[size]
    ratio = time_ratio(s, m)
    if latency:
        shown = [fmt(s["oop_time_us"], ".2f") + " us", fmt(m["oop_time_us"], ".2f") + " us"]
        ratio = 1.0 / ratio if ratio else None  # ncclshim time / MPI time, lower is better
        ok = ratio is not None and ratio <= 1.0
    else:
        shown = [fmt(s["oop_busbw"], ".2f") + " GB/s", fmt(m["oop_busbw"], ".2f") + " GB/s"]
        ok = ratio is not None and ratio >= need
    verdict = "PASS" if ok else "FAIL"
    if shim.wrong(size):
        verdict = "FAIL (wrong results)"
    return base + [human_size(size)] + shown + [fmt(ratio, ".2f"), verdict]


def discover(results):
    ops, ranks = set(), set()
    for name in os.listdir(results) if os.path.isdir(results) else []:
        match = _RESULT_NAME.match(name)
        if match:
            ops.add(match.group(2))
            ranks.add(int(match.group(3)))
    return [o for o in DEFAULT_OPS if o in ops] + sorted(ops - set(DEFAULT_OPS)), sorted(ranks)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="build/bench/results", help="folder of raw tables")
    parser.add_argument("--ops", help="space-separated ops (default: those found)")
    parser.add_argument("--ranks", help="space-separated rank counts (default: those found)")
    parser.add_argument("--markdown", default="build/bench/summary.md", help="markdown summary to write")
    parser.add_argument("--stat", choices=("median", "best"), default="median",
                        help="how repeats are reduced per size (best: the fastest, for a shared machine)")
    parser.add_argument("--strict", action="store_true", help="exit 1 unless every target passes")
    args = parser.parse_args(argv)

    found_ops, found_ranks = discover(args.results)
    ops = args.ops.split() if args.ops else found_ops
    ranks = [int(r) for r in args.ranks.split()] if args.ranks else found_ranks
    if not ops or not ranks:
        print(f"compare: no results under {args.results} (run bench/run_bench.sh first)")
        return 1 if args.strict else 0

    headers = ["size (B)", "ncclshim busbw", "MPI busbw", "vs MPI", "Gloo busbw", "vs Gloo", "ncclshim time (us)",
               "MPI time (us)", "Gloo time (us)", "note"]
    text, md = [], ["# ncclshim vs Open MPI and Gloo (loopback TCP)", "",
                    "busbw in GB/s, out-of-place; vs X = ncclshim/X busbw (> 1: ncclshim faster);",
                    f"with repeated runs, the {args.stat} per size.", ""]
    targets, problems = [], []
    for op in ops:
        for np in ranks:
            shim = Run(os.path.join(args.results, f"ncclshim_{op}_np{np}.txt"), args.stat)
            mpi = Run(os.path.join(args.results, f"mpi_{op}_np{np}.txt"), args.stat)
            gloo = Run(os.path.join(args.results, f"gloo_{op}_np{np}.txt"), args.stat)
            title = f"{op}, {np} ranks"
            for side, run in zip(SIDES, (shim, mpi, gloo)):
                if run.problem == "missing" and side == "gloo":
                    continue  # Gloo is optional: its targets say MISSING
                if run.problem:
                    problems.append(f"{title}: {side} {run.problem} ({run.path})")
                if run.busy:
                    problems.append(f"{title}: {side} started on a busy machine in {len(run.busy)} run(s) "
                                    f"(cpu idle {min(run.busy)}% < {MIN_IDLE_PERCENT}%): numbers are skewed")
            if max(shim.repeats, mpi.repeats, gloo.repeats) > 1:
                title += f" ({args.stat} of {shim.repeats} ncclshim / {mpi.repeats} MPI / {gloo.repeats} Gloo runs)"
            rows = comparison_rows(shim, mpi, gloo)
            text += [f"== {title} ==", render(headers, rows, False) if rows else "(no data)", ""]
            md += [f"## {title}", "", render(headers, rows, True) if rows else "(no data)", ""]
            for name, size in BUSBW_TARGETS:
                targets.append(evaluate_target(name + " vs MPI", size, op, np, shim, mpi, latency=False))
            for name, size in BUSBW_TARGETS:
                targets.append(evaluate_target(f"{name} >= {GLOO_FACTOR} x Gloo", size, op, np, shim, gloo,
                                               latency=False, need=GLOO_FACTOR, peer_name="gloo"))
            if op == "all_reduce":
                targets.append(evaluate_target(LATENCY_TARGET[0] + " vs MPI", LATENCY_TARGET[1], op, np, shim, mpi,
                                               latency=True))

    target_headers = ["op", "ranks", "target", "size", "ncclshim", "peer", "ratio", "verdict"]
    passed = sum(t[-1] == "PASS" for t in targets)
    tally = (f"{passed}/{len(targets)} targets pass (busbw ratio >= 1 vs MPI, >= {GLOO_FACTOR} vs Gloo; "
             "latency ratio = ncclshim/MPI time <= 1)")
    text += ["== targets ==", render(target_headers, targets, False), tally]
    md += ["## Targets", "", render(target_headers, targets, True), "", tally]
    if problems:
        text += ["", "Missing, incomplete or disturbed runs:"] + [f"  {p}" for p in problems]
        md += ["", "## Missing, incomplete or disturbed runs", ""] + [f"* {p}" for p in problems]
    print("\n".join(text))

    if args.markdown:
        os.makedirs(os.path.dirname(os.path.abspath(args.markdown)), exist_ok=True)
        with open(args.markdown, "w", encoding="utf-8") as handle:
            handle.write("\n".join(md) + "\n")
        print(f"\nmarkdown summary: {args.markdown}")
    return 1 if args.strict and passed != len(targets) else 0


if __name__ == "__main__":
    sys.exit(main())

"""`ncclshim compare A.json B.json [C.json ...]`: the same operations of several phynet runs side by
side, each run against the first (the baseline). Runs must replay the same workload: the same world
size and the same operations (op, group, communicator, sequence number, peers, type), with element
counts equal up to the runs' --scale; anything else is refused, naming the first difference.
Rows are op x group x communicator size x size bucket (of the baseline): mean time and mean busbw
over the ops and iterations of each run, and the ratios run / baseline; the end-to-end ratio is per
measured iteration. Largest differences first.
"""
import math
from collections import OrderedDict

from report_data import ReportError, human_bytes, size_bucket


def op_key(row):
    return (row["comm"], row["seq"], row.get("peers") or "")


def _identity(run):
    """{op key: first row} over all iterations, checking each key always has the same shape."""
    ops = OrderedDict()
    for row in run.ops:
        key = op_key(row)
        first = ops.setdefault(key, row)
        if first is not row and (first["op"], first["count"]) != (row["op"], row["count"]):
            raise ReportError(f"{run.path}: comm {key[0]} seq {key[1]} changes between iterations")
    return ops


def _scale(run):
    scale = run.get("scale", 1)
    return float(scale) if isinstance(scale, (int, float)) and scale > 0 else 1.0


def describe(key, row):
    peers = f" {key[2]}" if key[2] else ""
    return f'{row["op"]} on {row["group"]}({row["nranks"]}) comm {key[0]} seq {key[1]}{peers}'


def check_same_workload(base, other):
    """Raises ReportError naming the first difference between the two runs' workloads."""
    why = f"{other.path} and {base.path} are not runs of the same workload"
    if base.world_size != other.world_size:
        raise ReportError(f"{why}: {other.world_size} ranks against {base.world_size}")
    a, b = _identity(base), _identity(other)
    for key in a:
        if key not in b:
            raise ReportError(f"{why}: {describe(key, a[key])} is only in {base.path}")
    for key in b:
        if key not in a:
            raise ReportError(f"{why}: {describe(key, b[key])} is only in {other.path}")
    sa, sb = _scale(base), _scale(other)
    for key, ra in a.items():
        rb = b[key]
        for field in ("op", "group", "nranks", "type"):
            if ra.get(field) != rb.get(field):
                raise ReportError(f"{why}: {describe(key, ra)}: {field} {rb.get(field)} in {other.path}")
        # phynet scales counts as max(1, round(count * scale)): compare the unscaled counts
        ua, ub = ra["count"] / sa, rb["count"] / sb
        if ra["count"] != rb["count"] and abs(ua - ub) > 0.5 / sa + 0.5 / sb + 1e-9 and not (
                1 in (ra["count"], rb["count"]) and min(sa, sb) < 1):
            raise ReportError(f"{why}: {describe(key, ra)}: count {ra['count']} (scale {sa:g}) against "
                              f"{rb['count']} (scale {sb:g}) in {other.path}")
    return a


def _mean(values):
    return sum(values) / len(values) if values else None


def compare_runs(runs):
    """The comparison as a dict: runs, end-to-end ratios, rows sorted by the largest difference."""
    base = runs[0]
    keys = check_same_workload(base, base)
    for other in runs[1:]:
        check_same_workload(base, other)
    group_of = {}
    for key, row in keys.items():
        group_of[key] = (row["op"], row["group"], row["nranks"], size_bucket(row["bytes"]))
    rows = OrderedDict()
    for index, run in enumerate(runs):
        for r in run.ops:
            g = group_of[op_key(r)]
            entry = rows.setdefault(g, {"keys": set(), "time": [[] for _ in runs], "busbw": [[] for _ in runs],
                                        "bytes": [set() for _ in runs]})
            entry["keys"].add(op_key(r))
            entry["time"][index].append(r["time_us"])
            entry["busbw"][index].append(r["busbw_gbps"])
            entry["bytes"][index].add(r["bytes"])
    out_rows = []
    for (op, group, nranks, bucket), e in rows.items():
        time = [_mean(t) for t in e["time"]]
        busbw = [_mean(b) for b in e["busbw"]]
        time_ratio = [t / time[0] if time[0] else None for t in time[1:]]
        busbw_ratio = [b / busbw[0] if busbw[0] else None for b in busbw[1:]]
        spread = max((abs(math.log(r)) for r in time_ratio if r and r > 0), default=0.0)
        out_rows.append({"op": op, "group": group, "nranks": nranks, "size_bucket": bucket,
                         "sizes": [max(b) for b in e["bytes"]], "ops": len(e["keys"]),
                         "samples": [len(t) for t in e["time"]], "time_us": time, "busbw_gbps": busbw,
                         "time_ratio": time_ratio, "busbw_ratio": busbw_ratio, "spread": spread})
    out_rows.sort(key=lambda r: (-r["spread"], r["op"], r["group"], r["size_bucket"]))
    e2e = [run.per_iteration_s for run in runs]
    return {"runs": runs, "rows": out_rows, "end_to_end_s": e2e,
            "end_to_end_ratio": [t / e2e[0] if e2e[0] else None for t in e2e[1:]]}


def failures(result, threshold):
    """Lines naming what falls below `threshold`: a row's busbw ratio, or a run's end-to-end speed
    ratio (baseline time / run time)."""
    out = []
    for k, ratio in enumerate(result["end_to_end_ratio"]):
        if ratio and 1.0 / ratio < threshold:
            out.append(f"{result['runs'][k + 1].path}: end-to-end speed {1.0 / ratio:.3f} of the baseline "
                       f"(time ratio {ratio:.3f}) is below {threshold:g}")
    for row in result["rows"]:
        for k, ratio in enumerate(row["busbw_ratio"]):
            if ratio is not None and ratio < threshold:
                out.append(f"{result['runs'][k + 1].path}: {row_name(row)}: busbw ratio {ratio:.3f} is below "
                           f"{threshold:g}")
    return out


def row_name(row):
    return f'{row["op"]} {row["group"]}({row["nranks"]}) \u2264{human_bytes(row["size_bucket"])}'


def size_text(row):
    """The baseline's size bucket, and the other runs' largest size when --scale made them differ."""
    text = "\u2264" + human_bytes(row["size_bucket"])
    if any(size_bucket(s) != row["size_bucket"] for s in row["sizes"][1:]):
        text += " (" + ", ".join(human_bytes(s) for s in row["sizes"][1:]) + ")"
    return text


def ratio_text(value):
    return "-" if value is None else f"{value:.3f}"


def print_text(result, out, max_rows):
    runs = result["runs"]
    names = ["A"] + [chr(ord("B") + i) if i < 25 else f"R{i + 1}" for i in range(len(runs) - 1)]
    print(f"# ncclshim compare: {len(runs)} runs of {runs[0].get('description', '?')} "
          f"({runs[0].world_size} ranks)", file=out)
    for name, run, e2e in zip(names, runs, result["end_to_end_s"]):
        print(f"# {name}: {run.path}: transport {run.get('transport', '?')}, scale {run.get('scale', 1)}, "
              f"{run.iterations} iteration(s), end-to-end {e2e * 1e3:.3f} ms per iteration", file=out)
    for name, ratio in zip(names[1:], result["end_to_end_ratio"]):
        print(f"# end-to-end time {name}/A: {ratio_text(ratio)}", file=out)
    print("#", file=out)
    print("# per op x group x size (mean over ops and iterations; ratios: run / A), largest differences first",
          file=out)
    scaled = any(size_bucket(s) != row["size_bucket"] for row in result["rows"] for s in row["sizes"][1:])
    if scaled:
        print("# size<=: A's size bucket; the other runs' sizes differ by their --scale", file=out)
    header = f"# {'op':<13} {'group':<7} {'ranks':>5} {'size<=':>7} {'ops':>5} {'time_A(us)':>11} {'busbw_A':>8}"
    for name in names[1:]:
        header += f" {'time_' + name:>11} {name + '/A time':>10} {'busbw_' + name:>8} {name + '/A busbw':>11}"
    print(header, file=out)
    for row in result["rows"][:max_rows]:
        line = (f"  {row['op']:<13} {row['group']:<7} {row['nranks']:>5} {human_bytes(row['size_bucket']):>7} "
                f"{row['ops']:>5} {row['time_us'][0]:>11.1f} {row['busbw_gbps'][0]:>8.3f}")
        for k in range(len(runs) - 1):
            line += (f" {row['time_us'][k + 1]:>11.1f} {ratio_text(row['time_ratio'][k]):>10}"
                     f" {row['busbw_gbps'][k + 1]:>8.3f} {ratio_text(row['busbw_ratio'][k]):>11}")
        print(line, file=out)
    if len(result["rows"]) > max_rows:
        print(f"#  ... {len(result['rows']) - max_rows} more rows (--rows N)", file=out)

"""`ncclshim compare ... -o page.html`: the comparison as one self-contained HTML page: the runs,
the end-to-end ratio, the table of ratios per op x group x size (largest differences first, worse
cells red, better green), the time ratios as a bar chart, and busbw against size of every run on
one chart.
"""
import report_charts as charts
from report_compare import row_name, size_text
from report_html import Cell, chart, key_values, note, page, section, table

CHART_ROWS = 40


def ratio_cell(value, higher_is_better):
    if value is None:
        return Cell(None)
    worse = value < 0.95 if higher_is_better else value > 1.05
    better = value > 1.05 if higher_is_better else value < 0.95
    return Cell(value, f"{value:.3f}", "worse" if worse else "better" if better else "")


def build_compare_page(plt, result, fails, threshold, title=""):
    runs = result["runs"]
    names = ["A"] + [chr(ord("B") + i) if i < 25 else f"R{i + 1}" for i in range(len(runs) - 1)]
    run_rows = []
    for name, run, e2e in zip(names, runs, result["end_to_end_s"]):
        run_rows.append([name, run.path, str(run.get("transport", "-")), Cell(run.get("scale", 1)), run.iterations,
                         Cell(e2e * 1e3, f"{e2e * 1e3:.3f}", raw=e2e)])
    body = table("runs-table", ["<run", "<report", "<transport", "scale", "iterations", "end-to-end (ms/iteration)"],
                 run_rows)
    body += table("e2e-table", ["<run", "end-to-end time ratio (run / A)"],
                  [[name, ratio_cell(r, False)] for name, r in zip(names[1:], result["end_to_end_ratio"])])
    pairs = [("workload", runs[0].get("description", "-")), ("world size", f"{runs[0].world_size} ranks")]
    if threshold is not None:
        pairs.append(("--fail-below", f"{threshold:g}: " + ("; ".join(fails[:5]) + (" ..." if len(fails) > 5 else "")
                                                           if fails else "every ratio at or above it")))
    sections = [section("runs", "Runs", key_values("compare-info", pairs) + body)]

    headers = ["<op", "<group", "ranks", "size", "ops", "time A (us)", "busbw A"]
    for name in names[1:]:
        headers += [f"time {name} (us)", f"{name}/A time", f"busbw {name}", f"{name}/A busbw"]
    rows = []
    for row in result["rows"]:
        cells = [row["op"], row["group"], row["nranks"], Cell(row["size_bucket"], size_text(row)),
                 row["ops"], Cell(row["time_us"][0], f"{row['time_us'][0]:.1f}"),
                 Cell(row["busbw_gbps"][0], f"{row['busbw_gbps'][0]:.3f}")]
        for k in range(len(runs) - 1):
            cells += [Cell(row["time_us"][k + 1], f"{row['time_us'][k + 1]:.1f}"), ratio_cell(row["time_ratio"][k], False),
                      Cell(row["busbw_gbps"][k + 1], f"{row['busbw_gbps'][k + 1]:.3f}"),
                      ratio_cell(row["busbw_ratio"][k], True)]
        rows.append(cells)
    sections.append(section("ratios", "Per op, group and size (largest differences first)",
                            note("Mean over the ops and iterations of each run; ratios are run / A. Red: worse "
                                 "than A by more than 5 %, green: better.") + table("compare-table", headers, rows)))

    shown = result["rows"][:CHART_ROWS]
    fig, points = charts.ratio_chart(plt, [row_name(r) for r in shown],
                                     [(f"{n}/A", [r["time_ratio"][k] for r in shown]) for k, n in enumerate(names[1:])],
                                     "time ratio (run / A; right of 1: slower than A)")
    body = chart("time-ratio", fig, f"Time ratio per op x group x size, the {len(shown)} largest differences.",
                 points, plt)
    fig, points = charts.ratio_chart(plt, [row_name(r) for r in shown],
                                     [(f"{n}/A", [r["busbw_ratio"][k] for r in shown]) for k, n in enumerate(names[1:])],
                                     "busbw ratio (run / A; right of 1: faster than A)")
    body += chart("busbw-ratio", fig, "busbw ratio on the same rows.", points, plt)
    sections.append(section("charts", "Charts", body))
    nav = [("runs", "runs"), ("ratios", "ratios"), ("charts", "charts")]
    return page(title or f"phynet comparison: {len(runs)} runs of {runs[0].get('description', '?')}", nav,
                sections, "ncclshim compare")

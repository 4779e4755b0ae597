"""`ncclshim compare TRACE REPLAY.json`: a GPU-timed capture against its replay. The capture's figures
come from the trace (tools/inspect/capture_figures.cc: per op the longest member's GPU time, per rank
the communication time, exposed time and overlapping op pairs of its GPU timeline); the replay's from
phynet's JSON report (its op rows, and its "timeline" section, which phynet --pace recorded fills).
Per op x group x size: mean time per op, capture and replay, and the ratio replay / capture; per rank
(and per training iteration): communication and exposed time, capture -> replay (docs/replay_time.md).
A capture that holds CPU call times (no GPU timing) is refused: an enqueue is not an op's duration.
"""
import json
from collections import OrderedDict

from report_data import ReportError, human_bytes, size_bucket


def load_capture(path, source):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as error:
        raise ReportError(f"{source}: the capture's figures could not be read ({error})") from None
    clock = doc.get("recorded_clock")
    if clock not in ("gpu", "file"):
        what = {"cpu_call": "CPU call times (it was captured without GPU timing: NCCL's enqueue of each op, not "
                            "its duration)",
                "mixed": "GPU time for some ops and CPU call times for others",
                "none": "no times"}.get(clock, str(clock))
        raise ReportError(f"{source}: the capture holds {what}: there is no op time to compare a replay with "
                          "(capture with NCCLSHIM_GPU_TIMING=1)")
    doc["source"] = source
    return doc


def _mean(values):
    values = [v for v in values if isinstance(v, (int, float))]
    return sum(values) / len(values) if values else None


def _ratio(replay, capture):
    return replay / capture if isinstance(replay, (int, float)) and capture else None


def compare_capture(capture, run):
    """The comparison as a dict: op classes (largest differences first), ranks, iterations, overlaps."""
    if run.world_size != capture["world_size"]:
        raise ReportError(f"{run.path} replays {run.world_size} ranks, the capture {capture['source']} has "
                          f"{capture['world_size']}: not its replay")
    classes = OrderedDict()
    for side, rows in (("capture", capture["ops"]), ("replay", run.ops)):
        for r in rows:
            key = (r["op"], r["group"], r["nranks"], size_bucket(r["bytes"]))
            entry = classes.setdefault(key, {"capture": [], "replay": []})
            entry[side].append(r.get("time_us"))
    rows = []
    for (op, group, nranks, bucket), e in classes.items():
        c, r = _mean(e["capture"]), _mean(e["replay"])
        ratio = _ratio(r, c)
        rows.append({"op": op, "group": group, "nranks": nranks, "size_bucket": bucket,
                     "capture_ops": len(e["capture"]), "replay_ops": len(e["replay"]), "capture_us": c,
                     "replay_us": r, "ratio": ratio})
    rows.sort(key=lambda x: (-(abs(x["ratio"] - 1) if x["ratio"] else -1), x["op"], x["group"], x["size_bucket"]))
    replay_timeline = run.get("timeline") or {}
    capture_timeline = capture.get("timeline") or {}
    note = ""
    if not capture_timeline.get("captured"):
        note = capture_timeline.get("note") or "the capture has no GPU timeline"
    elif not replay_timeline.get("captured"):
        note = (f"{run.path} has no timeline scored against a GPU capture: replay the trace with phynet "
                "--pace recorded --json")
    elif not replay_timeline.get("paced"):
        note = (f"{run.path} was replayed --pace fast: it did not wait the capture's gaps, so its exposed time and "
                "overlaps are not the job's (replay with --pace recorded)")
    replay_by = {(k["rank"], k.get("iteration", -1)): k["replay"]
                 for k in (replay_timeline.get("ranks") or []) + (replay_timeline.get("iterations") or [])}

    def pair_up(entries):
        out = []
        for k in entries:
            rep = replay_by.get((k["rank"], k.get("iteration", -1)))
            if rep is None:
                continue
            c = k["capture"]
            out.append({"rank": k["rank"], "iteration": k.get("iteration", -1), "capture_comm_us": c["comm_us"],
                        "replay_comm_us": rep["comm_us"], "comm_ratio": _ratio(rep["comm_us"], c["comm_us"]),
                        "capture_exposed_us": c["exposed_us"], "replay_exposed_us": rep["exposed_us"],
                        "exposed_ratio": _ratio(rep["exposed_us"], c["exposed_us"]),
                        "capture_overlap_pairs": c["overlap_pairs"], "replay_overlap_pairs": rep["overlap_pairs"]})
        return out

    ranks = pair_up(capture_timeline.get("ranks") or []) if replay_timeline.get("captured") else []
    iterations = pair_up(capture_timeline.get("iterations") or []) if replay_timeline.get("captured") else []
    return {"capture": capture, "run": run, "rows": rows, "ranks": ranks, "iterations": iterations, "note": note,
            "capture_overlap_pairs": capture_timeline.get("capture_overlap_pairs"),
            "replay_overlap_pairs": replay_timeline.get("replay_overlap_pairs") if replay_timeline.get("captured")
            else None}


def text(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def print_capture_text(result, out, max_rows):
    capture, run = result["capture"], result["run"]
    print(f"# ncclshim compare: capture {capture['source']} ({capture['world_size']} ranks, "
          f"{capture['recorded_clock']} time) against its replay {run.path} (transport {run.get('transport', '?')}, "
          f"pace {run.get('pace', '?')}, {run.iterations} iteration(s))", file=out)
    print("# per op x group x size: mean time per op (us), ratio replay / capture; largest differences first",
          file=out)
    print(f"# {'op':<13} {'group':<7} {'ranks':>5} {'size<=':>7} {'ops':>5} {'capture(us)':>12} {'replay(us)':>11} "
          f"{'ratio':>7}", file=out)
    for row in result["rows"][:max_rows]:
        print(f"  {row['op']:<13} {row['group']:<7} {row['nranks']:>5} {human_bytes(row['size_bucket']):>7} "
              f"{row['capture_ops']:>5} {text(row['capture_us']):>12} {text(row['replay_us']):>11} "
              f"{text(row['ratio'], 3):>7}", file=out)
    if len(result["rows"]) > max_rows:
        print(f"#  ... {len(result['rows']) - max_rows} more rows (--rows N)", file=out)
    if result["note"]:
        print(f"# job timeline: {result['note']}", file=out)
    if result["ranks"]:
        print("# communication and exposed communication time per rank (us), capture -> replay (ratio)", file=out)
        for k in result["ranks"][:max_rows]:
            print(f"#   rank {k['rank']}: communication {text(k['capture_comm_us'])} -> {text(k['replay_comm_us'])} "
                  f"({text(k['comm_ratio'], 3)}), exposed {text(k['capture_exposed_us'])} -> "
                  f"{text(k['replay_exposed_us'])} ({text(k['exposed_ratio'], 3)}), overlapping pairs "
                  f"{k['capture_overlap_pairs']} -> {k['replay_overlap_pairs']}", file=out)
        print(f"# overlapping op pairs: capture {result['capture_overlap_pairs']}, replay "
              f"{text(result['replay_overlap_pairs'])} (all ranks; replay: mean per pass)", file=out)
    if result["iterations"]:
        print("# per training iteration (us), capture -> replay", file=out)
        for k in result["iterations"][:max_rows]:
            print(f"#   rank {k['rank']} iteration {k['iteration']}: communication {text(k['capture_comm_us'])} -> "
                  f"{text(k['replay_comm_us'])} ({text(k['comm_ratio'], 3)}), exposed "
                  f"{text(k['capture_exposed_us'])} -> {text(k['replay_exposed_us'])} "
                  f"({text(k['exposed_ratio'], 3)})", file=out)


def build_capture_page(result, title=""):
    from report_html import Cell, key_values, note, page, section, table
    capture, run = result["capture"], result["run"]
    pairs = [("capture", f"{capture['source']} ({capture['world_size']} ranks, {capture['recorded_clock']} time)"),
             ("replay", f"{run.path} (transport {run.get('transport', '-')}, pace {run.get('pace', '-')})")]
    sections = [section("runs", "Capture and replay", key_values("capture-info", pairs))]
    rows = [[r["op"], r["group"], r["nranks"], Cell(r["size_bucket"], "\u2264" + human_bytes(r["size_bucket"])),
             r["capture_ops"], Cell(r["capture_us"]), Cell(r["replay_us"]),
             Cell(r["ratio"], text(r["ratio"], 3), "worse" if r["ratio"] and r["ratio"] > 1.1 else
                  "better" if r["ratio"] and r["ratio"] < 0.9 else "")] for r in result["rows"]]
    sections.append(section("ops", "Per op, group and size", note("Mean time per op; ratio replay / capture (red: "
                                                                  "the replay is slower by more than 10 %).") +
                            table("capture-compare-table", ["<op", "<group", "ranks", "size", "ops", "capture (us)",
                                                            "replay (us)", "ratio"], rows)))
    body = note(result["note"]) if result["note"] else ""
    if result["ranks"]:
        body += (f'<p>Overlapping op pairs: capture <span class="big" id="capture-overlap" '
                 f'data-value="{result["capture_overlap_pairs"]}">{result["capture_overlap_pairs"]}</span>, replay '
                 f'<span class="big" id="replay-overlap" data-value="{result["replay_overlap_pairs"]}">'
                 f'{result["replay_overlap_pairs"]}</span></p>')
        for name, entries in (("ranks", result["ranks"]), ("iterations", result["iterations"])):
            if entries:
                body += table(f"capture-{name}-table", ["rank", "iteration", "comm capture (us)", "comm replay (us)",
                                                        "ratio", "exposed capture (us)", "exposed replay (us)", "ratio",
                                                        "overlaps capture", "overlaps replay"],
                              [[k["rank"], k["iteration"] if k["iteration"] >= 0 else None,
                                Cell(k["capture_comm_us"]), Cell(k["replay_comm_us"]), Cell(k["comm_ratio"]),
                                Cell(k["capture_exposed_us"]), Cell(k["replay_exposed_us"]), Cell(k["exposed_ratio"]),
                                k["capture_overlap_pairs"], k["replay_overlap_pairs"]] for k in entries])
    sections.append(section("timeline", "Communication and exposed time", body or note("-")))
    return page(title or f"capture {capture['source']} against its replay", [("runs", "runs"), ("ops", "ops"),
                                                                              ("timeline", "timeline")],
                sections, "ncclshim compare")

"""`ncclshim report` / `phynet --html`: one self-contained HTML page for one phynet JSON report:
what was replayed, the summary by op x group x size, busbw against size, replayed against recorded
time, bytes per rank (and per host and NIC when the report has them), the traffic matrix between
ranks (and hosts), a timeline per rank and communicator, the first per-op rows, and any section
of the JSON this page does not know as a plain table.
"""
from collections import OrderedDict

import report_charts as charts
from report_data import human_bytes
from report_html import Cell, chart, key_values, note, page, section, table

KNOWN_KEYS = {"description", "world_size", "transport", "pace", "iterations", "warmup", "scale", "rate_gbps",
              "end_to_end_s", "ranks", "summary", "ops", "hosts", "nics", "host_pairs", "comms", "straggler",
              "training_iterations", "recorded_clock", "nccl_settings", "nccl_settings_note", "timeline"}
OP_ROWS_SHOWN = 300
EXTRA_ROWS_SHOWN = 200
TIMELINE_BARS = 60000


def bucket_name(n):
    units, unit = ["B", "K", "M", "G", "T", "P"], 0
    while n >= 1024 and n % 1024 == 0 and unit < 5:
        n //= 1024
        unit += 1
    return f"{n}{units[unit]}"


def optional(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def run_section(run):
    d = run.doc
    ops_total = sum(r["ops"] for r in run.ranks)
    pairs = [("input", d.get("description", "-")), ("world size", f"{run.world_size} ranks"),
             ("transport", d.get("transport", "-")), ("pace", d.get("pace", "-")),
             ("iterations", f'{run.iterations} measured (+{d.get("warmup", 0)} warmup)'),
             ("scale", d.get("scale", 1)),
             ("rate", f"{run.rate_gbps:g} GB/s" if run.rate_gbps else "- (no --rate: no ideal line)"),
             ("end-to-end", f"{run.end_to_end_s:.6f} s ({run.per_iteration_s * 1e3:.3f} ms per iteration)"),
             ("operations", f"{len(run.ops):,} report rows; {ops_total:,} rank-level ops executed (warmup included)")]
    steps = d.get("training_iterations")
    if isinstance(steps, dict) and steps.get("time_us"):
        times = steps["time_us"]
        pairs.append(("training iterations", f'{steps["per_pass"]} per pass of {steps["calls"]} calls (found in the '
                      f'trace): mean {sum(times) / len(times) / 1e3:.3f} ms, min {min(times) / 1e3:.3f}, '
                      f'max {max(times) / 1e3:.3f}'))
    late = d.get("straggler")
    if isinstance(late, dict) and late.get("waiting_ops"):
        if late.get("rank", -1) >= 0:
            pairs.append(("waiting for ranks", f'rank {late["rank"]} started last in {late["last_in"]} of the '
                          f'{late["waiting_ops"]} operations it took part in that waited (a straggler): the others '
                          f'waited {late["wait_us"] / late["last_in"] / 1e3:.3f} ms per operation for it'))
        else:
            pairs.append(("waiting for ranks", "no rank was the late one in 90 % of the waiting operations it "
                          "took part in"))
    hosts = run.hosts_of_ranks()
    if hosts is not None or "hosts" in d:
        count = d["hosts"] if isinstance(d.get("hosts"), int) else len(set(hosts or []))
        names = sorted(set(hosts or []), key=(hosts or []).index)
        pairs.append(("hosts", f"{count}: " + ", ".join(names[:16]) + (" ..." if len(names) > 16 else "")))
    nics = sorted({(r.get("host", ""), r["nic"]) for r in run.ranks if isinstance(r.get("nic"), str)})
    if nics:
        pairs.append(("NICs", ", ".join(f"{h}:{n}" if h else n for h, n in nics[:16]) + (" ..." if len(nics) > 16 else "")))
    for key, value in d.items():  # whatever else the report says (algorithms, versions, ...)
        if key not in KNOWN_KEYS and not isinstance(value, (list, dict)):
            pairs.append((key, value))
    return section("run", "What was replayed", key_values("run-table", pairs))


def summary_section(run):
    rows = []
    for s in run.summary:
        rows.append([s["op"], s["group"], Cell(s["size_bucket"], "\u2264" + bucket_name(s["size_bucket"])),
                     s["count"], Cell(s["total_bytes"], human_bytes(s["total_bytes"]), raw=s["total_bytes"]),
                     Cell(s["mean_time_us"], f'{s["mean_time_us"]:.1f}'),
                     Cell(s["mean_busbw_gbps"], f'{s["mean_busbw_gbps"]:.3f}'),
                     optional(s.get("mean_efficiency_pct")), optional(s.get("mean_recorded_us"))])
    busbw = [r["busbw_gbps"] for r in run.ops]
    body = table("summary-table", ["<op", "<group", "size", "ops", "bytes", "mean time (us)", "mean busbw (GB/s)",
                                   "mean efficiency (%)", "mean recorded (us)"], rows)
    body += (f'<p>Avg bus bandwidth: <span class="big" id="avg-busbw" data-value="{sum(busbw) / len(busbw)!r}">'
             f"{sum(busbw) / len(busbw):.3f} GB/s</span> over {len(busbw):,} operations (nccl-tests' figure)</p>")
    return section("summary", "Summary by op, group and size", body)


def busbw_section(plt, run):
    fig, points = charts.busbw_chart(plt, [("", run.ops)], run.rate_gbps)
    caption = ("busbw of every replayed op (dots) and the mean per size bucket (line), per op and communicator "
               "group; one-rank communicators left out." + (" Dashed: the ideal busbw, the given rate."
                                                          if run.rate_gbps else " No --rate given: no ideal line."))
    return section("busbw", "Bus bandwidth against message size", chart("busbw", fig, caption, points, plt))


def recorded_section(plt, run):
    clock = run.get("recorded_clock", "gpu")
    if clock in ("cpu_call", "mixed"):
        what = ("the CPU time of each call (an enqueue of microseconds, not the op's duration)" if clock == "cpu_call"
                else "GPU time for some calls and CPU call time for others")
        return section("recorded", "Replayed against recorded time",
                       note(f"The capture recorded {what}: a replay is compared only with GPU time, so no chart. "
                            "Capture with NCCLSHIM_GPU_TIMING=1 to compare."))
    fig, points = charts.recorded_chart(plt, run.ops, clock)
    if fig is None:
        body = note("No op has a recorded time (SimAI / AICB workloads carry none; a trace recorded with "
                    "NCCLSHIM_GPU_TIMING=1 does).")
    else:
        source = "NCCL's GPU time recorded" if clock == "gpu" else "the time the workload file states"
        body = chart("recorded", fig, f"Replayed time against {source}, per op; on the dashed line they are equal.",
                     points, plt)
    return section("recorded", "Replayed against recorded time", body)


def settings_section(run):
    settings = [s for s in run.get("nccl_settings") or [] if isinstance(s, dict)]
    if "nccl_settings" not in run.doc:
        return None
    body = note("The traffic-shaping NCCL_* variables in force for this replay and where each came from: the "
                "capture (its trace header), this replay's environment, or an override (an NCCLSHIM_* setting, "
                "--algo, --proto); read = looked up by this replay (its engine or transports).")
    if settings:
        rows = [[str(s.get("name", "")), Cell(str(s.get("value", "")), css="wrap"), str(s.get("source", "")),
                 Cell(str(s.get("via") or ""), css="wrap"), str(s.get("captured") or ""),
                 "-" if s.get("source") == "capture (not applied)" else "yes" if s.get("read") else "no"]
                for s in settings]
        body += table("nccl-settings-table", ["<name", "<value", "<from", "<via", "<capture had", "<read"], rows)
    else:
        body += note("None set: neither the capture nor this environment sets one.")
    if run.get("nccl_settings_note"):
        body += note(str(run.get("nccl_settings_note")))
    return section("settings", "NCCL settings", body)


def job_timeline_section(plt, run):
    t = run.get("timeline")
    if not isinstance(t, dict) or not t.get("note"):
        return None
    body = note(str(t["note"]))
    if t.get("captured"):
        def ratio(a, b):
            return Cell(b / a if a else None, f"{b / a:.2f}" if a else "-")
        rows = []
        for k in t.get("ranks") or []:
            c, r = k.get("capture", {}), k.get("replay", {})
            rows.append([k.get("rank"), Cell(c.get("comm_us"), f'{c.get("comm_us", 0):.1f}'),
                         Cell(r.get("comm_us"), f'{r.get("comm_us", 0):.1f}'), ratio(c.get("comm_us"), r.get("comm_us")),
                         Cell(c.get("exposed_us"), f'{c.get("exposed_us", 0):.1f}'),
                         Cell(r.get("exposed_us"), f'{r.get("exposed_us", 0):.1f}'),
                         ratio(c.get("exposed_us"), r.get("exposed_us")), c.get("overlap_pairs"),
                         r.get("overlap_pairs")])
        body += (f'<p>Overlapping op pairs (ops of different communicators in flight at once on a rank): capture '
                 f'<span class="big" id="capture-overlap" data-value="{t.get("capture_overlap_pairs")}">'
                 f'{t.get("capture_overlap_pairs")}</span>, replay <span class="big" id="replay-overlap" '
                 f'data-value="{t.get("replay_overlap_pairs")}">{t.get("replay_overlap_pairs")}</span> (mean per '
                 f'pass)</p>')
        body += table("job-timeline-table", ["rank", "comm capture (us)", "comm replay (us)", "ratio",
                                             "exposed capture (us)", "exposed replay (us)", "ratio",
                                             "overlaps capture", "overlaps replay"], rows)
        iterations = t.get("iterations") or []
        if iterations:
            rows = [[k.get("rank"), k.get("iteration"), Cell(k["capture"]["comm_us"], f'{k["capture"]["comm_us"]:.1f}'),
                     Cell(k["replay"]["comm_us"], f'{k["replay"]["comm_us"]:.1f}'),
                     Cell(k["capture"]["exposed_us"], f'{k["capture"]["exposed_us"]:.1f}'),
                     Cell(k["replay"]["exposed_us"], f'{k["replay"]["exposed_us"]:.1f}')]
                    for k in iterations[:EXTRA_ROWS_SHOWN]]
            body += ("<details><summary>per training iteration</summary>" +
                     table("iteration-timeline-table", ["rank", "iteration", "comm capture (us)", "comm replay (us)",
                                                        "exposed capture (us)", "exposed replay (us)"], rows) +
                     "</details>")
        captured = [r for r in run.ops if isinstance(r.get("recorded_start_us"), (int, float))]
        if captured:
            body += timeline_chart_of(plt, run, captured, "recorded_start_us", "recorded_us", "capture-timeline",
                                      "The capture's timeline: each op from its GPU start for its GPU time, on one lane "
                                      "per rank and communicator (compare with the replay's below).")
    return section("job-timeline", "The job's timeline: capture against replay", body)


def bytes_section(plt, run):
    ranks = sorted(run.ranks, key=lambda r: r["rank"])
    if not ranks:
        return section("bytes", "Bytes per rank", note('This report has no per-rank counters ("ranks" is empty).'))
    fig, points = charts.bytes_chart(plt, [r["rank"] for r in ranks], [r["wire_sent"] for r in ranks],
                                     [r["wire_received"] for r in ranks],
                                     [r.get("model_sent", 0) for r in ranks] if all("model_sent" in r for r in ranks)
                                     else None)
    body = chart("rank-bytes", fig, "Payload bytes each rank sent and received over the transport (all "
                 "iterations, warmup included); markers: the algorithms' formula.", points, plt)
    placed = any("host" in r or "nic" in r for r in ranks)
    headers = ["rank"] + (["<host", "<nic", "local rank"] if placed else []) + [
        "ops", "op bytes", "wire sent", "wire received", "model sent", "zero copy"]
    rows = []
    for r in ranks:
        row = [r["rank"]]
        if placed:
            row += [str(r.get("host", "-")), str(r.get("nic", "-")), optional(r.get("local_rank"))]
        row += [r["ops"], r["op_bytes"], r["wire_sent"], r["wire_received"], optional(r.get("model_sent")),
                optional(r.get("wire_zero_copy"))]
        rows.append(row)
    body += table("rank-table", headers, rows)
    nics = [n for n in run.get("nics") or [] if isinstance(n, dict)]
    if nics:
        body += nic_block(plt, nics)
    return section("bytes", "Bytes per rank" + (", host and NIC" if nics else ""), body)


def traffic(entry, key):
    value = entry.get(key)
    if isinstance(value, dict):
        return value.get("bytes", 0), value.get("model_bytes")
    return (value if isinstance(value, int) else 0), None


def nic_block(plt, nics):
    hosts = OrderedDict()
    for n in nics:
        sent, received = traffic(n, "sent")[0], traffic(n, "received")[0]
        h = hosts.setdefault(str(n.get("host", "?")), [0, 0])
        h[0] += sent
        h[1] += received
    out = ""
    if len(hosts) > 1:
        fig, points = charts.bytes_chart(plt, list(hosts), [v[0] for v in hosts.values()],
                                         [v[1] for v in hosts.values()], xlabel="host")
        out += chart("host-bytes", fig, "Bytes each host sent to and received from other hosts (what reached "
                     "the fabric).", points, plt)
    labels = [f'{n.get("host", "?")}:{n.get("nic", "?")}' for n in nics]
    if not any(traffic(n, "sent")[0] or traffic(n, "received")[0] for n in nics):
        return out + note("No byte crossed a NIC: every rank is on one host.") + nic_table(nics)
    fig, points = charts.bytes_chart(plt, labels, [traffic(n, "sent")[0] for n in nics],
                                     [traffic(n, "received")[0] for n in nics],
                                     [traffic(n, "sent")[1] or 0 for n in nics], xlabel="host:NIC")
    out += chart("nic-bytes", fig, "Bytes through each NIC to and from other hosts; markers: the model.",
                 points, plt)
    return out + nic_table(nics)


def rank_ranges(ranks):
    """[0, 1, 2, 3, 8] -> "0-3,8"."""
    ranks = sorted(r for r in ranks if isinstance(r, int))
    parts, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        parts.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return ",".join(parts)


def nic_table(nics):
    rows = [[str(n.get("host", "-")), str(n.get("nic", "-")), Cell(rank_ranges(n.get("ranks", [])), css="wrap"),
             traffic(n, "sent")[0], optional(traffic(n, "sent")[1]), traffic(n, "received")[0],
             optional(traffic(n, "received")[1])] for n in nics]
    return table("nic-table", ["<host", "<nic", "<ranks", "sent", "model sent", "received", "model received"], rows)


def matrix_section(plt, run):
    matrix = run.traffic_matrix()
    if matrix is None:
        return section("matrix", "Traffic matrix", note(
            'This report has no per-peer byte counts (a "peer_bytes" list per rank), so there is no traffic '
            "matrix: replay with a phynet that writes them."))
    n = run.world_size
    fig, points = charts.heatmap_chart(plt, list(range(n)), matrix, "payload")
    body = chart("matrix", fig, "Payload bytes from each rank (row) to each rank (column), measured by the "
                 "transport over all iterations; grey: nothing.", points, plt)
    hosts = run.hosts_of_ranks()
    if hosts is not None and len(set(hosts)) > 1:
        names = list(OrderedDict.fromkeys(hosts))
        index = {h: i for i, h in enumerate(names)}
        nodes = [[0] * len(names) for _ in names]
        for a in range(n):
            for b in range(n):
                nodes[index[hosts[a]]][index[hosts[b]]] += matrix[a][b]
        fig, points = charts.heatmap_chart(plt, names, nodes, "payload")
        body += chart("host-matrix", fig, "The same between hosts: the diagonal stays inside a host (never on "
                      "the fabric).", points, plt)
    cells = [[a, b, matrix[a][b]] for a in range(n) for b in range(n) if matrix[a][b]]
    body += (f"<details><summary>the matrix as numbers ({len(cells):,} non-zero pairs)</summary>"
             + table("matrix-table", ["sender", "receiver", "bytes"], cells) + "</details>")
    return section("matrix", "Traffic matrix", body)


def row_ranks(row, members):
    """The global ranks an op row ran on, or None when the report does not say."""
    peers = row.get("peers") or ""
    if "->" in peers:
        ends = peers.split("->")
        if all(e.strip().isdigit() for e in ends):
            return [int(e) for e in ends]
    return members.get(row["comm"])


def timeline_chart_of(plt, run, ops, start_key, time_key, chart_id, caption):
    """A timeline chart of `ops` (bars from row[start_key] for row[time_key]) on one lane per rank and
    communicator, whole iterations while their bars fit."""
    members = run.comm_members()
    by_iteration = OrderedDict()
    for r in ops:
        by_iteration.setdefault(r["iteration"], []).append(r)
    rows, bars_needed = [], 0
    for chunk in by_iteration.values():  # whole iterations while their bars fit
        need = sum(len(row_ranks(r, members) or [None]) for r in chunk)
        if rows and bars_needed + need > TIMELINE_BARS:
            break
        rows += chunk
        bars_needed += need
    lane_of, placed, unknown = {}, [], set()
    for r in rows:
        ranks = row_ranks(r, members)
        if not ranks:
            unknown.add(r["comm"])
        for rank in ranks or [None]:
            lane_of.setdefault((rank, r["comm"]), None)
            placed.append(((rank, r["comm"]), r))
    ordered = sorted(lane_of, key=lambda k: (k[0] is None, k[0] if k[0] is not None else 0, k[1]))
    group_of = {r["comm"]: f'{r["group"]}({r["nranks"]})' for r in rows}
    lanes = []
    for i, (rank, comm) in enumerate(ordered):
        lane_of[(rank, comm)] = i
        lanes.append(f"{'rank ' + str(rank) if rank is not None else 'comm'} {group_of[comm]} {comm[-4:]}")
    bars = [(lane_of[key], float(r.get(start_key) or 0.0), float(r.get(time_key) or 0.0), r["op"]) for key, r in placed]
    fig, points = charts.timeline_chart(plt, lanes, bars, sorted({r["op"] for r in rows}))
    shown = len({r["iteration"] for r in rows})
    body = chart(chart_id, fig, f"{caption} ({shown} of {len(by_iteration)} measured iteration(s)).", points, plt)
    if unknown:
        body += note(f"{len(unknown)} communicator(s) have one lane each (label 'comm'): the report does not list "
                     "their members; ncclshim report --input TRACE|WORKLOAD (or phynet --html) gives them.")
    return body


def timeline_section(plt, run):
    body = timeline_chart_of(plt, run, run.ops, "start_us", "time_us", "timeline",
                             "Each op as a bar from its start for its replayed time, on one lane per rank and "
                             "communicator")
    return section("timeline", "Timeline per rank and communicator", body)


def ops_section(run):
    shown = run.ops[:OP_ROWS_SHOWN]
    rows = [[r["iteration"], r["op"], r["group"], r["comm"], r["nranks"], r["seq"], r["count"], str(r.get("type", "")),
             r["bytes"], str(r.get("peers") or ""), optional(r.get("start_us")), Cell(r["time_us"], f'{r["time_us"]:.1f}'),
             optional(r.get("algbw_gbps")), r["busbw_gbps"], optional(r.get("efficiency_pct")),
             optional(r.get("recorded_us")), optional(r.get("ratio"))] for r in shown]
    body = table("ops-table", ["iter", "<op", "<group", "<comm", "ranks", "seq", "count", "<type", "bytes", "<peers",
                               "start (us)", "time (us)", "algbw", "busbw", "eff (%)", "recorded (us)", "ratio"], rows)
    if len(run.ops) > len(shown):
        body = note(f"The first {len(shown)} of {len(run.ops):,} rows; all are in {run.path}.") + body
    return section("ops", "Operations", f"<details><summary>{len(shown)} rows</summary>{body}</details>")


def extra_sections(run):
    out = []
    for key, value in run.doc.items():
        if (key in KNOWN_KEYS and not (key == "hosts" and isinstance(value, list))) or not isinstance(value, (list, dict)):
            continue
        if isinstance(value, dict):
            out.append(section(f"extra-{key}", key, key_values(f"extra-{key}-table",
                                                                [(k, v if not isinstance(v, (list, dict)) else
                                                                  str(v)[:200]) for k, v in value.items()])))
        elif value and all(isinstance(v, dict) for v in value):
            columns = list(OrderedDict.fromkeys(k for v in value for k in v))
            rows = [[(v.get(c) if isinstance(v.get(c), (int, float)) and not isinstance(v.get(c), bool)
                      else str(v.get(c, ""))[:80]) for c in columns] for v in value[:EXTRA_ROWS_SHOWN]]
            headers = [c if all(isinstance(v.get(c), (int, float)) for v in value if c in v) else "<" + c
                       for c in columns]
            out.append(section(f"extra-{key}", key, table(f"extra-{key}-table", headers, rows)))
        else:
            out.append(section(f"extra-{key}", key, note(", ".join(str(v) for v in value[:EXTRA_ROWS_SHOWN]))))
    return out


def host_pairs_section(run):
    pairs = [p for p in run.get("host_pairs") or [] if isinstance(p, dict)]
    if not pairs:
        return None
    rows = [[str(p.get("from", "")), str(p.get("to", "")), traffic(p, "traffic")[0],
             optional(traffic(p, "traffic")[1]), "yes" if p.get("same_host") else "no"] for p in pairs]
    return section("host-pairs", "Traffic between hosts", table(
        "host-pairs-table", ["<from", "<to", "bytes", "model bytes", "<same host"], rows))


def build_page(plt, run, title=""):
    sections = [run_section(run), summary_section(run), busbw_section(plt, run), recorded_section(plt, run)]
    nav = [("run", "run"), ("summary", "summary"), ("busbw", "busbw"), ("recorded", "recorded")]
    for key, label, made in (("settings", "NCCL settings", settings_section(run)),
                             ("job-timeline", "job timeline", job_timeline_section(plt, run))):
        if made:
            sections.append(made)
            nav.append((key, label))
    sections += [bytes_section(plt, run), matrix_section(plt, run)]
    pairs = host_pairs_section(run)
    if pairs:
        sections.append(pairs)
    sections += [timeline_section(plt, run), ops_section(run)] + extra_sections(run)
    nav += [("bytes", "bytes"), ("matrix", "matrix"), ("timeline", "timeline"), ("ops", "ops")]
    return page(title or f"phynet replay: {run.get('description', run.path)}", nav, sections,
                "ncclshim report")

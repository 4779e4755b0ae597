#!/usr/bin/env python3
"""Reads back a report page as the browser built it (chromium --dump-dom) and checks it against
the phynet JSON it was made from, without the generator's code (tests/suites/report_tests.sh):

  check_page.py report  DOM.html REPORT.json
      every chart is an <svg> inside its figure with as many points as the JSON has (busbw: ops of
      communicators of more than one rank); the summary, per-rank, NIC and traffic-matrix tables'
      data-value cells equal the JSON's numbers; the matrix equals every rank's "peer_bytes" (and
      what b received from a equals what a sent to b); nothing in the page points outside it.
  check_page.py report  DOM.html REPORT.json members
      also: the communicators' members were given (phynet --html, report --input), so the timeline
      has a bar for every rank of every op (whole iterations, at most 60,000 bars) and no lane
      without a rank.
  check_page.py compare DOM.html A.json B.json
      the ratio table equals a recomputation from the two JSONs here (mean time and busbw per op x
      group x communicator size x A's size bucket; ratios B / A) and so does the end-to-end ratio.
Prints what it checked; exit 0 when everything matched, 1 otherwise (naming the first mismatch).
"""
import json
import math
import re
import sys
from collections import defaultdict
from html.parser import HTMLParser


class Dom(HTMLParser):
    """Tables by id (rows of cells: (data-value, text)), figures by data-chart, and tag counts."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.figures, self.tags, self.values = {}, {}, defaultdict(int), {}
        self._table, self._row, self._cell, self._figure = None, None, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] += 1
        if tag == "table" and "id" in a:
            self._table = self.tables.setdefault(a["id"], [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = [a.get("data-value"), ""]
        elif tag == "figure" and "data-chart" in a:
            self._figure = a["data-chart"]
            self.figures[self._figure] = {"points": int(a.get("data-points", "0")), "svg": 0}
        elif tag == "svg" and self._figure is not None:
            self.figures[self._figure]["svg"] += 1
        if "id" in a and "data-value" in a:
            self.values[a["id"]] = a["data-value"]

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self._row.append(tuple(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row:
                self._table.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "figure":
            self._figure = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data


problems, checked = [], []


def expect(ok, what):
    (checked if ok else problems).append(what)


def num(cell):
    return None if cell[0] in (None, "") else float(cell[0])


def same(a, b):
    return (a is None and b is None) or (a is not None and b is not None and
                                         math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12))


def no_outside_references(text):
    outside = re.findall(r'(?:src|href)\s*=\s*"(?!#|data:)[^"]*"|<script[^>]*\bsrc|<link\b|@import|url\((?!#)', text)
    expect(not outside, f"nothing outside the page is referenced ({outside[:3]})")


def check_report(dom, doc):
    ops = doc["ops"]
    want_charts = {"busbw": sum(1 for o in ops if o["nranks"] > 1), "rank-bytes": 2 * doc["world_size"],
                   "timeline": None}
    # A replay is charted against GPU time or a file's figure, never against CPU call times.
    comparable = doc.get("recorded_clock", "gpu") in ("gpu", "file")
    if comparable and any(o.get("recorded_us") is not None for o in ops):
        want_charts["recorded"] = sum(1 for o in ops if o.get("recorded_us") is not None)
    if any("peer_bytes" in r for r in doc["ranks"]):
        want_charts["matrix"] = doc["world_size"] ** 2
    hosts = {r.get("host") for r in doc["ranks"]}
    if doc.get("nics") and len(hosts) > 1:
        want_charts["host-bytes"] = 2 * len(hosts)
        want_charts["nic-bytes"] = 2 * len(doc["nics"])
        want_charts["host-matrix"] = len(hosts) ** 2
    for name, points in want_charts.items():
        figure = dom.figures.get(name)
        expect(figure is not None and figure["svg"] == 1 and figure["points"] > 0 and
               (points is None or figure["points"] == points),
               f"chart {name}: one <svg>, {points if points is not None else '>0'} points (page: {figure})")

    straggler = doc.get("straggler") or {}
    if straggler.get("rows"):  # who the ranks waited for: the rank the JSON names, or none
        want = str(straggler["rank"]) if isinstance(straggler.get("rank"), int) else ""
        expect(dom.values.get("straggler") == want, f"straggler: rank '{want}' (page '{dom.values.get('straggler')}')")
    timeline = doc.get("timeline") or {}
    if timeline.get("captured"):
        for key in ("capture", "replay"):
            expect(same(dom.values.get(f"{key}-overlap"), timeline[f"{key}_overlap_pairs"]),
                   f"{key} overlapping pairs {timeline[f'{key}_overlap_pairs']} (page {dom.values.get(f'{key}-overlap')})")
        rows = dom.tables.get("job-timeline-table", [])
        expect(len(rows) == len(timeline["ranks"]), f"job timeline: {len(timeline['ranks'])} ranks (page {len(rows)})")

    rows = dom.tables.get("summary-table", [])
    expect(len(rows) == len(doc["summary"]), f"summary table: {len(doc['summary'])} rows (page {len(rows)})")
    for s, row in zip(doc["summary"], rows):
        got = [row[0][1], row[1][1], num(row[2]), num(row[3]), num(row[4]), num(row[5]), num(row[6])]
        want = [s["op"], s["group"], s["size_bucket"], s["count"], s["total_bytes"], s["mean_time_us"],
                s["mean_busbw_gbps"]]
        expect(got[:2] == want[:2] and all(same(a, b) for a, b in zip(got[2:], want[2:])),
               f"summary {s['op']} {s['group']} {s['size_bucket']}: page {got} = JSON {want}")
    mean = sum(o["busbw_gbps"] for o in ops) / len(ops)
    expect(same(dom.values.get("avg-busbw"), mean), f"avg busbw {mean}")

    rows = dom.tables.get("rank-table", [])
    expect(len(rows) == doc["world_size"], f"rank table: {doc['world_size']} rows (page {len(rows)})")
    placed = any("host" in r for r in doc["ranks"])
    for r, row in zip(sorted(doc["ranks"], key=lambda r: r["rank"]), rows):
        values = [num(c) for c in row]
        offset = 4 if placed else 1
        got = [values[0]] + values[offset:offset + 4]
        want = [r["rank"], r["ops"], r["op_bytes"], r["wire_sent"], r["wire_received"]]
        expect(all(same(a, b) for a, b in zip(got, want)), f"rank {r['rank']}: page {got} = JSON {want}")
        if placed:
            expect([row[1][1], row[2][1]] == [r.get("host"), r.get("nic")], f"rank {r['rank']}: host and NIC")

    if "matrix" in want_charts:
        sent = {(r["rank"], p["peer"]): p["sent"] for r in doc["ranks"] for p in r.get("peer_bytes", []) if p["sent"]}
        received = {(p["peer"], r["rank"]): p["received"] for r in doc["ranks"] for p in r.get("peer_bytes", [])
                    if p["received"]}
        page = {(int(num(c[0])), int(num(c[1]))): int(num(c[2])) for c in dom.tables.get("matrix-table", [])}
        expect(page == sent and len(page) > 0, f"traffic matrix: {len(sent)} non-zero pairs equal peer_bytes "
                                               f"sent (page {len(page)})")
        expect(sent == received, "traffic matrix: what b received from a = what a sent to b, for every pair")
    if doc.get("nics"):
        rows = dom.tables.get("nic-table", [])
        want = [[n["sent"]["bytes"], n["received"]["bytes"]] for n in doc["nics"]]
        got = [[num(row[3]), num(row[5])] for row in rows]
        expect(len(got) == len(want) and all(same(a, b) for g, w in zip(got, want) for a, b in zip(g, w)),
               f"NIC table: sent/received {want} (page {got})")
    expect(dom.tags["script"] == 0, "no script in the page")


def check_members(dom, doc, text):
    per_iteration = defaultdict(int)
    for o in doc["ops"]:
        per_iteration[o["iteration"]] += 2 if "->" in (o.get("peers") or "") else o["nranks"]
    first, total = per_iteration[min(per_iteration)], sum(per_iteration.values())
    points = dom.figures.get("timeline", {}).get("points", 0)
    ok = points == total if total <= 60000 else (points % first == 0 and first <= points <= 60000)
    expect(ok, f"timeline: a bar per rank of every op ({total} in all, {first} per iteration; page {points})")
    expect("have one lane each" not in text, "timeline: no lane without its ranks")


def check_compare(dom, a, b):
    def mean_by(doc, key_of):
        groups = defaultdict(lambda: [[], []])
        for o in doc["ops"]:
            g = groups[key_of(o)]
            g[0].append(o["time_us"])
            g[1].append(o["busbw_gbps"])
        return {k: (sum(t) / len(t), sum(b) / len(b)) for k, (t, b) in groups.items()}

    def bucket(n):
        k = 1
        while k < n:
            k *= 2
        return k

    base = {(o["comm"], o["seq"], o.get("peers") or ""): o for o in a["ops"]}
    row_of = {k: (o["op"], o["group"], o["nranks"], bucket(o["bytes"])) for k, o in base.items()}
    ma = mean_by(a, lambda o: row_of[(o["comm"], o["seq"], o.get("peers") or "")])
    mb = mean_by(b, lambda o: row_of[(o["comm"], o["seq"], o.get("peers") or "")])
    rows = dom.tables.get("compare-table", [])
    expect(len(rows) == len(ma), f"compare table: {len(ma)} rows (page {len(rows)})")
    for row in rows:
        key = (row[0][1], row[1][1], int(num(row[2])), int(num(row[3])))
        if key not in ma:
            expect(False, f"compare row {key} is in A")
            continue
        (ta, ba), (tb, bb) = ma[key], mb[key]
        got = [num(c) for c in row[5:11]]
        want = [ta, ba, tb, tb / ta, bb, bb / ba]
        expect(all(same(x, y) for x, y in zip(got, want)), f"compare {key}: page {got} = recomputed {want}")
    e2e = (b["end_to_end_s"] / b["iterations"]) / (a["end_to_end_s"] / a["iterations"])
    got = dom.tables.get("e2e-table", [[None, (None, "")]])[0][1]
    expect(same(num(got), e2e), f"end-to-end ratio {e2e} (page {got[0]})")


def main():
    kind, dom_path = sys.argv[1], sys.argv[2]
    text = open(dom_path, encoding="utf-8").read()
    dom = Dom()
    dom.feed(text)
    docs = [json.load(open(p)) for p in sys.argv[3:] if p != "members"]
    no_outside_references(text)
    if kind == "report":
        if sys.argv[-1] == "members":
            docs = [json.load(open(sys.argv[3]))]
            check_members(dom, docs[0], text)
        check_report(dom, docs[0])
    else:
        check_compare(dom, docs[0], docs[1])
    print(f"{len(checked)} checks matched" + (f", {len(problems)} did not:" if problems else ""))
    for p in problems[:10]:
        print("  MISMATCH", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""phynet's JSON report (`phynet --json FILE`, phynet/report_output.cc) read and checked for the
report pages: every error names the file and the field, so the pages never show a Python traceback.

Required: "world_size", "iterations", "end_to_end_s", and the lists "ranks", "summary" and "ops" with
the fields below. Optional sections are kept when present and left out silently when not: per rank
"host", "nic", "local_rank" and "peer_bytes" (a list of {"peer", "sent", "received"}), and at the top
"hosts", "nics", "host_pairs", "comms" (communicator members), "algorithms", or anything else.
"""
import json
import math

OP_FIELDS = {"op": str, "group": str, "comm": str, "nranks": int, "iteration": int, "seq": int,
             "count": int, "bytes": int, "time_us": float, "busbw_gbps": float}
SUMMARY_FIELDS = {"op": str, "group": str, "size_bucket": int, "count": int, "total_bytes": int,
                  "mean_time_us": float, "mean_busbw_gbps": float}
RANK_FIELDS = {"rank": int, "ops": int, "op_bytes": int, "wire_sent": int, "wire_received": int}
PEER_FIELDS = {"peer": int, "sent": int, "received": int}


class ReportError(Exception):
    """An input problem, said in one line that names the file."""


def _is(value, kind):
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _check_items(path, name, items, fields):
    if not isinstance(items, list):
        raise ReportError(f'{path}: "{name}" is not a list')
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ReportError(f'{path}: {name}[{i}] is not an object')
        for field, kind in fields.items():
            if field not in item:
                raise ReportError(f'{path}: {name}[{i}]: missing field "{field}"')
            if not _is(item[field], kind):
                raise ReportError(f'{path}: {name}[{i}]: "{field}" is {json.dumps(item[field])[:40]}, '
                                  f'not {"a number" if kind is float else "an integer" if kind is int else "a string"}')


OPTIONAL_OP_FIELDS = {"peers": str, "type": str, "start_us": float, "recorded_us": float, "algbw_gbps": float,
                      "efficiency_pct": float, "ratio": float, "recorded_start_us": float}
OPTIONAL_SUMMARY_FIELDS = {"mean_efficiency_pct": float, "mean_recorded_us": float}
OPTIONAL_RANK_FIELDS = {"host": str, "nic": str, "local_rank": int, "model_sent": int, "wire_zero_copy": int}
TRAFFIC_FIELDS = {"bytes": int, "model_bytes": int}


def _check_optional(path, name, items, fields):
    """Fields that may be absent or null, but when given have their type."""
    for i, item in enumerate(items):
        for field, kind in fields.items():
            value = item.get(field)
            if value is not None and not _is(value, kind):
                raise ReportError(f'{path}: {name}[{i}]: "{field}" is {json.dumps(value)[:40]}, not '
                                  f'{"a number" if kind is float else "an integer" if kind is int else "a string"}')


def _check_sections(path, doc):
    """The optional sections (hosts, NICs, host pairs, communicators): absent is fine, malformed is not."""
    for key in ("nics", "host_pairs", "comms"):
        if key in doc:
            _check_items(path, key, doc[key], {})
    for i, nic in enumerate(doc.get("nics", [])):
        if not isinstance(nic.get("ranks", []), list) or not all(_is(r, int) for r in nic.get("ranks", [])):
            raise ReportError(f'{path}: nics[{i}]: "ranks" is not a list of ranks')
        for side in ("sent", "received"):
            if side in nic:
                if not isinstance(nic[side], dict):
                    raise ReportError(f'{path}: nics[{i}]: "{side}" is not an object')
                _check_optional(path, f"nics[{i}].{side}", [nic[side]], TRAFFIC_FIELDS)
    for i, pair in enumerate(doc.get("host_pairs", [])):
        if "traffic" in pair:
            if not isinstance(pair["traffic"], dict):
                raise ReportError(f'{path}: host_pairs[{i}]: "traffic" is not an object')
            _check_optional(path, f"host_pairs[{i}].traffic", [pair["traffic"]], TRAFFIC_FIELDS)
    if "comms" in doc:
        _check_items(path, "comms", doc["comms"], {"comm": str, "members": list})
        for i, c in enumerate(doc["comms"]):
            if not all(_is(m, int) for m in c["members"]):
                raise ReportError(f'{path}: comms[{i}]: "members" is not a list of ranks')


def size_bucket(n):
    """phynet's sizeBucket: the smallest power of two >= n (1 for 0)."""
    bucket = 1
    while bucket < n:
        bucket *= 2
    return bucket


def human_bytes(n):
    for unit in ["B", "K", "M", "G", "T"]:
        if abs(n) < 1024 or unit == "T":
            return f"{n:.4g}{unit}" if isinstance(n, float) else f"{n}{unit}"
        n /= 1024.0
    return str(n)


class Run:
    """One phynet report: the raw document plus what the pages derive from it."""

    def __init__(self, path, doc):
        self.path = path
        self.doc = doc
        self.ops = doc["ops"]
        self.summary = doc["summary"]
        self.ranks = doc["ranks"]
        self.world_size = doc["world_size"]
        self.iterations = max(1, doc["iterations"])
        self.end_to_end_s = doc["end_to_end_s"]
        rate = doc.get("rate_gbps")
        self.rate_gbps = rate if _is(rate, float) and rate > 0 else None

    def get(self, key, default=None):
        return self.doc.get(key, default)

    @property
    def per_iteration_s(self):
        return self.end_to_end_s / self.iterations

    def has_peer_bytes(self):
        return any(isinstance(r.get("peer_bytes"), list) for r in self.ranks)

    def traffic_matrix(self):
        """matrix[sender][receiver] = payload bytes, from each rank's "peer_bytes" (its "sent" to
        each peer); None when no rank has per-peer counters."""
        if not self.has_peer_bytes():
            return None
        n = self.world_size
        matrix = [[0] * n for _ in range(n)]
        for r in self.ranks:
            for p in r.get("peer_bytes") or []:
                if 0 <= p["peer"] < n and 0 <= r["rank"] < n:
                    matrix[r["rank"]][p["peer"]] += p["sent"]
        return matrix

    def hosts_of_ranks(self):
        """Host label per global rank (0 .. world_size - 1) when every rank has one, else None."""
        host_of = {r["rank"]: r.get("host") for r in self.ranks}
        hosts = [host_of.get(g) for g in range(self.world_size)]
        return hosts if all(isinstance(h, str) and h for h in hosts) else None

    def comm_members(self):
        """{comm id: [global ranks]} from an optional "comms" list; communicators of all ranks are
        known without it (a sendrecv row names its two ranks itself)."""
        members = {}
        for c in self.get("comms") or []:
            if isinstance(c, dict) and isinstance(c.get("comm"), str) and isinstance(c.get("members"), list):
                members[c["comm"]] = [m for m in c["members"] if _is(m, int)]
        for op in self.ops:
            if op["comm"] in members:
                continue
            if op["nranks"] == self.world_size:
                members[op["comm"]] = list(range(self.world_size))
        return members


def add_comms(run, path, source=""):
    """Merges the communicators' members from `path` ({"comms": [{"comm", "members"}, ...]}, as
    phynet --html and ncclshim report --input write it) into the run, unless it has its own;
    errors name `source` (what the members were read from) when given."""
    try:
        with open(path, encoding="utf-8") as f:
            comms = json.load(f).get("comms")
    except (OSError, ValueError, AttributeError) as error:
        raise ReportError(f"{path}: not a communicator list ({error})") from None
    _check_items(path, "comms", comms, {"comm": str, "members": list})
    _check_sections(path, {"comms": comms})
    ids = {op["comm"] for op in run.ops}
    if not ids & {c["comm"] for c in comms}:
        raise ReportError(f"{source or path}: none of its communicators is in {run.path}: not the workload that "
                          "was replayed there")
    if not isinstance(run.doc.get("comms"), list):
        run.doc["comms"] = comms


def load_run(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as error:
        raise ReportError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ReportError(f"{path}: not a phynet JSON report (not UTF-8 text)") from None
    except json.JSONDecodeError as error:
        raise ReportError(f"{path}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg}); "
                          "write the report with phynet --json FILE") from None
    if not isinstance(doc, dict) or "ops" not in doc or "summary" not in doc:
        raise ReportError(f'{path}: not a phynet JSON report (no "ops" and "summary"); write one with '
                          "phynet --json FILE")
    for field, kind in (("world_size", int), ("iterations", int), ("end_to_end_s", float)):
        if not _is(doc.get(field), kind):
            raise ReportError(f'{path}: "{field}" is missing or not a number')
    if doc["world_size"] < 1 or doc["world_size"] > 1 << 20:
        raise ReportError(f'{path}: "world_size" {doc["world_size"]} is not a number of ranks')
    _check_items(path, "ops", doc["ops"], OP_FIELDS)
    _check_items(path, "summary", doc["summary"], SUMMARY_FIELDS)
    _check_items(path, "ranks", doc.get("ranks"), RANK_FIELDS)
    _check_optional(path, "ops", doc["ops"], OPTIONAL_OP_FIELDS)
    _check_optional(path, "summary", doc["summary"], OPTIONAL_SUMMARY_FIELDS)
    _check_optional(path, "ranks", doc["ranks"], OPTIONAL_RANK_FIELDS)
    for i, rank in enumerate(doc["ranks"]):
        if "peer_bytes" in rank:
            _check_items(path, f"ranks[{i}].peer_bytes", rank["peer_bytes"], PEER_FIELDS)
    _check_sections(path, doc)
    if not doc["ops"]:
        raise ReportError(f"{path}: the report has no operations")
    return Run(path, doc)

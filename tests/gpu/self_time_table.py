"""Table of a self-timed build's spans (tests/gpu/torch_busbw.py BUSBW_SELF_TIME=1): for each run
file given, per op, the median over sizes below 1 MiB of the ns per PyTorch call rank 0's shim spent
in each span of the recording path (common/self_time.h), and how often the span ran per call
(spans a run's build did not time are left empty). "recording's own" adds the top-level spans (the
frame's two halves and the plugin's callbacks); the others nest in them.
Usage: self_time_table.py RUN.jsonl..."""
import json
import statistics
import sys

SPANS = ("frame_before", "frame_after", "backend", "plugin_start", "plugin_stop", "begin_call", "comm_seq", "push",
         "order_number", "empty")
# The spans that do not nest in one another and are the shim's own (not the NCCL call).
TOP_LEVEL = ("frame_before", "frame_after", "plugin_start", "plugin_stop")


def main(paths):
    if not paths:
        raise SystemExit(__doc__)
    print("| run | op | sizes | " + " | ".join(f"{s}, ns (calls)" for s in SPANS) + " | recording's own, ns |")
    print("|---|---|---:|" + "---:|" * (len(SPANS) + 1))
    for path in paths:
        by_op = {}
        try:
            lines = open(path).read().splitlines()
        except OSError as err:
            print(f"| {path} | cannot read: {err} |")
            continue
        for number, line in enumerate(lines, 1):
            if not line.startswith("{"):
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise SystemExit(f"{path}:{number}: not JSON: {err}")
            if "self_ns" in row and row.get("bytes", 1 << 30) < (1 << 20):
                by_op.setdefault(row["op"], []).append(row)
        if not by_op:
            print(f"| {path} | no self_ns lines below 1 MiB |")
            continue
        for op, rows in sorted(by_op.items()):
            cells = []
            own = []
            for span in SPANS:
                if any(span not in r["self_ns"] for r in rows):
                    cells.append("")
                    continue
                ns = statistics.median(r["self_ns"][span] for r in rows)
                calls = statistics.median(r["self_calls"][span] for r in rows)
                cells.append(f"{ns:.0f} ({calls:g})")
                if span in TOP_LEVEL:
                    own.append(ns)
            print(f"| {path.rsplit('/', 1)[-1]} | {op} | {len(rows)} | " + " | ".join(cells) + f" | {sum(own):.0f} |")


if __name__ == "__main__":
    main(sys.argv[1:])

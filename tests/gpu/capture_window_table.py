"""The capture-window checks' table (tests/gpu/capture_window_check.sh): reads the logs and traces
under OUT, prints one Markdown table of checks with what was seen, and exits 1 when one fails."""
import glob
import json
import os
import re
import statistics
import sys

out = sys.argv[1]
rows = []


def check(name, ok, seen):
    rows.append((name, "pass" if ok else "FAIL", seen))


def read_ranks(trace_dir):
    """Per rank (global_rank of the header): the op lines (no group calls) and the step lines, in order."""
    ranks = {}
    for path in glob.glob(os.path.join(trace_dir, "*.jsonl*")):
        lines = [json.loads(line) for line in open(path) if line.strip()]
        rank = lines[0].get("global_rank", -1)
        for line in lines:
            if line.get("type") == "footer":
                rank = line.get("global_rank", rank)
        ranks[rank] = [l for l in lines if l["type"] == "step" or (l["type"] == "op" and not l["op"].startswith("group"))]
    return ranks


def last_number(path, key):
    try:
        found = re.findall(key + r" (\S+)", open(path).read())
        return found[-1] if found else None
    except OSError:
        return None


def losses(path):
    value = last_number(path, "LOSSES")
    if value is None:
        return None
    text = open(path).read()
    return json.loads(text[text.rindex("LOSSES ") + 7:].splitlines()[0])


# Megatron: a marked window and a found one.
plain = losses(os.path.join(out, "window_megatron_plain.log"))
marked = read_ranks(os.path.join(out, "window_marked"))
per_iteration = {}
for rank, lines in sorted(marked.items()):
    steps = [l["step"] for l in lines if l["type"] == "step"]
    counts, current = [], None
    for l in lines:
        if l["type"] == "step":
            if current is not None:
                counts.append(current)
            current = 0
        elif current is not None:
            current += 1
    ops = sum(1 for l in lines if l["type"] == "op")
    per_iteration[rank] = counts[0] if counts else 0
    check(f"megatron marked window, rank {rank}: steps 10-13, 3 equal iterations",
          steps == [10, 11, 12, 13] and len(counts) == 3 and len(set(counts)) == 1 and ops == 3 * counts[0],
          f"step lines {steps}, ops per iteration {counts}, {ops} ops")
check("megatron marked window: one file per rank", sorted(marked) == [0, 1], f"ranks {sorted(marked)}")
found = read_ranks(os.path.join(out, "window_found"))
for rank, lines in sorted(found.items()):
    ops = sum(1 for l in lines if l["type"] == "op")
    expect = 3 * per_iteration.get(rank, -1)
    check(f"megatron found window, rank {rank}: 3 x one iteration's ops", ops == expect, f"{ops} ops (3 x {expect // 3})")
for name in ("marked", "found"):
    got = losses(os.path.join(out, f"window_megatron_{name}.log"))
    check(f"megatron {name} window: losses equal to no shim", got is not None and got == plain,
          f"max abs diff {max(abs(a - b) for a, b in zip(got, plain)):.3g} over {len(got)} steps" if got and plain else f"{got} vs {plain}")
for name in ("window_marked", "window_found", "window_usr2"):
    text = open(os.path.join(out, f"{name}.validate.txt")).read() if os.path.exists(os.path.join(out, f"{name}.validate.txt")) else ""
    check(f"{name}: ncclshim-trace validate", "valid:" in text and " 0 errors" in text, text.strip().splitlines()[-1] if text.strip() else "no output")

# SIGUSR2 on a PyTorch loop.
usr2 = read_ranks(os.path.join(out, "window_usr2"))
for rank, lines in sorted(usr2.items()):
    ops = sum(1 for l in lines if l["type"] == "op")
    check(f"torch SIGUSR2 window, rank {rank}: steps 40-49 (30 ops)", ops == 30, f"{ops} ops")
a = last_number(os.path.join(out, "window_usr2_plain.log"), "CHECKSUM")
b = last_number(os.path.join(out, "window_usr2_shim.log"), "CHECKSUM")
check("torch SIGUSR2 loop: results equal to no shim", a is not None and a == b, f"{a} vs {b}")

# Cost outside the window.
forward = [float(v) for v in (last_number(p, "COST_NS") for p in sorted(glob.glob(os.path.join(out, "window_cost_forward*.log")))) if v]
closed = [float(v) for v in (last_number(p, "COST_NS") for p in sorted(glob.glob(os.path.join(out, "window_cost_closed*.log")))) if v]
if forward and closed:
    added = statistics.median(closed) - statistics.median(forward)
    check("outside the window: <= 200 ns per call over forwarding alone", added <= 200,
          f"forward {statistics.median(forward):.0f} ns ({min(forward):.0f}-{max(forward):.0f}), closed window "
          f"{statistics.median(closed):.0f} ns ({min(closed):.0f}-{max(closed):.0f}): {added:+.0f} ns")
else:
    check("outside the window: <= 200 ns per call over forwarding alone", False, "no COST_NS lines")

print("| check | result | seen |")
print("|---|---|---|")
for name, result, seen in rows:
    print(f"| {name} | {result} | {seen} |")
sys.exit(0 if all(r[1] == "pass" for r in rows) else 1)

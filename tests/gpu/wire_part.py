"""The part of NCCL's time that the wire decides, per op, against a replay's time.

NCCL's GPU time of a call holds more than the wire: the kernel launch, the GPU's copies into and out
of its proxy's buffers, flags polled across PCIe by the proxy thread and by the GPU. The profiler
plugin's step log (NCCLSHIM_PROFILER_STEPS, libshim/profiler_step_log.h) times every network step of
every proxy operation on every rank. Here the two ends of each step are joined (the n-th step sent on
a connection, a channel from one rank to another, is the n-th step received on it) and a step is on
the wire from its isend's post at the sender to its arrival at the receiving proxy. An op's wire part
is the union of its steps' time on the wire (both directions, all channels): the time during which
some of its bytes were travelling. The rest of NCCL's GPU time is the hardware part, which a replay
on CPUs does not have. The clocks agree: both ranks stamp CLOCK_MONOTONIC on one machine.

Usage: wire_part.py STEPS_DIR REPLAY.csv [MIN_CALLS]
  STEPS_DIR: the capture's step logs; REPLAY.csv: phynet --report of a replay of that capture (its
  comm and seq name the call the steps were joined to; time_us, and recorded_us = NCCL's GPU time).
Prints a Markdown table per (op, size): NCCL's GPU time, its wire and hardware parts, the replay's
time, replay / NCCL and replay / wire part (median over calls, and their spread); then the steps
that could not be joined, if any."""
import csv
import glob
import os
import statistics
import sys
from collections import defaultdict

from size_text import human


def read_steps(folder):
    rows = []
    paths = sorted(glob.glob(os.path.join(folder, "ncclshim-steps-*.csv")))
    if not paths:
        sys.exit(f"{folder}: no ncclshim-steps-*.csv (was NCCLSHIM_PROFILER_STEPS set, and the job finalized?)")
    for path in paths:
        with open(path) as f:
            lines = [line for line in f if not line.startswith("#")]
        for number, row in enumerate(csv.DictReader(lines), 1):
            try:
                rows.append({
                    "comm": int(row["comm"]), "seq": int(row["seq"]), "rank": int(row["rank"]),
                    "peer": int(row["peer"]), "channel": int(row["channel"]), "send": row["dir"] == "send",
                    "nccl_comm": row["nccl_comm"], "bytes": int(row["bytes"]), "start": int(row["start_ns"]),
                    "t2": int(row["t2_ns"]), "t3": int(row["t3_ns"]), "stop": int(row["stop_ns"])})
            except (KeyError, ValueError) as error:
                sys.exit(f"{path}: data row {number}: {error}")
    return rows


def wire_intervals(rows):
    """Per op (shim comm id, seq): the [isend posted, arrived] intervals of its steps, in ns."""
    connections = defaultdict(lambda: ([], []))
    for r in rows:
        if r["send"]:
            connections[(r["nccl_comm"], r["rank"], r["peer"], r["channel"])][0].append(r)
        else:
            connections[(r["nccl_comm"], r["peer"], r["rank"], r["channel"])][1].append(r)
    per_op = defaultdict(list)
    problems = defaultdict(int)
    for key, (sends, recvs) in connections.items():
        sends.sort(key=lambda r: r["start"])
        recvs.sort(key=lambda r: r["start"])
        if len(sends) != len(recvs):
            problems[f"connections with unequal step counts (sent {len(sends)}, received {len(recvs)})"] += 1
        for s, r in zip(sends, recvs):
            if s["bytes"] != r["bytes"]:
                problems["steps whose two ends disagree on bytes"] += 1
                continue
            if s["comm"] == 0:
                problems["steps of calls not joined to a recorded call"] += 1
                continue
            if s["t3"] == 0 or r["t2"] == 0:
                problems["steps missing a post or an arrival time"] += 1
                continue
            per_op[(s["comm"], s["seq"])].append((s["t3"], max(r["t2"], s["t3"])))
    return per_op, problems


def union_ns(intervals):
    total, end = 0, None
    for begin, finish in sorted(intervals):
        if end is None or begin > end:
            total += finish - begin
            end = finish
        elif finish > end:
            total += finish - end
            end = finish
    return total



def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    steps_dir, replay_csv = sys.argv[1:3]
    min_calls = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    per_op, problems = wire_intervals(read_steps(steps_dir))
    table = defaultdict(list)
    with open(replay_csv) as f:
        for row in csv.DictReader(f):
            if row["recorded_us"] in ("", "-", "nan"):
                continue
            nccl = float(row["recorded_us"])
            wire = union_ns(per_op.get((int(row["comm"], 16), int(row["seq"])), [])) / 1e3
            table[(row["op"], int(row["bytes"]))].append((float(row["time_us"]), nccl, min(wire, nccl)))
    print("| op | size | calls | NCCL GPU (us) | wire part (us) | hardware part (us) | replay (us) | replay / NCCL "
          "| replay / wire part | spread |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (op, size), calls in sorted(table.items()):
        if len(calls) < min_calls:
            continue
        replay = statistics.median(c[0] for c in calls)
        nccl = statistics.median(c[1] for c in calls)
        wire = statistics.median(c[2] for c in calls)
        hardware = statistics.median(c[1] - c[2] for c in calls)
        ratios = sorted(c[0] / c[2] for c in calls if c[2] > 0)
        to_wire = f"{statistics.median(ratios):.2f}" if ratios else "-"
        spread = f"{ratios[0]:.2f}-{ratios[-1]:.2f}" if ratios else "-"
        print(f"| {op} | {human(size)} | {len(calls)} | {nccl:.1f} | {wire:.1f} | {hardware:.1f} | {replay:.1f} | "
              f"{replay / nccl:.2f} | {to_wire} | {spread} |")
    for what, count in sorted(problems.items()):
        print(f"\n{count} {what}")


if __name__ == "__main__":
    main()

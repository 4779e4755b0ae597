"""Checks the GPU machine's block-switching estimator without a GPU (run by
tests/suites/profiler_tests.sh): torch_busbw.py's block_pairs (BUSBW_BLOCK) with a stand-in for torch
whose calls busy-wait a known time, 2 µs more while switched on, with slow episodes (40 calls of
every 300, 20 µs more each, spanning blocks of both sides) and a first call after each switch to
"on" that costs 50 µs more (the switch's own disturbance): the pairs' median must come out at
2 µs (± 0.5), with 10 pairs per window. Then, without slow episodes, every 50th call while on 50 µs
more besides (1 µs per call on average, paid by few calls): the blocks' median must still find
about 2 µs (± 0.5), and the table's trimmed mean of the blocks' means 1 µs more (± 0.5). Then
block_toggle_table.py over lines written here: its per-run medians, the median over runs and the
count above 0.5 µs must be those computed here from the same numbers. Prints what it found; exits 1
on any mismatch."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
EXTRA_NS = 2000


def stand_in_torch():
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(synchronize=lambda: None)
    dist = types.ModuleType("torch.distributed")
    dist.barrier = lambda: None
    torch.distributed = dist
    sys.modules["torch"] = torch
    sys.modules["torch.distributed"] = dist


def busy_wait(ns):
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def import_busbw(windows):
    os.environ["BUSBW_BLOCK"] = "20"
    os.environ["BUSBW_WINDOWS"] = str(windows)
    stand_in_torch()
    sys.dont_write_bytecode = True  # no __pycache__ left in the tree
    sys.path.insert(0, HERE)
    import torch_busbw
    torch_busbw.WINDOWS = windows
    return torch_busbw


def check_estimator():
    torch_busbw = import_busbw(4)
    state = {"on": False, "fresh": False, "calls": 0}

    def toggle(on):
        state["fresh"] = on and not state["on"]
        state["on"] = on

    def run():
        state["calls"] += 1
        wait = 30000 + (EXTRA_NS if state["on"] else 0)
        if state["fresh"]:
            wait += 50000
            state["fresh"] = False
        if state["calls"] % 300 < 40:  # a slow episode: 40 calls of every 300
            wait += 20000
        busy_wait(wait)

    diffs, sides, _ = torch_busbw.block_pairs(run, toggle, 400)
    found = statistics.median(diffs) * 1e9
    ok = abs(found - EXTRA_NS) <= 500 and len(diffs) == 4 * 10 and len(sides[True]) == len(sides[False]) == 40
    print(f"estimator: {len(diffs)} pairs, median on − off {found:.0f} ns (injected {EXTRA_NS})")
    return ok


def check_rare_cost():
    torch_busbw = import_busbw(10)  # also puts this folder on the path
    import block_toggle_table
    state = {"on": False, "on_calls": 0}

    def toggle(on):
        state["on"] = on

    def run():
        wait = 30000
        if state["on"]:
            state["on_calls"] += 1
            wait += EXTRA_NS + (50000 if state["on_calls"] % 50 == 0 else 0)
        busy_wait(wait)

    diffs, _, mean_diffs = torch_busbw.block_pairs(run, toggle, 400)
    by_median = statistics.median(diffs) * 1e9
    by_mean = block_toggle_table.trimmed_mean(mean_diffs) * 1e9
    # The stand-in's own bookkeeping while on costs both estimators alike: compare the two.
    ok = abs(by_median - EXTRA_NS) <= 500 and abs(by_mean - by_median - 1000) <= 500
    print(f"rare cost: {len(diffs)} pairs, blocks' medians {by_median:.0f} ns, trimmed mean of the blocks' means "
          f"{by_mean:.0f} ns (injected {EXTRA_NS} on every call and 50,000 on every 50th)")
    return ok


def check_table():
    runs = {1: {"all_reduce": [0.1, 0.3, 0.6], "alltoall": [0.7, 0.9, 1.1]},
            2: {"all_reduce": [0.2, 0.4, 0.8], "alltoall": [0.5, 0.6, 0.9]},
            3: {"all_reduce": [0.6, 0.7, 0.9], "alltoall": [0.8, 1.0, 1.2]}}
    with tempfile.TemporaryDirectory() as folder:
        for run, ops in runs.items():
            with open(os.path.join(folder, f"toggle_allnew_r{run}.jsonl"), "w") as f:
                for op, diffs in ops.items():
                    f.write(json.dumps({"op": op, "bytes": 8, "block": 20, "blk_on": 30, "blk_off": 29,
                                        "blk_diffs": diffs}) + "\n")
                    # 1 MiB and above: left out of the table
                    f.write(json.dumps({"op": op, "bytes": 1 << 20, "block": 20, "blk_on": 30, "blk_off": 29,
                                        "blk_diffs": [9.0, 9.0, 9.0]}) + "\n")
        table = subprocess.run([sys.executable, os.path.join(HERE, "block_toggle_table.py"), folder],
                               capture_output=True, text=True)
    ok = table.returncode == 0
    for op in ("all_reduce", "alltoall"):
        medians = [statistics.median(runs[r][op]) for r in runs]
        pooled = statistics.median([d for r in runs for d in runs[r][op]])
        expected = (f"| allnew | {op} | {statistics.median(medians):+.2f} [{min(medians):+.2f} … {max(medians):+.2f}] | "
                    f"{sum(m > 0.5 for m in medians)}/3 | {pooled:+.2f} [")
        if expected not in table.stdout:
            print(f"table: no row starting {expected!r}")
            ok = False
    print(table.stdout.strip() if ok else table.stdout + table.stderr)
    return ok


def main():
    ok = check_estimator()
    ok = check_rare_cost() and ok
    ok = check_table() and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

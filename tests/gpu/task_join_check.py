"""Checks, on traces recorded with the profiler plugin (FORMAT.md `nccl_task`), that NCCL's tasks are
joined to the calls they came from, and how: per file, the operations (not group calls), those with
at least one joined task, the tasks launched inside their call (flags bit 2, `in_call`: their times
must lie within the call's, starting at its start) and the others (one launch time, t_start_ns ==
t_end_ns, not before the call). Prints one line per file and "join check: ok" or the first problems;
exits 1 on any problem or when no operation has a task.
Usage: task_join_check.py DIR"""
import glob
import json
import sys


def check_file(path, problems):
    ops, tasks = {}, []
    for line in open(path):
        if not line.endswith("\n"):
            continue
        row = json.loads(line)
        if row["type"] == "op" and row.get("op") not in ("groupstart", "groupend"):
            ops[(row["comm"], row["seq"])] = row
        elif row["type"] == "nccl_task":
            tasks.append(row)
    joined_ops = set()
    in_call = other = 0
    for t in tasks:
        if not t["flags"] & 1:
            continue
        op = ops.get((t["comm"], t["seq"]))
        if op is None:
            problems.append(f"{path}: task n={t['n']} joined to a call not in the file")
            continue
        joined_ops.add((t["comm"], t["seq"]))
        if t["flags"] & 2:
            in_call += 1
            if not (t["t_start_ns"] == op["t_start_ns"] and t["t_start_ns"] <= t["t_end_ns"] <= op["t_end_ns"]):
                problems.append(f"{path}: in-call task n={t['n']} times outside its call's")
        else:
            other += 1
            if not (t["t_start_ns"] == t["t_end_ns"] and t["t_start_ns"] >= op["t_start_ns"]):
                problems.append(f"{path}: task n={t['n']} launch time before its call or not one time")
    print(f"{path}: {len(ops)} ops, {len(joined_ops)} with a joined task, {len(tasks)} tasks "
          f"({in_call} in their call, {other} launched later)")
    return len(joined_ops)


def main():
    problems, with_tasks = [], 0
    for path in sorted(glob.glob(f"{sys.argv[1]}/**/*.jsonl", recursive=True)):
        with_tasks += check_file(path, problems)
    for p in problems[:20]:
        print(p)
    ok = not problems and with_tasks > 0
    print("join check: ok" if ok else f"join check: {len(problems)} problems, {with_tasks} ops with tasks")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

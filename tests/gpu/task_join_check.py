"""Checks, on traces recorded with the profiler plugin (FORMAT.md `nccl_task`), that NCCL's tasks are
joined to the calls they came from, and how: per file, the operations (not group calls), those with
at least one joined task, the tasks launched inside their call (flags bit 2, `in_call`: their times
must lie within the call's, starting at its start), those launched inside their group's
ncclGroupEnd (flags bit 3, `in_group_end`: within a later groupend line's times, starting at its
start) and the others (one launch time, t_start_ns == t_end_ns, not before the call). Prints one
line per file and "join check: ok" or the first problems; exits 1 on any problem or when no
operation has a task.
Usage: task_join_check.py DIR"""
import glob
import json
import sys


def check_file(path, problems):
    ops, tasks, group_ends = {}, [], {}
    for line in open(path):
        if not line.endswith("\n"):
            continue
        row = json.loads(line)
        if row["type"] == "op" and row.get("op") == "groupend":
            group_ends[row["t_start_ns"]] = row["t_end_ns"]
        elif row["type"] == "op" and row.get("op") != "groupstart":
            ops[(row["comm"], row["seq"])] = row
        elif row["type"] == "nccl_task":
            tasks.append(row)
    joined_ops = set()
    in_call = in_group_end = other = 0
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
        elif t["flags"] & 4:
            in_group_end += 1
            end = group_ends.get(t["t_start_ns"])
            if not (end is not None and t["t_start_ns"] <= t["t_end_ns"] <= end and t["t_start_ns"] >= op["t_end_ns"]):
                problems.append(f"{path}: in-group-end task n={t['n']} times not within a later groupend's")
        else:
            other += 1
            if not (t["t_start_ns"] == t["t_end_ns"] and t["t_start_ns"] >= op["t_start_ns"]):
                problems.append(f"{path}: task n={t['n']} launch time before its call or not one time")
    print(f"{path}: {len(ops)} ops, {len(joined_ops)} with a joined task, {len(tasks)} tasks "
          f"({in_call} in their call, {in_group_end} in their group's end, {other} launched later)")
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

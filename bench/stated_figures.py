#!/usr/bin/env python3
"""Measures the figures that README.md and docs/ state for this machine's kind and prints each
beside the stated one (`make bench`'s last step).

bench/stated_figures.tsv lists every stated figure: where it is stated, the value, the command that
measures it and a pattern that finds the figure in the command's output. The commands of machine
'here' are run once each, one after the other, from the repository root; 'gpu' and 'vm' rows are
listed with the script and device run that made them, not run.

usage: bench/stated_figures.py [--quick] [--table FILE] [--markdown FILE] [--only TEXT]
  --quick          the quick commands (fewer rounds and records, one world size; about 2 minutes);
                   rows without one are left unmeasured
  --markdown FILE  also write the table as Markdown (default build/bench/stated_figures.md)
  --only TEXT      only the rows whose command contains TEXT (e.g. summary_bench)
Exit status: 0 measured (whatever the figures), 1 a command failed or a pattern found nothing, 2 usage.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_table(path):
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))


def stated_number(text):
    """The stated value as a number: a range "a-b" counts as its middle; None when not a number."""
    m = re.fullmatch(r"\s*([\d.]+)\s*(?:-\s*([\d.]+))?\s*", text)
    if not m:
        return None
    low = float(m.group(1))
    return (low + float(m.group(2))) / 2 if m.group(2) else low


def run(command, log):
    started = time.monotonic()
    print(f"[stated_figures] running: {command}", file=sys.stderr, flush=True)
    proc = subprocess.run(["bash", "-c", command], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    took = time.monotonic() - started
    log.write(f"$ {command}\n{proc.stdout}\n(exit {proc.returncode}, {took:.0f} s)\n\n")
    print(f"[stated_figures]   exit {proc.returncode} after {took:.0f} s", file=sys.stderr, flush=True)
    return proc.returncode, proc.stdout


def measured_of(row, output):
    m = re.search(row["pattern"], output, re.M)
    if not m:
        return None, ""
    groups = m.groupdict()
    spread = groups.get("spread") or ""
    if groups.get("lo") and groups.get("hi"):
        spread = f"{groups['lo']}-{groups['hi']}"
    return groups["v"], spread


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--table", default=os.path.join(ROOT, "bench", "stated_figures.tsv"))
    parser.add_argument("--markdown", default=os.path.join(ROOT, "build", "bench", "stated_figures.md"))
    parser.add_argument("--only", default="")
    args = parser.parse_args()

    rows = read_table(args.table)
    os.makedirs(os.path.dirname(args.markdown), exist_ok=True)
    log_path = os.path.splitext(args.markdown)[0] + ".log"
    outputs, failed = {}, False
    with open(log_path, "w") as log:
        for row in rows:
            command = row["quick_command"] if args.quick else row["command"]
            if row["machine"] != "here" or not command or command in outputs or args.only not in command:
                continue
            rc, out = run(command, log)
            outputs[command] = out
            if rc != 0:
                failed = True
                print(f"[stated_figures] '{command}' failed (exit {rc}); its output is in {log_path}", file=sys.stderr)

    table = []
    for row in rows:
        command = row["quick_command"] if args.quick else row["command"]
        where = row["stated_in"]
        stated = f"{row['stated']} {row['unit']}"
        if row["machine"] != "here":
            table.append((row["figure"], where, stated, "-", "", "", f"not run here: {row['command']}"))
            continue
        if not row["command"]:
            table.append((row["figure"], where, stated, "-", "", "", "no script measures it yet"))
            continue
        if command not in outputs:
            why = "not in --quick" if args.quick and not command else "not selected (--only)"
            table.append((row["figure"], where, stated, "-", "", "", why))
            continue
        value, spread = measured_of(row, outputs[command])
        if value is None:
            failed = True
            table.append((row["figure"], where, stated, "?", "", "", f"not found in the output of {command}"))
            continue
        number = stated_number(row["stated"])
        ratio = f"{float(value) / number:.2f}" if number else ""
        table.append((row["figure"], where, stated, value, spread, ratio, command))

    headers = ("figure", "stated in", "stated", "measured", "spread", "measured/stated", "measured by")
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(headers[:6])]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)) + "  " + headers[6])
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[6])
    with open(args.markdown, "w") as md:
        md.write(f"# Stated figures, measured ({'--quick, ' if args.quick else ''}{time.strftime('%Y-%m-%d %H:%M')}, "
                 f"{os.uname().nodename}, {os.cpu_count()} CPUs)\n\n")
        md.write("| " + " | ".join(headers) + " |\n|" + "---|" * len(headers) + "\n")
        for r in table:
            md.write("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |\n")
    print(f"\nmarkdown: {args.markdown}; the commands' output: {log_path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

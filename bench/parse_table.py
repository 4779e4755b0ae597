#!/usr/bin/env python3
"""Parses nccl-tests-format result tables (nccl-tests, `ncclshim perf`, mpi_peer_bench) into rows.

A data row is `size count type redop root` then, for out-of-place and in-place, `time algbw busbw #wrong`.
Older nccl-tests omit `redop` and/or `root`; a test without an in-place pass may end after the first
group. `#wrong` may be `N/A` (None here). Lines starting with '#', launcher noise (mpirun, NCCL INFO)
and anything that does not look like a row are skipped; an `[1,0]<stdout>:` tag-output prefix is removed.

Library use: parse_text(text) / parse_file(path) -> Table(rows=[dict], avg_busbw=float|None, ...).
Command line: parse_table.py FILE... [--csv]   (JSON by default)
"""
import argparse
import csv
import json
import re
import sys
from dataclasses import dataclass, field

FIELDS = ["size", "count", "type", "redop", "root",
          "oop_time_us", "oop_algbw", "oop_busbw", "oop_wrong",
          "ip_time_us", "ip_algbw", "ip_busbw", "ip_wrong"]

_TAG_PREFIX = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:")
_AVG_BUSBW = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*([-+0-9.eEnaNinf]+)")
_OUT_OF_BOUNDS = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)")
_REDOPS = {"sum", "prod", "max", "min", "avg", "none", "mulsum", "premulsum"}


@dataclass
class Table:
    rows: list = field(default_factory=list)
    avg_busbw: float | None = None
    out_of_bounds: int | None = None
    header: list = field(default_factory=list)  # the '#' lines, for provenance


def _int(text):
    return int(text)


def _float(text):
    value = float(text)
    if value != value:  # NaN is not a measurement
        raise ValueError(text)
    return value


def _wrong(text):
    if text.upper() == "N/A":
        return None
    return int(float(text))  # nccl-tests prints %5g: 1e+06 is possible


def _parse_group(tokens):
    """time algbw busbw #wrong -> (time, algbw, busbw, wrong); all N/A (an op without an in-place
    form, e.g. alltoall) -> four Nones."""
    if len(tokens) != 4:
        raise ValueError("a result group has 4 columns")
    if all(token.upper() == "N/A" for token in tokens):
        return None, None, None, None
    return _float(tokens[0]), _float(tokens[1]), _float(tokens[2]), _wrong(tokens[3])


def parse_row(line):
    """Returns the row dict of one data line, or None if the line is not a data row."""
    tokens = line.split()
    if len(tokens) < 7 or not tokens[0].isdigit() or not tokens[1].isdigit():
        return None
    try:
        size, count, dtype = _int(tokens[0]), _int(tokens[1]), tokens[2]
        rest = tokens[3:]
        redop, root = None, None
        if rest and rest[0].lower() in _REDOPS:
            redop = rest.pop(0)
        # root is an integer column (-1 for none); a bare time would contain '.'
        if len(rest) in (5, 9) and re.fullmatch(r"-?\d+", rest[0]):
            root = int(rest.pop(0))
        if len(rest) == 8:
            oop, ip = _parse_group(rest[:4]), _parse_group(rest[4:])
        elif len(rest) == 4:
            oop, ip = _parse_group(rest), (None, None, None, None)
        else:
            return None
    except ValueError:
        return None
    return {
        "size": size, "count": count, "type": dtype, "redop": redop, "root": root,
        "oop_time_us": oop[0], "oop_algbw": oop[1], "oop_busbw": oop[2], "oop_wrong": oop[3],
        "ip_time_us": ip[0], "ip_algbw": ip[1], "ip_busbw": ip[2], "ip_wrong": ip[3],
    }


def parse_text(text):
    table = Table()
    for raw in text.splitlines():
        line = _TAG_PREFIX.sub("", raw).strip()
        if not line:
            continue
        if line.startswith("#"):
            table.header.append(line)
            match = _AVG_BUSBW.match(line)
            if match:
                try:
                    table.avg_busbw = float(match.group(1))
                except ValueError:
                    pass
            match = _OUT_OF_BOUNDS.match(line)
            if match:
                table.out_of_bounds = int(match.group(1))
            continue
        row = parse_row(line)
        if row is not None:
            table.rows.append(row)
    return table


def parse_file(path):
    with open(path, encoding="utf-8", errors="replace") as handle:
        return parse_text(handle.read())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="result files ('-' for stdin)")
    parser.add_argument("--csv", action="store_true", help="write CSV rows instead of JSON")
    args = parser.parse_args(argv)
    tables = {}
    for path in args.files:
        tables[path] = parse_text(sys.stdin.read()) if path == "-" else parse_file(path)
    if args.csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=["file"] + FIELDS)
        writer.writeheader()
        for path, table in tables.items():
            for row in table.rows:
                writer.writerow({"file": path, **row})
    else:
        out = {path: {"rows": t.rows, "avg_busbw": t.avg_busbw, "out_of_bounds": t.out_of_bounds}
               for path, t in tables.items()}
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Distinct 64-byte lines per call in a lackey trace (bench/lines_per_call.sh runs it).

Usage: lines_per_call.py TRACE MAPS LIB ENTRY_OFFSET_HEX
The trace is split at each fetch of the library's ncclAllReduce entry; of the first calls (the
bench's ncclAllReduce case: 20 batches of warm-up and 3 timed, 40 calls each) calls 400 - 499 are
taken, and the median call's lines are counted by mapping. DETAIL=1 lists each line with the
library symbol it holds (code) or, for data, the code line that first read it."""
import bisect
import collections
import os
import subprocess
import sys

FIRST, COUNT = 400, 100
STACK = (0x1FF0000000, 0x2000000000)  # valgrind's main stack: hot in any job, left out of DETAIL


def read_maps(path, lib):
    regions, base = [], None
    real = os.path.realpath(lib)
    with open(path) as maps:
        for line in maps:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            name = parts[5] if len(parts) > 5 else "[anon]"
            regions.append((lo, hi, f"{os.path.basename(name)}:{parts[1]}"))
            if base is None and os.path.realpath(name) == real:
                base = lo - int(parts[2], 16)
    return regions, base


def calls(trace, entry):
    """Each call: the (kind, address) accesses from one entry to the next."""
    current = None
    with open(trace) as lines:
        for line in lines:
            if not line or line[0] not in " I":
                continue
            kind = line[:2].strip()
            address, _, _ = line[2:].strip().partition(",")
            try:
                address = int(address, 16)
            except ValueError:
                continue
            if kind == "I" and address == entry:
                if current is not None:
                    yield current
                current = []
            if current is not None:
                current.append((kind, address))


def symbols(lib):
    table = []
    out = subprocess.run(["nm", "-C", "-S", "--defined-only", lib], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split(" ", 3)
        try:
            if len(parts) == 4:
                table.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
            elif len(parts) == 3:
                table.append((int(parts[0], 16), 0, parts[2]))
        except ValueError:
            pass
    table.sort()
    return table


def main():
    trace, maps, lib, offset = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4], 16)
    regions, base = read_maps(maps, lib)
    if base is None:
        sys.exit(f"lines_per_call: {lib} is not in {maps}")
    picked = []
    for index, call in enumerate(calls(trace, base + offset)):
        if index >= FIRST + COUNT:
            break
        if index >= FIRST:
            picked.append(call)
    if len(picked) < COUNT:
        sys.exit(f"lines_per_call: only {FIRST + len(picked)} calls in {trace}")

    def lines(call):
        code = {a >> 6 for k, a in call if k == "I"}
        data = {a >> 6 for k, a in call if k != "I"}
        return code, data

    ranked = sorted(picked, key=lambda c: sum(map(len, lines(c))))
    median = ranked[len(ranked) // 2]
    code, data = lines(median)
    instructions = sorted(sum(1 for k, _ in c if k == "I") for c in picked)[len(picked) // 2]

    def region(address):
        for lo, hi, name in regions:
            if lo <= address < hi:
                return name
        return "?"

    print(f"instructions per call (median) {instructions}")
    print(f"lines per call (median call): code {len(code)}, data {len(data)}, "
          f"4 KB pages {len({x >> 6 for x in code | data})}")
    by_region = collections.Counter()
    for x in code:
        by_region["code " + region(x << 6)] += 1
    for x in data:
        by_region["data " + region(x << 6)] += 1
    for name, n in sorted(by_region.items(), key=lambda t: -t[1]):
        print(f"{n:5d} {name}")
    if not os.environ.get("DETAIL"):
        return
    table = symbols(lib)
    starts = [s[0] for s in table]

    def holder(address):
        offset = address - base
        i = bisect.bisect_right(starts, offset + 63) - 1
        names = []
        while i >= 0 and table[i][0] + max(table[i][1], 1) > offset and len(names) < 3:
            names.append(table[i][2][:70])
            i -= 1
        if not names and i >= 0:
            names.append("near " + table[i][2][:70])
        return " | ".join(names)

    last_code, seen = None, set()
    for kind, address in median:
        key = (kind == "I", address >> 6)
        if kind == "I":
            last_code = address
        if key in seen or STACK[0] <= address < STACK[1]:
            continue
        seen.add(key)
        where = region(address)
        what = holder(address) if "libncclshim" in where else ""
        if kind != "I" and last_code is not None and base <= last_code:
            what += f"  (read by {holder(last_code & ~63)})"
        print(f"{'code' if kind == 'I' else 'data'} {address:#x} {where} {what}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The digest of an `ncclshim summary --format json` output that the tools suite compares with a
committed one: the world, the totals and the distribution rows as they are, and a SHA-256 of the
per-communicator and per-rank tables (thousands of rows). The description and the input path are
left out (they say how the file was read, not what it holds).

usage: summary_digest.py SUMMARY.json > DIGEST.json
"""
import hashlib
import json
import sys


def sha256_of(rows):
    text = json.dumps(rows, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def main():
    with open(sys.argv[1]) as f:
        summary = json.load(f)
    digest = {
        "world_size": summary["world_size"],
        "totals": summary["totals"],
        "distribution": summary["distribution"],
        "comms": {"rows": len(summary["comms"]), "sha256": sha256_of(summary["comms"])},
        "ranks": {"rows": len(summary["ranks"]), "sha256": sha256_of(summary["ranks"])},
    }
    # One line per row, so that a diff shows which rows changed.
    lines = [f' "{key}": {json.dumps(value, sort_keys=True)}' for key, value in digest.items() if key != "distribution"]
    rows = ",\n".join("  " + json.dumps(row, sort_keys=True) for row in digest["distribution"])
    lines.append(f' "distribution": [\n{rows}\n ]')
    sys.stdout.write("{\n" + ",\n".join(lines) + "\n}\n")


if __name__ == "__main__":
    main()

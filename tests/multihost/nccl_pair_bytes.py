#!/usr/bin/env python3
"""Compares a phynet JSON report with NCCL's own network bytes between every pair of ranks.

Usage: nccl_pair_bytes.py TABLE RUN REPORT.json RANKS_PER_NODE [--ring-hops TOPOLOGY] [--flows]
                          [--algorithms]
TABLE: a tests/data/nccl_*/bytes_per_pair.csv (NCCL's network bytes per op instance between ranks;
from_node / to_node are ranks). RUN: the run's name in it (e.g. topo-all_reduce-n4x2). Node of a
rank = rank / RANKS_PER_NODE (consecutive ranks per node, as NCCL's NCCL_HOSTID runs placed them).

For every ordered pair of ranks on different nodes, the payload phynet sent (the report's
peer_bytes: the protocol's lines, as on the wire) must be within 1% of NCCL's network bytes summed
over the run (NCCL's LL protocol puts 2 network bytes on the wire per payload byte, and phynet puts
the same lines on the wire), and a pair NCCL left empty must stay empty. Every collective of the
report must have moved in NCCL's protocol for its size (LL, SIMPLE). A pair inside one node (NVLink in NCCL, no network bytes) must have gone over shared
memory in phynet: 16 bytes of framing per message (TCP has 24).

--ring-hops TOPOLOGY: also the ring order (or the tree's shape, for a run with NCCL_ALGO=Tree). The
pairs between nodes NCCL connected for the run (its `Channel NN/0 : a[x] -> b[y] [send] via NET/...`
lines in topology.txt, section `# RUN`) must be exactly the pairs between nodes that carried bytes,
in NCCL's table and in phynet's report.
--flows: every pair of ranks on different nodes has as many connections carrying data in phynet
(the report's links: one per channel) as NCCL used channels for it (the most over the run's rows).
--algorithms: every allreduce, allgather and reducescatter of the report ran NCCL's algorithm for
its size (RING, TREE, PAT), on NCCL's channels.
Exit 0 when every check holds.
"""
import csv
import json
import re
import sys

SHM_FRAMING = 16
TOLERANCE = 0.01


def nccl_bytes(table, run):
    """{(from rank, to rank): payload bytes over the whole run} from NCCL's table."""
    out = {}
    for row in csv.DictReader(open(table)):
        if row["run"] != run:
            continue
        key = (int(row["from_node"]), int(row["to_node"]))
        out[key] = out.get(key, 0) + int(row["net_bytes_per_op"]) * int(row["instances"])
    return out


def nccl_channels(table, run):
    """{(from rank, to rank): the most channels NCCL used between them in one op of the run}."""
    out = {}
    for row in csv.DictReader(open(table)):
        if row["run"] == run and int(row["net_bytes_per_op"]) > 0:
            key = (int(row["from_node"]), int(row["to_node"]))
            out[key] = max(out.get(key, 0), int(row["channels_used"]))
    return out


CHOSEN_OPS = ("allreduce", "allgather", "reducescatter")


def nccl_choices(table, run):
    """{(op, bytes): (algorithm, channels)} of the run's allreduces, allgathers and reducescatters,
    as NCCL decided them."""
    out = {}
    for row in csv.DictReader(open(table)):
        if row["run"] == run and row["op"] in CHOSEN_OPS:
            algo, _proto, channels = row["nccl_algo_proto_channels"].split()[:3]
            out[(row["op"], int(row["bytes"]))] = (algo.lower(), int(channels))
    return out


def nccl_protocols(table, run):
    """{(op, bytes): protocol} of the run's collectives, as NCCL decided them (lower case)."""
    out = {}
    for row in csv.DictReader(open(table)):
        fields = row["nccl_algo_proto_channels"].split()
        if row["run"] == run and len(fields) == 3:
            out[(row["op"], int(row["bytes"]))] = fields[1].lower()
    return out


def ring_hops(topology, run):
    """The network connections NCCL made for RUN: {(from rank, to rank)}."""
    hops, section = set(), None
    send = re.compile(r"^Channel \d+/\d+ : (\d+)\[\d+\] -> (\d+)\[\d+\] \[send\] via NET")
    for line in open(topology):
        if line.startswith("# "):
            section = line[2:].strip()
        elif section == run:
            m = send.match(line)
            if m:
                hops.add((int(m.group(1)), int(m.group(2))))
    return hops


def main():
    args = sys.argv[1:]
    topology = None
    if "--ring-hops" in args:
        i = args.index("--ring-hops")
        topology = args[i + 1]
        del args[i:i + 2]
    flows = "--flows" in args
    algorithms = "--algorithms" in args
    args = [a for a in args if a not in ("--flows", "--algorithms")]
    table, run, report, per = args[0], args[1], args[2], int(args[3])
    nccl = nccl_bytes(table, run)
    ours, framing, links = {}, {}, {}
    parsed = json.load(open(report))
    for r in parsed["ranks"]:
        for p in r["peer_bytes"]:
            if p["sent"]:
                ours[(r["rank"], p["peer"])] = p["sent"]
                links[(r["rank"], p["peer"])] = p["links"]
                framing[(r["rank"], p["peer"])] = (p["wire_sent"] - p["sent"]) / max(p["messages_sent"], 1)
    bad = []
    for key in sorted(set(nccl) | set(ours)):
        a, b = nccl.get(key, 0), ours.get(key, 0)
        if key[0] // per == key[1] // per:  # one node: NCCL used NVLink, phynet must use shared memory
            ok = a == 0 and framing.get(key, SHM_FRAMING) == SHM_FRAMING
            print(f"{run} {key[0]}->{key[1]} (one node): NCCL {a} network B, phynet {b} B over shm {'ok' if ok else 'WRONG'}")
        else:
            ok = (a == 0 and b == 0) or (a > 0 and abs(b - a) <= TOLERANCE * a)
            print(f"{run} {key[0]}->{key[1]}: NCCL {a} B, phynet {b} B {'ok' if ok else 'DIFFERENT'}")
        if not ok:
            bad.append(key)
    if not nccl:
        bad.append(f"no rows for {run} in {table}")
    protocols = nccl_protocols(table, run)
    ran = sorted({(o["op"], o["bytes"], o["protocol"]) for o in parsed["ops"] if (o["op"], o["bytes"]) in protocols})
    wrong = [f"{op} {size} B: NCCL {protocols[(op, size)]}, phynet {proto}" for op, size, proto in ran
             if protocols[(op, size)] != proto]
    if protocols:
        print(f"{run} protocol per op and size: {len(ran)} sizes, "
              f"{'as NCCL chose' if not wrong and ran else 'DIFFERENT: ' + '; '.join(wrong[:8])}")
        if wrong or not ran:
            bad.append("protocols")
    if topology:
        hops = ring_hops(topology, run)
        between = lambda pairs: {k for k, v in pairs.items() if v and k[0] // per != k[1] // per}
        show = lambda pairs: " ".join(f"{a}->{b}" for a, b in sorted(pairs)) or "none"
        ok = bool(hops) and between(nccl) == hops and between(ours) == hops
        print(f"{run} ring hops between nodes: NCCL's connections {show(hops)}; NCCL's bytes on "
              f"{show(between(nccl))}; phynet's on {show(between(ours))} {'ok' if ok else 'DIFFERENT'}")
        if not ok:
            bad.append("ring hops")
    if flows:
        channels = nccl_channels(table, run)
        wrong = [f"{a}->{b}: NCCL {channels.get((a, b), 0)}, phynet {links.get((a, b), 0)}"
                 for a, b in sorted(set(channels) | set(links))
                 if a // per != b // per and channels.get((a, b), 0) != links.get((a, b), 0)]
        pairs = sum(1 for a, b in channels if a // per != b // per)
        print(f"{run} connections per pair between nodes: {pairs} pairs, "
              f"{'the same as NCCL' if not wrong else 'DIFFERENT: ' + '; '.join(wrong[:8])}")
        if wrong or not pairs:
            bad.append("flows")
    if algorithms:
        choices = nccl_choices(table, run)
        ran = sorted({(o["op"], o["bytes"], o["algorithm"], o["channels"]) for o in parsed["ops"]
                      if o["op"] in CHOSEN_OPS})
        wrong = [f"{op} {size} B: NCCL {choices.get((op, size))}, phynet {algo}/{ch}" for op, size, algo, ch in ran
                 if choices.get((op, size)) != (algo, ch)]
        print(f"{run} algorithm per op and size: {len(ran)} sizes, "
              f"{'as NCCL chose' if not wrong else 'DIFFERENT: ' + '; '.join(wrong[:8])}")
        if wrong or not ran:
            bad.append("algorithms")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

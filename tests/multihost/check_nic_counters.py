#!/usr/bin/env python3
"""Checks a phynet JSON report against the kernel's counters of the test bed's fabric NICs.

Usage: check_nic_counters.py REPORT.json BEFORE AFTER [--intra-host-off-fabric]
BEFORE / AFTER: `netns_bed.sh counters` output ("host nic tx rx" per fabric NIC, bytes the
namespace sent and received on it) taken around the run. A rank's NIC is known from its address
10.100.K.(i+1) = host K, NIC r<i>.

What crossed a NIC is the transport payload the report counts for it (wire bytes: messages plus the
transport's 24-byte headers) plus, per packet, Ethernet + IPv4 + TCP headers (14 + 20 + 32 bytes with
timestamps = 66) and the packets that carry no payload (ACKs, handshakes). So, per NIC and direction:
  lower bound: counter >= wire bytes the report says it carried (exact payload, nothing lost);
  upper bound: counter <= wire + 66 * (segments of this direction + ACKs for the other direction)
               + SETUP_SLACK, counting at most one segment per half MSS (MTU 1500: MSS 1448) and one
               ACK per received segment, plus a fixed allowance for connection set-up (SYN/FIN,
               the bootstrap's hellos and address tables) and ARP.
A NIC that carried another NIC's flows, or traffic between ranks of one host, exceeds the upper bound;
one whose flows left elsewhere misses the lower bound. The report's per-NIC bytes must also equal its
model, and its host pairs must add up to its NICs. A NIC may carry one direction only (a ring's hop
between hosts can enter a host on one rail and leave on another), or nothing at all (a rank with no
tree edge to another node): then its counters must stay within the set-up allowance; but some NIC
must carry data, or the check would be empty.

--intra-host-off-fabric (for --intra-node shm): per host, over all its fabric NICs and per direction,
the counter must lie nearer the report's traffic to other hosts than the flat model's, where every
rank is its own node and the traffic between the host's own ranks (the report's same-host pairs) went
over TCP on its NICs too: counter - wire to other hosts < half the same-host traffic (as TCP wire
bytes, 24 per message). The same-host traffic must not be empty (the check would say nothing).
"""
import json
import sys

HEADER = 66
HALF_MSS = 1448 // 2
TCP_FRAMING = 24
SETUP_SLACK = 64 * 1024


def read_counters(path):
    out = {}
    with open(path) as f:
        for line in f:
            host, nic, tx, rx = line.split()
            out[(int(host), nic)] = (int(tx), int(rx))
    return out


def nic_of(address):
    parts = address.split(".")
    if len(parts) != 4 or parts[:2] != ["10", "100"]:
        raise SystemExit(f"rank address {address} is not a test-bed fabric address 10.100.K.I")
    return int(parts[2]), f"r{int(parts[3]) - 1}"


def packets(payload):
    return -(-payload // HALF_MSS)


def check_off_fabric(report, per_host):
    """Each host's counters against its traffic to other hosts and the flat model's (see the top)."""
    failures = []
    for host, (tx, rx, sent, recv, name) in sorted(per_host.items()):
        same = [p["traffic"] for p in report["host_pairs"] if p["same_host"] and p["from"] == name]
        intra = sum(t["bytes"] + TCP_FRAMING * t["messages"] for t in same)
        line = (f"host {host} ({name}): veth tx {tx}, rx {rx}; to/from other hosts {sent}/{recv} B; "
                f"the flat model's {sent + intra}/{recv + intra} B (+{intra} B inside the host)")
        print(line)
        if intra == 0:
            failures.append(f"{line}: nothing went between the host's ranks (the check would be empty)")
        elif not (tx - sent < intra / 2 and rx - recv < intra / 2):
            failures.append(f"{line}: traffic inside the host crossed its NICs")
    return failures


def main():
    args = sys.argv[1:]
    off_fabric = "--intra-host-off-fabric" in args
    if off_fabric:
        args.remove("--intra-host-off-fabric")
    report_path, before_path, after_path = args
    report = json.load(open(report_path))
    before, after = read_counters(before_path), read_counters(after_path)
    ranks = report["ranks"]
    failures = []
    checked = 0
    busy = 0  # NICs the report says carried data
    host_sent = {}
    per_host = {}  # test-bed host -> [tx, rx, wire sent, wire received, report's host name]
    for nic in report["nics"]:
        key = nic_of(ranks[nic["ranks"][0]]["address"])
        for r in nic["ranks"]:
            if nic_of(ranks[r]["address"]) != key:
                failures.append(f"NIC {nic['host']}/{nic['nic']} holds ranks of different test-bed NICs")
        if key not in after:
            failures.append(f"no counters for {key}")
            continue
        tx = after[key][0] - before[key][0]
        rx = after[key][1] - before[key][1]
        sent, recv = nic["sent"], nic["received"]
        tx_high = sent["wire_bytes"] + HEADER * (packets(sent["wire_bytes"]) + packets(recv["wire_bytes"])) + SETUP_SLACK
        rx_high = recv["wire_bytes"] + HEADER * (packets(recv["wire_bytes"]) + packets(sent["wire_bytes"])) + SETUP_SLACK
        line = (f"host {key[0]} {key[1]} ({nic['host']}/{nic['nic']}, ranks {nic['ranks']}): "
                f"tx {tx} in [{sent['wire_bytes']}, {tx_high}], rx {rx} in [{recv['wire_bytes']}, {rx_high}]")
        print(line)
        if not (sent["wire_bytes"] <= tx <= tx_high and recv["wire_bytes"] <= rx <= rx_high):
            failures.append(line)
        if sent["bytes"] != sent["model_bytes"] or recv["bytes"] != recv["model_bytes"]:
            failures.append(f"{nic['host']}/{nic['nic']}: bytes differ from the model: {sent} {recv}")
        busy += 1 if sent["bytes"] or recv["bytes"] else 0
        h = per_host.setdefault(key[0], [0, 0, 0, 0, nic["host"]])
        h[0] += tx
        h[1] += rx
        h[2] += sent["wire_bytes"]
        h[3] += recv["wire_bytes"]
        host_sent[nic["host"]] = host_sent.get(nic["host"], 0) + sent["bytes"]
        checked += 1
    pairs_sent = {}
    for p in report["host_pairs"]:
        if not p["same_host"]:
            pairs_sent[p["from"]] = pairs_sent.get(p["from"], 0) + p["traffic"]["bytes"]
    if pairs_sent != host_sent:
        failures.append(f"host pairs {pairs_sent} do not add up to the NICs {host_sent}")
    for key in after:
        if key not in {nic_of(r["address"]) for r in ranks}:
            idle = (after[key][0] - before[key][0]) + (after[key][1] - before[key][1])
            if idle > SETUP_SLACK:
                failures.append(f"NIC {key} has no rank but carried {idle} bytes")
    if checked and not busy:
        failures.append("no NIC carried anything (the check would be empty)")
    if off_fabric:
        failures += check_off_fabric(report, per_host)
    print(f"{checked} NICs checked, {len(failures)} failures")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""RoCEv2 flows in a packet capture, checked against phynet JSON reports.

Usage:
  roce_pcap.py flows CAPTURE.pcap...                   print every flow and the largest payload
  roce_pcap.py mark NAME ADDRESS...                    send the marker NAME to each address (on VM A)
  roce_pcap.py check REPORT.json[,REPORT.json...] CAPTURE.pcap... [--mtu 4096] [--window FROM,TO]
  roce_pcap.py shm REPORT.json CAPTURE.pcap... [--window FROM,TO]
  roce_pcap.py bytes SRC DST BYTES CAPTURE.pcap... [--window FROM,TO]
  roce_pcap.py qps REPORT.json QPS CAPTURE.pcap... [--window FROM,TO]

A flow is one direction of one queue pair: (source IP, destination IP, destination QP). Its payload
is what RoCE carries after the base transport header and its extension headers (RETH, immediate
data, AETH), less padding and the ICRC: for the ibverbs transport, exactly the bytes of the RDMA
writes and sends it posted (PeerBytes::sentWire). A packet seen twice (a retransmission: same flow,
same PSN) is counted once.

A capture holds every run of a boot. `mark` sends one UDP datagram to port 4790 carrying
"roce-pcap-mark NAME" (one per rail address, between two runs); `--window FROM,TO` then counts only
the RoCE packets after the marker FROM and before the next marker TO in each capture (an empty name:
the capture's start or end). A marker missing from a capture is a failure.

`check` sums, per pair of NIC addresses, the payload of all flows between them and requires it to
equal exactly what the reports' ranks say they sent to ranks on other hosts (peer_bytes[].wire_sent,
summed over the reports, which cover everything the window put on the wire); a flow between two
addresses of one host is a failure (a capture between hosts must not see such traffic); the largest
payload of a packet must equal the path MTU.

`shm` checks a replay run with --intra-node shm: every pair of ranks on one host that moved bytes
moved them over shared memory (16 bytes of framing per message in the report, payload equal to the
model), such bytes exist (else the check says nothing), and none of them is in the captures: no flow
between the addresses of one host, and the captured total equals exactly the bytes the report says
crossed between hosts (payload equal to the model's). Exit status 0 when every figure matches.

`bytes` checks one sender's RDMA writes (an RDMA background flow of phynet_flow): the payload of all
flows from address SRC to address DST equals exactly BYTES, what the sender says its writes carried.

`qps` checks the RoCEv2 flows of a replay's data: every pair of ranks on different hosts that sent
bytes says it used QPS links (peer_bytes[].links: NCCL_IB_QPS_PER_CONNECTION QPs of one channel
group), and per pair of NIC addresses the capture has exactly that many flows carrying RDMA writes
(the data; credits and zero-copy offers travel as sends on other QPs), summed over the pair's ranks.
"""
import json
import socket
import struct
import sys
from collections import defaultdict

ROCE_PORT = 4791
MARK_PORT = 4790
MARK = b"roce-pcap-mark "
SHM_FRAMING = 16  # bytes of the shared-memory transport's header per message
# Base transport header opcode (RC) -> bytes of extension headers after the 12-byte BTH.
EXTENSION_BYTES = {
    0x00: 0, 0x01: 0, 0x02: 0, 0x03: 4, 0x04: 0, 0x05: 4,           # SEND first/middle/last/last+imm/only/only+imm
    0x06: 16, 0x07: 0, 0x08: 0, 0x09: 4, 0x0A: 16, 0x0B: 20,        # RDMA WRITE ...
    0x0C: 16, 0x0D: 4, 0x0E: 0, 0x0F: 4, 0x10: 4,                  # RDMA READ request / responses
    0x11: 4, 0x12: 12, 0x13: 28, 0x14: 28,                          # ACK, atomic ACK, atomics
    0x16: 4, 0x17: 4,                                               # SEND last/only with invalidate
}
ICRC_BYTES = 4


def datagrams(path):
    """Yields (source IP, destination IP, destination port, UDP payload) of every IPv4/UDP frame."""
    with open(path, "rb") as f:
        header = f.read(24)
        if len(header) < 24:
            return
        magic = struct.unpack("<I", header[:4])[0]
        endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
        while True:
            record = f.read(16)
            if len(record) < 16:
                return
            _, _, captured, _ = struct.unpack(endian + "IIII", record)
            frame = f.read(captured)
            if len(frame) < captured:
                return
            offset = 12
            ethertype = struct.unpack("!H", frame[offset:offset + 2])[0]
            offset += 2
            if ethertype == 0x8100:  # VLAN tag
                ethertype = struct.unpack("!H", frame[offset + 2:offset + 4])[0]
                offset += 4
            if ethertype != 0x0800 or len(frame) < offset + 20:
                continue
            ihl = (frame[offset] & 0x0F) * 4
            if frame[offset + 9] != 17:
                continue
            src = ".".join(str(b) for b in frame[offset + 12:offset + 16])
            dst = ".".join(str(b) for b in frame[offset + 16:offset + 20])
            udp = offset + ihl
            dport, length = struct.unpack("!HH", frame[udp + 2:udp + 6])
            yield src, dst, dport, frame[udp + 8:udp + length]


def packets(path, window=("", "")):
    """Yields (source IP, destination IP, UDP payload) of the frames to port 4791 within the window."""
    start, end = window
    inside = not start
    found_start = found_end = False
    for src, dst, dport, payload in datagrams(path):
        if dport == MARK_PORT and payload.startswith(MARK):
            name = payload[len(MARK):].decode(errors="replace").strip()
            if not inside and name == start:
                inside = found_start = True
            elif inside and end and name == end:
                found_end = True
                break
            continue
        if inside and dport == ROCE_PORT:
            yield src, dst, payload
    if start and not found_start:
        raise SystemExit(f"{path}: no marker '{start}'")
    if end and not found_end:
        raise SystemExit(f"{path}: no marker '{end}' after '{start or 'the start'}'")


RDMA_WRITE_OPCODES = range(0x06, 0x0C)  # RC RDMA WRITE first / middle / last (with immediate) / only


def flows(paths, window=("", ""), opcodes=None):
    """{(src, dst, dest QP): payload bytes}, the largest payload of a packet, packets, duplicates;
    only the packets of the given opcodes when `opcodes` is set."""
    totals = defaultdict(int)
    seen = set()
    largest = 0
    count = duplicates = 0
    for path in paths:
        for src, dst, bth in packets(path, window):
            opcode = bth[0]
            pad = (bth[1] >> 4) & 0x3
            qp = int.from_bytes(bth[5:8], "big")
            psn = int.from_bytes(bth[9:12], "big")
            if opcode not in EXTENSION_BYTES:
                raise SystemExit(f"{path}: unknown RoCE opcode {opcode:#x}")
            if opcodes is not None and opcode not in opcodes:
                continue
            payload = len(bth) - 12 - EXTENSION_BYTES[opcode] - pad - ICRC_BYTES
            if payload < 0:
                raise SystemExit(f"{path}: RoCE packet shorter than its headers")
            key = (src, dst, qp, psn, opcode)
            count += 1
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            totals[(src, dst, qp)] += payload
            largest = max(largest, payload)
    return totals, largest, count, duplicates


def host_of(rank):
    return rank.get("host_id", rank.get("host", rank["address"]))


def report_pairs(paths):
    """({(source address, destination address): wire bytes} between ranks on different hosts,
    {address: host} of every rank)."""
    pairs = defaultdict(int)
    hosts = {}
    for path in paths:
        report = json.load(open(path))
        ranks = report["ranks"]
        for rank in ranks:
            hosts.setdefault(rank["address"], host_of(rank))
            for peer in rank.get("peer_bytes", []):
                other = ranks[peer["peer"]]
                if host_of(rank) != host_of(other):
                    pairs[(rank["address"], other["address"])] += peer["wire_sent"]
    return pairs, hosts


def same_host_flows(wire, hosts):
    """Failures for captured NIC pairs whose two addresses are on one host."""
    return [f"NIC pair {src} -> {dst}: {payload} bytes captured between two addresses of host {hosts[src]}"
            for (src, dst), payload in sorted(wire.items())
            if src in hosts and dst in hosts and hosts[src] == hosts[dst] and payload]


def nic_pairs(totals, show=True):
    wire = defaultdict(int)
    for (src, dst, qp), payload in sorted(totals.items()):
        if show:
            print(f"flow {src} -> {dst} QP {qp:#x}: {payload} bytes")
        wire[(src, dst)] += payload
    return wire


def options(rest):
    """(captures, mtu, window) from the arguments after the reports."""
    mtu, window = 4096, ("", "")
    rest = list(rest)
    if "--mtu" in rest:
        i = rest.index("--mtu")
        mtu = int(rest[i + 1])
        del rest[i:i + 2]
    if "--window" in rest:
        i = rest.index("--window")
        start, _, end = rest[i + 1].partition(",")
        window = (start, end)
        del rest[i:i + 2]
    return rest, mtu, window


def check(report_paths, rest):
    captures, mtu, window = options(rest)
    totals, largest, count, duplicates = flows(captures, window)
    wire = nic_pairs(totals)
    want, hosts = report_pairs(report_paths)
    failures = []
    for pair in sorted(set(wire) | set(want)):
        line = f"NIC pair {pair[0]} -> {pair[1]}: capture {wire.get(pair, 0)} bytes, report {want.get(pair, 0)}"
        print(line)
        if wire.get(pair, 0) != want.get(pair, 0):
            failures.append(line)
    failures += same_host_flows(wire, hosts)
    print(f"{count} RoCE packets ({duplicates} retransmitted), largest payload {largest} (path MTU {mtu})")
    if largest != mtu:
        failures.append(f"largest RoCE payload {largest}, expected the path MTU {mtu}")
    if not want:
        failures.append("the reports name no traffic between NICs of different hosts")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


def shm(report_path, rest):
    captures, _, window = options(rest)
    report = json.load(open(report_path))
    ranks = report["ranks"]
    failures = []
    if "shm within" not in report.get("transport", ""):
        failures.append(f"transport '{report.get('transport')}': not a run with --intra-node shm")
    within = within_msgs = between = between_model = everything = 0
    for rank in ranks:
        for peer in rank.get("peer_bytes", []):
            other = ranks[peer["peer"]]
            everything += peer["wire_sent"]
            name = f"rank {rank['rank']} ({rank['address']}) -> rank {other['rank']} ({other['address']})"
            if host_of(rank) != host_of(other):
                between += peer["wire_sent"]
                between_model += peer["model_sent"]
                if peer["sent"] != peer["model_sent"]:
                    failures.append(f"{name}: {peer['sent']} bytes between hosts, model {peer['model_sent']}")
                continue
            if peer["messages_sent"] == 0:
                continue
            framing = (peer["wire_sent"] - peer["sent"]) / peer["messages_sent"]
            print(f"within host {host_of(rank)}: {name}: {peer['sent']} bytes in {peer['messages_sent']} "
                  f"messages over shm ({framing:g} B framing/message), model {peer['model_sent']}")
            if framing != SHM_FRAMING or peer["sent"] != peer["model_sent"]:
                failures.append(f"{name}: {framing:g} B framing per message (want {SHM_FRAMING}: shm), "
                                f"{peer['sent']} bytes vs model {peer['model_sent']}")
            within += peer["wire_sent"]
            within_msgs += peer["messages_sent"]
    totals, _, count, _ = flows(captures, window)
    wire = nic_pairs(totals, show=False)
    hosts = {r["address"]: host_of(r) for r in ranks}
    failures += same_host_flows(wire, hosts)
    captured = sum(wire.values())
    print(f"between hosts: report {between} wire bytes (payload = model {between_model}), captured {captured} "
          f"in {count} RoCE packets")
    print(f"within hosts over shm: {within} bytes in {within_msgs} messages, captured 0 of them; all the ranks "
          f"sent {everything} bytes, the wire carried {captured}")
    if within == 0:
        failures.append("no bytes between ranks of one host: the check says nothing")
    if between == 0:
        failures.append("no bytes between hosts: the check says nothing")
    if captured != between:
        failures.append(f"captured {captured} bytes, the report says {between} crossed between hosts")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


def sender_bytes(src, dst, want, rest):
    captures, _, window = options(rest)
    totals, largest, count, duplicates = flows(captures, window)
    got = sum(payload for (s, d, qp), payload in totals.items() if (s, d) == (src, dst))
    print(f"{src} -> {dst}: capture {got} bytes of RoCEv2 payload, sender {want}; {count} RoCE packets "
          f"({duplicates} retransmitted), largest payload {largest}")
    return 0 if got == int(want) and got > 0 else 1


def data_qps(report_path, want, rest):
    captures, _, window = options(rest)
    report = json.load(open(report_path))
    ranks = report["ranks"]
    failures = []
    links = defaultdict(int)  # (source address, destination address) -> links the report's ranks used
    for rank in ranks:
        for peer in rank.get("peer_bytes", []):
            other = ranks[peer["peer"]]
            if host_of(rank) == host_of(other) or peer["sent"] == 0:
                continue
            links[(rank["address"], other["address"])] += peer["links"]
            if peer["links"] != int(want):
                failures.append(f"rank {rank['rank']} -> rank {other['rank']}: {peer['links']} links carried "
                                f"data, want {want}")
    totals, _, count, _ = flows(captures, window, RDMA_WRITE_OPCODES)
    captured = defaultdict(set)
    for (src, dst, qp), payload in totals.items():
        if payload > 0:
            captured[(src, dst)].add(qp)
    for pair in sorted(set(links) | set(captured)):
        qps = sorted(captured.get(pair, ()))
        print(f"NIC pair {pair[0]} -> {pair[1]}: {len(qps)} flows of RDMA writes in the capture "
              f"(QPs {', '.join(f'{qp:#x}' for qp in qps)}), report {links.get(pair, 0)} links")
        if len(qps) != links.get(pair, 0):
            failures.append(f"NIC pair {pair[0]} -> {pair[1]}: {len(qps)} flows captured, report "
                            f"{links.get(pair, 0)}")
    if not links:
        failures.append("the report names no data between ranks on different hosts")
    print(f"{count} RoCE packets of RDMA writes")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


def mark(name, addresses):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for address in addresses:
            s.sendto(MARK + name.encode(), (address, MARK_PORT))
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "flows":
        totals, largest, count, duplicates = flows(argv[1:])
        for (src, dst, qp), payload in sorted(totals.items()):
            print(f"{src} -> {dst} QP {qp:#x}: {payload} bytes")
        print(f"{count} RoCE packets ({duplicates} retransmitted), largest payload {largest}")
        return 0
    if len(argv) >= 3 and argv[0] == "mark":
        return mark(argv[1], argv[2:])
    if len(argv) >= 3 and argv[0] == "check":
        return check(argv[1].split(","), argv[2:])
    if len(argv) >= 5 and argv[0] == "bytes":
        return sender_bytes(argv[1], argv[2], argv[3], argv[4:])
    if len(argv) >= 4 and argv[0] == "qps":
        return data_qps(argv[1], argv[2], argv[3:])
    if len(argv) >= 3 and argv[0] == "shm":
        return shm(argv[1], argv[2:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""RoCEv2 flows in a packet capture, checked against phynet JSON reports.

Usage:
  roce_pcap.py flows CAPTURE.pcap...                   print every flow and the largest payload
  roce_pcap.py check REPORT.json[,REPORT.json...] CAPTURE.pcap... [--mtu 4096]

A flow is one direction of one queue pair: (source IP, destination IP, destination QP). Its payload
is what RoCE carries after the base transport header and its extension headers (RETH, immediate
data, AETH), less padding and the ICRC: for the ibverbs transport, exactly the bytes of the RDMA
writes and sends it posted (PeerBytes::sentWire). A packet seen twice (a retransmission: same flow,
same PSN) is counted once.

`check` sums, per pair of NIC addresses, the payload of all flows between them and requires it to
equal exactly what the reports' ranks say they sent to each other (peer_bytes[].wire_sent, summed over
the reports, which cover everything the run put on the wire); the largest payload of a packet must
equal the path MTU. Exit status 0 when every figure matches.
"""
import json
import struct
import sys
from collections import defaultdict

ROCE_PORT = 4791
# Base transport header opcode (RC) -> bytes of extension headers after the 12-byte BTH.
EXTENSION_BYTES = {
    0x00: 0, 0x01: 0, 0x02: 0, 0x03: 4, 0x04: 0, 0x05: 4,           # SEND first/middle/last/last+imm/only/only+imm
    0x06: 16, 0x07: 0, 0x08: 0, 0x09: 4, 0x0A: 16, 0x0B: 20,        # RDMA WRITE ...
    0x0C: 16, 0x0D: 4, 0x0E: 0, 0x0F: 4, 0x10: 4,                  # RDMA READ request / responses
    0x11: 4, 0x12: 12, 0x13: 28, 0x14: 28,                          # ACK, atomic ACK, atomics
    0x16: 4, 0x17: 4,                                               # SEND last/only with invalidate
}
ICRC_BYTES = 4


def packets(path):
    """Yields (source IP, destination IP, UDP payload) of every IPv4/UDP frame to port 4791."""
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
            if dport != ROCE_PORT:
                continue
            yield src, dst, frame[udp + 8:udp + length]


def flows(paths):
    """{(src, dst, dest QP): payload bytes}, the largest payload of a packet, packets, duplicates."""
    totals = defaultdict(int)
    seen = set()
    largest = 0
    count = duplicates = 0
    for path in paths:
        for src, dst, bth in packets(path):
            opcode = bth[0]
            pad = (bth[1] >> 4) & 0x3
            qp = int.from_bytes(bth[5:8], "big")
            psn = int.from_bytes(bth[9:12], "big")
            if opcode not in EXTENSION_BYTES:
                raise SystemExit(f"{path}: unknown RoCE opcode {opcode:#x}")
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


def report_pairs(paths):
    """{(source address, destination address): wire bytes} from the reports' per-peer figures."""
    pairs = defaultdict(int)
    for path in paths:
        report = json.load(open(path))
        ranks = report["ranks"]
        for rank in ranks:
            for peer in rank.get("peer_bytes", []):
                src, dst = rank["address"], ranks[peer["peer"]]["address"]
                if src != dst:
                    pairs[(src, dst)] += peer["wire_sent"]
    return pairs


def main(argv):
    if len(argv) >= 2 and argv[0] == "flows":
        totals, largest, count, duplicates = flows(argv[1:])
        for (src, dst, qp), payload in sorted(totals.items()):
            print(f"{src} -> {dst} QP {qp:#x}: {payload} bytes")
        print(f"{count} RoCE packets ({duplicates} retransmitted), largest payload {largest}")
        return 0
    if len(argv) >= 3 and argv[0] == "check":
        mtu = 4096
        rest = argv[2:]
        if "--mtu" in rest:
            i = rest.index("--mtu")
            mtu = int(rest[i + 1])
            rest = rest[:i] + rest[i + 2:]
        totals, largest, count, duplicates = flows(rest)
        wire = defaultdict(int)
        for (src, dst, qp), payload in sorted(totals.items()):
            print(f"flow {src} -> {dst} QP {qp:#x}: {payload} bytes")
            wire[(src, dst)] += payload
        want = report_pairs(argv[1].split(","))
        failures = []
        for pair in sorted(set(wire) | set(want)):
            line = f"NIC pair {pair[0]} -> {pair[1]}: capture {wire.get(pair, 0)} bytes, report {want.get(pair, 0)}"
            print(line)
            if wire.get(pair, 0) != want.get(pair, 0):
                failures.append(line)
        print(f"{count} RoCE packets ({duplicates} retransmitted), largest payload {largest} (path MTU {mtu})")
        if largest != mtu:
            failures.append(f"largest RoCE payload {largest}, expected the path MTU {mtu}")
        if not want:
            failures.append("the reports name no traffic between NICs")
        for f in failures:
            print("FAILED:", f)
        return 1 if failures else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

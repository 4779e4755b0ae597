#!/usr/bin/env python3
"""Checks of tests/suites/fabric_tests.sh on the output folder of `phynet --jobs`.

  jobs_check.py bytes OUT BEFORE AFTER   every job's per-NIC bytes equal its model, and the veth
      counters around the whole --jobs run (BEFORE/AFTER: `netns_bed.sh counters`) lie within the
      bound check_nic_counters.py uses (wire bytes <= counter <= wire + 66 per segment of half an
      MSS and per ACK + set-up slack) of the sum over every report in OUT (alone and shared runs).
  jobs_check.py busbw OUT JOB MIN MAX    JOB's busbw shared / alone lies in [MIN, MAX].
  jobs_check.py left OUT JOB LINK_MBIT TOLERANCE   JOB's busbw shared / alone is what the link has
      left, 1 - background / link, within TOLERANCE (relative), the background rate being the
      lowest rate a background flow (OUT/*.send.log) achieved: TCP flows share the link fairly, so
      a flow gets less than it asks for while the replay competes.
"""
import glob, json, sys

HEADERS, HALF_MSS, SETUP_SLACK = 66, 724, 64 * 1024

def nic_of(report):
    """(host name in the report, nic) -> bed host number K, from the ranks' addresses 10.100.K.x."""
    return {(r["host"], r["nic"]): int(r["address"].split(".")[2]) for r in report["ranks"]}

def bytes_check(out, before, after):
    read = lambda p: {(int(h), n): (int(tx), int(rx)) for h, n, tx, rx in (l.split() for l in open(p))}
    b, a = read(before), read(after)
    wire = {}
    for path in sorted(glob.glob(f"{out}/*.json")):
        report = json.load(open(path))
        where = nic_of(report)
        for n in report["nics"]:
            for direction, i in (("sent", 0), ("received", 1)):
                t = n[direction]
                assert t["bytes"] == t["model_bytes"], f"{path}: {n['host']} {n['nic']} {direction} {t['bytes']} != model {t['model_bytes']}"
                key = (where[(n["host"], n["nic"])], n["nic"])
                wire.setdefault(key, [0, 0])[i] += t["wire_bytes"]
    assert wire, "no NIC traffic in the reports"
    for key, (sent, received) in wire.items():
        for i, own, other in ((0, sent, received), (1, received, sent)):
            counter = a[key][i] - b[key][i]
            upper = own + HEADERS * (own // HALF_MSS + 1 + other // HALF_MSS + 1) + SETUP_SLACK
            assert own <= counter <= upper, f"host {key[0]} {key[1]} {'tx' if i == 0 else 'rx'}: counter {counter} not in [{own}, {upper}]"
            print(f"host {key[0]} {key[1]} {'tx' if i == 0 else 'rx'}: counter {counter}, reports' wire {own} (+{(counter - own) / own:.2%})")

def busbw_check(out, job, lo, hi):
    def busbw(phase):
        report = json.load(open(f"{out}/{job}.{phase}.json"))
        ops = report["ops"]
        time = sum(o["time_us"] for o in ops)
        return sum(o["busbw_gbps"] * o["time_us"] for o in ops) / time
    alone, shared = busbw("alone"), busbw("shared")
    ratio = shared / alone
    print(f"{job}: busbw alone {alone:.4f} GB/s, shared {shared:.4f} GB/s, ratio {ratio:.3f} (want {lo}..{hi})")
    assert lo <= ratio <= hi

def left_check(out, job, link, tolerance):
    rates = [float(l.split("(")[1].split()[0]) for p in glob.glob(f"{out}/*.send.log") for l in open(p) if "Mbit/s" in l]
    assert rates, "no background flow reported its rate"
    want = 1 - min(rates) / link
    busbw_check(out, job, want * (1 - tolerance), want * (1 + tolerance))
    print(f"background {min(rates):.1f} Mbit/s of {link:g}: the link has {want:.3f} left")

if sys.argv[1] == "left":
    left_check(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
elif sys.argv[1] == "bytes":
    bytes_check(*sys.argv[2:5])
else:
    busbw_check(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))

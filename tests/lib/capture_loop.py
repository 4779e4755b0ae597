#!/usr/bin/env python3
"""A training-like loop over libncclshim.so through ctypes, GPU-free and one rank, for
tests/suites/capture_tests.sh: one set-up broadcast, then STEPS steps of four operations
(all-reduce of 4 and 8 floats, a grouped all-reduce of 16, a broadcast of 2) with, on request, an
ncclshimMarkStep() after each step, SIGUSR2 sent to itself before given steps, and a trigger file
created and removed before given steps. Prints the marks' return values.

usage: capture_loop.py LIB STEPS [--mark] [--usr2 K,K] [--file PATH:FROM:TO] [--sleep S] [--kill]
"""
import argparse
import ctypes
import os
import signal
import time

parser = argparse.ArgumentParser()
parser.add_argument("lib")
parser.add_argument("steps", type=int)
parser.add_argument("--mark", action="store_true")
parser.add_argument("--usr2", default="")
parser.add_argument("--file", default="")
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--kill", action="store_true", help="end by SIGKILL, without destroying the communicator")
args = parser.parse_args()

lib = ctypes.CDLL(args.lib)
mark = lib.ncclshimMarkStep
mark.argtypes, mark.restype = [], ctypes.c_int64
comm, devices = ctypes.c_void_p(), (ctypes.c_int * 1)(0)
assert lib.ncclCommInitAll(ctypes.byref(comm), 1, devices) == 0
send, recv = (ctypes.c_float * 16)(*range(16)), (ctypes.c_float * 16)()
FLOAT, SUM = 7, 0

def allreduce(count):
    assert lib.ncclAllReduce(send, recv, ctypes.c_size_t(count), FLOAT, SUM, comm, None) == 0

def broadcast(count):
    assert lib.ncclBroadcast(send, recv, ctypes.c_size_t(count), FLOAT, 0, comm, None) == 0

usr2 = {int(k) for k in args.usr2.split(",") if k}
trigger, trigger_from, trigger_to = (args.file.split(":") + ["", "", ""])[:3] if args.file else ("", -1, -1)
broadcast(12)  # set-up: before the first step
marks = []
for step in range(args.steps):
    if step in usr2:
        os.kill(os.getpid(), signal.SIGUSR2)
    if trigger and step == int(trigger_from):
        open(trigger, "w").close()
    if trigger and step == int(trigger_to):
        os.unlink(trigger)
    allreduce(4)
    allreduce(8)
    assert lib.ncclGroupStart() == 0
    allreduce(16)
    assert lib.ncclGroupEnd() == 0
    broadcast(2)
    if args.mark:
        marks.append(mark())
    if args.sleep:
        time.sleep(args.sleep)
if args.kill:
    time.sleep(0.2)  # the recorder's writer has drained (every 10 ms) and created the file
    os.kill(os.getpid(), signal.SIGKILL)
assert lib.ncclCommDestroy(comm) == 0
print("marks", " ".join(map(str, marks)))

"""Bus bandwidth of collectives through PyTorch (NCCL) from 8 B to 1 GiB on 2 GPUs; rank 0 prints one
JSON line per size: {"op", "bytes", "us", "busbw"} (the best of WINDOWS timed windows of `iters`
back-to-back calls). Run with and without the shim. BUSBW_OPS picks the ops (comma-separated, default
all_reduce,all_gather; also reduce_scatter, broadcast, alltoall, sendrecv: batch_isend_irecv to the
next rank and from the previous); "bytes" is the larger buffer of the call (all_gather: the gathered
output, reduce_scatter: the input), as nccl-tests counts them.
BUSBW_TOGGLE=1 (with the shim as NCCL's profiler plugin): the plugin's events are switched off and
on in alternate windows (ncclshimProfilerSetEvents), 2 x WINDOWS windows per size, and each line
also gives "us_off", the best window with the events off, the medians "med_on" / "med_off" and
every window's time per call in order ("win_on", "win_off": window i of each half ran back to back):
the plugin's cost measured inside one process, free of process-to-process variation.
BUSBW_TOGGLE=all: the same, switching the recording of calls too (ncclshimSetRecording): "on" is
recording + the plugin's events, "off" is the shim forwarding with the plugin loaded and no event
active, i.e. everything recording and the plugin add on top of forwarding. BUSBW_TOGGLE=rec: the
recording of calls alone, the plugin's events off in both halves. BUSBW_ITERS sets the calls
per window below 1 MiB (default 1000); BUSBW_MIN_BYTES the first size (default 8).
BUSBW_BLOCK=<B> (with BUSBW_TOGGLE): switch in blocks of B calls inside each window instead of
window by window, and time every call on its own (the host's clock from one call's start to the
next's): a block's figure is the median of its calls, the first BUSBW_BLOCK_SKIP (2) after a switch
left out; each line then gives "blk_diffs", on − off of every two adjacent blocks (µs per call, the
block first on in even windows, first off in odd ones), "blk_on" / "blk_off", the medians of the
blocks, and "blk_mean_diffs", the same pairs' on − off of the blocks' means (which keep a cost only
some calls pay, a rare slow call, that a block's median drops). A pair of blocks of 20 spans about
1.5 ms at 40 µs per call, less than the machine's slow episodes (whole windows of 10 ms at times),
which thus fall on both halves of a pair.
BUSBW_SELF_TIME=1 (with a shim built with -DNSHIM_SELF_TIME=1, common/self_time.h): each line also
gives "self_ns", the ns per call rank 0's shim spent in each span of the recording path during the
"on" windows (the frame before and after the NCCL call, the NCCL call, the plugin's callbacks), and
"self_calls", how often each span ran per call."""
import ctypes
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

WINDOWS = int(os.environ.get("BUSBW_WINDOWS", 5))  # timed windows per size (per half with BUSBW_TOGGLE=1)
BLOCK = int(os.environ.get("BUSBW_BLOCK", 0))  # calls per block with BUSBW_TOGGLE (0: window by window)
BLOCK_SKIP = int(os.environ.get("BUSBW_BLOCK_SKIP", 2))  # calls left out after each switch


def block_pairs(run, toggle, iters):
    """BUSBW_BLOCK: WINDOWS windows of `iters` calls, switched every BLOCK calls; returns the on − off
    difference of each pair of adjacent blocks, every block's figure by side (s per call), and the
    pairs' differences of the blocks' means: a block's median leaves out a cost that only some of
    its calls pay (one call in 50, say), its mean does not."""
    clock = time.perf_counter_ns
    diffs, sides, mean_diffs = [], {True: [], False: []}, []
    for w in range(WINDOWS):
        dist.barrier()
        torch.cuda.synchronize()
        first_on = w % 2 == 0
        pair, pair_mean = {}, {}
        for b in range(iters // BLOCK):
            on = (b % 2 == 0) == first_on
            toggle(on)
            stamps = []
            for _ in range(BLOCK):
                stamps.append(clock())
                run()
            stamps.append(clock())
            calls = [stamps[j + 1] - stamps[j] for j in range(BLOCK_SKIP, BLOCK)]
            figure = statistics.median(calls) * 1e-9
            sides[on].append(figure)
            pair[on] = figure
            pair_mean[on] = statistics.fmean(calls) * 1e-9
            if b % 2 == 1:
                diffs.append(pair[True] - pair[False])
                mean_diffs.append(pair_mean[True] - pair_mean[False])
        torch.cuda.synchronize()
    toggle(True)
    return diffs, sides, mean_diffs


def pin_to_gpu_local_cpus(device):
    """BUSBW_PIN=1: restrict this process (and the threads it starts later: NCCL's, PyTorch's, the
    shim's writer) to the CPUs local to its GPU, so the calling thread does not wander across NUMA
    nodes between timing windows. Left alone when the topology cannot be read."""
    try:
        props = torch.cuda.get_device_properties(device)
        bus = f"{props.pci_domain_id:04x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
        text = open(f"/sys/bus/pci/devices/{bus}/local_cpulist").read().strip()
    except (AttributeError, OSError):
        return None
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    os.sched_setaffinity(0, cpus)
    return text


SELF_SPANS = ("frame_before", "frame_after", "backend", "plugin_start", "plugin_stop", "begin_call", "comm_seq",
              "push", "order_number", "empty")


def self_time_reader():
    """BUSBW_SELF_TIME=1: a function returning the shim's span counters (ticks..., calls..., ns per
    tick * 2^32) for this thread, or None when not asked."""
    if os.environ.get("BUSBW_SELF_TIME") != "1":
        return None
    fn = ctypes.CDLL(None).ncclshimSelfTime
    fn.argtypes, fn.restype = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_int], ctypes.c_int
    buf = (ctypes.c_uint64 * (2 * len(SELF_SPANS) + 1))()

    def read():
        if fn(buf, len(buf)) < 0:
            raise SystemExit("BUSBW_SELF_TIME=1 needs a shim built with -DNSHIM_SELF_TIME=1")
        return list(buf)
    return read


def main():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(rank)
    if os.environ.get("BUSBW_PIN") == "1":
        pinned = pin_to_gpu_local_cpus(rank)
        print(json.dumps({"rank": rank, "pinned_cpus": pinned}), flush=True)
    max_bytes = int(os.environ.get("BUSBW_MAX_BYTES", 1 << 30))
    dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
    toggle = None
    toggle_mode = os.environ.get("BUSBW_TOGGLE", "")
    if toggle_mode in ("1", "all", "rec"):
        dist.barrier()  # the communicator exists: the plugin has its mask word
        shim = ctypes.CDLL(None)
        set_events = shim.ncclshimProfilerSetEvents
        set_events.argtypes, set_events.restype = [ctypes.c_int], ctypes.c_int
        events_on = set_events(0)
        set_events(events_on)
        if events_on < 0:
            raise SystemExit("BUSBW_TOGGLE needs the shim as profiler plugin, recording")
        set_recording = None
        if toggle_mode in ("all", "rec"):
            set_recording = shim.ncclshimSetRecording
            set_recording.argtypes, set_recording.restype = [ctypes.c_int], ctypes.c_int
            if set_recording(1) < 0:
                raise SystemExit("BUSBW_TOGGLE=all needs the shim recording (NCCLSHIM_TRACE_DIR)")

        if toggle_mode == "rec":
            events_on = 0

        def toggle(on):
            set_events(events_on if on else 0)
            if set_recording is not None:
                set_recording(1 if on else 0)
    if BLOCK and (toggle is None or BLOCK <= BLOCK_SKIP):
        raise SystemExit(f"BUSBW_BLOCK={BLOCK} needs BUSBW_TOGGLE and more calls per block than "
                         f"BUSBW_BLOCK_SKIP={BLOCK_SKIP}")
    read_self = self_time_reader()
    ops = os.environ.get("BUSBW_OPS", "all_reduce,all_gather").split(",")
    # busbw factor per op (nccl-tests' definitions)
    factors = {"all_reduce": 2 * (world - 1) / world, "all_gather": (world - 1) / world,
               "reduce_scatter": (world - 1) / world, "broadcast": 1.0, "alltoall": (world - 1) / world,
               "sendrecv": 1.0}
    small_iters = int(os.environ.get("BUSBW_ITERS", 1000))
    size = int(os.environ.get("BUSBW_MIN_BYTES", 8))
    while size <= max_bytes:
        for op in ops:
            numel = max(1, size // 4)
            if op == "alltoall":
                numel = max(world, numel // world * world)
            x = torch.ones(numel * (world if op == "reduce_scatter" else 1), device="cuda")
            out = None
            if op == "all_gather":
                out = torch.empty(numel * world, device="cuda")
            elif op == "reduce_scatter":
                out = torch.empty(numel, device="cuda")
            elif op in ("alltoall", "sendrecv"):
                out = torch.empty(numel, device="cuda")
            iters = small_iters if size < (1 << 20) else (100 if size < (1 << 24) else 20)
            def run():
                if op == "all_reduce":
                    dist.all_reduce(x)
                elif op == "all_gather":
                    dist.all_gather_into_tensor(out, x)
                elif op == "reduce_scatter":
                    dist.reduce_scatter_tensor(out, x)
                elif op == "broadcast":
                    dist.broadcast(x, 0)
                elif op == "sendrecv":
                    # Grouped point-to-point as nccl-tests' sendrecv: to the next rank, from the
                    # previous (ncclGroupStart, ncclSend, ncclRecv, ncclGroupEnd).
                    pair = [dist.P2POp(dist.isend, x, (rank + 1) % world),
                            dist.P2POp(dist.irecv, out, (rank - 1) % world)]
                    for request in dist.batch_isend_irecv(pair):
                        request.wait()
                else:
                    dist.all_to_all_single(out, x)
            for _ in range(5):
                run()
            torch.cuda.synchronize()
            nbytes = numel * 4 * (world if op in ("all_gather", "reduce_scatter") else 1)
            if BLOCK:
                diffs, sides, mean_diffs = block_pairs(run, toggle, iters)
                if rank == 0:
                    print(json.dumps({"op": op, "bytes": nbytes, "block": BLOCK,
                                      "blk_on": statistics.median(sides[True]) * 1e6,
                                      "blk_off": statistics.median(sides[False]) * 1e6,
                                      "blk_diffs": [round(d * 1e6, 4) for d in diffs],
                                      "blk_mean_diffs": [round(d * 1e6, 4) for d in mean_diffs]}), flush=True)
                continue
            # The best of several windows: a window that met a hiccup (another process, a clock
            # change) says nothing about the per-call cost.
            times = {True: [], False: []}  # events on / off (toggle only)
            self_sum = [0] * (2 * len(SELF_SPANS) + 1)  # over the "on" windows
            for w in range(WINDOWS * (2 if toggle else 1)):
                on = w % 2 == 0
                if toggle:
                    toggle(on)
                dist.barrier()
                torch.cuda.synchronize()
                self_before = read_self() if read_self and (on or not toggle) else None
                start = time.perf_counter()
                for _ in range(iters):
                    run()
                torch.cuda.synchronize()
                times[on or not toggle].append((time.perf_counter() - start) / iters)
                if self_before is not None:
                    self_after = read_self()
                    for i in range(len(self_sum) - 1):
                        self_sum[i] += self_after[i] - self_before[i]
                    self_sum[-1] = self_after[-1]
            if toggle:
                toggle(True)
            sec = min(times[True])
            factor = factors[op]
            if rank == 0:
                row = {"op": op, "bytes": nbytes, "us": sec * 1e6, "busbw": nbytes / sec / 1e9 * factor}
                if toggle:
                    row.update(us_off=min(times[False]) * 1e6, med_on=statistics.median(times[True]) * 1e6,
                               med_off=statistics.median(times[False]) * 1e6,
                               win_on=[round(t * 1e6, 4) for t in times[True]],
                               win_off=[round(t * 1e6, 4) for t in times[False]])
                if read_self:
                    calls = iters * len(times[True])
                    n = len(SELF_SPANS)
                    ns_per_tick = self_sum[-1] / 2**32
                    row["self_ns"] = {name: round(self_sum[i] * ns_per_tick / calls, 2)
                                      for i, name in enumerate(SELF_SPANS)}
                    row["self_calls"] = {name: round(self_sum[n + i] / calls, 3) for i, name in enumerate(SELF_SPANS)}
                print(json.dumps(row), flush=True)
        size *= 4
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

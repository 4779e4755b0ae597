// The trace window in the shim (docs/capture.md): NCCLSHIM_TRACE_START and its limits read once,
// the record hook moved between its closed and open window states (record_hook.h) as the window
// (trace/capture_window.h) decides call by call, SIGUSR2 and a watcher thread for the operator's
// start and stop, and the exported iteration mark ncclshimMarkStep().
#pragma once

#include <cstdint>

namespace nshim {

// Once, while the record hook decides its state with the trace on: true when NCCLSHIM_TRACE_START
// asks for a window (the hook then starts closed). A value it cannot read is said on stderr, and
// the window never opens (communicator events only): a job that asked for a window never
// records everything by mistake.
bool setUpTraceWindow() noexcept;

// A collective, point-to-point (traceOp < kGroupStart) or group call while a window is set, before
// it runs: whether it is recorded. Moves the hook between the window's states.
bool windowRecordsCall(int16_t traceOp, const void* comm, uint64_t count, int32_t datatype, int32_t root,
                       int32_t peer) noexcept;

}  // namespace nshim

// The job's iteration mark, exported (C, no arguments; Python: ctypes, docs/capture.md): call it
// once per training step, at the same point of every step, on every rank. Writes a `step` line
// while recording (FORMAT.md), and with a window set the window opens and closes at marks.
// Returns the iteration this mark starts: the number of marks made so far in the process.
extern "C" __attribute__((visibility("default"))) int64_t ncclshimMarkStep(void) noexcept;

// GPU timing of forwarded NCCL operations (NCCLSHIM_GPU_TIMING=1): CUDA driver events recorded on
// the operation's stream before and after the real call; a background thread waits for them, turns
// them into CLOCK_MONOTONIC times (through a reference event synchronised once per CUDA context) and
// only then hands the call to the record hook. Streams being captured into a CUDA graph are not
// timed and are marked. libcuda is used only if the process has already loaded it (RTLD_NOLOAD).
#pragma once

#include "libshim/api_record.h"

namespace nshim {

struct GpuSpan {
  void* start = nullptr;    // CUevent
  void* end = nullptr;      // CUevent
  void* context = nullptr;  // CUcontext the events belong to
  bool captured = false;    // the stream was being captured: not timed
};

// NCCLSHIM_GPU_TIMING=1 and a CUDA driver in the process (decided once).
bool gpuTimingEnabled() noexcept;
// Before the real call: the start event (or the capture mark).
GpuSpan gpuSpanBegin(void* stream) noexcept;
// After the real call: the end event; the call is recorded by the timing thread once the events
// completed. Returns false when nothing was timed: the caller records the call itself.
bool gpuSpanFinish(GpuSpan& span, void* stream, const ApiCall& call) noexcept;
// Waits (up to a few seconds) until every pending timed call has been recorded.
void gpuTimerDrain() noexcept;

}  // namespace nshim

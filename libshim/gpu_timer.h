// GPU timing of forwarded NCCL operations (NCCLSHIM_GPU_TIMING=1): CUDA driver events recorded on
// the operation's stream before and after the real call; a background thread waits for them, turns
// them into CLOCK_MONOTONIC times (through a reference event synchronised once per CUDA context) and
// only then hands the call to the record hook. Streams being captured into a CUDA graph are not
// timed and are marked. libcuda is used only if the process has already loaded it (RTLD_NOLOAD).
#pragma once

#include <atomic>

#include "libshim/api_record.h"

namespace nshim {

struct GpuSpan {
  void* start = nullptr;    // CUevent
  void* end = nullptr;      // CUevent
  void* context = nullptr;  // CUcontext the events belong to
  bool captured = false;    // the stream was being captured: not timed
};

// NCCLSHIM_GPU_TIMING=1 and a CUDA driver in the process (decided once; then one load from the hot
// data per call).
namespace detail {
extern std::atomic<int> gGpuTiming;  // -1 not decided yet, else 0 / 1
}  // namespace detail
bool gpuTimingEnabledSlow() noexcept;
inline bool gpuTimingEnabled() noexcept {
  const int state = detail::gGpuTiming.load(std::memory_order_acquire);  // a plain load on x86
  return __builtin_expect(state >= 0, 1) ? state != 0 : gpuTimingEnabledSlow();
}
// Before the real call: the start event (or the capture mark).
GpuSpan gpuSpanBegin(void* stream) noexcept;
// After the real call: the end event; the call is recorded by the timing thread once the events
// completed. Returns false when nothing was timed: the caller records the call itself.
bool gpuSpanFinish(GpuSpan& span, void* stream, const ApiCall& call) noexcept;
// A call inside a group (NCCL launches it at the group's end): its span and record are held until
// the outermost ncclGroupEnd of this thread (gpuTimerRecordGroupCall), which records their end events
// after its launch and writes the records in issue order.
void gpuSpanFinishGrouped(const GpuSpan& span, const ApiCall& call) noexcept;
// A ncclGroupStart / ncclGroupEnd record while timing: held with the group's calls, in order; the
// outermost end (outermostEnd) records their end events, then writes them and itself in issue order.
// With call == nullptr and outermostEnd, only the held calls (a group end recorded elsewhere).
void gpuTimerRecordGroupCall(const ApiCall* call, bool outermostEnd) noexcept;
// Waits (up to a few seconds) until every pending timed call has been recorded.
void gpuTimerDrain() noexcept;

}  // namespace nshim

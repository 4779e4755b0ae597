// A diagnostic build's own account of where a recorded call spends its time, measured inside the
// job (tests/gpu/torch_busbw.py BUSBW_SELF_TIME=1): built with -DNSHIM_SELF_TIME=1, the API frame
// and the profiler plugin add the TSC ticks of a few spans of the recording path to the calling
// thread's counters, which the exported ncclshimSelfTime() reads. What the end-to-end tables
// (tests/gpu/plugin_toggle.sh) cannot say is whether a call's added time is spent in the
// recording's own instructions and misses or around them (the writer thread, what the job finds
// evicted afterwards): the spans say the first. In a normal build the macros are empty.
#pragma once

#include <cstdint>

#include "common/tsc_clock.h"

namespace nshim {

enum class SelfTimeSpan : int {
  kFrameBefore = 0,  // the frame, from the hook's decision to the backend call (describe, comm, clock)
  kFrameAfter,       // the frame, from the backend's return to its own (the record's push)
  kBackend,          // the backend call itself (NCCL, with the plugin's callbacks inside)
  kPluginStart,      // the profiler plugin's startEvent
  kPluginStop,       // and its stopEvent
  kBeginCall,        // inside kFrameBefore: the communicator's state, sequence number and start time
  kCommSeq,          // inside kBeginCall: taking the sequence number
  kPush,             // inside kFrameAfter: the recorder's push of the call's records
  kOrderNumber,      // inside kPush: the records' merge key (their end time: a store)
  kEmpty,            // a span with nothing in it: what timing a span costs by itself
  kCount
};

struct SelfTimeCounters {
  uint64_t ticks[static_cast<int>(SelfTimeSpan::kCount)];
  uint64_t calls[static_cast<int>(SelfTimeSpan::kCount)];
};

// Each variant in its own inline namespace: a program that mixes the two (the unit tests, whose
// self_time_test.cc turns the spans on) has two sets of names, not two definitions of one.
#if defined(NSHIM_SELF_TIME) && NSHIM_SELF_TIME
inline namespace self_timed {
inline constexpr bool kSelfTime = true;
__attribute__((tls_model("initial-exec"))) inline constinit thread_local SelfTimeCounters tSelfTime{};
inline void addSelfTime(SelfTimeSpan span, uint64_t since) noexcept {
  const int i = static_cast<int>(span);
  tSelfTime.ticks[i] += readTsc() - since;
  ++tSelfTime.calls[i];
}
inline uint64_t selfTimeMark() noexcept { return readTsc(); }
// Times kEmpty once per call of the frame: the cost of one span's own two TSC reads.
inline void addEmptySpan() noexcept { addSelfTime(SelfTimeSpan::kEmpty, selfTimeMark()); }
}  // namespace self_timed
#else
inline namespace untimed {
inline constexpr bool kSelfTime = false;
inline void addSelfTime(SelfTimeSpan, uint64_t) noexcept {}
inline uint64_t selfTimeMark() noexcept { return 0; }
inline void addEmptySpan() noexcept {}
}  // namespace untimed
#endif

}  // namespace nshim

// Where the recording hot path's globals and code go. A recorded call (the API frame, the trace
// recorder's push, the profiler plugin's callbacks) runs after the job has cooled the caches and
// the TLB; on a VM each page it touches can cost a two-level page walk. The flags and pointers
// every such call reads (NSHIM_HOT_DATA) share one section, which the linker keeps in one piece,
// so they sit on one or two pages instead of one page per library; the functions of the path
// (NSHIM_HOT_CODE: GCC's `hot`, placed in .text.hot) are likewise next to each other instead of
// spread over 2 MB of code. docs/profiler_plugin.md, "third pass", has the measurements.
#pragma once

#define NSHIM_HOT_DATA __attribute__((section("nshim_hot_data")))
#define NSHIM_HOT_CODE __attribute__((hot))
// The hot code a recorded call runs only after NCCL has been called (the profiler plugin's
// callbacks, the record's push), in a section of its own that prefetchLateHotCode() asks into
// the L2 cache at the call's start, so that its instruction misses overlap each other and NCCL's
// work instead of coming one by one after it (docs/profiler_plugin.md, "fifth pass").
#define NSHIM_LATE_HOT_CODE __attribute__((hot, section("nshim_late_hot_text")))

// The linker's bounds of that section (weak: a program without it has none).
extern "C" const char __start_nshim_late_hot_text[] __attribute__((weak, visibility("hidden")));
extern "C" const char __stop_nshim_late_hot_text[] __attribute__((weak, visibility("hidden")));

namespace nshim {
// A hint: one prefetch (to L2) per 128 bytes of the late hot code (the L2's pair prefetcher takes
// the other line of each pair). Never faults.
inline void prefetchLateHotCode() noexcept {
  const char* at = __start_nshim_late_hot_text;
  const char* end = __stop_nshim_late_hot_text;
  if (at == nullptr) return;
  for (; at < end; at += 128) {
#if defined(__x86_64__)
    asm volatile("prefetcht1 %0" : : "m"(*at));  // a volatile asm: the compiler keeps the loop
#else
    __builtin_prefetch(at, 0, 2);
#endif
  }
}
}  // namespace nshim

// A cheaper CLOCK_MONOTONIC for the recording hot path (the API frame's call times, the profiler
// plugin's task times): the CPU's time-stamp counter read with one instruction and scaled by a
// line fitted to clock_gettime readings, which one background thread (the trace writer, every few
// milliseconds) keeps refreshing. clock_gettime itself goes through libstdc++, libc and the vDSO's
// code and data pages: on a job's cold caches and TLB (a VM's two-level page walks) that is several
// page walks per call, where rdtsc touches no memory (docs/profiler_plugin.md, "third pass").
// The line is continuous: each refresh starts the new line where the old one is at the switch,
// and lets its slope absorb the difference to clock_gettime over the next ~10 ms, so stamps do not
// step back and stay within about a microsecond of CLOCK_MONOTONIC (a line over 1 ms behind jumps
// forward; one over 1 ms ahead runs at half speed until the clock catches up). A stamp taken
// during the switch waits the few instructions for the new line.
// Used only on x86 where the kernel itself keeps time with the TSC (clocksource `tsc`, invariant
// TSC) and NCCLSHIM_TSC_CLOCK is not 0; until the second refresh, or otherwise, tscNowNs() is
// nowNs().
#pragma once

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <atomic>
#include <cstdint>

#include "common/clock.h"

namespace nshim {

#if defined(__x86_64__)
inline uint64_t readTsc() noexcept { return __rdtsc(); }
#else
inline uint64_t readTsc() noexcept { return 0; }  // never a line here: refreshTscClock builds none
#endif

namespace detail {
struct alignas(64) TscLine {         // its own cache line: a refresh does not invalidate its neighbours
  std::atomic<uint32_t> version{0};  // 0: no line (use nowNs); odd: being written
  std::atomic<uint64_t> tscBase{0};
  std::atomic<int64_t> nsBase{0};
  std::atomic<uint64_t> nsPerTick32{0};  // ns per tick, 32.32 fixed point
};
extern TscLine gTscLine;
}  // namespace detail

// The line's value now into *out; false when there is no line or it changed meanwhile.
[[gnu::always_inline]] inline bool readTscLine(int64_t* out) noexcept {
  using detail::gTscLine;
  const uint32_t version = gTscLine.version.load(std::memory_order_acquire);
  if (__builtin_expect(version == 0 || (version & 1) != 0, 0)) return false;
  const uint64_t tsc = readTsc();
  const uint64_t base = gTscLine.tscBase.load(std::memory_order_relaxed);
  const int64_t ns = gTscLine.nsBase.load(std::memory_order_relaxed);
  const uint64_t slope = gTscLine.nsPerTick32.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (__builtin_expect(gTscLine.version.load(std::memory_order_relaxed) != version, 0)) return false;
  // Signed: another CPU's counter may be a few ticks behind the base.
  const auto ticks = static_cast<__int128>(static_cast<int64_t>(tsc - base));
  *out = ns + static_cast<int64_t>((ticks * static_cast<__int128>(slope)) >> 32);
  return true;
}

int64_t tscNowNsSlow() noexcept;

// CLOCK_MONOTONIC in ns, from the TSC when the line exists.
[[gnu::always_inline]] inline int64_t tscNowNs() noexcept {
  int64_t now;
  if (__builtin_expect(readTscLine(&now), 1)) return now;
  return tscNowNsSlow();
}

// Whether the kernel's clocksource is the TSC (/sys/devices/system/clocksource).
bool kernelClockIsTsc();

// Fits the line to a new clock_gettime reading. Cheap enough for a background thread every
// millisecond or so; concurrent callers are serialised (one refreshes, the others return).
void refreshTscClock() noexcept;

}  // namespace nshim

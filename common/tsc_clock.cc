// The refresh of the TSC clock's line (tsc_clock.h): whether the TSC may be used, the slope measured
// against clock_gettime over a long baseline, and each new line started where the old one is.
#include "common/tsc_clock.h"

#include <pthread.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdio>
#include <cstring>

#include "common/hot_section.h"
#include "common/settings.h"

namespace nshim {
namespace detail {
NSHIM_HOT_DATA TscLine gTscLine;
}  // namespace detail

namespace {

constexpr int64_t kMinBaselineNs = 2'000'000;      // no slope from less than 2 ms of readings
constexpr int64_t kMaxBaselineNs = 1'000'000'000;  // the slope follows the clock's rate over ~1 s
constexpr int64_t kResetNs = 1'000'000;            // a line this far off is started again

// The kernel keeps CLOCK_MONOTONIC with the TSC (so it found the counters synchronised and
// stable) and the CPU says its TSC is invariant; NCCLSHIM_TSC_CLOCK=0 turns the TSC clock off.
bool tscUsable() {
  try {
    if (!settingBool(Setting::NCCLSHIM_TSC_CLOCK)) return false;
  } catch (...) { return false; }
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000007, &a, &b, &c, &d) == 0 || (d & (1u << 8)) == 0) return false;
  return kernelClockIsTsc();
#else
  return false;
#endif
}

struct Reading {
  uint64_t tsc;
  int64_t ns;
};

// clock_gettime between two counter reads: the tightest of three tries, at the middle.
Reading readPair() {
  Reading best{0, 0};
  uint64_t bestWidth = UINT64_MAX;
  for (int i = 0; i < 3; ++i) {
    const uint64_t before = readTsc();
    const int64_t ns = nowNs();
    const uint64_t after = readTsc();
    if (after >= before && after - before < bestWidth) {
      bestWidth = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}

// The refresher's own state: only the thread holding gBusy touches it.
std::atomic<bool> gBusy{false};
int gUsable = -1;  // -1: not checked yet
bool gHaveAnchor = false;
Reading gAnchor{0, 0};   // the reading the slope is measured from
int64_t gCheckedNs = 0;  // when the kernel's clocksource was last read
constexpr int64_t kClocksourceCheckNs = 1'000'000'000;

// No line: every stamp is clock_gettime's until two refreshes build one again.
void dropLine() {
  detail::gTscLine.version.store(0, std::memory_order_release);
  gHaveAnchor = false;
}

// A forked child has no refresher thread (the trace writer is started again in it): its stamps
// come from clock_gettime until its own writer refits the line; a refresh the fork interrupted
// is forgotten.
void forgetInChild() {
  gBusy.store(false, std::memory_order_relaxed);
  dropLine();
}
[[maybe_unused]] const int gAtFork = pthread_atfork(nullptr, nullptr, forgetInChild);

// Where the current line is at `tsc` (only the refresher writes the line, so no version check).
int64_t lineAt(uint64_t tsc) {
  const auto& line = detail::gTscLine;
  const auto ticks = static_cast<__int128>(static_cast<int64_t>(tsc - line.tscBase.load(std::memory_order_relaxed)));
  return line.nsBase.load(std::memory_order_relaxed) +
         static_cast<int64_t>((ticks * line.nsPerTick32.load(std::memory_order_relaxed)) >> 32);
}

// A new line with `slope`, from (tscBase, nsBase), or, with `continuing`, from where the current
// line is at the moment of the switch: read after readers have been told to fall back (odd
// version), so a stamp taken with the old line is never later than the new line's start, however
// long this thread was descheduled since its clock reading.
void publish(uint64_t tscBase, int64_t nsBase, uint64_t slope, bool continuing) {
  auto& line = detail::gTscLine;
  const uint32_t version = line.version.load(std::memory_order_relaxed);
  line.version.store(version + 1, std::memory_order_relaxed);  // odd: readers fall back meanwhile
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (continuing) {
    tscBase = readTsc();
    nsBase = lineAt(tscBase);
  }
  line.tscBase.store(tscBase, std::memory_order_relaxed);
  line.nsBase.store(nsBase, std::memory_order_relaxed);
  line.nsPerTick32.store(slope, std::memory_order_relaxed);
  line.version.store(version + 2, std::memory_order_release);
}

void refreshLocked() {
  const Reading now = readPair();
  if (!gHaveAnchor) {
    gAnchor = now;
    gHaveAnchor = true;
    return;
  }
  const int64_t spanNs = now.ns - gAnchor.ns;
  if (spanNs < kMinBaselineNs || now.tsc <= gAnchor.tsc) return;
  const uint64_t ticks = now.tsc - gAnchor.tsc;
  const auto measured = static_cast<uint64_t>((static_cast<unsigned __int128>(spanNs) << 32) / ticks);
  if (spanNs > kMaxBaselineNs) gAnchor = now;
  if (detail::gTscLine.version.load(std::memory_order_relaxed) == 0) {
    publish(now.tsc, now.ns, measured, false);
    return;
  }
  const int64_t error = now.ns - lineAt(now.tsc);  // > 0: the line is behind the clock
  if (error > kResetNs) {                          // far behind: jump forward to the clock
    publish(now.tsc, now.ns, measured, false);
    return;
  }
  if (error < -kResetNs) {  // far ahead: never back; run at half speed until the clock catches up
    publish(0, 0, measured / 2, true);
    return;
  }
  // Go on from where the line is; the slope takes the error back over about 10 ms of ticks, and
  // never moves more than 1/1000 from the measured one.
  const int64_t ticksPer10ms = static_cast<int64_t>((static_cast<unsigned __int128>(10'000'000) << 32) / measured);
  __int128 correction = (static_cast<__int128>(error) << 32) / (ticksPer10ms > 0 ? ticksPer10ms : 1);
  const auto limit = static_cast<__int128>(measured / 1000);
  if (correction > limit) correction = limit;
  if (correction < -limit) correction = -limit;
  publish(0, 0, static_cast<uint64_t>(static_cast<__int128>(measured) + correction), true);
}

}  // namespace

// No line yet: clock_gettime. A line being replaced (a window of a few instructions): the stamp
// waits up to 8,000 ticks (2 - 8 us) for the new one rather than mixing in
// clock_gettime, which may lie a little behind the line; only a refresher descheduled inside that
// window makes it fall back, and then the stamp may be up to the line's error (normally well
// under a microsecond) earlier than the one before.
int64_t tscNowNsSlow() noexcept {
  const uint64_t waitUntil = readTsc() + 2'000 * 4;
  while (detail::gTscLine.version.load(std::memory_order_acquire) != 0) {
    int64_t now;
    if (readTscLine(&now)) return now;
    if (readTsc() > waitUntil) break;
#if defined(__x86_64__)
    _mm_pause();
#endif
  }
  return nowNs();
}

bool kernelClockIsTsc() {
  FILE* file = std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  if (file == nullptr) return false;
  char name[32] = {};
  const bool read = std::fgets(name, sizeof(name), file) != nullptr;
  std::fclose(file);
  return read && std::strcmp(name, "tsc\n") == 0;
}

void refreshTscClock() noexcept {
  if (gBusy.exchange(true, std::memory_order_acquire)) return;
  if (gUsable < 0) {
    gUsable = tscUsable() ? 1 : 0;
    gCheckedNs = nowNs();
  }
  if (gUsable == 1 && nowNs() - gCheckedNs > kClocksourceCheckNs) {
    // The kernel may give up the TSC later (a VM's TSC found unstable): then so does the line.
    gCheckedNs = nowNs();
    if (!kernelClockIsTsc()) {
      gUsable = 0;
      dropLine();
    }
  }
  if (gUsable == 1) refreshLocked();
  gBusy.store(false, std::memory_order_release);
}

}  // namespace nshim

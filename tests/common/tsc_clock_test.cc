// The TSC clock (common/tsc_clock.h): where the kernel keeps time with the TSC, a line exists after
// two refreshes a few ms apart, stays within a few microseconds of clock_gettime while refreshed,
// and never steps back, also across refreshes made by another thread; elsewhere it is clock_gettime.
// A forked child starts from clock_gettime and refits its own line.
#include "common/tsc_clock.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "tests/catch.h"

namespace {

// Where the clock builds a line: the kernel keeps time with the TSC and the CPU calls it invariant.
bool expectLine() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  const bool invariant = __get_cpuid(0x80000007, &a, &b, &c, &d) != 0 && (d & (1u << 8)) != 0;
#else
  const bool invariant = false;
#endif
  const char* setting = std::getenv("NCCLSHIM_TSC_CLOCK");
  const bool off = setting != nullptr && std::atoi(setting) == 0;
  return !off && invariant && nshim::kernelClockIsTsc();
}

void refreshFor(int times) {
  for (int i = 0; i < times; ++i) {
    nshim::refreshTscClock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

TEST_CASE("tsc clock: follows clock_gettime within microseconds, or is clock_gettime", "[common]") {
  refreshFor(5);  // at least 2 ms between the first two readings
  const bool line = nshim::detail::gTscLine.version.load() != 0;
  INFO("clocksource tsc: " << nshim::kernelClockIsTsc() << ", line: " << line);
  CHECK(line == expectLine());
  int64_t worst = 0;
  for (int i = 0; i < 50; ++i) {
    refreshFor(1);
    const int64_t before = nshim::nowNs();
    const int64_t stamp = nshim::tscNowNs();
    const int64_t after = nshim::nowNs();
    // Inside [before, after] up to the line's error.
    const int64_t off = stamp < before ? before - stamp : (stamp > after ? stamp - after : 0);
    worst = std::max(worst, off);
  }
  INFO("worst distance from clock_gettime: " << worst << " ns");
  CHECK(worst < (line ? 20'000 : 1));
}

TEST_CASE("tsc clock: stamps never step back while another thread refreshes the line", "[common]") {
  refreshFor(3);
  std::atomic<bool> stop{false};
  std::thread refresher([&] {
    while (!stop.load()) refreshFor(1);
  });
  int64_t last = nshim::tscNowNs();
  int64_t backwards = 0;
  const int64_t until = nshim::nowNs() + 50'000'000;
  uint64_t reads = 0;
  while (nshim::nowNs() < until) {
    for (int i = 0; i < 1000; ++i, ++reads) {
      const int64_t stamp = nshim::tscNowNs();
      if (stamp < last) ++backwards;
      last = stamp;
    }
  }
  stop = true;
  refresher.join();
  INFO(reads << " reads over 50 ms of refreshes");
  CHECK(backwards == 0);
  CHECK(reads > 1000);
}

TEST_CASE("tsc clock: a forked child starts without a line and builds its own", "[common]") {
  refreshFor(3);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const bool noLine = nshim::detail::gTscLine.version.load() == 0;
    const int64_t before = nshim::nowNs();
    const int64_t stamp = nshim::tscNowNs();
    const int64_t after = nshim::nowNs();
    refreshFor(5);  // the refresher works in the child (no refresh was left half done)
    const bool rebuilt = (nshim::detail::gTscLine.version.load() != 0) == expectLine();
    _exit(noLine && stamp >= before && stamp <= after && rebuilt ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

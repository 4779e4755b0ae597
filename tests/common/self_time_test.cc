// The diagnostic spans (common/self_time.h) as a -DNSHIM_SELF_TIME=1 build compiles them: each
// span adds its ticks and one call to the thread's counters, a mark reads the TSC, and other
// threads keep their own counters. (The normal build's macros are empty: libshim's exported
// ncclshimSelfTime then answers -1, which tests/gpu/torch_busbw.py reports.)
#define NSHIM_SELF_TIME 1
#include "common/self_time.h"

#include <thread>

#include "tests/catch.h"

namespace nshim {
namespace {

constexpr int index(SelfTimeSpan span) { return static_cast<int>(span); }

TEST_CASE("self-time spans add their ticks and calls to the calling thread's counters", "[common]") {
  REQUIRE(kSelfTime);
  tSelfTime = SelfTimeCounters{};
  const uint64_t start = selfTimeMark();
  volatile uint64_t sink = 0;
  for (int i = 0; i < 100000; ++i) sink = sink + uint64_t(i);
  addSelfTime(SelfTimeSpan::kPush, start);
  addSelfTime(SelfTimeSpan::kPush, selfTimeMark());
  addEmptySpan();
#if defined(__x86_64__)
  CHECK(tSelfTime.ticks[index(SelfTimeSpan::kPush)] > 0);  // the loop took time on the TSC
#endif
  CHECK(tSelfTime.calls[index(SelfTimeSpan::kPush)] == 2);
  CHECK(tSelfTime.calls[index(SelfTimeSpan::kEmpty)] == 1);
  CHECK(tSelfTime.calls[index(SelfTimeSpan::kFrameBefore)] == 0);
  uint64_t otherCalls = 99;
  std::thread other([&] {
    addSelfTime(SelfTimeSpan::kFrameBefore, selfTimeMark());
    otherCalls = tSelfTime.calls[index(SelfTimeSpan::kPush)];
  });
  other.join();
  CHECK(otherCalls == 0);
  CHECK(tSelfTime.calls[index(SelfTimeSpan::kFrameBefore)] == 0);
}

}  // namespace
}  // namespace nshim

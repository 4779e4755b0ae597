// Timeline figures against a hand computation: communication time is the sum of the ops' times,
// busy time their union, exposed time the span less the recorded idle time (the capture's own:
// its busy time), and overlapping pairs count ops of different communicators in flight at once.
#include <vector>

#include "tests/catch.h"
#include "workload/timeline_figures.h"

namespace nshim::workload {
namespace {

constexpr uint64_t kW = 1, kS = 2;

OpInterval us(int64_t start, int64_t end, uint64_t comm) { return {start * 1000, end * 1000, comm}; }

TEST_CASE("timeline figures of a capture equal a hand computation", "[workload]") {
  // Two iterations of W [0,2000], S [500,800], W [2500,2900] (us), the second 4000 us later.
  const std::vector<OpInterval> ops = {us(0, 2000, kW),    us(500, 800, kS),   us(2500, 2900, kW),
                                       us(4000, 6000, kW), us(4500, 4800, kS), us(6500, 6900, kW)};
  const TimelineFigures f = timelineFigures(ops);
  CHECK(f.ops == 6);
  CHECK(f.commUs == Approx(2 * (2000 + 300 + 400)));
  CHECK(f.busyUs == Approx(2 * (2000 + 400)));
  CHECK(f.spanUs == Approx(6900));
  CHECK(f.idleUs == Approx(6900 - 4800));
  CHECK(f.exposedUs == Approx(4800));
  CHECK(f.overlapPairs == 2);
}

TEST_CASE("a replay's exposed time is its span less the capture's idle time", "[workload]") {
  // The capture above was idle 2100 us; a replay whose W ops took 3000 us spans 8000 us.
  const std::vector<OpInterval> replay = {us(0, 3000, kW),    us(500, 700, kS),   us(3100, 3400, kW),
                                          us(4000, 7000, kW), us(4500, 4700, kS), us(7500, 8000, kW)};
  const TimelineFigures f = timelineFigures(replay, 2100);
  CHECK(f.commUs == Approx(3000 + 200 + 300 + 3000 + 200 + 500));
  CHECK(f.exposedUs == Approx(8000 - 2100));
  CHECK(f.overlapPairs == 2);
  // Ops of one communicator never count as overlapping pairs; ops that only touch do not overlap.
  const std::vector<OpInterval> serial = {us(0, 100, kW), us(50, 150, kW), us(150, 200, kS)};
  CHECK(timelineFigures(serial).overlapPairs == 0);
  CHECK(timelineFigures(serial).busyUs == Approx(200));
  CHECK(timelineFigures(std::vector<OpInterval>{}).ops == 0);
}

TEST_CASE("a rank's captured GPU timeline needs every op GPU-timed", "[workload]") {
  std::vector<WorkOp> ops(2);
  ops[0].recordedClock = ops[1].recordedClock = RecordedClock::kGpu;
  ops[0].issueNs = 0, ops[0].recordedNs = 2000;
  ops[1].issueNs = 500, ops[1].recordedNs = 300;
  std::vector<OpInterval> out;
  REQUIRE(capturedGpuTimeline(ops, &out));
  REQUIRE(out.size() == 2);
  CHECK(out[1].startNs == 500);
  CHECK(out[1].endNs == 800);
  ops[1].recordedClock = RecordedClock::kCpuCall;
  CHECK_FALSE(capturedGpuTimeline(ops, &out));
  CHECK(out.empty());
}

}  // namespace
}  // namespace nshim::workload

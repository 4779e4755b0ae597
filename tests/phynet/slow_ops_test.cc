// Ops far slower than their like (phynet/slow_ops.h): found against their class's median, named
// with the hosts their members sit on, slowest first; a class too small or a spread within the
// factor finds none.
#include "phynet/slow_ops.h"
#include "phynet/report.h"
#include "tests/catch.h"

namespace nshim::phynet {
namespace {

OpRow row(const std::string& op, uint64_t comm, uint64_t bytes, double timeUs, const std::string& ranks = "") {
  OpRow r;
  r.op = op;
  r.label = "dp";
  r.commId = comm;
  r.bytes = bytes;
  r.timeUs = timeUs;
  r.ranks = ranks;
  return r;
}

TEST_CASE("slow ops: far over their class's median, with the hosts of their members", "[phynet]") {
  Workload w;
  w.worldSize = 4;
  w.comms = {{7, {0, 1, 2, 3}, "dp"}};
  w.indexComms();
  std::vector<RankEndpoint> endpoints(4);
  for (int g = 0; g < 4; ++g) endpoints[g].hostId = endpoints[g].hostName = g < 2 ? "hostA" : "hostB";
  std::vector<OpRow> rows;
  for (int i = 0; i < 10; ++i) rows.push_back(row("allreduce", 7, 1 << 20, 500 + i));
  rows[3].timeUs = 120'000;                              // 100 ms down
  rows[6].timeUs = 3'000;                                // lossy
  rows.push_back(row("allreduce", 7, 64 << 20, 9'000));  // other class, 2 rows
  rows.push_back(row("allreduce", 7, 64 << 20, 90'000));
  for (int i = 0; i < 4; ++i) rows.push_back(row("sendrecv", 0, 4096, i == 0 ? 5'000 : 100, "1->2"));
  const std::vector<SlowOp> slow = findSlowOps(rows, w, endpoints);
  REQUIRE(slow.size() == 3);
  CHECK(slow[0].row == 3);
  CHECK(slow[0].hosts == "hostA - hostB");
  CHECK(slow[0].medianUs == Approx(507));  // 500..509 with rows 3 and 6 slow: the 6th of 10 sorted
  CHECK(slow[0].factor == Approx(120'000 / 507.0));
  CHECK(slow[1].row == 12);  // the send/recv, 4,900 us over its median: its pair's hosts
  CHECK(slow[1].hosts == "hostA - hostB");
  CHECK(slow[2].row == 6);  // 2,493 us over
  // Within the factor, or under the margin: none.
  for (OpRow& r : rows) r.timeUs = std::min(r.timeUs, 600.0);
  CHECK(findSlowOps(rows, w, endpoints).empty());
  // Without endpoints the ops are still found, without hosts.
  rows[3].timeUs = 120'000;
  const std::vector<SlowOp> bare = findSlowOps(rows, w, {});
  REQUIRE(bare.size() == 1);
  CHECK(bare[0].hosts.empty());
}

}  // namespace
}  // namespace nshim::phynet

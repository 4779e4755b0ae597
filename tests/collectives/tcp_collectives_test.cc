// The collectives over the real TCP transport with ranks as separate processes (2-4 ranks):
// every collective x data type x reduction on counts {0, 1, 7, 1000, (1<<20)+3}, every element
// checked, and the per-peer byte counters against the ring/chain formulas. The test body is the
// shared one (collectives_over_transport.h); this file says how TCP connects.
#include <memory>
#include <vector>

#include "tests/catch.h"
#include "tests/collectives/collectives_over_transport.h"
#include "transport/tcp/tcp_transport.h"

namespace nshim::testing {
namespace {

Result<std::unique_ptr<Transport>> connectOverTcp(const UniqueId& id, int rank, int nranks) {
  TcpOptions tcp;
  tcp.timeoutSeconds = 30;
  return connectTcpTransport(id, rank, nranks, tcp);
}

TEST_CASE("every collective, type and op over TCP between processes", "[collectives][tcp]") {
  int nranks = GENERATE(2, 3, 4);
  // Every reduction on the small counts; on the large count, sum plus one other op per type.
  MatrixShape shape;
  shape.everyOpUpToCount = 1000;
  CollectiveOptions options;
  options.timeoutSeconds = 30;
  runCasesInProcesses(nranks, connectOverTcp, collectiveMatrix(nranks, {0, 1, 7, 1000, (size_t{1} << 20) + 3}, shape),
                      options, false);
}

TEST_CASE("TCP per-peer byte counters equal the formulas", "[collectives][tcp][bytes]") {
  int nranks = GENERATE(2, 3, 4);
  std::vector<CollectiveCase> cases;
  for (Collective collective : kAllCollectives) {
    for (size_t count : {size_t{1000}, (size_t{1} << 20) + 3}) {
      cases.push_back(CollectiveCase{collective, count, DataType::kFloat32, ReduceKind::kSum, nranks - 1, false});
    }
  }
  CollectiveOptions options;
  options.timeoutSeconds = 30;
  options.smallAllReduceBytes = 0;
  runCasesInProcesses(nranks, connectOverTcp, cases, options, true);
}

}  // namespace
}  // namespace nshim::testing

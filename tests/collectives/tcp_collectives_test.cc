// The collectives over the real TCP transport with ranks as separate processes (2-4 ranks):
// every collective x data type x reduction on counts {0, 1, 7, 1000, (1<<20)+3}, every element
// checked, and the per-peer byte counters against the ring/chain formulas.
#include <memory>
#include <vector>

#include "collectives/collectives.h"
#include "tests/catch.h"
#include "tests/collectives/collective_check.h"
#include "tests/test_util.h"
#include "transport/tcp/tcp_transport.h"
#include "transport/bootstrap/unique_id.h"

namespace nshim::testing {
namespace {

// Connects this process as `rank` and runs every case; returns "" or the first failure.
std::string runRankOverTcp(const UniqueId& id, int rank, int nranks, const std::vector<CollectiveCase>& cases,
                           CollectiveOptions options, bool checkBytes) {
  TcpOptions tcp;
  tcp.timeoutSeconds = 30;
  auto transport = connectTcpTransport(id, rank, nranks, tcp);
  if (!transport.ok()) return transport.status().toString();
  Communicator comm(std::move(transport).value(), options);
  for (const CollectiveCase& c : cases) {
    std::vector<PeerBytes> before(nranks);
    for (int peer = 0; peer < nranks; ++peer) before[peer] = peer == rank ? PeerBytes{} : comm.transport().peerBytes(peer);
    std::string error = runAndCheck(comm, c);
    if (!error.empty()) return error;
    if (!checkBytes) continue;
    uint64_t sent = 0;
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer != rank) sent += comm.transport().peerBytes(peer).sent - before[peer].sent;
    }
    uint64_t expected = expectedSentBytes(c, rank, nranks, options.sliceBytes);
    if (sent != expected) {
      return fmt::format("{} count {}: rank {} sent {} payload bytes, formula says {}", collectiveName(c.collective),
                         c.count, rank, sent, expected);
    }
  }
  return "";
}

void runOverTcp(int nranks, const std::vector<CollectiveCase>& cases, CollectiveOptions options, bool checkBytes) {
  auto id = createUniqueId();
  REQUIRE(id.ok());
  UniqueId uid = id.value();
  auto codes = runRanksInProcesses(
      nranks, [&](int rank) { return runRankOverTcp(uid, rank, nranks, cases, options, checkBytes); }, 240);
  for (int rank = 0; rank < nranks; ++rank) {
    INFO("rank " << rank << " of " << nranks << " (its error is printed on stderr above)");
    CHECK(codes[rank] == 0);
  }
}

TEST_CASE("every collective, type and op over TCP between processes", "[collectives][tcp]") {
  int nranks = GENERATE(2, 3, 4);
  std::vector<CollectiveCase> cases;
  int variant = 0;
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}, (size_t{1} << 20) + 3}) {
    for (Collective collective : kAllCollectives) {
      for (int t = 0; t < kNumDataTypes; ++t) {
        // Every reduction on the small counts; on the large count, sum plus one other op per type.
        int kinds = usesReduction(collective) ? kNumReduceKinds : 1;
        for (int k = 0; k < kinds; ++k) {
          if (count > 1000 && k != 0 && k != (t % (kNumReduceKinds - 1)) + 1) continue;
          CollectiveCase c{collective, count, static_cast<DataType>(t), static_cast<ReduceKind>(k)};
          c.root = usesRoot(collective) ? variant % nranks : 0;
          c.inPlace = collective != Collective::kAllToAll && variant % 2 == 1;
          ++variant;
          cases.push_back(c);
        }
      }
    }
  }
  CollectiveOptions options;
  options.timeoutSeconds = 30;
  runOverTcp(nranks, cases, options, false);
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
  runOverTcp(nranks, cases, options, true);
}

}  // namespace
}  // namespace nshim::testing

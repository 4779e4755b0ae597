// The one collective test body (collectives_over_transport.h): the case matrix and its run on
// ranks as processes over any transport.
#include "tests/collectives/collectives_over_transport.h"

#include <fmt/format.h>

#include <string>

#include "collectives/collectives.h"
#include "tests/catch.h"
#include "tests/test_util.h"
#include "transport/bootstrap/bootstrap.h"

namespace nshim::testing {

std::vector<CollectiveCase> collectiveMatrix(int nranks, const std::vector<size_t>& counts, MatrixShape shape) {
  std::vector<CollectiveCase> cases;
  int variant = 0;
  for (size_t count : counts) {
    for (Collective collective : kAllCollectives) {
      int types = shape.everyTypeAndOp ? kNumDataTypes : 1;
      for (int t = 0; t < types; ++t) {
        int kinds = shape.everyTypeAndOp && usesReduction(collective) ? kNumReduceKinds : 1;
        for (int k = 0; k < kinds; ++k) {
          if (count > shape.everyOpUpToCount && k != 0 && k != (t % (kNumReduceKinds - 1)) + 1) continue;
          DataType type = shape.everyTypeAndOp ? static_cast<DataType>(t) : DataType::kFloat32;
          CollectiveCase c{collective, count, type, static_cast<ReduceKind>(k)};
          c.root = usesRoot(collective) ? variant % nranks : 0;
          c.inPlace = collective != Collective::kAllToAll && variant % 2 == 1;
          ++variant;
          cases.push_back(c);
        }
      }
    }
  }
  return cases;
}

namespace {

// Connects this process as `rank` and runs every case; returns "" or the first failure.
std::string runRank(const ConnectTransport& connect, const UniqueId& id, int rank, int nranks,
                    const std::vector<CollectiveCase>& cases, const CollectiveOptions& options, bool checkBytes) {
  auto transport = connect(id, rank, nranks);
  if (!transport.ok()) return transport.status().toString();
  Communicator comm(std::move(transport).value(), options);
  for (const CollectiveCase& c : cases) {
    std::vector<PeerBytes> before(nranks);
    for (int peer = 0; peer < nranks; ++peer)
      before[peer] = peer == rank ? PeerBytes{} : comm.transport().peerBytes(peer);
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

}  // namespace

void runCasesInProcesses(int nranks, const ConnectTransport& connect, const std::vector<CollectiveCase>& cases,
                         const CollectiveOptions& options, bool checkBytes) {
  auto id = createUniqueId();
  REQUIRE(id.ok());
  UniqueId uid = id.value();
  auto codes = runRanksInProcesses(
      nranks, [&](int rank) { return runRank(connect, uid, rank, nranks, cases, options, checkBytes); }, 240);
  for (int rank = 0; rank < nranks; ++rank) {
    INFO("rank " << rank << " of " << nranks << " (its error is printed on stderr above)");
    CHECK(codes[rank] == 0);
  }
}

}  // namespace nshim::testing

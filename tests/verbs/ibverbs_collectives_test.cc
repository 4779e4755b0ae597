// The collectives over the ibverbs transport with ranks as processes on one RDMA device (2-4 ranks,
// rxe0 in the soft-RoCE VM): every collective on counts up to 4 MiB with every element checked and
// the per-rank payload bytes equal to the ring/chain formulas; every data type and reduction on small
// counts. Sized for soft-RoCE under emulation (~40 MB/s): the whole file runs in about a minute.
#include <memory>
#include <vector>

#include "collectives/collectives.h"
#include "tests/collectives/collective_check.h"
#include "tests/test_util.h"
#include "tests/verbs/verbs_test_util.h"
#include "transport/bootstrap/bootstrap.h"

namespace nshim::testing {
namespace {

std::string runRankOverVerbs(const UniqueId& id, int rank, int nranks, const std::vector<CollectiveCase>& cases,
                             CollectiveOptions options, int qpsPerPeer, bool checkBytes) {
  auto transport = connectIbverbsTransport(id, rank, nranks, verbstest::testOptions(qpsPerPeer));
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
      if (peer == rank) continue;
      sent += comm.transport().peerBytes(peer).sent - before[peer].sent;
    }
    uint64_t expected = expectedSentBytes(c, rank, nranks, options.sliceBytes);
    if (sent != expected) {
      return fmt::format("{} count {}: rank {} sent {} payload bytes, formula says {}", collectiveName(c.collective),
                         c.count, rank, sent, expected);
    }
  }
  return "";
}

void runOverVerbs(int nranks, const std::vector<CollectiveCase>& cases, CollectiveOptions options, int qpsPerPeer,
                  bool checkBytes) {
  auto id = createUniqueId();
  REQUIRE(id.ok());
  UniqueId uid = id.value();
  auto codes = runRanksInProcesses(
      nranks, [&](int rank) { return runRankOverVerbs(uid, rank, nranks, cases, options, qpsPerPeer, checkBytes); },
      240);
  for (int rank = 0; rank < nranks; ++rank) {
    INFO("rank " << rank << " of " << nranks << " (its error is printed on stderr above)");
    CHECK(codes[rank] == 0);
  }
}

TEST_CASE("ibverbs: every collective up to 4 MiB, every byte and the byte formulas", "[ibverbs][collectives]") {
  NSHIM_REQUIRE_RDMA();
  for (int nranks : {2, 3, 4}) {
    std::vector<CollectiveCase> cases;
    int variant = 0;
    for (size_t count : {size_t{0}, size_t{7}, size_t{1000}, (size_t{1} << 18) + 3}) {
      for (Collective collective : kAllCollectives) {
        CollectiveCase c{collective, count, DataType::kFloat32, ReduceKind::kSum};
        c.root = usesRoot(collective) ? variant % nranks : 0;
        c.inPlace = collective != Collective::kAllToAll && variant % 2 == 1;
        ++variant;
        cases.push_back(c);
      }
    }
    // A few MB: allreduce of 4 MiB (several slices and ring blocks) and a 2 MiB allgather.
    cases.push_back(CollectiveCase{Collective::kAllReduce, size_t{1} << 20, DataType::kFloat32, ReduceKind::kSum});
    cases.push_back(CollectiveCase{Collective::kAllGather, (size_t{1} << 19) / nranks, DataType::kInt32, ReduceKind::kSum});
    CollectiveOptions options;
    options.timeoutSeconds = 60;
    options.smallAllReduceBytes = 0;  // the ring everywhere, so the byte formulas apply
    INFO("nranks " << nranks);
    runOverVerbs(nranks, cases, options, nranks == 3 ? 2 : 1, true);
  }
}

TEST_CASE("ibverbs: every data type and reduction on small counts", "[ibverbs][collectives]") {
  NSHIM_REQUIRE_RDMA();
  const int nranks = 3;
  std::vector<CollectiveCase> cases;
  int variant = 0;
  for (Collective collective : kAllCollectives) {
    for (int t = 0; t < kNumDataTypes; ++t) {
      int kinds = usesReduction(collective) ? kNumReduceKinds : 1;
      for (int k = 0; k < kinds; ++k) {
        CollectiveCase c{collective, size_t(7 + variant % 3 * 500), static_cast<DataType>(t), static_cast<ReduceKind>(k)};
        c.root = usesRoot(collective) ? variant % nranks : 0;
        c.inPlace = collective != Collective::kAllToAll && variant % 2 == 1;
        ++variant;
        cases.push_back(c);
      }
    }
  }
  CollectiveOptions options;
  options.timeoutSeconds = 60;
  runOverVerbs(nranks, cases, options, 1, false);
}

}  // namespace
}  // namespace nshim::testing

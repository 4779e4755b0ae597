// The collectives over the ibverbs transport with ranks as processes on one RDMA device (2-4 ranks,
// rxe0 in the soft-RoCE VM): every collective on counts up to 4 MiB with every element checked and
// the per-rank payload bytes equal to the ring/chain formulas; every data type and reduction on small
// counts. Sized for soft-RoCE under emulation (~40 MB/s): the whole file runs in about a minute.
// The test body is the shared one (collectives_over_transport.h); this file says how verbs connects.
#include <memory>
#include <vector>

#include "tests/collectives/collectives_over_transport.h"
#include "tests/verbs/verbs_test_util.h"

namespace nshim::testing {
namespace {

// Connects over rxe0 with `qpsPerPeer` queue pairs per peer.
ConnectTransport connectOverVerbs(int qpsPerPeer) {
  return [qpsPerPeer](const UniqueId& id, int rank, int nranks) {
    return connectIbverbsTransport(id, rank, nranks, verbstest::testOptions(qpsPerPeer));
  };
}

TEST_CASE("ibverbs: every collective up to 4 MiB, every byte and the byte formulas", "[ibverbs][collectives]") {
  NSHIM_REQUIRE_RDMA();
  for (int nranks : {2, 3, 4}) {
    MatrixShape floatSum;
    floatSum.everyTypeAndOp = false;
    std::vector<CollectiveCase> cases = collectiveMatrix(nranks, {0, 7, 1000, (size_t{1} << 18) + 3}, floatSum);
    // A few MB: allreduce of 4 MiB (several slices and ring blocks) and a 2 MiB allgather.
    cases.push_back(CollectiveCase{Collective::kAllReduce, size_t{1} << 20, DataType::kFloat32, ReduceKind::kSum});
    cases.push_back(
        CollectiveCase{Collective::kAllGather, (size_t{1} << 19) / nranks, DataType::kInt32, ReduceKind::kSum});
    CollectiveOptions options;
    options.timeoutSeconds = 60;
    options.smallAllReduceBytes = 0;  // the ring everywhere, so the byte formulas apply
    INFO("nranks " << nranks);
    runCasesInProcesses(nranks, connectOverVerbs(nranks == 3 ? 2 : 1), cases, options, true);
  }
}

TEST_CASE("ibverbs: every data type and reduction on small counts", "[ibverbs][collectives]") {
  NSHIM_REQUIRE_RDMA();
  const int nranks = 3;
  // Counts 7, 507 and 1007 in turn.
  std::vector<CollectiveCase> cases = collectiveMatrix(nranks, {7});
  for (size_t i = 0; i < cases.size(); ++i) cases[i].count = 7 + i % 3 * 500;
  CollectiveOptions options;
  options.timeoutSeconds = 60;
  runCasesInProcesses(nranks, connectOverVerbs(1), cases, options, false);
}

}  // namespace
}  // namespace nshim::testing

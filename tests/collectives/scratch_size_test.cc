// The engine's scratch follows the bytes of the reductions run, never more than
// reductionScratchFor(their count in bytes): ring and tree allreduce, ring reduce-scatter and the
// chain reduce of small buffers each ask for a few stages of their buffer, not of a whole slice
// or chunk (phynet sizes each communicator's scratch by this, memory_plan.h).
#include <memory>
#include <vector>

#include "collectives/collectives.h"
#include "tests/catch.h"
#include "tests/collectives/collective_check.h"

namespace nshim::testing {
namespace {

TEST_CASE("a reduction's scratch stays within reductionScratchFor its buffer", "[collectives][scratch]") {
  const Algorithm algorithm = GENERATE(Algorithm::kRing, Algorithm::kTree);
  const Collective collective = GENERATE(Collective::kAllReduce, Collective::kReduceScatter, Collective::kReduce);
  const size_t count = GENERATE(size_t{1}, size_t{3}, size_t{1000});
  CollectiveOptions options;
  options.timeoutSeconds = 20;
  options.algorithm = algorithm;
  options.smallAllReduceBytes = 0;
  auto comms = inProcessCommsOnNodes({0, 1, 2}, options);
  auto errors = runCasesOnRanks(comms, {{collective, count, DataType::kFloat32}});
  const size_t most = reductionScratchFor(options, count * 4);
  INFO("count " << count << ", limit " << most);
  for (size_t rank = 0; rank < comms.size(); ++rank) {
    CHECK(errors[rank] == "");
    CHECK(comms[rank]->scratchBytes() <= most);
  }
  CHECK(most < reductionScratchBound(options) / 100);  // a 16 MiB bound before
}

}  // namespace
}  // namespace nshim::testing

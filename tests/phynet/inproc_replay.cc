// Test helper: one in-process transport set per communicator, one thread per rank.
#include "tests/phynet/inproc_replay.h"

#include <map>
#include <memory>

#include "tests/test_util.h"
#include "transport/inproc/inproc_transport.h"
#include "transport/layered/protocol_framing_transport.h"

namespace nshim::phynet::testing {

InProcessReplay replayInThreads(const Workload& workload, const ReplayConfig& config) {
  return replayInThreads(workload, [&config](int) { return config; });
}

InProcessReplay replayInThreads(const Workload& workload, const std::function<ReplayConfig(int rank)>& configOf) {
  const int world = workload.worldSize;
  std::vector<std::map<uint64_t, std::unique_ptr<Communicator>>> comms(world);
  CollectiveOptions options;
  options.timeoutSeconds = 30;
  for (const CommGroup& c : workload.comms) {
    auto transports = createInProcessTransports(static_cast<int>(c.members.size()));
    for (size_t r = 0; r < c.members.size(); ++r) {
      // As phynet's bootstrap does: each collective moves in its NCCL protocol's lines.
      comms[c.members[r]][c.id] =
          std::make_unique<Communicator>(createProtocolFramingTransport(std::move(transports[r])), options);
    }
  }
  InProcessReplay out;
  out.results.resize(world);
  out.errors = nshim::testing::runRanksInThreads(world, [&](int rank) -> std::string {
    auto result = replayRank(workload, rank, comms[rank], configOf(rank));
    if (!result.ok()) return result.status().message();
    out.results[rank] = std::move(result).value();
    return "";
  });
  return out;
}

}  // namespace nshim::phynet::testing

// Test helper: replays a workload with its ranks as threads of this process, each communicator on
// the in-process transport (no MPI, no sockets).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "phynet/replay.h"
#include "workload/workload.h"

namespace nshim::phynet::testing {

struct InProcessReplay {
  std::vector<RankReplayResult> results;  // per global rank (empty where it failed)
  std::vector<std::string> errors;        // per global rank, "" = success
};

// Every rank of `workload` runs replayRank(config) on its own thread; every wait times out after 30 s.
InProcessReplay replayInThreads(const Workload& workload, const ReplayConfig& config);
// The same with each rank's own configuration (--delay holds some ranks only).
InProcessReplay replayInThreads(const Workload& workload, const std::function<ReplayConfig(int rank)>& configOf);

}  // namespace nshim::phynet::testing

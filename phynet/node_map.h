// Which node each global rank of a replay is on, for --intra-node shm: by default the ranks of one
// host are a node (NCCL groups ranks by host); --gpus-per-node G makes every G consecutive global
// ranks a node, as launchers place them (a replay on fewer, bigger hosts than the job had), and
// then each node's ranks must share a host, since shared memory does not cross hosts.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace nshim::phynet {

// Node index per global rank (nodes numbered in order of their first rank). `hostIds`: each global
// rank's host identity; `gpusPerNode` 0: by host.
Result<std::vector<int>> nodesOfRanks(const std::vector<std::string>& hostIds, int gpusPerNode);

}  // namespace nshim::phynet

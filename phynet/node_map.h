// Which node each global rank of a replay is on (NCCL's nodes: the layout of its trees, and with
// --intra-node shm the ranks that talk over shared memory): by default the ranks of one host are a
// node (NCCL groups ranks by host); --gpus-per-node G makes every G consecutive global ranks a
// node, as launchers place them (a replay on fewer, bigger hosts than the job had). For shared
// memory each node's ranks must share a host, since shared memory does not cross hosts.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace nshim::phynet {

// Node index per global rank (nodes numbered in order of their first rank). `hostIds`: each global
// rank's host identity; `gpusPerNode` 0: by host. `mustShareHost`: refuse a node across hosts.
Result<std::vector<int>> nodesOfRanks(const std::vector<std::string>& hostIds, int gpusPerNode,
                                      bool mustShareHost = true);

}  // namespace nshim::phynet

// Nodes of the ranks (node_map.h).
#include "phynet/node_map.h"

#include <map>

namespace nshim::phynet {

Result<std::vector<int>> nodesOfRanks(const std::vector<std::string>& hostIds, int gpusPerNode, bool mustShareHost) {
  const int world = static_cast<int>(hostIds.size());
  std::vector<int> node(static_cast<size_t>(world));
  if (gpusPerNode <= 0) {
    std::map<std::string, int> index;
    for (int g = 0; g < world; ++g) node[g] = index.emplace(hostIds[g], static_cast<int>(index.size())).first->second;
    return node;
  }
  for (int g = 0; g < world; ++g) {
    node[g] = g / gpusPerNode;
    const int first = node[g] * gpusPerNode;
    if (mustShareHost && hostIds[g] != hostIds[first]) {
      return NS_ERROR(Code::kInvalidArgument,
                      "--gpus-per-node {}: ranks {} and {} form node {} but run on different "
                      "hosts ({} and {}); shared memory does not cross hosts: place {} consecutive ranks per host",
                      gpusPerNode, first, g, node[g], hostIds[first], hostIds[g], gpusPerNode);
    }
  }
  return node;
}

}  // namespace nshim::phynet

// NCCL's PXN routes (pxn_routes.h).
#include "model/pxn_routes.h"

#include <vector>

namespace nshim {
namespace {

// The rank on `node` with local index `local`, or -1.
int rankAt(const NodeLayout& nodes, int node, int local) {
  const std::vector<int>& ranks = nodes.ranksOf(node);
  return local < static_cast<int>(ranks.size()) ? ranks[local] : -1;
}

}  // namespace

bool pxnApplies(const CollectiveOptions& options, const NodeLayout& nodes) {
  return options.pxn && nodes.nodes() > 1 && !nodes.isFlat();
}

int pxnRelayOf(const NodeLayout& nodes, int from, int to) {
  if (nodes.nodeOf(from) == nodes.nodeOf(to)) return to;
  const int relay = rankAt(nodes, nodes.nodeOf(from), nodes.localIndexOf(to));
  return relay < 0 ? from : relay;
}

int pxnFirstHopOf(const NodeLayout& nodes, int from, int to) {
  const int relay = pxnRelayOf(nodes, from, to);
  return relay == from ? to : relay;
}

}  // namespace nshim

// Builds a NodeLayout from per-rank node keys.
#include "collectives/node_layout.h"

#include <cstddef>
#include <map>

namespace nshim {

NodeLayout NodeLayout::flat(int nranks) {
  std::vector<int> keys(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) keys[r] = r;
  return fromKeys(keys);
}

NodeLayout NodeLayout::fromKeys(const std::vector<int>& nodeKeyOfRank) {
  NodeLayout layout;
  std::map<int, int> nodeOfKey;
  for (int key : nodeKeyOfRank) {
    auto [it, added] = nodeOfKey.emplace(key, static_cast<int>(layout.ranksOfNode_.size()));
    if (added) layout.ranksOfNode_.emplace_back();
    const int rank = static_cast<int>(layout.nodeOfRank_.size());
    layout.nodeOfRank_.push_back(it->second);
    layout.localIndex_.push_back(static_cast<int>(layout.ranksOfNode_[it->second].size()));
    layout.ranksOfNode_[it->second].push_back(rank);
  }
  layout.ringPosition_.resize(layout.nodeOfRank_.size());
  for (const std::vector<int>& ranks : layout.ranksOfNode_) {
    for (int rank : ranks) {
      layout.ringPosition_[rank] = static_cast<int>(layout.ringOrder_.size());
      layout.ringOrder_.push_back(rank);
    }
  }
  return layout;
}

}  // namespace nshim

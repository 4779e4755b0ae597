// Builds a NodeLayout from per-rank node keys.
#include "model/node_layout.h"

#include <algorithm>
#include <cstddef>
#include <map>

namespace nshim {

NodeLayout NodeLayout::flat(int nranks) {
  // fromKeys of keys 0..n-1, written out: every list is the identity (no map of keys).
  NodeLayout layout;
  const std::size_t n = static_cast<std::size_t>(std::max(nranks, 0));
  layout.nodeOfRank_.resize(n);
  layout.localIndex_.assign(n, 0);
  layout.ranksOfNode_.resize(n);
  layout.ringOrder_.resize(n);
  layout.ringPosition_.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const int rank = static_cast<int>(r);
    layout.nodeOfRank_[r] = rank;
    layout.ranksOfNode_[r].push_back(rank);
    layout.ringOrder_[r] = rank;
    layout.ringPosition_[r] = rank;
  }
  return layout;
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

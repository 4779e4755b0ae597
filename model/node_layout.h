// Which node each rank of a communicator is on (NCCL groups ranks by host; a node's GPUs talk over
// NVLink, nodes over the network). Nodes are numbered in order of their first rank; each node's
// ranks are kept in communicator-rank order (NCCL's intra-node order for the layouts checked in
// tests/data/nccl_4x2). The algorithms that depend on the layout (the tree) read it from here; a
// communicator built without one is flat: every rank its own node.
#pragma once

#include <vector>

namespace nshim {

class NodeLayout {
 public:
  // Every rank of `nranks` its own node.
  static NodeLayout flat(int nranks);
  // `nodeKeyOfRank[r]`: any value that is equal for ranks of one node (a host index, a global node).
  static NodeLayout fromKeys(const std::vector<int>& nodeKeyOfRank);

  int nranks() const { return static_cast<int>(nodeOfRank_.size()); }
  int nodes() const { return static_cast<int>(ranksOfNode_.size()); }
  int nodeOf(int rank) const { return nodeOfRank_[rank]; }
  // The node's ranks in communicator-rank order, and a rank's index among them.
  const std::vector<int>& ranksOf(int node) const { return ranksOfNode_[node]; }
  int localIndexOf(int rank) const { return localIndex_[rank]; }
  bool isFlat() const { return nodes() == nranks(); }

  // NCCL's ring: node-major (nodes in order of their first rank, each node's ranks in rank order),
  // so that the ring crosses between nodes once per node whatever the placement. For consecutive
  // ranks per node (as launchers place them) it is rank order.
  int ringPosition(int rank) const { return ringPosition_[rank]; }
  int rankAtRingPosition(int position) const { return ringOrder_[position]; }
  int ringNext(int rank) const { return ringOrder_[(ringPosition_[rank] + 1) % nranks()]; }
  int ringPrev(int rank) const { return ringOrder_[(ringPosition_[rank] + nranks() - 1) % nranks()]; }

 private:
  std::vector<int> nodeOfRank_;
  std::vector<int> localIndex_;
  std::vector<std::vector<int>> ranksOfNode_;
  std::vector<int> ringOrder_;     // ring position -> rank
  std::vector<int> ringPosition_;  // rank -> ring position
};

}  // namespace nshim

// NCCL's double binary tree over a node layout (what NCCL prints as `Trees [0] d0/d1/d2->r->up
// [1] ...`): between nodes two binary trees, the second the mirror image of the first (an even
// number of nodes) or the first shifted by one node (odd), so that every node is an inner vertex
// of at most one of them; inside a node a chain through its ranks. The chain's first rank links to
// the parent node; child nodes attach to the chain as NCCL's balanced pattern does (the second
// rank takes the first child, the first rank the second), so with two or more ranks per node the
// traffic to parent and children leaves through different ranks (NICs). Checked against NCCL
// 2.28.9's trees for 4 nodes x 1 and x 2 GPUs (tests/data/nccl_4x*/topology.txt, unit tests).
#pragma once

#include <cstddef>
#include <vector>

#include "model/node_layout.h"

namespace nshim {

// The most children a rank has in one tree: the next rank of its chain and two child nodes.
constexpr size_t kMaxTreeDown = 3;

// One rank's links in one tree: ranks of the communicator; -1 for none.
struct TreeLinks {
  int up = -1;
  std::vector<int> down;  // the next rank of the node's chain first, then child nodes' first ranks
};

// The links of `rank` in tree `tree` (0 or 1).
TreeLinks doubleBinaryTreeLinks(const NodeLayout& layout, int rank, int tree);

// The plain binary tree over `n` vertices rooted at 0 on which both trees are built: vertex v's
// parent, its two children (-1 when absent), and whether v is its parent's first (0) or second (1)
// child. Vertex v's subtree holds the vertices that share v's bits above its lowest set bit.
struct BinaryTreeVertex {
  int up = -1;
  int down0 = -1;
  int down1 = -1;
  int childType = 0;
};
BinaryTreeVertex binaryTreeVertex(int n, int v);

}  // namespace nshim

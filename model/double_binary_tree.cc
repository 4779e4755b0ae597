// NCCL's double binary tree: the bit rules of the plain tree, the mirror/shift of the second tree,
// and the attachment of node links to each node's chain.
#include "model/double_binary_tree.h"

namespace nshim {

BinaryTreeVertex binaryTreeVertex(int n, int v) {
  BinaryTreeVertex out;
  if (v == 0) {  // the root's only child is the largest power of two below n
    int top = 1;
    while (top < n) top <<= 1;
    out.down1 = n > 1 ? top >> 1 : -1;
    return out;
  }
  const int low = v & -v;
  int up = (v ^ low) | (low << 1);  // the vertex one level up that shares v's upper bits
  if (up >= n) up = v ^ low;
  out.up = up;
  out.childType = v < up ? 0 : 1;
  int half = low >> 1;
  if (half == 0) return out;  // odd vertices are leaves
  out.down0 = v - half;
  while (half > 0 && v + half >= n) half >>= 1;  // the right child may be cut off by n
  out.down1 = half > 0 ? v + half : -1;
  return out;
}

namespace {

// The vertex of `node` in tree `tree` over n nodes, with its links mapped back to nodes.
BinaryTreeVertex nodeVertex(int n, int node, int tree) {
  if (tree == 0) return binaryTreeVertex(n, node);
  auto map = [&](int v, bool toTree) {
    if (v < 0) return -1;
    if (n % 2 == 0) return n - 1 - v;               // mirror
    return toTree ? (v - 1 + n) % n : (v + 1) % n;  // shift by one
  };
  BinaryTreeVertex shifted = binaryTreeVertex(n, map(node, true));
  BinaryTreeVertex out = shifted;
  out.up = map(shifted.up, false);
  out.down0 = map(shifted.down0, false);
  out.down1 = map(shifted.down1, false);
  return out;
}

// Where a node's links attach to its chain: the parent link on the first rank; the first child on
// the second rank (the first when alone), the second child on the first rank.
int parentAttach(const NodeLayout& layout, int node) { return layout.ranksOf(node).front(); }
int childAttach(const NodeLayout& layout, int node, int childType) {
  const std::vector<int>& ranks = layout.ranksOf(node);
  return childType == 0 && ranks.size() > 1 ? ranks[1] : ranks[0];
}

}  // namespace

TreeLinks doubleBinaryTreeLinks(const NodeLayout& layout, int rank, int tree) {
  TreeLinks links;
  const int node = layout.nodeOf(rank);
  const std::vector<int>& chain = layout.ranksOf(node);
  const int index = layout.localIndexOf(rank);
  const BinaryTreeVertex vertex = nodeVertex(layout.nodes(), node, tree);
  if (index > 0) {
    links.up = chain[index - 1];
  } else if (vertex.up >= 0) {
    links.up = childAttach(layout, vertex.up, vertex.childType);
  }
  if (index + 1 < static_cast<int>(chain.size())) links.down.push_back(chain[index + 1]);
  if (vertex.down0 >= 0 && childAttach(layout, node, 0) == rank)
    links.down.push_back(parentAttach(layout, vertex.down0));
  if (vertex.down1 >= 0 && childAttach(layout, node, 1) == rank)
    links.down.push_back(parentAttach(layout, vertex.down1));
  return links;
}

}  // namespace nshim

// NCCL's double binary tree: the links of every rank equal the trees NCCL 2.28.9 printed for 4
// nodes x 1 and x 2 GPUs (tests/data/nccl_4x*/topology.txt, `Trees [0] d/d/d->r->up [1] ...`), and
// for 1..70 nodes x 1..3 ranks both trees span every rank with consistent links, and for an even
// number of nodes no node is an inner vertex of both trees (each node's traffic is spread over two).
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "model/double_binary_tree.h"
#include "tests/catch.h"

namespace nshim::testing {
namespace {

struct NcclTree {
  int up;
  std::set<int> down;
};

// rank -> [tree 0, tree 1] from the first run's `Trees` lines of a topology.txt.
std::map<int, std::vector<NcclTree>> ncclTrees(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::map<int, std::vector<NcclTree>> trees;
  const std::regex one(R"(\[(\d)\] (-?\d+)/(-?\d+)/(-?\d+)->(\d+)->(-?\d+))");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Trees ", 0) != 0) continue;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), one); it != std::sregex_iterator(); ++it) {
      const std::smatch& m = *it;
      const int rank = std::stoi(m[5]);
      NcclTree tree{std::stoi(m[6]), {}};
      for (int i = 2; i <= 4; ++i) {
        if (std::stoi(m[i]) >= 0) tree.down.insert(std::stoi(m[i]));
      }
      std::vector<NcclTree>& both = trees[rank];
      if (both.size() < 2) both.push_back(tree);  // every run of a set prints the same trees
    }
  }
  return trees;
}

void checkAgainstNccl(const std::string& path, int nranks, int perNode) {
  std::map<int, std::vector<NcclTree>> nccl = ncclTrees(path);
  REQUIRE(static_cast<int>(nccl.size()) == nranks);
  std::vector<int> keys;
  for (int r = 0; r < nranks; ++r) keys.push_back(r / perNode);
  const NodeLayout layout = NodeLayout::fromKeys(keys);
  for (int r = 0; r < nranks; ++r) {
    for (int t = 0; t < 2; ++t) {
      INFO(path << " rank " << r << " tree " << t);
      TreeLinks ours = doubleBinaryTreeLinks(layout, r, t);
      CHECK(ours.up == nccl[r][t].up);
      CHECK(std::set<int>(ours.down.begin(), ours.down.end()) == nccl[r][t].down);
    }
  }
}

TEST_CASE("double binary tree equals NCCL's for 4 nodes of 1 and 2 GPUs", "[collectives][tree]") {
  checkAgainstNccl("tests/data/nccl_4x1/topology.txt", 4, 1);
  checkAgainstNccl("tests/data/nccl_4x2/topology.txt", 8, 2);
}

TEST_CASE("double binary tree spans every rank with consistent links", "[collectives][tree]") {
  for (int nodes = 1; nodes <= 70; ++nodes) {
    for (int perNode = 1; perNode <= 3; ++perNode) {
      std::vector<int> keys;
      for (int r = 0; r < nodes * perNode; ++r) keys.push_back(r / perNode);
      const NodeLayout layout = NodeLayout::fromKeys(keys);
      const int n = layout.nranks();
      std::vector<int> innerIn(static_cast<size_t>(nodes), 0);
      for (int t = 0; t < 2; ++t) {
        INFO(nodes << " nodes x " << perNode << ", tree " << t);
        int roots = 0;
        std::vector<int> parentOf(static_cast<size_t>(n), -2);
        std::vector<bool> interNodeChild(static_cast<size_t>(nodes), false);
        for (int r = 0; r < n; ++r) {
          TreeLinks links = doubleBinaryTreeLinks(layout, r, t);
          if (links.up < 0) ++roots;
          for (int d : links.down) {
            REQUIRE(d >= 0);
            REQUIRE(d < n);
            CHECK(parentOf[d] == -2);  // one parent each
            parentOf[d] = r;
            CHECK(doubleBinaryTreeLinks(layout, d, t).up == r);
            if (layout.nodeOf(d) != layout.nodeOf(r)) interNodeChild[layout.nodeOf(r)] = true;
          }
        }
        CHECK(roots == 1);
        for (int r = 0; r < n; ++r) {
          TreeLinks links = doubleBinaryTreeLinks(layout, r, t);
          if (links.up >= 0) CHECK(parentOf[r] == links.up);
        }
        for (int node = 0; node < nodes; ++node) innerIn[node] += interNodeChild[node] ? 1 : 0;
      }
      if (nodes % 2 == 0) {  // the mirror image (the shift of an odd count can't always do it)
        for (int node = 0; node < nodes; ++node) {
          INFO(nodes << " nodes x " << perNode << ": node " << node << " is inner in both trees");
          CHECK(innerIn[node] <= 1);
        }
      }
    }
  }
}

}  // namespace
}  // namespace nshim::testing

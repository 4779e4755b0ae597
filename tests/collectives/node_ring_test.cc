// NCCL's node-major ring (NodeLayout::ringNext) when ranks are not placed consecutively per node
// (mpirun --map-by node: rank r on host r % H): the layout's ring visits each node's ranks together,
// every collective stays exact over it, and each rank's ring traffic goes to its ring neighbour
// only, so the ring crosses between nodes once per node, as NCCL's does, instead of at every hop.
#include <memory>
#include <set>
#include <vector>

#include "collectives/collectives.h"
#include "model/node_layout.h"
#include "tests/catch.h"
#include "tests/collectives/collective_check.h"
#include "tests/test_util.h"
#include "transport/inproc/inproc_transport.h"

namespace nshim::testing {
namespace {

std::vector<std::unique_ptr<Communicator>> commsOn(const std::vector<int>& keys) {
  CollectiveOptions options;
  options.timeoutSeconds = 20;
  options.smallAllReduceBytes = 0;  // NCCL's ring, no recursive doubling
  return inProcessCommsOnNodes(keys, options);
}

TEST_CASE("node-major ring: order, neighbours and positions", "[collectives][ring]") {
  const NodeLayout layout = NodeLayout::fromKeys({7, 3, 7, 3, 5});  // nodes in order of first rank: 7, 3, 5
  CHECK(layout.rankAtRingPosition(0) == 0);
  CHECK(layout.rankAtRingPosition(1) == 2);
  CHECK(layout.rankAtRingPosition(2) == 1);
  CHECK(layout.rankAtRingPosition(3) == 3);
  CHECK(layout.rankAtRingPosition(4) == 4);
  CHECK(layout.ringNext(2) == 1);
  CHECK(layout.ringPrev(0) == 4);
  CHECK(layout.ringPosition(3) == 3);
  const NodeLayout consecutive = NodeLayout::fromKeys({0, 0, 1, 1});
  for (int r = 0; r < 4; ++r) CHECK(consecutive.ringNext(r) == (r + 1) % 4);
}

TEST_CASE("node-major ring: every collective exact with ranks spread over nodes", "[collectives][ring]") {
  for (const std::vector<int>& keys :
       {std::vector<int>{0, 1, 0, 1}, std::vector<int>{0, 1, 2, 0, 1, 2}, std::vector<int>{2, 0, 1, 1, 0}}) {
    auto comms = commsOn(keys);
    std::vector<CollectiveCase> cases;
    for (Collective collective : kAllCollectives) {
      for (size_t count : {size_t{1}, size_t{1000}, size_t{300000}}) {
        for (int root : {0, static_cast<int>(keys.size()) - 1}) {
          cases.push_back({collective, count, DataType::kFloat32, ReduceKind::kSum, root, false});
        }
      }
    }
    auto errors = runCasesOnRanks(comms, cases);
    for (size_t rank = 0; rank < keys.size(); ++rank) {
      INFO(keys.size() << " ranks, rank " << rank);
      CHECK(errors[rank] == "");
    }
  }
}

TEST_CASE("node-major ring: the ring crosses between nodes once per node", "[collectives][ring][bytes]") {
  const std::vector<int> keys = {0, 1, 2, 0, 1, 2, 0, 1, 2};  // round robin over 3 nodes
  auto comms = commsOn(keys);
  const NodeLayout& nodes = comms[0]->nodes();
  CollectiveCase c{Collective::kAllReduce, 1 << 16, DataType::kFloat32};
  auto errors = runRanksInThreads(9, [&](int rank) { return runAndCheck(*comms[rank], c); });
  std::set<std::pair<int, int>> crossing;
  for (int a = 0; a < 9; ++a) {
    REQUIRE(errors[a] == "");
    for (int b = 0; b < 9; ++b) {
      if (comms[a]->transport().peerBytes(b).sent == 0) continue;
      CHECK(b == nodes.ringNext(a));
      if (nodes.nodeOf(a) != nodes.nodeOf(b)) crossing.insert({a, b});
    }
  }
  // Rank order would cross at all 9 hops; NCCL's ring crosses at 3: 6->1, 7->2, 8->0.
  CHECK(crossing == std::set<std::pair<int, int>>{{6, 1}, {7, 2}, {8, 0}});
}

TEST_CASE("the flat layout is fromKeys of one key per rank", "[collectives][ring]") {
  for (int n : {1, 2, 3, 8, 9216}) {
    std::vector<int> keys(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) keys[r] = r;
    const NodeLayout flat = NodeLayout::flat(n), built = NodeLayout::fromKeys(keys);
    REQUIRE(flat.nranks() == built.nranks());
    REQUIRE(flat.nodes() == built.nodes());
    for (int r = 0; r < n; ++r) {
      REQUIRE(flat.nodeOf(r) == built.nodeOf(r));
      REQUIRE(flat.localIndexOf(r) == built.localIndexOf(r));
      REQUIRE(flat.ranksOf(r) == built.ranksOf(r));
      REQUIRE(flat.ringPosition(r) == built.ringPosition(r));
      REQUIRE(flat.rankAtRingPosition(r) == built.rankAtRingPosition(r));
      REQUIRE(flat.ringNext(r) == built.ringNext(r));
      REQUIRE(flat.ringPrev(r) == built.ringPrev(r));
    }
  }
}

}  // namespace
}  // namespace nshim::testing

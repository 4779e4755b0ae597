// Alltoall with PXN (collectives/pxn_alltoall.h) over in-process ranks: every byte of every block
// arrives for even and uneven node layouts (2 x 2, 3 x 2, 2 x 3, nodes of 3 and 2, 4 x 1), and
// between nodes only rails carry bytes: a rank sends to another node only to its own local index
// (unless that node has no rank there), each rail pair carrying the whole node's blocks for the
// destination, and to each node-mate its own block plus the blocks that node-mate relays.
#include <memory>
#include <vector>

#include "collectives/collectives.h"
#include "collectives/pxn_alltoall.h"
#include "tests/catch.h"
#include "tests/collectives/collective_check.h"
#include "tests/test_util.h"
#include "transport/inproc/inproc_transport.h"

namespace nshim::testing {
namespace {

std::vector<std::unique_ptr<Communicator>> pxnComms(const std::vector<int>& nodeKeys) {
  CollectiveOptions options;
  options.timeoutSeconds = 20;
  options.pxn = true;
  return inProcessCommsOnNodes(nodeKeys, options);
}

TEST_CASE("PXN alltoall: every byte, every layout", "[collectives][pxn]") {
  const std::vector<std::vector<int>> layouts = {{0, 0, 1, 1},    {0, 0, 1, 1, 2, 2}, {0, 0, 0, 1, 1, 1},
                                                 {0, 0, 0, 1, 1}, {0, 1, 2, 3},       {0, 1, 0, 1}};
  for (const std::vector<int>& keys : layouts) {
    INFO(keys.size() << " ranks, layout starting " << keys[0] << keys[1] << keys[2]);
    auto comms = pxnComms(keys);
    std::vector<CollectiveCase> cases;
    for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, size_t{70000}}) {
      for (DataType type : {DataType::kInt8, DataType::kFloat32, DataType::kFloat64}) {
        cases.push_back({Collective::kAllToAll, count, type});
      }
    }
    auto errors = runCasesOnRanks(comms, cases);
    for (size_t rank = 0; rank < keys.size(); ++rank) {
      INFO("rank " << rank);
      CHECK(errors[rank] == "");
    }
  }
}

TEST_CASE("PXN alltoall: between nodes only the rails carry bytes", "[collectives][pxn][bytes]") {
  const std::vector<int> keys = {0, 0, 0, 1, 1, 1, 2, 2};  // the third node has no local index 2
  const int n = static_cast<int>(keys.size());
  auto comms = pxnComms(keys);
  const NodeLayout nodes = NodeLayout::fromKeys(keys);
  const size_t count = 4096;
  const uint64_t block = count * 4;
  CollectiveCase c{Collective::kAllToAll, count, DataType::kFloat32};
  auto errors = runRanksInThreads(n, [&](int rank) { return runAndCheck(*comms[rank], c); });
  for (int a = 0; a < n; ++a) {
    REQUIRE(errors[a] == "");
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      INFO("rank " << a << " to rank " << b);
      // What a sends to b: its own block when b is the relay of a's block for b, plus, as a
      // relay, the blocks of each node-mate s whose block for b goes through a.
      uint64_t want = 0;
      for (int s = 0; s < n; ++s) {
        if (nodes.nodeOf(s) == nodes.nodeOf(a) && s != a && nodes.nodeOf(b) != nodes.nodeOf(a) &&
            pxnRelayOf(nodes, s, b) == a) {
          want += block;  // forwarded
        }
      }
      for (int d = 0; d < n; ++d) {
        if (d != a && pxnFirstHopOf(nodes, a, d) == b) want += block;  // a's own, direct or to its relay b
      }
      const uint64_t sent = comms[a]->transport().peerBytes(b).sent;
      CHECK(sent == want);
      if (nodes.nodeOf(a) != nodes.nodeOf(b) && sent > 0) {
        // A rail, or a rank whose node has no rank on the other's local index.
        const bool rail = nodes.localIndexOf(a) == nodes.localIndexOf(b);
        const bool noMate = nodes.ranksOf(nodes.nodeOf(a)).size() <= static_cast<size_t>(nodes.localIndexOf(b));
        CHECK((rail || noMate));
      }
    }
  }
  // Rank 0 (node 0, local 0) sends node 1's local-0 rank all three of node 0's blocks for it.
  CHECK(comms[0]->transport().peerBytes(3).sent == 3 * block);
  CHECK(comms[0]->transport().peerBytes(4).sent == 0);
}

}  // namespace
}  // namespace nshim::testing

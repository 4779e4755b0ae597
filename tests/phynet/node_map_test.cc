// Nodes of the ranks for --intra-node shm: by host by default; --gpus-per-node G groups G
// consecutive ranks and refuses a node whose ranks run on different hosts, naming them.
#include "phynet/node_map.h"
#include "tests/catch.h"

namespace nshim::phynet {
namespace {

TEST_CASE("nodes: by host, or G consecutive ranks on one host", "[phynet]") {
  const std::vector<std::string> hosts = {"a", "a", "b", "b", "a", "a", "b", "b"};
  auto byHost = nodesOfRanks(hosts, 0);
  REQUIRE(byHost.ok());
  CHECK(*byHost == std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1});
  auto pairs = nodesOfRanks(hosts, 2);
  REQUIRE(pairs.ok());
  CHECK(*pairs == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  auto fours = nodesOfRanks(hosts, 4);
  REQUIRE_FALSE(fours.ok());
  CHECK(fours.status().message().find("ranks 0 and 2 form node 0") != std::string::npos);
  CHECK(fours.status().message().find("(a and b)") != std::string::npos);
}

}  // namespace
}  // namespace nshim::phynet

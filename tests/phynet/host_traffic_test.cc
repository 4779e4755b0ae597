// Where ranks sit: local ranks from host identities and host labels (phynet/rank_endpoint.h), and
// traffic added up by host and NIC (phynet/host_traffic.h).
#include "phynet/host_traffic.h"
#include "phynet/rank_endpoint.h"
#include "tests/catch.h"

namespace nshim::phynet {
namespace {

TEST_CASE("local ranks come from the launcher, else the order of ranks on each host", "[phynet]") {
  std::vector<std::string> ids{"a/1/n", "b/2/n", "a/1/n", "b/2/n", "a/1/n"};
  CHECK(localRankOf(ids, 0, -1) == 0);
  CHECK(localRankOf(ids, 2, -1) == 1);
  CHECK(localRankOf(ids, 4, -1) == 2);
  CHECK(localRankOf(ids, 3, -1) == 1);
  CHECK(localRankOf(ids, 4, 0) == 0);  // the launcher's word wins
}

TEST_CASE("hosts sharing a hostname get numbered labels; NCCLSHIM_HOSTID names stay", "[phynet]") {
  CHECK(hostLabels({"vm/b1/net:[1]", "vm/b1/net:[2]", "vm/b1/net:[1]", "other/b2/net:[3]", "h9"}) ==
        std::vector<std::string>{"vm#1", "vm#2", "vm#1", "other", "h9"});
}

TEST_CASE("traffic adds up by host and NIC; same-host traffic stays off the NICs", "[phynet]") {
  // Ranks 0,1 on host A (NICs r0, r1), ranks 2,3 on host B (r0, r1).
  std::vector<RankEndpoint> endpoints(4);
  for (int r = 0; r < 4; ++r) {
    endpoints[r].hostId = r < 2 ? "A" : "B";
    endpoints[r].nic = r % 2 ? "r1" : "r0";
  }
  std::vector<RankCounters> counters(4);
  for (RankCounters& c : counters) c.peers.resize(4);
  counters[0].peers[1] = {100, 110, 1, 100};  // inside host A
  counters[0].peers[2] = {1000, 1024, 2, 1000};
  counters[1].peers[3] = {500, 512, 1, 400};
  counters[3].peers[0] = {7, 31, 1, 7};
  HostTraffic t = buildHostTraffic(endpoints, counters);
  CHECK(t.hosts == 2);
  CHECK(t.hostOfRank == std::vector<std::string>{"A", "A", "B", "B"});
  REQUIRE(t.nics.size() == 4);
  CHECK((t.nics[0].host == "A" && t.nics[0].nic == "r0" && t.nics[0].ranks == std::vector<int>{0}));
  CHECK(t.nics[0].sent.bytes == 1000);  // not the 100 to rank 1 on its own host
  CHECK(t.nics[0].sent.wire == 1024);
  CHECK(t.nics[0].received.bytes == 7);
  CHECK(t.nics[1].sent.bytes == 500);
  CHECK(t.nics[1].sent.model == 400);
  CHECK(t.nics[2].received.bytes == 1000);
  CHECK(t.nics[3].received.messages == 1);
  REQUIRE(t.pairs.size() == 3);
  CHECK((t.pairs[0].from == "A" && t.pairs[0].to == "A" && t.pairs[0].traffic.bytes == 100));
  CHECK((t.pairs[1].from == "A" && t.pairs[1].to == "B" && t.pairs[1].traffic.bytes == 1500));
  CHECK((t.pairs[2].from == "B" && t.pairs[2].to == "A" && t.pairs[2].traffic.wire == 31));
}

}  // namespace
}  // namespace nshim::phynet

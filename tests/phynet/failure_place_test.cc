// A failure's ranks placed on the fabric (phynet/failure_place.h): the hosts and NICs of the ranks
// it names and the host pair between this rank and the peer.
#include "phynet/failure_place.h"
#include "tests/catch.h"

namespace nshim::phynet {
namespace {

RankEndpoint endpoint(const std::string& host, const std::string& nic, const std::string& address) {
  RankEndpoint e;
  e.hostId = host;
  e.hostName = host;
  e.nic = nic;
  e.address = address;
  return e;
}

TEST_CASE("a failure names the hosts and NICs of its ranks and their host pair", "[phynet]") {
  const std::vector<RankEndpoint> endpoints = {endpoint("h1", "r0", "10.99.0.1"), endpoint("h2", "r0", "10.99.0.2"),
                                               endpoint("h2", "r1", "10.99.1.2")};
  const std::string message =
      "communicator 0x1 (world), allreduce at seq 3 failed: rank 0 (global rank 0) timed out after 4.0 s "
      "waiting for rank 1 (global rank 1) (0 of 4096 bytes)";
  CHECK(fabricPlaceOfFailure(message, 0, endpoints) ==
        "; on the fabric: global rank 0 on host h1 NIC r0 (10.99.0.1), global rank 1 on host h2 NIC r0 "
        "(10.99.0.2): host pair h1 - h2");
  // From the peer's side, the pair is said the other way round; a rank of the same host says so.
  CHECK(fabricPlaceOfFailure("waiting for rank 0 (global rank 0)", 1, endpoints).find("host pair h2 - h1") !=
        std::string::npos);
  CHECK(fabricPlaceOfFailure("waiting for rank 1 (global rank 2)", 1, endpoints).find("(one host: h2)") !=
        std::string::npos);
  // Nothing to place: no other rank named, a rank beyond the world, or no endpoints known.
  CHECK(fabricPlaceOfFailure("rank 0 (global rank 0) ran out of memory", 0, endpoints).empty());
  CHECK(fabricPlaceOfFailure("waiting for rank 9 (global rank 9)", 0, endpoints).empty());
  CHECK(fabricPlaceOfFailure(message, 0, {}).empty());
}

}  // namespace
}  // namespace nshim::phynet

// One NIC per rank: NIC lists split per local rank (transport/bootstrap/nic_list.h).
#include "transport/bootstrap/nic_list.h"
#include "tests/catch.h"

namespace nshim {
namespace {

TEST_CASE("a NIC list gives local rank i entry i mod its length", "[tcp]") {
  CHECK(nicListEntries("") == std::vector<std::string>{});
  CHECK(nicListEntries("eth0") == std::vector<std::string>{"eth0"});
  CHECK(nicListEntries("r0,r1") == std::vector<std::string>{"r0", "r1"});
  CHECK(nicListEntries("=r0,r1") == std::vector<std::string>{"=r0", "=r1"});
  CHECK(nicListEntries("^lo,docker") == std::vector<std::string>{"^lo,docker"});  // an exclusion is one entry
  CHECK(nicListEntries("mlx5_0:1,,mlx5_1:1") == std::vector<std::string>{"mlx5_0:1", "mlx5_1:1"});
  CHECK(nicForLocalRank("r0,r1,r2", 0) == "r0");
  CHECK(nicForLocalRank("r0,r1,r2", 2) == "r2");
  CHECK(nicForLocalRank("r0,r1,r2", 4) == "r1");
  CHECK(nicForLocalRank("r0,r1", -1) == "r0");  // local rank unknown
  CHECK(nicForLocalRank("eth0", 7) == "eth0");  // one entry: every rank
  CHECK(nicForLocalRank("", 3) == "");
}

}  // namespace
}  // namespace nshim

// NCCL's channels per point-to-point transfer (model/p2p_channels.h) against what NCCL 2.28.9
// did: the channels each alltoall transfer between nodes used in tests/data/nccl_4x1, nccl_4x2 and
// nccl_torch_4x2 (bytes_per_pair.csv: channels_used for net_bytes_per_op per peer), and the
// channels per peer it printed for 4, 8 and 16 nodes of 1 GPU and 4 and 8 nodes of 2
// (tests/data/nccl_tuning/init_lines.txt: `... 2 p2p channels, N p2p channels per peer`).
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/p2p_channels.h"
#include "tests/catch.h"

namespace nshim::testing {
namespace {

struct Transfer {
  size_t bytes;
  int channels;
};

// The alltoall rows between ranks of different nodes of one data set's table.
std::vector<Transfer> ncclAlltoallTransfers(const std::string& path, int ranksPerNode) {
  std::ifstream in(path);
  REQUIRE(in);
  std::string line;
  std::getline(in, line);
  REQUIRE(line ==
          "run,op,bytes,nccl_algo_proto_channels,from_node,to_node,net_bytes_per_op,remainder,channels_used,"
          "instances");
  std::vector<Transfer> out;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) f.push_back(cell);
    REQUIRE(f.size() == 10);
    if (f[1] != "alltoall") continue;
    if (std::stoi(f[4]) / ranksPerNode == std::stoi(f[5]) / ranksPerNode) continue;
    out.push_back({std::stoull(f[6]), std::stoi(f[8])});
  }
  return out;
}

TEST_CASE("p2p channels: every alltoall transfer between nodes on NCCL's channels", "[p2p]") {
  const CollectiveOptions options;
  struct Set {
    const char* table;
    int nranks, nnodes;
  };
  for (const Set& set :
       {Set{"tests/data/nccl_4x1/bytes_per_pair.csv", 4, 4}, Set{"tests/data/nccl_4x2/bytes_per_pair.csv", 8, 4},
        Set{"tests/data/nccl_torch_4x2/bytes_per_pair.csv", 8, 4}}) {
    const std::vector<Transfer> transfers = ncclAlltoallTransfers(set.table, set.nranks / set.nnodes);
    REQUIRE(transfers.size() >= 30);
    int two = 0;
    for (const Transfer& t : transfers) {
      INFO(set.table << ": " << t.bytes << " bytes per peer");
      CHECK(p2pChannelsFor(t.bytes, set.nranks, set.nnodes, options) == t.channels);
      two += t.channels == 2 ? 1 : 0;
    }
    // 4 x 1 splits its large transfers over two channels; 8 ranks keep one per peer.
    CHECK((two > 0) == (set.nranks == 4));
  }
}

TEST_CASE("p2p channels: channels per peer as NCCL printed them", "[p2p]") {
  const CollectiveOptions options;
  CHECK(p2pChannelsPerPeer(4, 4, options) == 2);
  CHECK(p2pChannelsPerPeer(8, 8, options) == 1);
  CHECK(p2pChannelsPerPeer(16, 16, options) == 1);
  CHECK(p2pChannelsPerPeer(8, 4, options) == 1);
  CHECK(p2pChannelsPerPeer(16, 8, options) == 1);
  CHECK(p2pChannelsPerPeer(2, 1, options) == 2);  // one node: NVLink peers take every channel
  CollectiveOptions forced;
  forced.p2pChannelsPerPeer = 2;  // NCCL_NCHANNELS_PER_NET_PEER=2
  CHECK(p2pChannelsPerPeer(16, 16, forced) == 2);
  CHECK(p2pChannelsFor(0, 4, 4, options) == 1);
  CHECK(p2pChannelsFor(1 << 30, 4, 4, options) == 2);
}

}  // namespace
}  // namespace nshim::testing

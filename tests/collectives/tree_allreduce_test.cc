// The tree allreduce (NCCL's double binary tree, chains inside nodes) over in-process ranks: every
// element of every data type and reduction exact, for flat layouts and nodes of 2 and 3 ranks, 1
// to 4 channels, tiny chunks and windows (deep pipelines); and each rank's bytes to each peer equal
// the trees' formula: per tree, its channels' parts once to the parent and once to each child.
#include <map>
#include <memory>
#include <vector>

#include "collectives/collectives.h"
#include "model/double_binary_tree.h"
#include "tests/catch.h"
#include "tests/collectives/collective_check.h"
#include "tests/test_util.h"
#include "transport/inproc/inproc_transport.h"

namespace nshim::testing {
namespace {

std::vector<std::unique_ptr<Communicator>> treeComms(int nranks, int perNode, CollectiveOptions options) {
  std::vector<int> keys;
  for (int r = 0; r < nranks; ++r) keys.push_back(r / perNode);
  return inProcessCommsOnNodes(keys, options);
}

CollectiveOptions treeOptions(int channels) {
  CollectiveOptions options;
  options.timeoutSeconds = 20;
  options.algorithm = Algorithm::kTree;
  options.channels = channels;
  return options;
}

TEST_CASE("tree allreduce is exact for every type and reduction", "[collectives][tree]") {
  const int nranks = GENERATE(2, 3, 4, 5, 8);
  const int perNode = GENERATE(1, 2, 3);
  const int channels = GENERATE(1, 2, 3);
  INFO(nranks << " ranks, " << perNode << " per node, " << channels << " channels");
  CollectiveOptions options = treeOptions(channels);
  options.chunkBytes = 256;  // many chunks and windows even for small buffers
  options.maxInflight = 3;
  auto comms = treeComms(nranks, perNode, options);
  std::vector<CollectiveCase> cases;
  int variant = 0;
  for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, size_t{4099}}) {
    for (int t = 0; t < kNumDataTypes; ++t) {
      for (int k = 0; k < kNumReduceKinds; ++k) {
        cases.push_back({Collective::kAllReduce, count, static_cast<DataType>(t), static_cast<ReduceKind>(k), 0,
                         (variant++ % 2) == 1});
      }
    }
  }
  auto errors = runCasesOnRanks(comms, cases);
  for (int rank = 0; rank < nranks; ++rank) {
    INFO("rank " << rank);
    CHECK(errors[rank] == "");
  }
}

TEST_CASE("tree allreduce sends each tree's part once along every edge each way", "[collectives][tree][bytes]") {
  const int nranks = GENERATE(4, 6, 8);
  const int perNode = GENERATE(1, 2);
  const int channels = GENERATE(1, 2, 4);
  INFO(nranks << " ranks, " << perNode << " per node, " << channels << " channels");
  auto comms = treeComms(nranks, perNode, treeOptions(channels));
  const size_t count = 3 * 65536 + 5;
  CollectiveCase c{Collective::kAllReduce, count, DataType::kFloat32, ReduceKind::kSum, 0, false};
  auto errors = runRanksInThreads(nranks, [&](int rank) { return runAndCheck(*comms[rank], c); });
  const size_t per = (count + channels - 1) / channels;  // partRange: ceil-sized parts, the last shorter
  uint64_t treeBytes[2] = {0, 0};
  for (int ch = 0; ch < channels; ++ch) {
    const size_t begin = std::min(count, per * ch);
    treeBytes[ch % 2] += (std::min(count, begin + per) - begin) * 4;
  }
  for (int rank = 0; rank < nranks; ++rank) {
    REQUIRE(errors[rank] == "");
    std::map<int, uint64_t> expected;
    for (int t = 0; t < 2; ++t) {
      TreeLinks links = doubleBinaryTreeLinks(comms[rank]->nodes(), rank, t);
      if (links.up >= 0) expected[links.up] += treeBytes[t];
      for (int d : links.down) expected[d] += treeBytes[t];
    }
    for (int peer = 0; peer < nranks; ++peer) {
      INFO("rank " << rank << " to " << peer);
      CHECK(comms[rank]->transport().peerBytes(peer).sent == expected[peer]);
    }
  }
}

}  // namespace
}  // namespace nshim::testing

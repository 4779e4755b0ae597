// NCCL's PAT allgather and reduce-scatter (collectives/pat_*.cc) over in-process ranks, one per
// node: every element of every data type and reduction exact on 2 to 9 and 16 ranks (fp8 up to 8), 1 to 3
// channels, in place and not, several chunks; each rank's bytes to each peer equal NCCL's (the
// counts of blocks per dimension measured from NCCL 2.28.9, tests/data/nccl_pat: 8 ranks send 4, 2
// and 1 blocks to r-1, r-2, r-4; NCCL's reduce-scatter on 5 ranks pads small ops to 4, 2, 1);
// and with two ranks per node the ring runs instead, as NCCL's PAT needs one GPU per node.
#include <map>
#include <memory>
#include <vector>

#include "collectives/collectives.h"
#include "collectives/ring_pipeline.h"
#include "model/pat_schedule.h"
#include "tests/catch.h"
#include "tests/collectives/collective_check.h"
#include "tests/test_util.h"

namespace nshim::testing {
namespace {

std::vector<std::unique_ptr<Communicator>> patComms(int nranks, int perNode, int channels) {
  CollectiveOptions options;
  options.timeoutSeconds = 20;
  options.algorithm = Algorithm::kPat;
  options.channels = channels;
  std::vector<int> keys;
  for (int r = 0; r < nranks; ++r) keys.push_back(r / perNode);
  return inProcessCommsOnNodes(keys, options);
}

TEST_CASE("PAT allgather and reduce-scatter are exact for every type and reduction", "[collectives][pat]") {
  const int nranks = GENERATE(2, 3, 4, 5, 6, 7, 8, 9, 16);
  const int channels = GENERATE(1, 2, 3);
  INFO(nranks << " ranks, " << channels << " channels");
  auto comms = patComms(nranks, 1, channels);
  std::vector<CollectiveCase> cases;
  int variant = 0;
  // 200000 floats per rank: several of NCCL's chunks per channel (pat_schedule.h).
  for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, size_t{200000}}) {
    for (int t = 0; t < kNumDataTypes; ++t) {
      if (count == 200000 && t != static_cast<int>(DataType::kFloat32)) continue;
      // The check's fp8 pattern stays exact in every summation order up to 8 ranks only.
      const DataType type = static_cast<DataType>(t);
      if (nranks > 8 && (type == DataType::kFp8E4M3 || type == DataType::kFp8E5M2)) continue;
      cases.push_back(
          {Collective::kAllGather, count, static_cast<DataType>(t), ReduceKind::kSum, 0, (variant++ % 2) == 1});
      for (int k = 0; k < kNumReduceKinds; ++k) {
        cases.push_back({Collective::kReduceScatter, count, static_cast<DataType>(t), static_cast<ReduceKind>(k), 0,
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

// The bytes rank `rank` sent to each peer for one op.
std::map<int, uint64_t> sentBytes(const std::vector<std::unique_ptr<Communicator>>& comms, int rank) {
  std::map<int, uint64_t> sent;
  for (int peer = 0; peer < static_cast<int>(comms.size()); ++peer) {
    const uint64_t bytes = comms[rank]->transport().peerBytes(peer).sent;
    if (bytes > 0) sent[peer] = bytes;
  }
  return sent;
}

void runOne(const std::vector<std::unique_ptr<Communicator>>& comms, Collective collective, size_t count) {
  CollectiveCase c{collective, count, DataType::kFloat32, ReduceKind::kSum, 0, false};
  auto errors =
      runRanksInThreads(static_cast<int>(comms.size()), [&](int rank) { return runAndCheck(*comms[rank], c); });
  for (const std::string& e : errors) REQUIRE(e == "");
}

TEST_CASE("PAT sends NCCL's blocks to the peers 2^d away", "[collectives][pat][bytes]") {
  struct Expect {
    int nranks;
    Collective collective;
    size_t count;   // floats per rank
    int blocks[4];  // blocks sent over dimension 0, 1, 2, 3 (NCCL's proxy bytes / block bytes)
  };
  // Measured from NCCL 2.28.9 (tests/data/nccl_pat/bytes_per_pair.csv): allgather sends to r - 2^d,
  // reduce-scatter to r + 2^d.
  const Expect expects[] = {
      {8, Collective::kAllGather, 1024, {4, 2, 1, 0}},
      {8, Collective::kReduceScatter, 256, {4, 2, 1, 0}},
      {5, Collective::kAllGather, 1000, {2, 1, 1, 0}},
      {5, Collective::kReduceScatter, 816, {4, 2, 1, 0}},    // padded: aggregated steps
      {5, Collective::kReduceScatter, 26212, {2, 1, 1, 0}},  // one step per message: not padded
      {16, Collective::kAllGather, 3000, {8, 4, 2, 1}},
  };
  for (const Expect& e : expects) {
    INFO(e.nranks << " ranks, " << collectiveName(e.collective) << " of " << e.count << " floats per rank");
    const int channels = e.count > 20000 ? 2 : 1;
    auto comms = patComms(e.nranks, 1, channels);
    runOne(comms, e.collective, e.count);
    for (int rank = 0; rank < e.nranks; ++rank) {
      std::map<int, uint64_t> expected;
      for (int d = 0; (1 << d) < e.nranks; ++d) {
        const int peer = e.collective == Collective::kAllGather ? ringMod(rank - (1 << d), e.nranks)
                                                                : ringMod(rank + (1 << d), e.nranks);
        expected[peer] += static_cast<uint64_t>(e.blocks[d]) * e.count * 4;
      }
      std::map<int, uint64_t> model;
      forEachPatSend(e.collective == Collective::kAllGather, rank, e.nranks, e.count, 4, channels,
                     [&](int peer, size_t bytes) { model[peer] += bytes; });
      INFO("rank " << rank);
      CHECK(sentBytes(comms, rank) == expected);
      CHECK(model == expected);
    }
  }
}

TEST_CASE("PAT needs one rank per node: with two the ring runs", "[collectives][pat]") {
  auto comms = patComms(8, 2, 1);
  runOne(comms, Collective::kAllGather, 1000);
  for (int rank = 0; rank < 8; ++rank) {
    const std::map<int, uint64_t> ring{{comms[rank]->nodes().ringNext(rank), 7 * 1000 * 4}};
    CHECK(sentBytes(comms, rank) == ring);
  }
}

}  // namespace
}  // namespace nshim::testing

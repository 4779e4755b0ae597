// Batches that every rank runs together with PXN (collectives/pxn_point_to_point.h: gather and
// scatter use it) over in-process ranks: random batches (several transfers per pair, empty ones,
// transfers to self and to node-mates, some on two channels, ranks with nothing to do) arrive byte
// for byte for even and uneven node layouts, and every pair's bytes are what the relay rule says:
// between nodes only rails carry bytes (or a rank whose node has no rank on the destination's
// local index), and between node-mates the direct transfers, the count and list of the transfers
// to relay, and their data. Gather and scatter with PXN are checked like every collective.
#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "collectives/collectives.h"
#include "collectives/pxn_alltoall.h"
#include "collectives/pxn_point_to_point.h"
#include "tests/catch.h"
#include "tests/collectives/collective_check.h"
#include "tests/collectives/p2p_batch.h"
#include "tests/test_util.h"

namespace nshim::testing {
namespace {

std::vector<Transfer> randomBatch(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  const size_t sizes[] = {0, 1, 13, 4096, 70001, 300000};
  std::vector<Transfer> batch;
  const int idle = seed % 2 ? static_cast<int>(seed % static_cast<uint32_t>(n)) : -1;  // a rank with nothing to do
  for (int from = 0; from < n; ++from) {
    for (int to = 0; to < n; ++to) {
      if (from == idle || to == idle) continue;
      const int count = static_cast<int>(rng() % 3);
      for (int k = 0; k < count; ++k) batch.push_back({from, to, k, sizes[rng() % 6], rng() % 4 == 0 ? 2 : 0});
    }
  }
  return batch;
}

// Rank `rank`'s ops for the batch in a shuffled order (each pair's transfers kept in their order),
// run, and every received byte checked.
std::string runBatch(Communicator& comm, const std::vector<Transfer>& batch, uint32_t seed) {
  const int rank = comm.rank();
  const std::vector<const Transfer*> mine = rankShareShuffled(batch, rank, seed);
  std::vector<std::vector<uint8_t>> buffers;
  buffers.reserve(2 * mine.size());
  std::vector<P2POp> ops;
  for (const Transfer* t : mine) {
    for (bool send : {true, false}) {
      if ((send ? t->from : t->to) != rank) continue;
      std::vector<uint8_t> data(t->bytes, 0xEE);
      if (send) {
        for (size_t i = 0; i < t->bytes; ++i) data[i] = byteOf(*t, i);
      }
      buffers.push_back(std::move(data));
      ops.push_back({send ? P2POp::Kind::kSend : P2POp::Kind::kRecv, send ? t->to : t->from, buffers.back().data(),
                     t->bytes, t->channels});
    }
  }
  Status status = runPxnPointToPoint(comm, ops, 77);
  if (!status.ok()) return status.toString();
  size_t at = 0;
  for (const Transfer* t : mine) {
    for (bool send : {true, false}) {
      if ((send ? t->from : t->to) != rank) continue;
      const std::vector<uint8_t>& data = buffers[at++];
      if (send) continue;
      for (size_t i = 0; i < t->bytes; ++i) {
        if (data[i] != byteOf(*t, i)) {
          return fmt::format("transfer {} of {} -> {}: byte {} of {} is {}", t->index, t->from, t->to, i, t->bytes,
                             data[i]);
        }
      }
    }
  }
  return "";
}

// What rank a sends rank b under the relay rule for `batch`.
uint64_t expectedBytes(const NodeLayout& nodes, const std::vector<Transfer>& batch, int a, int b) {
  uint64_t want = 0;
  uint64_t relayedThroughB = 0;
  for (const Transfer& t : batch) {
    if (t.from == t.to) continue;
    const bool crosses = nodes.nodeOf(t.from) != nodes.nodeOf(t.to);
    const int relay = crosses ? pxnRelayOf(nodes, t.from, t.to) : t.from;
    if (t.from == a && relay == a && t.to == b) want += t.bytes;  // direct
    if (t.from == a && relay != a && relay == b) {                // to its relay b
      want += t.bytes;
      ++relayedThroughB;
    }
    if (relay == a && t.from != a && t.to == b) want += t.bytes;  // forwarded by a
  }
  if (nodes.nodeOf(a) == nodes.nodeOf(b)) want += 8 + (relayedThroughB ? 24 * relayedThroughB : 0);
  return want;
}

TEST_CASE("PXN batches: every byte, every layout, bytes per pair by the relay rule", "[collectives][pxn][bytes]") {
  const std::vector<std::vector<int>> layouts = {{0, 0, 1, 1},    {0, 0, 1, 1, 2, 2},       {0, 0, 0, 1, 1, 1},
                                                 {0, 0, 0, 1, 1}, {0, 0, 0, 1, 1, 1, 2, 2}, {0, 1, 0, 1}};
  uint32_t seed = 1;
  for (const std::vector<int>& keys : layouts) {
    const int n = static_cast<int>(keys.size());
    INFO(n << " ranks, layout starting " << keys[0] << keys[1] << keys[2]);
    CollectiveOptions options;
    options.timeoutSeconds = 20;
    options.pxn = true;
    options.sliceBytes = 64 << 10;  // several messages per part
    auto comms = inProcessCommsOnNodes(keys, options);
    const NodeLayout nodes = NodeLayout::fromKeys(keys);
    const std::vector<Transfer> batch = randomBatch(n, ++seed);
    auto errors = runRanksInThreads(n, [&](int rank) { return runBatch(*comms[rank], batch, seed); });
    for (int a = 0; a < n; ++a) {
      INFO("rank " << a);
      REQUIRE(errors[a] == "");
      for (int b = 0; b < n; ++b) {
        if (a == b) continue;
        INFO("to rank " << b);
        const uint64_t sent = comms[a]->transport().peerBytes(b).sent;
        CHECK(sent == expectedBytes(nodes, batch, a, b));
        if (nodes.nodeOf(a) != nodes.nodeOf(b) && sent > 0) {
          const bool rail = nodes.localIndexOf(a) == nodes.localIndexOf(b);
          const bool noMate = nodes.ranksOf(nodes.nodeOf(a)).size() <= static_cast<size_t>(nodes.localIndexOf(b));
          CHECK((rail || noMate));
        }
      }
    }
  }
}

TEST_CASE("PXN gather and scatter: every byte, every layout", "[collectives][pxn]") {
  for (const std::vector<int>& keys : std::vector<std::vector<int>>{{0, 0, 1, 1, 2, 2}, {0, 0, 0, 1, 1}}) {
    INFO(keys.size() << " ranks");
    CollectiveOptions options;
    options.timeoutSeconds = 20;
    options.pxn = true;
    auto comms = inProcessCommsOnNodes(keys, options);
    std::vector<CollectiveCase> cases;
    for (Collective collective : {Collective::kGather, Collective::kScatter}) {
      for (int root : {0, 3, static_cast<int>(keys.size()) - 1}) {
        for (size_t count : {size_t{1}, size_t{1000}, size_t{70000}}) {
          CollectiveCase c{collective, count, DataType::kFloat32};
          c.root = root;
          cases.push_back(c);
        }
      }
    }
    auto errors = runCasesOnRanks(comms, cases);
    for (size_t rank = 0; rank < keys.size(); ++rank) {
      INFO("rank " << rank);
      CHECK(errors[rank] == "");
    }
  }
}

}  // namespace
}  // namespace nshim::testing

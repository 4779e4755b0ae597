// The PXN relay of a trace's own send/recv (collectives/pxn_relay.h) over in-process ranks: random
// partial batches (only some ranks take part, uneven sizes, several transfers per pair, zero-size
// ones, idle ranks that relay all the same) on layouts of 2-3 nodes x 2-4 ranks arrive byte for
// byte through runRelayedPointToPoint, and every pair's bytes (main transport plus relay) are what
// the relay rule says: between nodes only rail pairs carry bytes.
#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "collectives/pxn_alltoall.h"
#include "collectives/pxn_relay.h"
#include "collectives/pxn_relayed_point_to_point.h"
#include "tests/catch.h"
#include "tests/collectives/collective_check.h"
#include "tests/collectives/p2p_batch.h"
#include "tests/test_util.h"
#include "transport/inproc/inproc_transport.h"

namespace nshim::testing {
namespace {

// Transfers among a random subset of the ranks (at least two), and one relayed transfer whose
// relay may be idle; the other ranks idle.
std::vector<Transfer> randomBatch(const NodeLayout& nodes, std::mt19937& rng) {
  const int n = nodes.nranks();
  const size_t sizes[] = {0, 1, 13, 4096, 70001, 300000};
  std::vector<bool> in(n);
  int active = 0;
  for (int r = 0; r < n; ++r) active += (in[r] = rng() % 3 != 0);
  if (active < 2) in.assign(n, true);
  std::vector<Transfer> batch;
  for (int from = 0; from < n; ++from) {
    for (int to = 0; to < n; ++to) {
      if (!in[from] || !in[to] || from == to || rng() % 2) continue;
      const int count = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < count; ++k) batch.push_back({from, to, k, sizes[rng() % 6]});
    }
  }
  std::vector<std::pair<int, int>> relayed;
  for (int from = 0; from < n; ++from) {
    for (int to = 0; to < n; ++to) {
      if (pxnRelayed(nodes, from, to)) relayed.emplace_back(from, to);
    }
  }
  const auto [from, to] = relayed[rng() % relayed.size()];
  const int k = static_cast<int>(
      std::count_if(batch.begin(), batch.end(), [&](const Transfer& t) { return t.from == from && t.to == to; }));
  batch.push_back({from, to, k, sizes[1 + rng() % 5]});
  return batch;
}

// Rank `rank`'s part of the batch in a shuffled order (each pair's transfers in their order), run,
// and every received byte checked.
std::string runBatch(Communicator& comm, const std::vector<Transfer>& batch, uint32_t seed) {
  const int rank = comm.rank();
  std::vector<const Transfer*> ordered = rankShareShuffled(batch, rank, seed);
  std::vector<std::vector<uint8_t>> buffers(ordered.size());
  std::vector<P2POp> ops;
  for (size_t i = 0; i < ordered.size(); ++i) {
    const Transfer& t = *ordered[i];
    const bool send = t.from == rank;
    buffers[i].assign(t.bytes, 0xEE);
    if (send) {
      for (size_t b = 0; b < t.bytes; ++b) buffers[i][b] = byteOf(t, b);
    }
    ops.push_back({send ? P2POp::Kind::kSend : P2POp::Kind::kRecv, send ? t.to : t.from, buffers[i].data(), t.bytes});
  }
  if (ops.empty()) return "";  // idle: its relay thread still forwards
  Status status = runRelayedPointToPoint(comm, ops);
  if (!status.ok()) return status.toString();
  for (size_t i = 0; i < ordered.size(); ++i) {
    const Transfer& t = *ordered[i];
    if (t.to != rank) continue;
    for (size_t b = 0; b < t.bytes; ++b) {
      if (buffers[i][b] != byteOf(t, b)) {
        return fmt::format("transfer {} of {} -> {}: byte {} of {} is {}", t.index, t.from, t.to, b, t.bytes,
                           buffers[i][b]);
      }
    }
  }
  return "";
}

// What rank a sends rank b under the relay rule.
uint64_t expectedBytes(const NodeLayout& nodes, const std::vector<Transfer>& batch, int a, int b) {
  uint64_t want = 0;
  for (const Transfer& t : batch) {
    const int hop = pxnFirstHopOf(nodes, t.from, t.to);
    if (t.from == a && hop == b) want += t.bytes;               // direct, or to its relay
    if (hop == a && t.from != a && t.to == b) want += t.bytes;  // forwarded by a
  }
  return want;
}

TEST_CASE("PXN relay: a trace's partial send/recv batches, every byte, only rails between nodes",
          "[collectives][pxn][relay]") {
  const std::vector<std::vector<int>> layouts = {
      {0, 0, 1, 1},       {0, 0, 0, 1, 1, 1},          {0, 0, 0, 0, 1, 1, 1, 1},
      {0, 0, 1, 1, 2, 2}, {0, 0, 0, 1, 1, 1, 2, 2, 2}, {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2},
      {0, 0, 0, 1, 1},    {0, 1, 0, 1, 2, 2}};
  std::mt19937 rng(18);
  uint32_t seed = 0;
  for (const std::vector<int>& keys : layouts) {
    const int n = static_cast<int>(keys.size());
    INFO(n << " ranks, layout #" << seed);
    CollectiveOptions options;
    options.timeoutSeconds = 30;
    options.pxn = true;
    options.sliceBytes = 64 << 10;
    auto comms = inProcessCommsOnNodes(keys, options);
    const NodeLayout nodes = NodeLayout::fromKeys(keys);
    auto relayTransports = createInProcessTransports(n);
    for (int r = 0; r < n; ++r) comms[r]->setRelay(std::make_shared<PxnRelay>(std::move(relayTransports[r]), nodes));
    std::vector<std::vector<Transfer>> batches;
    for (int round = 0; round < 3; ++round) batches.push_back(randomBatch(nodes, rng));
    for (const auto& batch : batches) {
      ++seed;
      auto errors = runRanksInThreads(n, [&](int rank) { return runBatch(*comms[rank], batch, seed); });
      for (int r = 0; r < n; ++r) {
        INFO("rank " << r);
        REQUIRE(errors[r] == "");
      }
    }
    uint64_t relayed = 0;
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (a == b) continue;
        INFO("rank " << a << " to rank " << b);
        const uint64_t sent = comms[a]->transport().peerBytes(b).sent + comms[a]->relay()->peerBytes(b).sent;
        relayed += comms[a]->relay()->peerBytes(b).sent;
        uint64_t want = 0;
        for (const auto& batch : batches) want += expectedBytes(nodes, batch, a, b);
        CHECK(sent == want);
        if (nodes.nodeOf(a) != nodes.nodeOf(b) && sent > 0) {
          const bool rail = nodes.localIndexOf(a) == nodes.localIndexOf(b);
          const bool noMate = nodes.ranksOf(nodes.nodeOf(a)).size() <= static_cast<size_t>(nodes.localIndexOf(b));
          CHECK((rail || noMate));
        }
      }
    }
    CHECK(relayed > 0);
  }
}

TEST_CASE("PXN relay: a relay that is gone or stopped fails the wait by the deadline, naming it",
          "[collectives][pxn][relay]") {
  const std::vector<int> keys = {0, 0, 1, 1};
  const NodeLayout nodes = NodeLayout::fromKeys(keys);
  for (bool stopped : {false, true}) {
    INFO((stopped ? "rank 1's relay stopped" : "rank 1 has no relay running"));
    CollectiveOptions options;
    options.timeoutSeconds = 0.5;
    options.pxn = true;
    auto comms = inProcessCommsOnNodes(keys, options);
    auto relayTransports = createInProcessTransports(4);
    // Rank 0 sends to rank 3 (another node, another rail) through rank 1.
    comms[0]->setRelay(std::make_shared<PxnRelay>(std::move(relayTransports[0]), nodes));
    std::shared_ptr<PxnRelay> relay1;
    if (stopped) {
      relay1 = std::make_shared<PxnRelay>(std::move(relayTransports[1]), nodes);
      relay1->abort("test: rank 1's relay stopped");
    }
    std::vector<uint8_t> data(1000, 1);
    P2POp send{P2POp::Kind::kSend, 3, data.data(), data.size()};
    const int64_t start = nowNs();
    Status status = runRelayedPointToPoint(*comms[0], std::span<const P2POp>(&send, 1));
    const double seconds = (nowNs() - start) * 1e-9;
    INFO(status.toString() << " after " << seconds << " s");
    CHECK_FALSE(status.ok());
    CHECK(seconds < 5);
    CHECK(status.message().find("rank 1") != std::string::npos);
    if (!stopped) CHECK(status.code() == Code::kTimeout);
  }
}

}  // namespace
}  // namespace nshim::testing

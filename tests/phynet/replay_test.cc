// The replay engine without MPI: ranks as threads on the in-process transport run a workload of
// every op kind across overlapping communicators (world, TP pairs, DP pairs) with groups; every
// op gets a timing, the wire bytes equal the traffic model, and the report pairs the ops up.
// Batching follows NCCL groups split by communicator.
#include <map>
#include <memory>
#include <vector>

#include "phynet/replay.h"
#include "phynet/report.h"
#include "tests/catch.h"
#include "tests/phynet/inproc_replay.h"
#include "workload/traffic_model.h"
#include "workload/workload_check.h"

namespace nshim::phynet {
namespace {

WorkOp makeOp(uint64_t comm, OpKind kind, uint64_t count, int nranks, int root = -1, int peer = -1, int group = 0) {
  WorkOp op;
  op.commId = comm;
  op.kind = kind;
  op.count = count;
  op.type = DataType::kFloat32;
  op.root = root;
  op.peer = peer;
  op.group = group;
  op.bytes = opBytes(kind, count, op.type, nranks);
  op.recordedNs = 1000;
  return op;
}

// 4 ranks: world {0,1,2,3}, TP {0,1} {2,3}, DP {0,2} {1,3}.
Workload sampleWorkload() {
  Workload w;
  w.worldSize = 4;
  w.comms = {{1, {0, 1, 2, 3}, "world"}, {2, {0, 1}, "tp"}, {3, {2, 3}, "tp"}, {4, {0, 2}, "dp"}, {5, {1, 3}, "dp"}};
  w.ranks.resize(4);
  for (int g = 0; g < 4; ++g) {
    RankWork& r = w.ranks[g];
    r.globalRank = g;
    uint64_t tp = g < 2 ? 2 : 3, dp = g % 2 == 0 ? 4 : 5;
    int dpRank = g / 2;
    r.ops.push_back(makeOp(1, OpKind::kAllReduce, 4096, 4));
    r.ops.push_back(makeOp(tp, OpKind::kAllGather, 1024, 2));
    r.ops.push_back(makeOp(dp, OpKind::kReduceScatter, 2048, 2));
    r.ops.push_back(makeOp(1, OpKind::kBroadcast, 3000, 4, 2));
    r.ops.push_back(makeOp(1, OpKind::kAllToAll, 512, 4));
    r.ops.push_back(makeOp(dp, OpKind::kSend, 777, 2, -1, 1 - dpRank, 7));  // one group over two comms
    r.ops.push_back(makeOp(dp, OpKind::kRecv, 777, 2, -1, 1 - dpRank, 7));
    r.ops.push_back(makeOp(tp, OpKind::kAllReduce, 100, 2, -1, -1, 7));
    r.ops.push_back(makeOp(1, OpKind::kReduce, 1000, 4, 1));
    r.ops.push_back(makeOp(1, OpKind::kGather, 64, 4, 0));
    r.ops.push_back(makeOp(1, OpKind::kScatter, 64, 4, 3));
  }
  for (RankWork& r : w.ranks) {
    std::map<uint64_t, uint64_t> seq;
    for (WorkOp& op : r.ops) op.seq = seq[op.commId]++;
  }
  return w;
}

TEST_CASE("issue batches follow groups, split by communicator", "[phynet]") {
  Workload w = sampleWorkload();
  auto batches = issueBatches(w.ranks[0].ops);
  REQUIRE(batches.size() == 10);
  CHECK(batches[5] == std::vector<uint32_t>{5, 6});  // the group's DP send/recv
  CHECK(batches[6] == std::vector<uint32_t>{7});     // the group's TP allreduce
}

TEST_CASE("ranks as threads replay every op kind and the wire bytes equal the model", "[phynet]") {
  Workload w = sampleWorkload();
  REQUIRE(checkWorkload(w).ok());
  const int iterations = 3;
  ReplayConfig config;
  config.iterations = iterations;
  config.stallSeconds = 30;
  testing::InProcessReplay replay = testing::replayInThreads(w, config);
  std::vector<RankReplayResult>& results = replay.results;
  for (const std::string& e : replay.errors) CHECK(e == "");

  ReportInput in;
  in.workload = &w;
  in.iterations = iterations - 1;
  in.warmup = 1;
  in.rateGBps = 10;
  uint64_t sent = 0, received = 0;
  for (int g = 0; g < 4; ++g) {
    const RankCounters& c = results[g].counters;
    CHECK(c.ops == w.ranks[g].ops.size() * iterations);
    CHECK(c.wireSent == c.modelSent);
    // Peer by peer too: the model's destinations are the algorithms' (ring neighbours, chain
    // predecessors, partners, roots).
    REQUIRE(c.peers.size() == 4);
    for (int p = 0; p < 4; ++p) {
      INFO("rank " << g << " to rank " << p);
      CHECK(c.peers[p].sent == c.peers[p].model);
      if (p == g) CHECK(c.peers[p].sent == 0);
    }
    sent += c.wireSent;
    received += c.wireReceived;
    for (const OpTiming& t : results[g].timings) CHECK(t.endNs >= t.startNs);
    in.timings.push_back(results[g].timings);
    in.counters.push_back(c);
  }
  CHECK(sent == received);
  ReplayReport report = buildReport(in);
  // Collectives: world 6 + TP 2x2 + DP 2x1 = 12; sends: 4 (each DP pair, both ways); per iteration.
  CHECK(report.rows.size() == 16 * 2);
  CHECK(report.endToEndSeconds > 0);
  for (const OpRow& row : report.rows) {
    CHECK(row.efficiency >= 0);
    CHECK(row.recordedUs == 1.0);
    if (row.op == "sendrecv") CHECK_FALSE(row.ranks.empty());
  }
}

TEST_CASE("busbw factors are nccl-tests'", "[phynet]") {
  CHECK(busBandwidthFactor(OpKind::kAllReduce, 4) == 1.5);
  CHECK(busBandwidthFactor(OpKind::kAllGather, 4) == 0.75);
  CHECK(busBandwidthFactor(OpKind::kAllToAll, 8) == 0.875);
  CHECK(busBandwidthFactor(OpKind::kBroadcast, 8) == 1.0);
  CHECK(busBandwidthFactor(OpKind::kGather, 4) == 0.75);  // nccl-tests' gather and scatter: (n-1)/n
  CHECK(busBandwidthFactor(OpKind::kScatter, 8) == 0.875);
  CHECK(busBandwidthFactor(OpKind::kSend, 8) == 1.0);
  CHECK(sizeBucket(1000) == 1024);
  CHECK(sizeBucket(1024) == 1024);
}

}  // namespace
}  // namespace nshim::phynet

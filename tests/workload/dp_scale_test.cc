// Scaling a capture by data parallelism (workload/job_shape.h, workload/dp_scale.h): Megatron-Core
// captured at TP2 x DP2 and scaled to DP4 equals the job captured at TP2 x DP4, op for op on every
// rank, with plain DDP and with the distributed optimizer (padded shards); DP4 folds onto DP2 the
// same way. Shapes that fit no layout or several, buffers that do not divide, and ops without a
// rule are refused by name.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/catch.h"
#include "tests/workload/synthetic_job.h"
#include "trace/trace_format.h"
#include "trace/trace_reader.h"
#include "workload/dp_scale.h"
#include "workload/job_shape.h"

namespace nshim::workload {
namespace {

const std::string kData = "tests/data/scale/";

trace::TraceSet load(const std::string& name) {
  Result<trace::TraceSet> set = trace::readTracePath(kData + name);
  REQUIRE(set.ok());
  return std::move(*set);
}

trace::TraceSet scaleTo(const trace::TraceSet& traces, int dp, int ep = 0) {
  Result<JobShape> shape = recoverJobShape(traces);
  REQUIRE(shape.ok());
  Result<DataParallelScaler> scaler = DataParallelScaler::create(traces, *shape, dp, ep);
  REQUIRE(scaler.ok());
  trace::TraceSet out;
  for (int rank = 0; rank < scaler->to().world; ++rank) out.files.push_back(scaler->rank(rank));
  return out;
}

// Every rank's ops in order, each with its communicator's members (ids differ between the sides).
std::vector<std::string> opsWithMembers(const trace::TraceSet& traces) {
  Result<JobShape> shape = recoverJobShape(traces);
  REQUIRE(shape.ok());
  std::vector<std::string> lines;
  for (const trace::TraceFile& file : traces.files) {
    for (const trace::OpEntry& entry : file.ops) {
      const trace::OpRecord& op = entry.record;
      std::string members;
      if (op.commId != 0) {
        for (int m : shape->comms.at(op.commId).members) members += std::to_string(m) + ",";
      }
      lines.push_back(std::to_string(file.globalRank()) + " " + trace::opName(op.op) + " count " +
                      std::to_string(op.count) + " " + trace::datatypeName(op.datatype) + " root " +
                      std::to_string(op.root) + " peer " + std::to_string(op.peer) + " rank " +
                      std::to_string(op.rank) + "/" + std::to_string(op.nranks) + " bytes " + std::to_string(op.bytes) +
                      " seq " + std::to_string(op.seq) + " members " + members);
    }
  }
  return lines;
}

TEST_CASE("the shape of Megatron captures is recovered from their communicators", "[scale]") {
  trace::TraceSet traces = load("megatron_tp2_dp4_distopt");
  Result<JobShape> shape = recoverJobShape(traces);
  REQUIRE(shape.ok());
  CHECK(shape->toString() == "TP=2 DP=4 PP=1 (8 ranks)");
  std::map<GroupKind, int> kinds;
  for (const auto& [id, comm] : shape->comms) {
    if (comm.carriesOps && comm.fitted) ++kinds[comm.kind];
  }
  CHECK(kinds[GroupKind::kTp] == 4);
  CHECK(kinds[GroupKind::kDp] == 4);  // two data-parallel communicators per replica column
  CHECK(kinds[GroupKind::kWorld] == 2);
}

TEST_CASE("MoE TP1 x DP4 x EP2 scaled to DP8 equals the DP8 capture: expert groups stay, expert-data grow", "[scale]") {
  trace::TraceSet dp4 = load("megatron_moe_tp1_dp4_ep2");
  trace::TraceSet dp8 = load("megatron_moe_tp1_dp8_ep2");
  Result<JobShape> shape = recoverJobShape(dp4);
  REQUIRE(shape.ok());
  CHECK(shape->toString() == "TP=1 DP=4 EP=2 PP=1 (4 ranks)");
  CHECK(opsWithMembers(scaleTo(dp4, 8)) == opsWithMembers(dp8));
  CHECK(opsWithMembers(scaleTo(dp8, 4)) == opsWithMembers(dp4));
}

TEST_CASE("TP2 x DP2 scaled to DP4 equals the TP2 x DP4 capture, and DP4 folds onto DP2", "[scale]") {
  for (const char* kind : {"plain", "distopt"}) {
    INFO(kind);
    trace::TraceSet dp2 = load(std::string("megatron_tp2_dp2_") + kind);
    trace::TraceSet dp4 = load(std::string("megatron_tp2_dp4_") + kind);
    CHECK(opsWithMembers(scaleTo(dp2, 4)) == opsWithMembers(dp4));
    CHECK(opsWithMembers(scaleTo(dp4, 2)) == opsWithMembers(dp2));
    CHECK(opsWithMembers(scaleTo(dp2, 2)) == opsWithMembers(dp2));
  }
  // The captures really differ where the rules act: sharded counts halve, groups double.
  CHECK(opsWithMembers(load("megatron_tp2_dp2_distopt")) != opsWithMembers(load("megatron_tp2_dp4_distopt")));
}

TEST_CASE("sharded buffers are resized as Megatron pads them, or divided, or refused", "[scale]") {
  Result<ShardCount> grow = resizeShard(120128, 2, 4);  // the captures' gradient buffer
  REQUIRE(grow.ok());
  CHECK(grow->count == 60064);
  CHECK(grow->megatronPadding);
  CHECK(grow->withinElements == 0);
  Result<ShardCount> odd = resizeShard(120128, 2, 3);  // lcm(3, 128) = 384: 240256 -> 240384
  REQUIRE(odd.ok());
  CHECK(odd->count == 80128);
  CHECK(odd->withinElements == 0);
  Result<ShardCount> coarse = resizeShard(128, 3, 2);  // 384 elements, padded to lcm(3, 128)
  REQUIRE(coarse.ok());
  CHECK(coarse->count == 192);
  CHECK(coarse->withinElements == 384);             // the unpadded buffer may have been as small as 257
  Result<ShardCount> even = resizeShard(10, 3, 5);  // 30 elements, not padded: divided exactly
  REQUIRE(even.ok());
  CHECK(even->count == 6);
  CHECK_FALSE(even->megatronPadding);
  Result<ShardCount> refused = resizeShard(7, 3, 4);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("21 elements divides neither into 4 blocks") != std::string::npos);
}

TEST_CASE("shapes that fit no layout or several, and ops without a rule, are refused", "[scale]") {
  Result<JobShape> mixed = recoverJobShape(syntheticJob(4, {{0, 1, 2}, {3}}));
  REQUIRE_FALSE(mixed.ok());
  CHECK(mixed.status().message().find("cannot be recovered") != std::string::npos);
  CHECK(mixed.status().message().find("(members 0,1,2)") != std::string::npos);

  // Only tensor groups carry ops: data or pipeline parallel cannot be told apart.
  trace::TraceSet tpOnly = syntheticJob(4, {{0, 1}, {2, 3}});
  Result<JobShape> ambiguous = recoverJobShape(tpOnly);
  REQUIRE_FALSE(ambiguous.ok());
  CHECK(ambiguous.status().message().find("TP=2 DP=2 PP=1, TP=2 DP=1 PP=2 all fit") != std::string::npos);
  ShapeOptions chosen;
  chosen.pp = 1;
  Result<JobShape> settled = recoverJobShape(tpOnly, chosen);
  REQUIRE(settled.ok());
  CHECK(settled->toString() == "TP=2 DP=2 PP=1 (4 ranks)");

  // A gradient shard of 7 floats per rank of DP2 (14: not Megatron-padded) does not divide over 4.
  trace::TraceSet sharded = syntheticJob(4, {{0, 2}, {1, 3}, {0, 1}, {2, 3}}, trace::OpCode::kReduceScatter, 7);
  Result<JobShape> shape = recoverJobShape(sharded);
  REQUIRE(shape.ok());
  Result<DataParallelScaler> undivided = DataParallelScaler::create(sharded, *shape, 4);
  REQUIRE_FALSE(undivided.ok());
  CHECK(undivided.status().message().find("job/rank0.jsonl:3: reducescatter of count 7") != std::string::npos);
  CHECK(DataParallelScaler::create(sharded, *shape, 7).ok());  // 14 elements over 7 ranks: 2 each

  // All-to-alls on groups that could be expert groups: ambiguous; with EP=1 said, data parallel,
  // which no rule scales.
  trace::TraceSet alltoall = syntheticJob(4, {{0, 2}, {1, 3}, {0, 1}, {2, 3}}, trace::OpCode::kAlltoAll);
  CHECK_FALSE(recoverJobShape(alltoall).ok());
  ShapeOptions noExperts;
  noExperts.tp = 2;
  noExperts.ep = 1;
  Result<JobShape> contextShape = recoverJobShape(alltoall, noExperts);  // an even all-to-all: CP's
  REQUIRE(contextShape.ok());
  CHECK(contextShape->toString() == "TP=2 CP=2 DP=1 PP=1 (4 ranks)");
  noExperts.cp = 1;
  Result<JobShape> a2aShape = recoverJobShape(alltoall, noExperts);
  REQUIRE(a2aShape.ok());
  Result<DataParallelScaler> noRule = DataParallelScaler::create(alltoall, *a2aShape, 4);
  REQUIRE_FALSE(noRule.ok());
  CHECK(noRule.status().message().find("alltoall on a data-parallel group: no data-parallel scaling rule") !=
        std::string::npos);
  CHECK_FALSE(DataParallelScaler::create(alltoall, *a2aShape, 0).ok());
  // EP=2 said: the all-to-alls are expert-parallel and stay; EP must divide the new size.
  ShapeOptions experts;
  experts.tp = 2;
  experts.ep = 2;
  Result<JobShape> moeShape = recoverJobShape(alltoall, experts);
  REQUIRE(moeShape.ok());
  CHECK(moeShape->toString() == "TP=2 DP=2 EP=2 PP=1 (4 ranks)");
  CHECK(DataParallelScaler::create(alltoall, *moeShape, 4).ok());
  Result<DataParallelScaler> odd = DataParallelScaler::create(alltoall, *moeShape, 3);
  REQUIRE_FALSE(odd.ok());
  CHECK(odd.status().message().find("EP=2 must divide") != std::string::npos);
}

// Every rank's point-to-point counts on the expert group: (from, to) -> counts in order.
std::map<std::pair<int, int>, std::vector<uint64_t>> exchanges(const trace::TraceSet& traces, bool sends) {
  Result<JobShape> shape = recoverJobShape(traces);
  REQUIRE(shape.ok());
  std::map<std::pair<int, int>, std::vector<uint64_t>> out;
  for (const trace::TraceFile& file : traces.files) {
    for (const trace::OpEntry& entry : file.ops) {
      const trace::OpRecord& op = entry.record;
      if (op.op != (sends ? trace::OpCode::kSend : trace::OpCode::kRecv)) continue;
      const int peer = shape->comms.at(op.commId).members.at(op.peer);
      const int self = file.globalRank();
      out[sends ? std::make_pair(self, peer) : std::make_pair(peer, self)].push_back(op.count);
    }
  }
  return out;
}

TEST_CASE("MoE EP2 -> EP4: the token all-to-all follows the experts, the experts' buffers halve", "[scale][ep]") {
  trace::TraceSet ep2 = load("megatron_moe_tp1_dp8_ep2");
  trace::TraceSet ep4 = scaleTo(ep2, 0, 4);
  Result<JobShape> shape = recoverJobShape(ep4);
  REQUIRE(shape.ok());
  CHECK(shape->toString() == "TP=1 DP=8 EP=4 PP=1 (8 ranks)");
  // Every send has its receive: rank r's k-th send to m is m's k-th receive from r.
  const auto sent = exchanges(ep4, true);
  CHECK(sent == exchanges(ep4, false));
  CHECK(sent.size() == 8 * 4);  // each rank sends to the 4 ranks of its expert group (itself too)
  CHECK(sent.count({0, 3}) == 1);
  CHECK(sent.count({0, 4}) == 0);
  // Rank 0 keeps its tokens: old peer p's count is spread over new peers 2p and 2p+1.
  const auto before = exchanges(ep2, true);
  for (size_t i = 0; i < before.at({0, 0}).size(); ++i) {
    INFO("all-to-all " << i);
    for (int p = 0; p < 2; ++p) {
      const uint64_t old = before.at({0, p})[i];
      CHECK(sent.at({0, 2 * p})[i] == old / 2 + old % 2);
      CHECK(sent.at({0, 2 * p + 1})[i] == old / 2);
    }
    // Rank 2 (new position 2) receives from rank 1 what rank 1 sent old peer 1, first half.
    const uint64_t fromOne = before.at({1, 1})[i];
    CHECK(sent.at({1, 2})[i] == fromOne / 2 + fromOne % 2);
  }
  // Communicators and counts of the other ops: expert-data allreduce halves on {0,4}; the expert
  // group's all-gather keeps 4 per rank over 4 ranks; the dense data-parallel ones stay.
  std::map<std::string, int> seen;
  for (const trace::OpEntry& entry : ep4.files[0].ops) {
    const trace::OpRecord& op = entry.record;
    if (op.commId == 0 || op.op == trace::OpCode::kSend || op.op == trace::OpCode::kRecv) continue;
    std::string members;
    for (int m : shape->comms.at(op.commId).members) members += std::to_string(m) + ",";
    ++seen[std::string(trace::opName(op.op)) + " " + std::to_string(op.count) + " on " + members];
  }
  CHECK(seen == std::map<std::string, int>{{"allgather 4 on 0,1,2,3,", 6},
                                           {"allreduce 262144 on 0,4,", 3},
                                           {"allreduce 207104 on 0,1,2,3,4,5,6,7,", 3},
                                           {"allreduce 1 on 0,1,2,3,4,5,6,7,", 3},
                                           {"allreduce 256 on 0,", 9}});
  // Back to EP2: the spread parts merge again, and the job equals the capture op for op.
  CHECK(opsWithMembers(scaleTo(ep4, 0, 2)) == opsWithMembers(ep2));
  // EP with DP at once: DP4 x EP2 -> DP8 x EP4 equals the DP8 capture taken to EP4.
  CHECK(opsWithMembers(scaleTo(load("megatron_moe_tp1_dp4_ep2"), 8, 4)) == opsWithMembers(ep4));
}

TEST_CASE("expert-parallel sizes without a rule are refused by name", "[scale][ep]") {
  trace::TraceSet ep2 = load("megatron_moe_tp1_dp8_ep2");
  Result<JobShape> shape = recoverJobShape(ep2);
  REQUIRE(shape.ok());
  Result<DataParallelScaler> three = DataParallelScaler::create(ep2, *shape, 0, 3);
  REQUIRE_FALSE(three.ok());
  CHECK(three.status().message().find("--ep 3: the captured EP=2 and 3 do not divide one another (one rank's "
                                      "experts would be split unevenly over the new expert groups)") == 0);
  Result<DataParallelScaler> wide = DataParallelScaler::create(ep2, *shape, 0, 16);
  REQUIRE_FALSE(wide.ok());
  CHECK(wide.status().message().find("--dp 8 --ep 16: the expert-parallel size EP=16 must divide the data-parallel "
                                     "size DP=8") == 0);
  trace::TraceSet dense = load("megatron_tp2_dp2_plain");
  Result<JobShape> denseShape = recoverJobShape(dense);
  REQUIRE(denseShape.ok());
  Result<DataParallelScaler> none = DataParallelScaler::create(dense, *denseShape, 0, 2);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message().find("the capture has no expert groups (EP=1)") != std::string::npos);
  // An even all-to-all of 3 per peer at EP2 does not spread over EP4; a broadcast has no rule.
  ShapeOptions experts;
  experts.tp = 1;
  experts.pp = 1;
  experts.ep = 2;
  trace::TraceSet a2a = syntheticJob(4, {{0, 1}, {2, 3}}, trace::OpCode::kAlltoAll, 3);
  Result<JobShape> a2aShape = recoverJobShape(a2a, experts);
  REQUIRE(a2aShape.ok());
  Result<DataParallelScaler> uneven = DataParallelScaler::create(a2a, *a2aShape, 0, 4);
  REQUIRE_FALSE(uneven.ok());
  CHECK(uneven.status().message().find("job/rank0.jsonl:3: alltoall of count 3 per peer: at EP=4 a peer's block "
                                       "would be 3 x 2 / 4 elements, not a whole number") == 0);
  trace::TraceSet a2a4 = syntheticJob(4, {{0, 1}, {2, 3}}, trace::OpCode::kAlltoAll, 4);
  Result<JobShape> a2a4Shape = recoverJobShape(a2a4, experts);
  REQUIRE(a2a4Shape.ok());
  Result<DataParallelScaler> even = DataParallelScaler::create(a2a4, *a2a4Shape, 0, 4);
  REQUIRE(even.ok());
  CHECK(even->rank(3).ops.at(0).record.count == 2);
  CHECK(even->rank(3).ops.at(0).record.nranks == 4);
  // The experts' gradients on expert-data groups {0,2}, {1,3}: 3 elements do not halve at EP4; 6 do,
  // and the group becomes rank 3 alone (DP / EP = 1).
  trace::TraceSet grads =
      mixedJob(4, {{{{0, 1}, {2, 3}}, trace::OpCode::kAlltoAll, 4}, {{{0, 2}, {1, 3}}, trace::OpCode::kAllReduce, 3}});
  Result<JobShape> gradShape = recoverJobShape(grads, experts);
  REQUIRE(gradShape.ok());
  Result<DataParallelScaler> oddGrads = DataParallelScaler::create(grads, *gradShape, 0, 4);
  REQUIRE_FALSE(oddGrads.ok());
  INFO(oddGrads.status().message());
  CHECK(oddGrads.status().message().find("job/rank0.jsonl:5: allreduce of count 3 on an expert-data-parallel group: "
                                         "the experts' buffer at EP=4 would be 3 x 2 / 4 elements") == 0);
  for (trace::TraceFile& file : grads.files) file.ops.at(1).record.count = 6;
  Result<DataParallelScaler> halved = DataParallelScaler::create(grads, *gradShape, 0, 4);
  REQUIRE(halved.ok());
  CHECK(halved->rank(3).ops.at(1).record.count == 3);
  CHECK(halved->rank(3).ops.at(1).record.nranks == 1);
}

TEST_CASE("expert buffers sharded over expert-data groups are resized by their share", "[scale][ep]") {
  // 4 ranks x 32768 (a multiple of lcm(4, 128)) at half the experts over 2 ranks: 65536 / 2.
  Result<ShardCount> half = resizeShard(32768, 4, 2, BufferShare{2, 4});
  REQUIRE(half.ok());
  CHECK(half->count == 32768);
  CHECK(half->megatronPadding);
  CHECK(half->withinElements == 64 + 128);                             // lcm(4, 128) x 2 / 4, and the new padding
  Result<ShardCount> plain = resizeShard(6, 3, 3, BufferShare{2, 1});  // 18 elements, twice as many
  REQUIRE(plain.ok());
  CHECK(plain->count == 12);
  Result<ShardCount> odd = resizeShard(5, 3, 3, BufferShare{1, 2});  // 15 / 2: not whole
  REQUIRE_FALSE(odd.ok());
  CHECK(odd.status().message().find("15 elements times 1 / 2 divides neither") != std::string::npos);
  CHECK(spreadPart(287, 2, 0) == 144);
  CHECK(spreadPart(287, 2, 1) == 143);
}

}  // namespace
}  // namespace nshim::workload

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

trace::TraceSet scaleTo(const trace::TraceSet& traces, int dp) {
  Result<JobShape> shape = recoverJobShape(traces);
  REQUIRE(shape.ok());
  Result<DataParallelScaler> scaler = DataParallelScaler::create(traces, *shape, dp);
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

// A job of `world` ranks whose communicators are `groups` (members in rank order), each carrying
// one op of `op` with `count` on every member.
trace::TraceSet syntheticJob(int world, const std::vector<std::vector<int>>& groups,
                             trace::OpCode op = trace::OpCode::kAllReduce, uint64_t count = 256) {
  trace::TraceSet set;
  set.files.resize(world);
  for (int rank = 0; rank < world; ++rank) {
    set.files[rank].path = "job/rank" + std::to_string(rank) + ".jsonl";
    set.files[rank].header.globalRank = rank;
  }
  uint64_t n = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t r = 0; r < groups[g].size(); ++r) {
      trace::TraceFile& file = set.files[groups[g][r]];
      trace::CommEntry comm;
      comm.record.event = trace::CommEvent::kInit;
      comm.record.commId = 100 + g;
      comm.record.nranks = static_cast<int32_t>(groups[g].size());
      comm.record.rank = static_cast<int32_t>(r);
      comm.record.globalRank = groups[g][r];
      comm.n = n++;
      comm.line = static_cast<int64_t>(file.comms.size() + file.ops.size() + 2);
      file.comms.push_back(comm);
      trace::OpEntry entry;
      entry.record.op = op;
      entry.record.commId = 100 + g;
      entry.record.count = count;
      entry.record.datatype = 7;  // float32
      entry.record.root = trace::kNoRank;
      entry.record.peer = trace::kNoRank;
      entry.record.rank = comm.record.rank;
      entry.record.nranks = comm.record.nranks;
      entry.n = n++;
      entry.line = comm.line + 1;
      file.ops.push_back(entry);
    }
  }
  return set;
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

}  // namespace
}  // namespace nshim::workload

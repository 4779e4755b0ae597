// Context-parallel groups in a job's shape (workload/job_shape.h, Megatron's tp-cp-dp-pp order):
// synthetic traces (no GPU capture has CP) whose CP groups carry a ring of sends or an even
// all-to-all are recognised as TP x CP x DP x PP, `scale --dp` keeps their ops byte for byte and
// resizes the data-and-context groups, and a ring or all-to-all that may be CP, PP or EP is refused
// naming the candidates unless --cp (or --pp / --ep) chooses.
#include <map>
#include <string>
#include <vector>

#include "tests/catch.h"
#include "tests/workload/synthetic_job.h"
#include "workload/dp_scale.h"
#include "workload/job_shape.h"

namespace nshim::workload {
namespace {

// TP2 x CP2 x DP2 (rank = dp * 4 + cp * 2 + tp): tensor allreduces, the CP attention ring,
// the gradients' allreduce and a padded reduce-scatter on DP x CP, an allreduce on DP alone.
trace::TraceSet tp2Cp2Dp2() {
  return mixedJob(8, {{{{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
                      {{{0, 2}, {1, 3}, {4, 6}, {5, 7}}, trace::OpCode::kSend, 4096},
                      {{{0, 2, 4, 6}, {1, 3, 5, 7}}, trace::OpCode::kAllReduce, 1000},
                      {{{0, 2, 4, 6}, {1, 3, 5, 7}}, trace::OpCode::kReduceScatter, 128},
                      {{{0, 4}, {1, 5}, {2, 6}, {3, 7}}, trace::OpCode::kAllReduce, 1}});
}

TEST_CASE("CP groups are recovered in Megatron's tp-cp-dp-pp order", "[scale][cp]") {
  RankLayout layout;
  layout.world = 8;
  layout.tp = 2;
  layout.cp = 2;
  layout.dp = 2;
  CHECK(layout.problem().empty());
  CHECK(layout.groupMembers(GroupKind::kCp, 5) == std::vector<int>{5, 7});
  CHECK(layout.groupMembers(GroupKind::kDp, 5) == std::vector<int>{1, 5});
  CHECK(layout.groupMembers(GroupKind::kDpCp, 5) == std::vector<int>{1, 3, 5, 7});
  CHECK(layout.groupMembers(GroupKind::kTp, 5) == std::vector<int>{4, 5});
  layout.ep = 2;
  CHECK(layout.problem().find("expert groups are not laid out with context parallelism") != std::string::npos);

  Result<JobShape> shape = recoverJobShape(tp2Cp2Dp2());
  REQUIRE(shape.ok());
  CHECK(shape->toString() == "TP=2 CP=2 DP=2 PP=1 (8 ranks)");
  std::map<GroupKind, int> kinds;
  for (const auto& [id, comm] : shape->comms) ++kinds[comm.kind];
  CHECK(kinds ==
        std::map<GroupKind, int>{{GroupKind::kTp, 4}, {GroupKind::kCp, 4}, {GroupKind::kDpCp, 4}, {GroupKind::kDp, 4}});
}

TEST_CASE("scale --dp keeps CP groups byte for byte and resizes DP x CP", "[scale][cp]") {
  trace::TraceSet traces = tp2Cp2Dp2();
  Result<JobShape> shape = recoverJobShape(traces);
  REQUIRE(shape.ok());
  Result<DataParallelScaler> scaler = DataParallelScaler::create(traces, *shape, 4);
  REQUIRE(scaler.ok());
  CHECK(shapeText(scaler->to()) == "TP=2 CP=2 DP=4 PP=1 (16 ranks)");
  // Rank 13 (dp 3, cp 0, tp 1) does what captured rank 5 (dp 1, cp 0, tp 1) did.
  trace::TraceFile rank13 = scaler->rank(13);
  std::map<uint64_t, std::vector<int>> members;
  for (const trace::CommEntry& comm : rank13.comms) {
    std::vector<int>& m = members[comm.record.commId];
    m.resize(comm.record.nranks, -1);
    m[comm.record.rank] = comm.record.globalRank;
  }
  std::vector<std::string> ops;
  for (const trace::OpEntry& entry : rank13.ops) {
    const trace::OpRecord& op = entry.record;
    std::string text = std::string(trace::opName(op.op)) + " " + std::to_string(op.count) + " peer " +
                       std::to_string(op.peer) + " rank " + std::to_string(op.rank) + "/" + std::to_string(op.nranks);
    ops.push_back(text + " size " + std::to_string(members[op.commId].size()));
  }
  CHECK(ops == std::vector<std::string>{"allreduce 256 peer -1 rank 1/2 size 2",  // tensor {12,13}
                                        "send 4096 peer 1 rank 0/2 size 2",       // CP ring {13,15}
                                        "recv 4096 peer 1 rank 0/2 size 2",
                                        "allreduce 1000 peer -1 rank 6/8 size 8",    // DP x CP, 8 ranks
                                        "reducescatter 64 peer -1 rank 6/8 size 8",  // 512 padded / 8
                                        "allreduce 1 peer -1 rank 3/4 size 4"});     // DP {1,5,9,13}
  CHECK(rank13.ops[1].record.commId == rank13.ops[2].record.commId);
  // The CP ring's members: 13 and 15 (strided by TP within the DP x CP block).
  const trace::TraceFile rank15 = scaler->rank(15);
  CHECK(rank15.ops[1].record.commId == rank13.ops[1].record.commId);
  CHECK(rank15.ops[1].record.rank == 1);
}

TEST_CASE("a ring that may be CP or PP, and an all-to-all that may be CP or EP, are refused until --cp says",
          "[scale][cp]") {
  trace::TraceSet ring = syntheticJob(2, {{0, 1}}, trace::OpCode::kSend);
  Result<JobShape> either = recoverJobShape(ring);
  REQUIRE_FALSE(either.ok());
  CHECK(either.status().message().find("the job's shape is ambiguous: TP=1 DP=1 PP=2, TP=1 CP=2 DP=1 PP=1 all "
                                       "fit") == 0);
  CHECK(either.status().message().find("choose with --tp, --pp, --ep or --cp") != std::string::npos);
  ShapeOptions cp;
  cp.cp = 2;
  Result<JobShape> chosen = recoverJobShape(ring, cp);
  REQUIRE(chosen.ok());
  CHECK(chosen->toString() == "TP=1 CP=2 DP=1 PP=1 (2 ranks)");

  trace::TraceSet a2a = mixedJob(4, {{{{0, 1}, {2, 3}}, trace::OpCode::kAlltoAll, 64}, {{{0, 1, 2, 3}}}});
  Result<JobShape> cpOrEp = recoverJobShape(a2a);
  REQUIRE_FALSE(cpOrEp.ok());
  CHECK(cpOrEp.status().message().find("TP=1 DP=4 EP=2 PP=1, TP=1 CP=2 DP=2 PP=1 all fit") != std::string::npos);
  Result<JobShape> asCp = recoverJobShape(a2a, cp);
  REQUIRE(asCp.ok());
  CHECK(asCp->toString() == "TP=1 CP=2 DP=2 PP=1 (4 ranks)");
  ShapeOptions noCp;
  noCp.cp = 1;
  Result<JobShape> asEp = recoverJobShape(a2a, noCp);
  REQUIRE(asEp.ok());
  CHECK(asEp->toString() == "TP=1 DP=4 EP=2 PP=1 (4 ranks)");
  // An uneven exchange (tokens follow the data) is the experts' all-to-all, never CP.
  trace::TraceSet tokens = a2a;
  tokens.files[0].ops[0].record.count = 65;
  Result<JobShape> moe = recoverJobShape(tokens);
  REQUIRE(moe.ok());
  CHECK(moe->toString() == "TP=1 DP=4 EP=2 PP=1 (4 ranks)");
}

}  // namespace
}  // namespace nshim::workload

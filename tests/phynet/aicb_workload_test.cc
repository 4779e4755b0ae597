// AICB CSV reader tests: the example (8 ranks, TP=2 DP=4 EP=2 inferred from comm_group_size) expands
// to hand-computed per-rank ops; measured logs give recorded times and ms compute; pipeline p2p rows
// pair up across stages; every malformed input fails naming file, line and field.
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/catch.h"
#include "tests/phynet/workload_files.h"
#include "workload/aicb_workload.h"
#include "workload/workload_check.h"

namespace nshim::workload {
namespace {

const char* kExample = "examples/workloads/aicb_tp2_dp4_ep2.csv";

struct ExpectedOp {
  OpKind kind;
  const char* label;
  uint64_t count;
  uint64_t bytes;
  int64_t computeNs;
  int root;
  int line;
};

// Groups of each rank by hand (rank = dp_idx * 2 + tp_idx; EP = 2 consecutive DP members).
const std::map<std::string, std::vector<std::vector<int>>> kGroupsByRank = {
    {"tp", {{0, 1}, {0, 1}, {2, 3}, {2, 3}, {4, 5}, {4, 5}, {6, 7}, {6, 7}}},
    {"dp",
     {{0, 2, 4, 6}, {1, 3, 5, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}}},
    {"ep", {{0, 2}, {1, 3}, {0, 2}, {1, 3}, {4, 6}, {5, 7}, {4, 6}, {5, 7}}},
};

// Every rank replays every row: epoch_end rows vanish, computation rows (generated file: ns) become
// the compute gap of the next op.
const std::vector<ExpectedOp> kExampleOps = {
    {OpKind::kAllReduce, "dp", 2, 8, 0, -1, 3},
    {OpKind::kAllGather, "dp", 2, 32, 0, -1, 4},
    {OpKind::kBroadcast, "tp", 6, 24, 0, 0, 5},
    {OpKind::kBroadcast, "tp", 10, 40, 0, 0, 7},
    {OpKind::kAllReduce, "tp", 4194304, 16777216, 250000, -1, 9},
    {OpKind::kAllToAll, "ep", 1048576, 8388608, 0, -1, 10},
    {OpKind::kAllToAll, "ep", 1048576, 8388608, 0, -1, 11},
    {OpKind::kAllReduce, "tp", 2048, 8192, 0, -1, 12},
    {OpKind::kAllReduce, "dp", 1, 4, 0, -1, 13},
    {OpKind::kAllToAll, "ep", 1048576, 8388608, 500000, -1, 15},
    {OpKind::kAllToAll, "ep", 1048576, 8388608, 0, -1, 16},
    {OpKind::kAllReduce, "tp", 4194304, 16777216, 0, -1, 17},
    {OpKind::kReduceScatter, "dp", 4194304, 67108864, 0, -1, 18},
    {OpKind::kAllGather, "dp", 2097152, 33554432, 0, -1, 19},
    {OpKind::kAllReduce, "tp", 1, 4, 0, -1, 20},
};

TEST_CASE("AICB example expands to the hand-computed ops of every rank", "[phynet]") {
  const std::string path = examplePath(kExample);
  WorkloadOptions options;
  options.iterations = 2;
  auto workload = loadAicbWorkload(path, options);
  REQUIRE(workload.ok());
  REQUIRE(workload->worldSize == 8);
  REQUIRE(workload->ranks.size() == 8);
  CHECK(workload->comms.size() == 4 + 2 + 4);
  CHECK(workload->description.find("TP=2 DP=4 EP=2 PP=1") != std::string::npos);
  for (int rank = 0; rank < 8; ++rank) {
    const std::vector<WorkOp>& ops = workload->ranks[rank].ops;
    REQUIRE(ops.size() == 2 * kExampleOps.size());
    std::map<uint64_t, uint64_t> seqByComm;
    for (size_t i = 0; i < ops.size(); ++i) {
      const WorkOp& op = ops[i];
      const ExpectedOp& want = kExampleOps[i % kExampleOps.size()];
      INFO("rank " << rank << " op " << i);
      const CommGroup* comm = workload->findComm(op.commId);
      REQUIRE(comm != nullptr);
      CHECK(comm->label == want.label);
      CHECK(comm->members == kGroupsByRank.at(want.label)[rank]);
      CHECK(op.kind == want.kind);
      CHECK(op.count == want.count);
      CHECK(op.type == DataType::kFloat32);
      CHECK(op.bytes == want.bytes);
      CHECK(op.computeNs == want.computeNs);
      CHECK(op.root == want.root);
      CHECK(op.recordedNs == -1);
      CHECK(op.seq == seqByComm[op.commId]++);
      CHECK(op.source == path + ":" + std::to_string(want.line));
    }
  }
  CHECK(checkWorkload(*workload).ok());
}

TEST_CASE("AICB options override the inferred layout", "[phynet]") {
  WorkloadOptions options;
  options.worldSize = 16;  // TP=2 from the rows, DP becomes 8 (the rows' 4 is a warning)
  auto workload = parseAicbWorkload(readWholeFile(examplePath(kExample)), "x.csv", options);
  REQUIRE(workload.ok());
  REQUIRE(workload->worldSize == 16);
  const CommGroup* dp = workload->findComm(workload->ranks[9].ops[0].commId);
  REQUIRE(dp != nullptr);
  CHECK(dp->members == std::vector<int>{1, 3, 5, 7, 9, 11, 13, 15});
  CHECK(workload->ranks[9].ops[0].count == 2);
}

const std::string kLog =
    "comm_type,comm_group,msg_size,stage,dst,src,additional,_elapsed_time,algbw,busbw,count\n"
    "CommType.all_reduce,CommGroup.tp_group,1048576,forward,None,None,,0.25,4.19,4.19,1\n"
    "CommType.computation,None,((1, 2), (2, 3)),forward.x,None,None,,1.5,0.0,0.0,1\n"
    "\"CommType.all_gather\",CommGroup.dp_group,\"4096\",step,None,None,,0.125,0.0,0.0,1\n"
    "CommType.barrier,None,0,step,None,None,,0.01,None,None,1\n"
    "CommType.epoch_end,None,0,,None,None,,12.5,0.0,0.0,1\n";

TEST_CASE("AICB measured logs: recorded times in ms, computation in ms, layout from options", "[phynet]") {
  auto unknown = parseAicbWorkload(kLog, "log.csv", WorkloadOptions{});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("log.csv:2: comm_group_size: size of tp_group unknown") != std::string::npos);

  WorkloadOptions options;
  options.tp = 2;
  options.worldSize = 4;
  auto workload = parseAicbWorkload(kLog, "log.csv", options);
  REQUIRE(workload.ok());
  const std::vector<WorkOp>& ops = workload->ranks[3].ops;
  REQUIRE(ops.size() == 3);
  CHECK(ops[0].kind == OpKind::kAllReduce);
  CHECK(ops[0].recordedNs == 250000);
  CHECK(workload->findComm(ops[0].commId)->members == std::vector<int>{2, 3});
  CHECK(ops[1].kind == OpKind::kAllGather);
  CHECK(ops[1].computeNs == 1500000);
  CHECK(ops[1].recordedNs == 125000);
  CHECK(ops[1].count == 512);
  CHECK(workload->findComm(ops[1].commId)->members == std::vector<int>{1, 3});
  CHECK(ops[2].kind == OpKind::kAllReduce);  // barrier: 4 bytes on the world
  CHECK((ops[2].count == 1 && ops[2].bytes == 4 && ops[2].recordedNs == 10000));
  CHECK(workload->findComm(ops[2].commId)->members == std::vector<int>{0, 1, 2, 3});
  CHECK(workload->findComm(ops[2].commId)->label == "world");
  CHECK(checkWorkload(*workload).ok());
}

TEST_CASE("AICB pipeline p2p rows pair up between neighbouring stages", "[phynet]") {
  const std::string text =
      "comm_type,comm_group,comm_group_size,msg_size,stage,dst,src,additional,_elapsed_time,algbw,busbw,count\n"
      "CommType.all_reduce,CommGroup.pp_group,2,8,init,None,None,,None,None,None,1\n"
      "CommType.irecv,CommGroup.pp_group,1,65536,forward_step,None,None,recv_prev,None,None,None,1\n"
      "CommType.all_reduce,CommGroup.tp_group,2,65536,forward,None,None,,None,None,None,1\n"
      "CommType.isend,CommGroup.pp_group,1,65536,forward_step,None,None,send_next,None,None,None,1\n"
      "CommType.irecv,CommGroup.pp_group,1,65536,backward_step,None,None,recv_next,None,None,None,1\n"
      "CommType.isend,CommGroup.pp_group,1,65536,backward_step,None,None,send_prev,None,None,None,1\n";
  auto workload = parseAicbWorkload(text, "pp.csv", WorkloadOptions{});
  REQUIRE(workload.ok());
  REQUIRE(workload->worldSize == 4);  // TP=2, PP=2, DP=1: stages {0,1} and {2,3}
  const std::vector<WorkOp>& first = workload->ranks[1].ops;
  REQUIRE(first.size() == 4);  // no previous stage: recv_prev and send_prev are skipped
  CHECK(first[0].kind == OpKind::kAllReduce);
  CHECK(workload->findComm(first[0].commId)->members == std::vector<int>{1, 3});
  CHECK(workload->findComm(first[1].commId)->members == std::vector<int>{0, 1});
  CHECK((first[2].kind == OpKind::kSend && first[2].peer == 1 && first[2].source == "pp.csv:5"));
  CHECK((first[3].kind == OpKind::kRecv && first[3].peer == 1 && first[3].bytes == 65536));
  const std::vector<WorkOp>& last = workload->ranks[3].ops;
  REQUIRE(last.size() == 4);
  CHECK((last[1].kind == OpKind::kRecv && last[1].peer == 0 && last[1].source == "pp.csv:3"));
  CHECK((last[3].kind == OpKind::kSend && last[3].peer == 0 && last[3].source == "pp.csv:7"));
  CHECK(checkWorkload(*workload).ok());
}

TEST_CASE("AICB pp_stage blocks: each stage's ranks replay their own block, p2p rows in batches", "[phynet]") {
  // The shape of AICB's L65B-M1-C05 tp2_pp8 CSV on PP=2: a banner and a header per stage, the
  // embedding allreduce in the last stage's block only. TP=2, PP=2: stages {0,1} and {2,3}.
  const std::string header =
      "comm_type,comm_group,comm_group_size,msg_size,stage,dst,src,additional,_elapsed_time,algbw,busbw,count\n";
  const std::string text =
      "[ pp_stage0: [rank0, rank1] ]\n" + header +                                                        // 1-2
      "CommType.all_reduce,CommGroup.tp_group,2,4096,forward,None,None,,None,None,None,1\n" +             // 3
      "CommType.all_reduce,CommGroup.tp_group,2,4096,forward,None,None,,None,None,None,1\n" +             // 4
      "CommType.isend,CommGroup.pp_group,1,65536,forward_step,None,None,send_next,None,None,None,1\n" +   // 5
      "CommType.irecv,CommGroup.pp_group,1,65536,backward_step,None,None,recv_next,None,None,None,1\n" +  // 6
      "[ pp_stage1: [rank2, rank3] ]\n" + header +                                                        // 7-8
      "CommType.irecv,CommGroup.pp_group,1,65536,forward_step,None,None,recv_prev,None,None,None,1\n" +   // 9
      "CommType.all_reduce,CommGroup.tp_group,2,8192,forward,None,None,,None,None,None,1\n" +             // 10
      "CommType.isend,CommGroup.pp_group,1,65536,backward_step,None,None,send_prev,None,None,None,1\n" +  // 11
      "CommType.all_reduce,CommGroup.embedding_group,2,1024,init,None,None,,None,None,None,1\n";          // 12
  auto workload = parseAicbWorkload(text, "stages.csv", WorkloadOptions{});
  REQUIRE(workload.ok());
  REQUIRE(workload->worldSize == 4);
  for (int rank : {0, 1}) {  // block 0 (4 ops) and the embedding allreduce of block 1
    const std::vector<WorkOp>& ops = workload->ranks[rank].ops;
    REQUIRE(ops.size() == 5);
    CHECK((ops[0].bytes == 4096 && ops[1].bytes == 4096 && ops[0].source == "stages.csv:3"));
    CHECK((ops[2].kind == OpKind::kSend && ops[3].kind == OpKind::kRecv));
    CHECK((ops[2].group != 0 && ops[2].group == ops[3].group));  // rows 5-6: one batch
    CHECK((ops[4].bytes == 1024 && ops[4].source == "stages.csv:12"));
  }
  for (int rank : {2, 3}) {  // block 1 only
    const std::vector<WorkOp>& ops = workload->ranks[rank].ops;
    REQUIRE(ops.size() == 4);
    CHECK((ops[0].kind == OpKind::kRecv && ops[0].group != 0 && ops[0].source == "stages.csv:9"));
    CHECK((ops[1].bytes == 8192 && ops[1].group == 0));
    CHECK((ops[2].kind == OpKind::kSend && ops[2].group != 0 && ops[2].group != ops[0].group));
    CHECK(ops[3].bytes == 1024);
  }
  CHECK(checkWorkload(*workload).ok());

  // Both stages send before they receive, in separate batches: each send waits for the other's.
  const std::string deadlocked =
      "[ pp_stage0: [rank0, rank1] ]\n" + header +                                                        // 1-2
      "CommType.all_reduce,CommGroup.tp_group,2,4096,forward,None,None,,None,None,None,1\n" +             // 3
      "CommType.isend,CommGroup.pp_group,1,65536,forward_step,None,None,send_next,None,None,None,1\n" +   // 4
      "CommType.all_reduce,CommGroup.tp_group,2,4096,forward,None,None,,None,None,None,1\n" +             // 5
      "CommType.irecv,CommGroup.pp_group,1,65536,backward_step,None,None,recv_next,None,None,None,1\n" +  // 6
      "[ pp_stage1: [rank2, rank3] ]\n" + header +                                                        // 7-8
      "CommType.isend,CommGroup.pp_group,1,65536,backward_step,None,None,send_prev,None,None,None,1\n" +  // 9
      "CommType.all_reduce,CommGroup.tp_group,2,8192,forward,None,None,,None,None,None,1\n" +             // 10
      "CommType.irecv,CommGroup.pp_group,1,65536,forward_step,None,None,recv_prev,None,None,None,1\n";    // 11
  auto stuck = parseAicbWorkload(deadlocked, "stages.csv", WorkloadOptions{});
  REQUIRE(stuck.ok());
  Status verdict = checkWorkload(*stuck);
  REQUIRE_FALSE(verdict.ok());
  CHECK(verdict.message().find("deadlocks") != std::string::npos);
  CHECK(verdict.message().find("(stage 0) waits in send") != std::string::npos);
  CHECK(verdict.message().find("stages.csv:4) for rank 2") != std::string::npos);
  CHECK(verdict.message().find("(stage 1) waits in send") != std::string::npos);
  CHECK(verdict.message().find("stages.csv:9) for rank 0") != std::string::npos);

  // A file with blocks needs one per stage of the layout, once each.
  auto missing = parseAicbWorkload("[ pp_stage1: [rank2, rank3] ]\n" + header +
                                       "CommType.all_reduce,CommGroup.pp_group,2,8,init,None,None,,None,None,None,1\n",
                                   "one.csv", WorkloadOptions{});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("one.csv:1: pp_stage: the file has stage blocks but none for stage 0 of 2") ==
        0);
}

TEST_CASE("AICB 128-rank CSVs fold onto fewer ranks: data-parallel groups shrink, TP is kept", "[phynet]") {
  // As AICB's model CSVs (128-rank jobs): ZeRO rows on a 128-rank dp_group and the world ("all"),
  // Megatron rows on a TP=8 group and a 16-rank dp_group.
  const std::string header =
      "comm_type,comm_group,comm_group_size,msg_size,stage,dst,src,additional,_elapsed_time,algbw,busbw,count\n";
  const std::string zero = header +
                           "CommType.all_gather,CommGroup.dp_group,128,1048576,f,None,None,,None,None,None,1\n"
                           "CommType.reduce_scatter,CommGroup.dp_group,128,1048576,b,None,None,,None,None,None,1\n"
                           "CommType.all_reduce,CommGroup.all,128,8,s,None,None,,None,None,None,1\n"
                           "CommType.all_gather,CommGroup.dp_group,128,2097152,f,None,None,,None,None,None,1\n";
  WorkloadOptions options;
  options.worldSize = 8;
  auto folded = parseAicbWorkload(zero, "zero.csv", options);
  REQUIRE(folded.ok());
  REQUIRE(folded->worldSize == 8);
  for (const RankWork& rank : folded->ranks) {
    std::map<std::string, int> perGroup;
    for (const WorkOp& op : rank.ops) {
      const CommGroup* comm = folded->findComm(op.commId);
      REQUIRE(comm->members.size() == 8);
      ++perGroup[comm->label];
    }
    CHECK(perGroup == std::map<std::string, int>{{"dp", 3}, {"world", 1}});
    CHECK(rank.ops[3].bytes == 2097152);  // sizes as written
  }
  CHECK(checkWorkload(*folded).ok());

  const std::string megatron = header +
                               "CommType.all_reduce,CommGroup.tp_group,8,65536,f,None,None,,None,None,None,1\n"
                               "CommType.all_reduce,CommGroup.dp_group,16,4096,b,None,None,,None,None,None,1\n"
                               "CommType.all_reduce,CommGroup.tp_group,8,65536,f,None,None,,None,None,None,1\n";
  auto tpKept = parseAicbWorkload(megatron, "g13b.csv", options);
  REQUIRE(tpKept.ok());
  for (const RankWork& rank : tpKept->ranks) {
    REQUIRE(rank.ops.size() == 2);  // the dp allreduce is on a group of one rank: skipped, and said
    CHECK(tpKept->findComm(rank.ops[0].commId)->members.size() == 8);
  }
  REQUIRE(tpKept->skipped.size() == 1);
  CHECK(tpKept->skipped[0].why == "on a group of one rank");
}

TEST_CASE("AICB MoE rows without an ep_group size take EP from dp_group / ep_dp_group", "[phynet]") {
  // As AICB's generator writes MoE CSVs: ep_group size None. DP=8 and ep_dp_group of 2 give EP=4.
  const std::string text =
      "comm_type,comm_group,comm_group_size,msg_size,stage,dst,src,additional,_elapsed_time,algbw,busbw,count\n"
      "CommType.all_reduce,CommGroup.dp_group,8,4096,init,None,None,,None,None,None,1\n"
      "CommType.all_to_all,CommGroup.ep_group,None,65536,moe,None,None,,None,None,None,1\n"
      "CommType.all_reduce,CommGroup.ep_dp_group,2,4096,grad,None,None,,None,None,None,1\n";
  auto workload = parseAicbWorkload(text, "moe.csv", WorkloadOptions{});
  REQUIRE(workload.ok());
  CHECK(workload->description.find("TP=1 DP=8 EP=4 PP=1 (8 ranks)") != std::string::npos);
  for (const RankWork& rank : workload->ranks) {
    REQUIRE(rank.ops.size() == 3);
    CHECK(workload->findComm(rank.ops[1].commId)->members.size() == 4);
    CHECK(workload->findComm(rank.ops[2].commId)->members.size() == 2);
  }
  CHECK(checkWorkload(*workload).ok());
  // Without ep_dp_group the file does not say: the error names the flag.
  auto unknown = parseAicbWorkload(text.substr(0, text.rfind("CommType.all_reduce,CommGroup.ep_dp_group")), "moe.csv",
                                   WorkloadOptions{});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("moe.csv:3: comm_group_size: size of ep_group unknown") == 0);
  CHECK(unknown.status().message().find("pass --ep N") != std::string::npos);
}

void requireError(const std::string& text, const std::string& where, const std::string& detail,
                  WorkloadOptions options = {}) {
  auto result = parseAicbWorkload(text, "bad.csv", options);
  REQUIRE_FALSE(result.ok());
  const std::string& message = result.status().message();
  INFO(message);
  CHECK(result.status().code() == Code::kInvalidArgument);
  CHECK(message.find("bad.csv:" + where) != std::string::npos);
  CHECK(message.find(detail) != std::string::npos);
}

const std::string kHeader =
    "comm_type,comm_group,comm_group_size,msg_size,stage,dst,src,additional,_elapsed_time,algbw,busbw,count\n";
const std::string kTpRow = "CommType.all_reduce,CommGroup.tp_group,2,4096,f,None,None,,None,None,None,1\n";

TEST_CASE("AICB malformed inputs name file, line and field", "[phynet]") {
  const std::string example = readWholeFile(examplePath(kExample));
  SECTION("truncated row") {
    size_t lastLine = example.rfind('\n', example.size() - 2) + 1;  // start of line 21
    requireError(example.substr(0, lastLine - 1 - 20), "20: row", "truncated row");
  }
  SECTION("wrong column count") {
    requireError(kHeader + kTpRow + "CommType.all_reduce,CommGroup.tp_group,2,4096,f,None,None,,None,None,None\n",
                 "3: columns", "found 11");
    requireError(kHeader + "CommType.all_reduce,CommGroup.tp_group,2,4096,f,None,None,,None,None,None,1,7\n",
                 "2: columns", "found 13");
  }
  SECTION("unknown comm_type, comm_group, direction") {
    requireError(kHeader + "CommType.all_reduce_xx,CommGroup.tp_group,2,4096,f,None,None,,None,None,None,1\n",
                 "2: comm_type", "all_reduce_xx");
    requireError(kHeader + "CommType.all_reduce,CommGroup.xx_group,2,4096,f,None,None,,None,None,None,1\n",
                 "2: comm_group", "xx_group");
    requireError(kHeader + "CommType.all_reduce,None,2,4096,f,None,None,,None,None,None,1\n", "2: comm_group",
                 "unknown comm_group");
    requireError(kHeader + "CommType.isend,CommGroup.pp_group,2,4096,f,None,None,send_up,None,None,None,1\n",
                 "2: additional", "send_up");
  }
  SECTION("negative or non-numeric values") {
    requireError(kHeader + kTpRow + "CommType.all_reduce,CommGroup.tp_group,2,-4096,f,None,None,,None,None,None,1\n",
                 "3: msg_size", "negative");
    requireError(kHeader + "CommType.all_reduce,CommGroup.tp_group,2,12k,f,None,None,,None,None,None,1\n",
                 "2: msg_size", "not a number");
    requireError(kHeader + "CommType.all_reduce,CommGroup.tp_group,two,4096,f,None,None,,None,None,None,1\n",
                 "2: comm_group_size", "not a number");
    requireError(kHeader + "CommType.all_reduce,CommGroup.tp_group,2,4096,f,None,None,,fast,None,None,1\n",
                 "2: _elapsed_time", "not a number");
    requireError(kHeader + "CommType.computation,None,None,0,f,None,None,,-3,None,None,1\n", "2: _elapsed_time",
                 "negative");
  }
  SECTION("sizes at or beyond 2^63 (and anything beyond 1 PiB), never read as 0 bytes") {
    for (const char* size : {"9223372036854775807", "1e19", "1e300", "1e18"}) {
      INFO(size);
      requireError(
          kHeader + kTpRow + "CommType.all_gather,CommGroup.tp_group,2," + size + ",f,None,None,,None,None,None,1\n",
          "3: msg_size", std::string(size) + " bytes is more than the 1125899906842624 bytes (1 PiB)");
      // a row that would move no data (a group of one rank) and a pipeline row alike
      requireError(
          kHeader + kTpRow + "CommType.all_reduce,CommGroup.dp_group,1," + size + ",f,None,None,,None,None,None,1\n",
          "3: msg_size", "--scale");
      requireError(kHeader + kTpRow + "CommType.isend,CommGroup.pp_group,1," + size +
                       ",f,None,None,send_next,None,None,None,1\n",
                   "3: msg_size", "1 PiB");
    }
    WorkloadOptions scaled;
    scaled.scale = 1e-6;
    auto within = parseAicbWorkload(kHeader +
                                        "CommType.all_reduce,CommGroup.tp_group,2,1e19,f,None,None,,None,None,"
                                        "None,1\n",
                                    "s.csv", scaled);
    REQUIRE(within.ok());
    CHECK(within->ranks[0].ops.at(0).bytes == 10000000000000ull);
  }
  SECTION("groups that do not fit the world") {
    WorkloadOptions options;
    options.worldSize = 8;
    requireError(kHeader + "CommType.all_reduce,CommGroup.tp_group,16,4096,f,None,None,,None,None,None,1\n",
                 "2: comm_group_size", "TP=16 is larger than the world", options);
    requireError(
        kHeader + kTpRow + "CommType.all_reduce,CommGroup.embedding_group,16,4096,f,None,None,,None,None,None,1\n",
        "3: comm_group_size", "the embedding group of 16 ranks is larger than the world", options);
    options.worldSize = 2;
    requireError(example, "10: comm_group_size", "EP=2 does not divide DP=1", options);
    options = WorkloadOptions{};
    options.tp = 3;
    options.worldSize = 8;
    requireError(kHeader + kTpRow, " option worldSize", "not divisible by TP*PP = 3", options);
  }
  SECTION("header problems, unknown sizes, roots") {
    requireError(kTpRow, "1: header", "expected the header line");
    requireError("", "1: header", "no header line");
    requireError("comm_type,comm_group,comm_group_size,stage\n" + kTpRow, "1: msg_size", "missing column");
    requireError(kHeader + "CommType.all_reduce,CommGroup.ep_group,None,4096,f,None,None,,None,None,None,1\n",
                 "2: comm_group_size", "size of ep_group unknown");
    requireError(kHeader + kTpRow + "CommType.broadcast,CommGroup.tp_group,2,64,f,None,5,,None,None,None,1\n", "3: src",
                 "root 5 is outside the tp group");
  }
  SECTION("a missing file") {
    auto result = loadAicbWorkload("/nonexistent/w.csv", WorkloadOptions{});
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().message().find("/nonexistent/w.csv") != std::string::npos);
  }
}

TEST_CASE("AICB CSV saved with a UTF-8 BOM and CRLF line ends parses to the same ops", "[phynet]") {
  WorkloadOptions logOptions;
  logOptions.tp = 2;
  logOptions.worldSize = 4;
  // The example starts with a "[rank0 ~ rank7]" banner, the log with its header line.
  for (auto [text, options] :
       {std::pair{readWholeFile(examplePath(kExample)), WorkloadOptions{}}, std::pair{kLog, logOptions}}) {
    auto plain = parseAicbWorkload(text, "w.csv", options);
    REQUIRE(plain.ok());
    auto saved = parseAicbWorkload(asSpreadsheetSaves(text), "w.csv", options);
    INFO((saved.ok() ? std::string() : saved.status().message()));
    REQUIRE(saved.ok());
    requireSameWorkload(*plain, *saved);
  }
  // CR-only line ends (old Mac CSV) read the same too.
  std::string crOnly = kLog;
  for (char& c : crOnly)
    if (c == '\n') c = '\r';
  auto mac = parseAicbWorkload(crOnly, "w.csv", logOptions);
  REQUIRE(mac.ok());
  requireSameWorkload(*parseAicbWorkload(kLog, "w.csv", logOptions), *mac);
  // A BOM alone, and a file of nothing but a BOM, still read as they would without it.
  auto bomOnly = parseAicbWorkload("\xEF\xBB\xBF" + kLog, "w.csv", logOptions);
  REQUIRE(bomOnly.ok());
  requireSameWorkload(*parseAicbWorkload(kLog, "w.csv", logOptions), *bomOnly);
  requireError("\xEF\xBB\xBF", "1: header", "no header line");
  requireError("\xFF\xFE" + std::string("h\0e\0", 4), "1: encoding", "UTF-16 text: save the file as UTF-8");
}

// Shaped like AICB's workload/physical/micro_test files: no comm_group_size column, every row on the
// DP group, so nothing in the file says how many ranks there are.
const std::string kMicroTest =
    "comm_type,comm_group,msg_size,stage,dst,src,additional,_elapsed_time,algbw,busbw,count\n"
    "CommType.reduce_scatter,CommGroup.dp_group,65536,warmup,None,None,,None,None,None,1\n"
    "CommType.reduce_scatter,CommGroup.dp_group,65536,warmup,None,None,,None,None,None,1\n"
    "CommType.reduce_scatter,CommGroup.dp_group,1048576,test,None,None,,None,None,None,1\n";

TEST_CASE("AICB micro_test files: the unknown DP size names the --world-size flag", "[phynet]") {
  requireError(kMicroTest, "2: comm_group_size", "size of dp_group unknown");
  requireError(kMicroTest, "2: comm_group_size", "pass --world-size N");
  requireError(kHeader + "CommType.all_reduce,CommGroup.ep_group,None,4096,f,None,None,,None,None,None,1\n",
               "2: comm_group_size", "size of ep_group unknown (no row gives its comm_group_size): pass --ep N");
  WorkloadOptions options;
  options.worldSize = 4;
  auto workload = parseAicbWorkload(kMicroTest, "micro.csv", options);
  REQUIRE(workload.ok());
  CHECK(workload->description.find("TP=1 DP=4 EP=1 PP=1") != std::string::npos);
  REQUIRE(workload->ranks[3].ops.size() == 3);
  CHECK(workload->findComm(workload->ranks[3].ops[0].commId)->members == std::vector<int>{0, 1, 2, 3});
}

}  // namespace
}  // namespace nshim::workload

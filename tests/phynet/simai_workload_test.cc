// SimAI workload reader tests: the example file (TP=2 DP=4 EP=2) expands to hand-computed per-rank
// ops (groups, order, counts, compute gaps); iterations, scale, TP=1 folding and the pipeline
// send/recv; every malformed input fails naming file, line and field.
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/log.h"
#include "tests/catch.h"
#include "tests/phynet/workload_files.h"
#include "workload/rank_layout.h"
#include "workload/simai_workload.h"
#include "workload/workload_check.h"

namespace nshim::workload {
namespace {

const char* kExample = "examples/workloads/simai_tp2_dp4_ep2.txt";

struct ExpectedOp {
  OpKind kind;
  const char* label;
  uint64_t count;
  uint64_t bytes;
  int64_t computeNs;
  int line;
};

// Groups of each rank, written out by hand from the layout rule (rank = dp_idx * 2 + tp_idx).
const std::map<std::string, std::vector<std::vector<int>>> kGroupsByRank = {
    {"tp", {{0, 1}, {0, 1}, {2, 3}, {2, 3}, {4, 5}, {4, 5}, {6, 7}, {6, 7}}},
    {"dp",
     {{0, 2, 4, 6}, {1, 3, 5, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}}},
    {"ep", {{0, 2}, {1, 3}, {0, 2}, {1, 3}, {4, 6}, {5, 7}, {4, 6}, {5, 7}}},
    {"dp_ep", {{0, 4}, {1, 5}, {2, 6}, {3, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}}},
};

// One iteration of the example on any rank: forward L3 L4 L5 (L6, L7 NONE), then backward
// L7 wg, L6 wg, L5 ig, L4 ig, L3 wg; NONE phases' compute moves to the next op.
const std::vector<ExpectedOp> kExampleOps = {
    {OpKind::kAllReduce, "tp", 2097152, 8388608, 120000, 3},
    {OpKind::kAllReduce, "tp", 2097152, 8388608, 400000, 4},
    {OpKind::kAllToAll, "ep", 524288, 4194304, 300000, 5},
    {OpKind::kReduceScatter, "dp", 1048576, 16777216, 1 + 1 + 1 + 30000, 7},  // L6 fwd, L7 fwd, L7 ig
    {OpKind::kAllGather, "dp_ep", 262144, 2097152, 1 + 20000, 6},
    {OpKind::kAllToAll, "ep", 524288, 4194304, 310000, 5},
    {OpKind::kAllReduce, "tp", 2097152, 8388608, 290000 + 420000, 4},         // L5 wg is NONE
    {OpKind::kAllReduce, "dp", 4194304, 16777216, 380000 + 1000 + 50000, 3},  // L4 wg, L3 ig NONE
};

void requireOps(const Workload& workload, const std::string& file, const std::vector<ExpectedOp>& expected,
                int iterations) {
  REQUIRE(workload.worldSize == 8);
  REQUIRE(workload.ranks.size() == 8);
  for (int rank = 0; rank < 8; ++rank) {
    const RankWork& work = workload.ranks[rank];
    REQUIRE(work.globalRank == rank);
    REQUIRE(work.ops.size() == expected.size() * iterations);
    std::map<uint64_t, uint64_t> seqByComm;
    for (size_t i = 0; i < work.ops.size(); ++i) {
      const WorkOp& op = work.ops[i];
      const ExpectedOp& want = expected[i % expected.size()];
      INFO("rank " << rank << " op " << i);
      const CommGroup* comm = workload.findComm(op.commId);
      REQUIRE(comm != nullptr);
      CHECK(comm->label == want.label);
      CHECK(comm->members == kGroupsByRank.at(want.label)[rank]);
      CHECK(op.kind == want.kind);
      CHECK(op.count == want.count);
      CHECK(op.type == DataType::kFloat32);
      CHECK(op.bytes == want.bytes);
      CHECK(op.computeNs == want.computeNs);
      CHECK(op.recordedNs == -1);
      CHECK(op.seq == seqByComm[op.commId]++);
      CHECK(op.source == file + ":" + std::to_string(want.line));
    }
  }
}

TEST_CASE("SimAI example expands to the hand-computed ops of every rank", "[phynet]") {
  const std::string path = examplePath(kExample);
  auto workload = loadSimAiWorkload(path, WorkloadOptions{});
  REQUIRE(workload.ok());
  requireOps(*workload, path, kExampleOps, 1);
  CHECK(workload->comms.size() == 4 + 2 + 4 + 4);  // tp, dp, ep, dp_ep groups
  CHECK(workload->description.find("TP=2 DP=4 EP=2 PP=1") != std::string::npos);
  CHECK(checkWorkload(*workload).ok());
}

TEST_CASE("SimAI iterations repeat the layers and scale multiplies the bytes", "[phynet]") {
  const std::string text = readWholeFile(examplePath(kExample));
  WorkloadOptions options;
  options.iterations = 2;
  auto twice = parseSimAiWorkload(text, "x.txt", options);
  REQUIRE(twice.ok());
  requireOps(*twice, "x.txt", kExampleOps, 2);

  options.iterations = 1;
  options.scale = 0.25;
  auto quarter = parseSimAiWorkload(text, "x.txt", options);
  REQUIRE(quarter.ok());
  const WorkOp& first = quarter->ranks[5].ops[0];
  CHECK(first.bytes == 8388608 / 4);
  CHECK(first.count == 8388608 / 16);
  CHECK(quarter->ranks[5].ops[4].count == 262144 / 4);
}

TEST_CASE("SimAI ops on single-rank groups fold their compute into the next op", "[phynet]") {
  // TP=1: forward and input-grad ALLREDUCEs have nobody to talk to; DP = 4.
  const std::string text =
      "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 all_gpus: 4\n"
      "7\n"  // wrong count on purpose: a warning, the two lines present are used
      "a\t-1\t10\tALLREDUCE\t4096\t20\tALLREDUCE\t4096\t30\tALLREDUCE\t4096\t1\n"
      "b\t-1\t40\tALLGATHER\t4096\t50\tNONE\t0\t60\tALLREDUCE\t4095\t1\n";
  auto workload = parseSimAiWorkload(text, "fold.txt", WorkloadOptions{});
  REQUIRE(workload.ok());
  REQUIRE(workload->ranks.size() == 4);
  const std::vector<WorkOp>& ops = workload->ranks[2].ops;
  REQUIRE(ops.size() == 2);
  CHECK(ops[0].computeNs == 10 + 40 + 50 + 60);  // both forwards, b ig, b wg
  CHECK(ops[0].type == DataType::kUint8);        // 4095 bytes: not a float32 multiple
  CHECK(ops[0].count == 4095);
  CHECK(ops[0].source == "fold.txt:4");
  CHECK(ops[1].computeNs == 20 + 30);
  CHECK(ops[1].count == 1024);
  CHECK(workload->findComm(ops[1].commId)->members == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("SimAI pipeline stages exchange pp_comm bytes around their layers (rule pp-per-microbatch)", "[phynet]") {
  const std::string text =
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 2 vpp: 1 ga: 1 all_gpus: 4 "
      "checkpoints: 0 checkpoint_initiates: 0 pp_comm: 1048576.0\n"
      "1\n"
      "l\t-1\t100\tNONE\t0\t200\tNONE\t0\t300\tALLREDUCE\t4096\t1\n";
  WorkloadOptions realJob;
  std::string error;
  REQUIRE(parseSimAiRules("pp-per-microbatch", &realJob.simai, &error));
  auto workload = parseSimAiWorkload(text, "pp.txt", realJob);
  REQUIRE(workload.ok());
  // Stage 0 = ranks {0,1}, stage 1 = ranks {2,3}; PP groups {0,2} and {1,3}; DP groups {0,1}, {2,3}.
  const std::vector<WorkOp>& first = workload->ranks[1].ops;
  REQUIRE(first.size() == 3);
  CHECK((first[0].kind == OpKind::kSend && first[0].peer == 1 && first[0].computeNs == 100));
  CHECK((first[1].kind == OpKind::kRecv && first[1].peer == 1 && first[1].computeNs == 0));
  CHECK((first[2].kind == OpKind::kAllReduce && first[2].computeNs == 500));
  CHECK(first[0].bytes == 1048576);
  CHECK(first[0].source == "pp.txt:1");
  CHECK(workload->findComm(first[0].commId)->members == std::vector<int>{1, 3});
  CHECK(workload->findComm(first[2].commId)->members == std::vector<int>{0, 1});
  const std::vector<WorkOp>& last = workload->ranks[3].ops;
  REQUIRE(last.size() == 3);
  CHECK((last[0].kind == OpKind::kRecv && last[0].peer == 0));
  CHECK((last[1].kind == OpKind::kAllReduce && last[1].computeNs == 600));
  CHECK((last[2].kind == OpKind::kSend && last[2].peer == 0));
  CHECK(checkWorkload(*workload).ok());
}

TEST_CASE("SimAI's own rules by default, each switchable, said in the description", "[phynet]") {
  WorkloadOptions off;
  std::string error;
  REQUIRE(parseSimAiRules("none", &off.simai, &error));
  SECTION("forward ops below 4096 B are raised to 4096 B under HYBRID_TRANSFORMER_FWD_IN_BCKWD") {
    const std::string body = "1\nl\t-1\t1\tALLREDUCE\t100\t1\tALLREDUCE\t100\t1\tALLREDUCE\t100\t1\n";
    const std::string fwdInBckwd = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 all_gpus: 4\n" + body;
    auto raised = parseSimAiWorkload(fwdInBckwd, "f.txt", WorkloadOptions{});
    REQUIRE(raised.ok());
    const std::vector<WorkOp>& ops = raised->ranks[0].ops;  // forward (tp), input grad (tp), weight grad (dp)
    REQUIRE(ops.size() == 3);
    CHECK(ops[0].bytes == 4096);
    CHECK(ops[1].bytes == 100);  // SimAI raises forward sizes only
    CHECK(ops[2].bytes == 100);
    CHECK(raised->description.find("as SimAI: forward ops below 4096 B raised to 4096 B (1 layers)") !=
          std::string::npos);
    auto kept = parseSimAiWorkload(fwdInBckwd, "f.txt", off);
    REQUIRE(kept.ok());
    CHECK(kept->ranks[0].ops[0].bytes == 100);
    CHECK(kept->description.find("rule min-fwd-4096 off") != std::string::npos);
    auto other = parseSimAiWorkload("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 all_gpus: 4\n" + body, "f.txt",
                                    WorkloadOptions{});
    REQUIRE(other.ok());
    CHECK(other->ranks[0].ops[0].bytes == 100);  // other policies keep them
  }
  SECTION("no pp_comm transfers, as SimAI; rule pp-per-microbatch sends vpp*ga each way per stage boundary") {
    const std::string text =
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 2 vpp: 2 ga: 3 all_gpus: 4 "
        "pp_comm: 65536\n1\nl\t-1\t100\tNONE\t0\t200\tNONE\t0\t300\tALLREDUCE\t4096\t1\n";
    auto count = [](const std::vector<WorkOp>& ops, OpKind kind) {
      int n = 0;
      for (const WorkOp& op : ops) n += op.kind == kind ? 1 : 0;
      return n;
    };
    auto none = parseSimAiWorkload(text, "pp.txt", WorkloadOptions{});  // SimAI's rules
    REQUIRE(none.ok());
    for (int rank = 0; rank < 4; ++rank) {
      CHECK(count(none->ranks[rank].ops, OpKind::kSend) == 0);
      CHECK(count(none->ranks[rank].ops, OpKind::kRecv) == 0);
      CHECK(none->ranks[rank].ops.size() == 1);  // the DP allreduce
    }
    CHECK(none->description.find("as SimAI: no pp_comm transfers (SimAI counts them in its report only; rule "
                                 "pp-per-microbatch sends vpp*ga = 6 each way") != std::string::npos);
    WorkloadOptions realJob;
    REQUIRE(parseSimAiRules("pp-per-microbatch", &realJob.simai, &error));
    auto six = parseSimAiWorkload(text, "pp.txt", realJob);
    REQUIRE(six.ok());
    for (int rank = 0; rank < 4; ++rank) {  // each stage sends 6 and receives 6 (2 * vpp * ga = 12 per boundary)
      CHECK(count(six->ranks[rank].ops, OpKind::kSend) == 6);
      CHECK(count(six->ranks[rank].ops, OpKind::kRecv) == 6);
    }
    CHECK(checkWorkload(*six).ok());
    CHECK(six->description.find("vpp*ga = 6 pp_comm transfers each way per stage boundary (rule pp-per-microbatch; "
                                "SimAI sends none)") != std::string::npos);
    realJob.maxPipelineTransfers = 5;  // 6 is more: refused before it expands, naming the way out
    auto refused = parseSimAiWorkload(text, "pp.txt", realJob);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message().find("pp.txt:1: ga: vpp*ga = 2*3") == 0);
    CHECK(refused.status().message().find("--simai-rules without pp-per-microbatch sends none") != std::string::npos);
    WorkloadOptions small;
    small.maxPipelineTransfers = 5;  // SimAI's rules send none: nothing to refuse
    CHECK(parseSimAiWorkload(text, "pp.txt", small).ok());
  }
  SECTION("BROADCAST ops replay nothing, as SimAI's parser; rule no-broadcast off replays them from rank 0") {
    const std::string text =
        "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 all_gpus: 4\n2\n"
        "a\t-1\t10\tBROADCAST\t8192\t20\tNONE\t0\t30\tALLREDUCE\t4096\t1\n"
        "b\t-1\t40\tNONE\t0\t50\tNONE\t0\t60\tBROADCAST\t4096\t1\n";
    auto simai = parseSimAiWorkload(text, "b.txt", WorkloadOptions{});
    REQUIRE(simai.ok());
    for (const RankWork& rank : simai->ranks) {
      REQUIRE(rank.ops.size() == 1);  // a's weight-grad allreduce only
      CHECK(rank.ops[0].kind == OpKind::kAllReduce);
      CHECK(rank.ops[0].computeNs == 10 + 40 + 50 + 60 + 20 + 30);  // the broadcasts' compute moves on
    }
    CHECK(simai->description.find("as SimAI: BROADCAST ops replay nothing (2 ops; SimAI's parser makes no "
                                  "collective of them)") != std::string::npos);
    WorkloadOptions off;
    REQUIRE(parseSimAiRules("min-fwd-4096,micro-first-layer", &off.simai, &error));
    auto written = parseSimAiWorkload(text, "b.txt", off);
    REQUIRE(written.ok());
    const std::vector<WorkOp>& ops = written->ranks[1].ops;  // forward a (tp), then b's wg (dp), a's wg (dp)
    REQUIRE(ops.size() == 3);
    CHECK((ops[0].kind == OpKind::kBroadcast && ops[0].root == 0 && ops[0].bytes == 8192));
    CHECK((ops[1].kind == OpKind::kBroadcast && ops[1].root == 0 && ops[1].bytes == 4096));
    CHECK(ops[2].kind == OpKind::kAllReduce);
    CHECK(written->description.find("rule no-broadcast off, SimAI replays none") != std::string::npos);
    CHECK(checkWorkload(*written).ok());
  }
  SECTION("MICRO replays the first layer's weight-grad op, as SimAI's micro benchmark loop") {
    const std::string text =
        "MICRO all_gpus: 4\n3\n"
        "a\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t4096\t1\n"
        "b\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLGATHER\t8192\t1\n"
        "c\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t16384\t1\n";
    WorkloadOptions passes;
    passes.iterations = 5;
    auto first = parseSimAiWorkload(text, "micro.txt", passes);
    REQUIRE(first.ok());
    REQUIRE(first->ranks[0].ops.size() == 5);
    for (const WorkOp& op : first->ranks[0].ops) CHECK((op.kind == OpKind::kAllReduce && op.bytes == 4096));
    CHECK(first->description.find("MICRO: the first layer's weight-grad op only") != std::string::npos);
    off.iterations = 5;
    auto all = parseSimAiWorkload(text, "micro.txt", off);
    REQUIRE(all.ok());
    CHECK(all->ranks[0].ops.size() == 15);
  }
  SECTION("rule lists") {
    SimAiRules rules;
    CHECK((rules.forwardAtLeast4096 && rules.microFirstLayer && rules.noBroadcast && !rules.ppPerMicrobatch));
    REQUIRE(parseSimAiRules("min-fwd-4096,micro-first-layer", &rules, &error));
    CHECK((rules.forwardAtLeast4096 && !rules.ppPerMicrobatch && rules.microFirstLayer && !rules.noBroadcast));
    REQUIRE(parseSimAiRules("no-broadcast,pp-per-microbatch", &rules, &error));
    CHECK((!rules.forwardAtLeast4096 && rules.ppPerMicrobatch && !rules.microFirstLayer && rules.noBroadcast));
    REQUIRE(parseSimAiRules("all", &rules, &error));
    CHECK((rules.forwardAtLeast4096 && rules.ppPerMicrobatch && rules.microFirstLayer && rules.noBroadcast));
    CHECK_FALSE(parseSimAiRules("min-fwd-4096,fast", &rules, &error));
    CHECK(error.find("'fast' is not a SimAI rule") == 0);
  }
}

// The error of parsing `text` as "bad.txt" must name "bad.txt:<line>: <field>" and contain `detail`.
void requireError(const std::string& text, const std::string& where, const std::string& detail,
                  WorkloadOptions options = {}) {
  auto result = parseSimAiWorkload(text, "bad.txt", options);
  REQUIRE_FALSE(result.ok());
  const std::string& message = result.status().message();
  INFO(message);
  CHECK(result.status().code() == Code::kInvalidArgument);
  CHECK(message.find("bad.txt:" + where) != std::string::npos);
  CHECK(message.find(detail) != std::string::npos);
}

const std::string kHeader = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 all_gpus: 8\n1\n";
const std::string kGoodLayer = "l\t-1\t1\tALLREDUCE\t4096\t1\tNONE\t0\t1\tALLREDUCE\t4096\t1\n";

TEST_CASE("SimAI rows that move no data are counted by kind, group, reason and first line", "[phynet]") {
  // TP=1: the TP ALLREDUCEs of a, b and c are on a group of one rank; the zero-byte REDUCESCATTERs of
  // b and c (as in SimAI's workload_analytical.txt) move nothing. Every rank skips the same rows:
  // they are counted once each.
  const std::string text =
      "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 all_gpus: 4\n"
      "3\n"
      "a\t-1\t10\tALLREDUCE\t4096\t20\tNONE\t0\t30\tALLREDUCE\t4096\t1\n"
      "b\t-1\t40\tALLREDUCE\t4096\t50\tREDUCESCATTER\t0\t60\tALLREDUCE\t4096\t1\n"
      "c\t-1\t40\tALLREDUCE\t4096\t50\tREDUCESCATTER\t0\t60\tALLREDUCE\t4096\t1\n";
  auto workload = parseSimAiWorkload(text, "skip.txt", WorkloadOptions{});
  REQUIRE(workload.ok());
  REQUIRE(workload->skipped.size() == 2);
  std::map<std::string, const SkippedRows*> byWhy;
  for (const SkippedRows& s : workload->skipped) byWhy[s.why] = &s;
  REQUIRE(byWhy.count("of 0 bytes"));
  CHECK(byWhy["of 0 bytes"]->rows == 2);
  CHECK(byWhy["of 0 bytes"]->kind == OpKind::kReduceScatter);
  CHECK(byWhy["of 0 bytes"]->firstSource == "skip.txt:4");
  REQUIRE(byWhy.count("on a group of one rank"));
  CHECK(byWhy["on a group of one rank"]->rows == 3);
  CHECK(byWhy["on a group of one rank"]->group == "tp");
  CHECK(byWhy["on a group of one rank"]->firstSource == "skip.txt:3");
  CHECK(skippedText(workload->skipped).find("2 reducescatter rows on tp of 0 bytes (first skip.txt:4)") !=
        std::string::npos);
  for (const RankWork& rank : workload->ranks) CHECK(rank.ops.size() == 3);  // the DP allreduces
}

TEST_CASE("SimAI ops beyond the largest phynet replays are refused at load with the first line", "[phynet]") {
  // What the fuzzer found: the reader accepted a 1.25e21-byte op that the cross-rank check refuses.
  const std::string text =
      "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 all_gpus: 2\n"
      "3\n"
      "a\t-1\t10\tNONE\t0\t20\tNONE\t0\t30\tALLREDUCE\t4096\t1\n"
      "b\t-1\t10\tNONE\t0\t20\tNONE\t0\t30\tREDUCESCATTER\t000000000000000000001250620864434885974\t1\n"
      "c\t-1\t10\tNONE\t0\t20\tNONE\t0\t30\tALLGATHER\t2251799813685248\t1\n";
  auto workload = parseSimAiWorkload(text, "big.txt", WorkloadOptions{});
  REQUIRE_FALSE(workload.ok());
  const std::string& message = workload.status().message();
  CHECK(message.find("big.txt:4: weight-grad comm bytes: ") == 0);
  CHECK(message.find("1 PiB") != std::string::npos);
  CHECK(message.find("--scale") != std::string::npos);
  // Just within the limit (2^50 bytes in all) loads and passes the check.
  const std::string fits =
      "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 all_gpus: 2\n1\n"
      "a\t-1\t10\tNONE\t0\t20\tNONE\t0\t30\tALLREDUCE\t1125899906842624\t1\n";
  auto ok = parseSimAiWorkload(fits, "fits.txt", WorkloadOptions{});
  REQUIRE(ok.ok());
  CHECK(checkWorkload(*ok).ok());
}

TEST_CASE("SimAI sizes at or beyond 2^63 are refused naming file, line and field, never read as 0 bytes", "[phynet]") {
  const std::string header = "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 all_gpus: 4\n1\n";
  for (const char* size : {"9223372036854775807", "9223372036854775808", "18446744073709551616", "1e19", "1e300"}) {
    INFO(size);
    // On a replayed group (dp of 2) and on rows that would be skipped (tp=1 below) alike.
    requireError(header + "l\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t" + size + "\t1\n", "3: weight-grad comm bytes",
                 std::string(size) + " bytes is more than the 1125899906842624 bytes");
    requireError(header + "l\t-1\t1\tALLGATHER\t" + size + "\t1\tNONE\t0\t1\tNONE\t0\t1\n", "3: forward comm bytes",
                 "--scale");
    requireError(
        "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 all_gpus: 4\n1\n"
        "l\t-1\t1\tALLREDUCE\t" +
            std::string(size) + "\t1\tNONE\t0\t1\tNONE\t0\t1\n",
        "3: forward comm bytes", "1 PiB");
    requireError("HYBRID_TRANSFORMER model_parallel_NPU_group: 1 pp: 2 all_gpus: 4 pp_comm: " + std::string(size) +
                     "\n1\nl\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t4096\t1\n",
                 "1: pp_comm", "1 PiB");
  }
  // --scale brings them within: 1e19 x 1e-6 = 1e13 bytes replays.
  WorkloadOptions scaled;
  scaled.scale = 1e-6;
  auto within = parseSimAiWorkload(header + "l\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t1e19\t1\n", "s.txt", scaled);
  REQUIRE(within.ok());
  CHECK(within->ranks[0].ops.at(0).bytes == 10000000000000ull);
  // ... and the error names a --scale that fits, at the scale given.
  scaled.scale = 0.5;
  requireError(header + "l\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t1e19\t1\n", "3: weight-grad comm bytes",
               "1e19 bytes at --scale 0.5 is more than", scaled);
  requireError(header + "l\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t1e19\t1\n", "3: weight-grad comm bytes",
               "(--scale 0.0001 fits)");
}

// The warnings logged while it lives (installed as the log sink, the previous one restored).
class WarningsSeen : public LogSink {
 public:
  WarningsSeen() : previous_(setLogSink(this)) {}
  ~WarningsSeen() override { setLogSink(previous_); }
  void write(LogLevel level, std::string_view message) override {
    if (level == LogLevel::kWarn) lines.emplace_back(message);
  }
  std::vector<std::string> lines;

 private:
  LogSink* previous_;
};

// SimAI-Phy's group of `kind` holding `rank`, as its MockNcclGroup forms them over `gpus` GPUs with TP
// and EP from the file and PP 1 (Sys::mock_nccl_grobal_group_init: DP = gpus / TP), written from its
// loops: TP groups i*TP + j; DP groups i + j*(gpus/DP); EP groups the k-th members of EP consecutive TP
// groups; DP_EP groups the k-th members of TP groups i, i+EP, i+2EP, ... Then cut to ranks < `ranks`.
std::vector<int> simAiPhyGroupCut(const std::string& kind, int rank, int tp, int ep, int gpus, int ranks) {
  const int dp = gpus / tp, tpGroup = rank / tp, k = rank % tp;
  std::vector<int> members;
  if (kind == "tp") {
    for (int j = 0; j < tp; ++j) members.push_back(tpGroup * tp + j);
  } else if (kind == "dp") {
    for (int j = 0; j < dp; ++j) members.push_back(rank % (gpus / dp) + j * (gpus / dp));
  } else if (kind == "ep") {
    for (int l = tpGroup / ep * ep; l < tpGroup / ep * ep + ep; ++l) members.push_back(l * tp + k);
  } else if (kind == "dp_ep") {
    for (int l = tpGroup % ep; l < dp; l += ep) members.push_back(l * tp + k);
  }
  std::vector<int> cut;
  for (int member : members) {
    if (member < ranks) cut.push_back(member);
  }
  return cut;
}

TEST_CASE("SimAI groups larger than the ranks there are cut to them, as SimAI-Phy's; --tp/--ep/--pp are kept",
          "[phynet]") {
  SECTION("SimAI's tutorial: microAllReduce's TP=8 on mpirun -np 2") {
    const std::string text =
        "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 8 ga: 1 all_gpus: 8 "
        "checkpoints: 0 checkpoint_initiates: 0\n2\n"
        "embedding_layer -1 556000 ALLREDUCE 16777216 1 NONE 0 1 NONE 0 1\n"
        "embedding_layer -1 556000 ALLREDUCE 67108864 1 NONE 0 1 NONE 0 1\n";
    WorkloadOptions onTwo;
    onTwo.worldSize = 2;
    WarningsSeen warnings;
    auto workload = parseSimAiWorkload(text, "micro.txt", onTwo);
    INFO((workload.ok() ? std::string() : workload.status().message()));
    REQUIRE(workload.ok());
    CHECK(workload->description.find("TP=2 DP=1 EP=1 PP=1 (2 ranks)") != std::string::npos);
    for (int rank = 0; rank < 2; ++rank) {
      const std::vector<WorkOp>& ops = workload->ranks[rank].ops;
      REQUIRE(ops.size() == 2);
      CHECK((ops[0].bytes == 16777216 && ops[1].bytes == 67108864));
      const CommGroup* comm = workload->findComm(ops[0].commId);
      REQUIRE(comm != nullptr);
      CHECK(comm->label == "tp");
      CHECK(comm->members == simAiPhyGroupCut("tp", rank, 8, 1, 8, 2));  // {0..7} cut to {0, 1}
    }
    REQUIRE(warnings.lines.size() == 1);  // said once, and the "all_gpus replaced" line is not said too
    CHECK(warnings.lines[0].find("micro.txt:1: the file's TP=8 EP=1 PP=1 (all_gpus 8) do not fit 2 ranks: as "
                                 "SimAI-Phy") == 0);
    CHECK(warnings.lines[0].find("TP=2 DP=1 EP=1 PP=1 (2 ranks)") != std::string::npos);
    WorkloadOptions given = onTwo;
    given.tp = 8;
    requireError(text, "", "option tp: TP=8 is larger than the world (2 ranks)", given);
  }
  SECTION("EP beyond the DP there: TP=2 EP=4 on 16 GPUs replayed on 4 ranks") {
    const std::string text =
        "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 4 all_gpus: 16\n2\n"
        "a\t-1\t1\tALLREDUCE\t4096\t1\tALLTOALL_EP\t8192\t1\tALLREDUCE\t16384\t1\n"
        "b\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLGATHER_DP_EP\t4096\t1\n";
    WorkloadOptions onFour;
    onFour.worldSize = 4;
    WarningsSeen warnings;
    auto workload = parseSimAiWorkload(text, "ep.txt", onFour);
    INFO((workload.ok() ? std::string() : workload.status().message()));
    REQUIRE(workload.ok());
    CHECK(workload->description.find("TP=2 DP=2 EP=2 PP=1 (4 ranks)") != std::string::npos);
    for (int rank = 0; rank < 4; ++rank) {
      const std::vector<WorkOp>& ops = workload->ranks[rank].ops;
      REQUIRE(ops.size() == 3);  // tp allreduce, ep alltoall, dp allreduce; dp_ep cut to one rank: skipped
      for (const WorkOp& op : ops) {
        const CommGroup* comm = workload->findComm(op.commId);
        REQUIRE(comm != nullptr);
        INFO("rank " << rank << " " << comm->label);
        CHECK(comm->members == simAiPhyGroupCut(comm->label, rank, 2, 4, 16, 4));
      }
      CHECK(simAiPhyGroupCut("dp_ep", rank, 2, 4, 16, 4).size() == 1);
    }
    REQUIRE(warnings.lines.size() == 1);
    CHECK(warnings.lines[0].find("TP=2 EP=4 PP=1 (all_gpus 16) do not fit 4 ranks") != std::string::npos);
    WorkloadOptions given = onFour;
    given.ep = 4;
    requireError(text, "", "option ep: EP=4 is larger than DP=2", given);
  }
  SECTION("pipeline stages beyond the ranks: SimAI-Phy forms none") {
    const std::string text = "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 pp: 4 all_gpus: 16\n1\n" + kGoodLayer;
    WorkloadOptions onFour;
    onFour.worldSize = 4;
    WarningsSeen warnings;
    auto workload = parseSimAiWorkload(text, "pp.txt", onFour);
    REQUIRE(workload.ok());
    CHECK(workload->description.find("TP=2 DP=2 EP=1 PP=1 (4 ranks)") != std::string::npos);
    REQUIRE(warnings.lines.size() == 1);
    CHECK(warnings.lines[0].find("no pipeline stages are formed") != std::string::npos);
    WorkloadOptions given = onFour;
    given.pp = 4;
    requireError(text, "", "4 ranks are not divisible by TP*PP = 8", given);
  }
  SECTION("sizes that fit are kept; a file whose own groups exceed its all_gpus is still refused") {
    WorkloadOptions onEight;
    onEight.worldSize = 8;
    WarningsSeen warnings;
    auto kept = parseSimAiWorkload(kHeader + kGoodLayer, "w.txt", onEight);
    REQUIRE(kept.ok());
    CHECK(kept->description.find("TP=2 DP=4 EP=1 PP=1 (8 ranks)") != std::string::npos);
    CHECK(warnings.lines.empty());
    requireError("HYBRID_TRANSFORMER model_parallel_NPU_group: 16 all_gpus: 8\n1\n" + kGoodLayer,
                 "1: model_parallel_NPU_group", "larger than the world");
  }
}

TEST_CASE("SimAI malformed inputs name file, line and field", "[phynet]") {
  const std::string example = readWholeFile(examplePath(kExample));
  REQUIRE(example.size() > 20);
  SECTION("truncated inside the last layer line") {
    requireError(example.substr(0, example.size() - 30), "7: ", "truncated line");
  }
  SECTION("truncated after the header") {
    requireError(example.substr(0, example.find('\n') + 1), "2: layer count", "truncated");
  }
  SECTION("no layer lines") { requireError(kHeader, "3: layer", "no layer lines"); }
  SECTION("empty file") { requireError("", "1: policy", "empty"); }
  SECTION("wrong column count") {
    requireError(kHeader + kGoodLayer + "m\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tNONE\t0\n", "4: columns", "found 11");
    requireError(kHeader + "m\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tNONE\t0\t1\t9\n", "3: columns", "found 13");
  }
  SECTION("unknown op") {
    requireError(kHeader + "l\t-1\t1\tALLREDUCE_XP\t4096\t1\tNONE\t0\t1\tNONE\t0\t1\n", "3: forward comm op",
                 "unknown op 'ALLREDUCE_XP'");
    requireError(kHeader + "l\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tSCATTER\t64\t1\n", "3: weight-grad comm op", "SCATTER");
  }
  SECTION("negative size or time") {
    requireError(kHeader + "l\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t-4096\t1\n", "3: weight-grad comm bytes",
                 "negative");
    requireError(kHeader + "l\t-1\t1\tNONE\t0\t-5\tNONE\t0\t1\tNONE\t0\t1\n", "3: input-grad compute time", "negative");
  }
  SECTION("non-numeric values") {
    requireError(kHeader + "l\t-1\t12ab\tNONE\t0\t1\tNONE\t0\t1\tNONE\t0\t1\n", "3: forward compute time",
                 "not a number");
    requireError(kHeader + "l\tx\t1\tNONE\t0\t1\tNONE\t0\t1\tNONE\t0\t1\n", "3: dependency", "not an integer");
    requireError("MICRO all_gpus: eight\n1\n" + kGoodLayer, "1: all_gpus", "not an integer");
    requireError("MICRO all_gpus: 8\nmany\n" + kGoodLayer, "2: layer count", "not a layer count");
  }
  SECTION("group larger than the world") {
    requireError("HYBRID_TRANSFORMER model_parallel_NPU_group: 16 all_gpus: 8\n1\n" + kGoodLayer,
                 "1: model_parallel_NPU_group", "larger than the world");
    requireError("HYBRID_TRANSFORMER model_parallel_NPU_group: 3 all_gpus: 8\n1\n" + kGoodLayer, "1: all_gpus",
                 "not divisible by TP*PP = 3");
    requireError("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 8 all_gpus: 8\n1\n" + kGoodLayer, "1: ep",
                 "larger than DP=4");
    requireError("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 4 all_gpus: 12\n1\n" + kGoodLayer, "1: ep",
                 "does not divide DP=6");
    WorkloadOptions options;
    options.tp = 16;
    requireError(kHeader + kGoodLayer, " option tp", "larger than the world", options);
  }
  SECTION("missing keys, zero sizes, unknown policy") {
    requireError("HYBRID_TRANSFORMER model_parallel_NPU_group: 2\n1\n" + kGoodLayer, "1: all_gpus",
                 "missing key (or pass --world-size N)");
    requireError("HYBRID_TRANSFORMER all_gpus: 8\n1\n" + kGoodLayer, "1: model_parallel_NPU_group",
                 "missing key (or pass --tp N)");
    requireError("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 0 all_gpus: 8\n1\n" + kGoodLayer, "1: ep",
                 "zero or negative");
    requireError("HYBRID_TRANSFORMER model_parallel_NPU_group: -2 all_gpus: 8\n1\n" + kGoodLayer,
                 "1: model_parallel_NPU_group", "zero or negative");
    requireError("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 all_gpus:\n1\n" + kGoodLayer, "1: all_gpus",
                 "missing value");
    requireError("HYBRID_DLRM model_parallel_NPU_group: 2 all_gpus: 8\n1\n" + kGoodLayer, "1: policy", "HYBRID_DLRM");
  }
  SECTION("a missing file") {
    auto result = loadSimAiWorkload("/nonexistent/w.txt", WorkloadOptions{});
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().message().find("/nonexistent/w.txt") != std::string::npos);
  }
}

TEST_CASE("rank layout groups follow the documented rules", "[phynet]") {
  RankLayout layout{16, 2, 4, 2, 2};  // world, tp, dp, ep, pp
  REQUIRE(layout.problem().empty());
  // Rank 13: stage 1, dp_idx 2, tp_idx 1.
  CHECK(layout.groupMembers(GroupKind::kTp, 13) == std::vector<int>{12, 13});
  CHECK(layout.groupMembers(GroupKind::kDp, 13) == std::vector<int>{9, 11, 13, 15});
  CHECK(layout.groupMembers(GroupKind::kEp, 13) == std::vector<int>{13, 15});
  CHECK(layout.groupMembers(GroupKind::kDpEp, 13) == std::vector<int>{9, 13});
  CHECK(layout.groupMembers(GroupKind::kEpTp, 13) == std::vector<int>{12, 13, 14, 15});
  CHECK(layout.groupMembers(GroupKind::kPp, 13) == std::vector<int>{5, 13});
  CHECK(layout.groupMembers(GroupKind::kEmbedding, 13) == std::vector<int>{5, 13});
  CHECK(commIdFor("tp", {0, 1}) != commIdFor("dp", {0, 1}));
  CHECK(commIdFor("tp", {0, 1}) == commIdFor("tp", {0, 1}));
  CHECK_FALSE((RankLayout{8, 2, 4, 3, 1}).problem().empty());
}

TEST_CASE("SimAI text saved with a UTF-8 BOM and CRLF line ends parses to the same ops", "[phynet]") {
  const std::string text = readWholeFile(examplePath(kExample));
  auto plain = parseSimAiWorkload(text, "w.txt", WorkloadOptions{});
  REQUIRE(plain.ok());
  auto saved = parseSimAiWorkload(asSpreadsheetSaves(text), "w.txt", WorkloadOptions{});
  INFO((saved.ok() ? std::string() : saved.status().message()));
  REQUIRE(saved.ok());
  requireSameWorkload(*plain, *saved);
  CHECK(saved->description.find("SimAI workload w.txt: HYBRID_TRANSFORMER") == 0);
  std::string crOnly = text;  // old Mac line ends
  for (char& c : crOnly)
    if (c == '\n') c = '\r';
  auto mac = parseSimAiWorkload(crOnly, "w.txt", WorkloadOptions{});
  REQUIRE(mac.ok());
  requireSameWorkload(*plain, *mac);
  requireError("\xEF\xBB\xBF", "1: policy", "empty");
  requireError("\xFF\xFE" + std::string("h\0e\0", 4), "1: encoding", "UTF-16 text: save the file as UTF-8");
}

}  // namespace
}  // namespace nshim::workload

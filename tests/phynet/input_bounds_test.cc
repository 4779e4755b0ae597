// Bounded time and memory on any trace (issue 39): a count whose bytes overflow 64 bits is refused
// with file:line by the reader, the validator and the loader; a communicator declaring more ranks
// than the trace has files is refused before anything is sized by it; --pace recorded refuses a
// wait longer than --timeout at once; the engine scratch of a reducing communicator follows its
// largest reduction, so many tiny communicators cost little memory.
#include <chrono>
#include <string>
#include <vector>

#include "collectives/collectives.h"
#include "phynet/memory_plan.h"
#include "phynet/replay.h"
#include "tests/catch.h"
#include "tests/phynet/inproc_replay.h"
#include "trace/trace_reader.h"
#include "trace/trace_validate.h"
#include "workload/trace_workload.h"

namespace nshim::phynet {
namespace {

// One rank's file of a 2-rank trace: communicator 0xabc of `commRanks` ranks, then one op line.
std::string rankText(int rank, int commRanks, const std::string& op, const std::string& count, int opRanks) {
  std::string text = fmt::format(
      "{{\"type\":\"header\",\"format\":\"ncclshim-trace\",\"version\":2,\"abi\":1,\"host\":\"h\",\"pid\":{0},"
      "\"global_rank\":{0}}}\n"
      "{{\"type\":\"comm\",\"n\":0,\"event\":\"init\",\"comm\":\"0x0000000000000abc\",\"parent\":"
      "\"0x0000000000000000\","
      "\"split_seq\":0,\"color\":0,\"key\":0,\"nranks\":{1},\"rank\":{0},\"global_rank\":{0},\"host\":\"h\",\"pid\":{0}"
      ","
      "\"device\":-1,\"t_ns\":1}}\n",
      rank, commRanks);
  text += fmt::format(
      "{{\"type\":\"op\",\"n\":1,\"comm\":\"0x0000000000000abc\",\"rank\":{},\"seq\":0,\"op\":\"{}\",\"count\":{},"
      "\"dtype\":\"float32\",\"redop\":\"{}\",\"root\":-1,\"peer\":-1,\"nranks\":{},\"bytes\":4,\"stream\":"
      "\"0x0000000000000000\",\"flags\":0,"
      "\"group\":0,\"t_start_ns\":10,\"t_end_ns\":20}}\n",
      rank, op, count, op == "allreduce" ? "sum" : "none", opRanks);
  return text;
}

Result<trace::TraceSet> twoRanks(int commRanks, const std::string& op, const std::string& count, int opRanks) {
  trace::TraceSet set;
  for (int rank = 0; rank < 2; ++rank) {
    auto file = trace::parseTrace(rankText(rank, commRanks, op, count, opRanks), fmt::format("rank{}.jsonl", rank));
    if (!file.ok()) return file.status();
    set.files.push_back(std::move(file).value());
  }
  return set;
}

TEST_CASE("a count whose bytes overflow 64 bits is refused naming file, line and field", "[phynet][bounds]") {
  // 2^62 + 1 floats: 4 bytes after the wrap, which matched the recorded bytes before.
  auto read = twoRanks(2, "allreduce", "4611686018427387905", 2);
  REQUIRE_FALSE(read.ok());
  CHECK(std::string(read.status().message()).find("rank0.jsonl:3: field 'count'") != std::string::npos);

  // The op line alone fits (one rank), the communicator's two ranks do not: 2^61 floats gathered.
  auto set = twoRanks(2, "allgather", "2305843009213693952", 1);
  REQUIRE(set.ok());
  const trace::ValidationReport report = trace::validateTraceSet(set.value());
  bool named = false;
  for (const std::string& e : report.errors)
    named = named || e.find("rank0.jsonl:3") != std::string::npos && e.find("field 'count'") != std::string::npos;
  CHECK(named);
  auto loaded = workload::workloadFromTraceSet(std::move(set).value());
  REQUIRE_FALSE(loaded.ok());
  CHECK(std::string(loaded.status().message()).find("rank0.jsonl:3: field 'count'") != std::string::npos);
}

TEST_CASE("opBytes saturates instead of wrapping", "[phynet][bounds]") {
  // 2^62 + 1 floats is 2^64 + 4 bytes: wrapped, that read as 4 bytes.
  const uint64_t count = (uint64_t{1} << 62) + 1;
  CHECK(workload::opBytes(workload::OpKind::kAllReduce, count, DataType::kFloat32, 2) == UINT64_MAX);
  CHECK(workload::opBytes(workload::OpKind::kAllGather, uint64_t{1} << 61, DataType::kFloat32, 4) == UINT64_MAX);
  CHECK(workload::opBytes(workload::OpKind::kAllGather, 1024, DataType::kFloat32, 4) == 1024 * 4 * 4);
}

TEST_CASE("a communicator declaring more ranks than the trace has files is refused at once", "[phynet][bounds]") {
  auto set = twoRanks(1 << 20, "allreduce", "1", 1 << 20);
  REQUIRE(set.ok());
  const auto start = std::chrono::steady_clock::now();
  auto loaded = workload::workloadFromTraceSet(std::move(set).value());
  REQUIRE_FALSE(loaded.ok());
  CHECK(std::string(loaded.status().message()).find("rank0.jsonl:2: field 'nranks'") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
}

Workload twoRankAllReduces(int comms, uint64_t count) {
  Workload w;
  w.worldSize = 2;
  w.ranks.resize(2);
  for (int c = 1; c <= comms; ++c) {
    w.comms.push_back({static_cast<uint64_t>(c), {0, 1}, "world"});
    for (int g = 0; g < 2; ++g) {
      WorkOp op;
      op.commId = static_cast<uint64_t>(c);
      op.kind = OpKind::kAllReduce;
      op.count = count;
      op.type = DataType::kFloat32;
      op.bytes = opBytes(op.kind, count, op.type, 2);
      op.issueNs = c;
      w.ranks[g].globalRank = g;
      w.ranks[g].ops.push_back(op);
    }
  }
  w.indexComms();
  return w;
}

TEST_CASE("--pace recorded refuses a wait longer than --timeout without waiting", "[phynet][bounds]") {
  Workload w = twoRankAllReduces(1, 1);
  for (RankWork& r : w.ranks) {
    r.ops.push_back(r.ops.front());
    r.ops.back().seq = 1;
    r.ops.back().issueNs = 9'000'000'000'000'000'000;  // recorded 285 years later
  }
  ReplayConfig config;
  config.pace = Pace::kRecorded;
  config.timeoutSeconds = 2;
  const auto start = std::chrono::steady_clock::now();
  testing::InProcessReplay replay = testing::replayInThreads(w, config);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  for (const std::string& error : replay.errors)
    CHECK(std::string(error).find("longer than --timeout 2 s") != std::string::npos);
}

TEST_CASE("engine scratch follows a communicator's largest reduction, not the number of them", "[phynet][bounds]") {
  const CollectiveOptions options;
  const RankMemoryPlan tiny = planRankMemory(twoRankAllReduces(1000, 1), 0, false, kNoCap, options);
  CHECK(tiny.scratch.size() == 1000);
  CHECK(tiny.totalBytes < (uint64_t{8} << 20));  // was 1000 x 16 MiB
  const RankMemoryPlan large = planRankMemory(twoRankAllReduces(1, 64 << 20), 0, false, kNoCap, options);
  CHECK(large.scratch.begin()->second == reductionScratchBound(options));
}

}  // namespace
}  // namespace nshim::phynet

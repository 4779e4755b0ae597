// `ncclshim convert`: a trace written as SimAI text (and AICB CSV) is read back by phynet's own
// loaders into the same per-rank operations (kind, communicator members, count, datatype, bytes,
// root, sequence number; rank 0's compute gaps); the bundled SimAI / AICB workloads survive the same
// round trip with their TP / DP / EP / DP_EP groups; traces the formats cannot express are refused
// with a message naming the op or communicator; the Chrome trace has one event per op record.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/catch.h"
#include "tools/inspect/layout_infer.h"
#include "tools/inspect/trace_comms.h"
#include "tools/inspect/trace_export.h"
#include "tools/inspect/workload_writers.h"
#include "workload/aicb_workload.h"
#include "workload/simai_workload.h"
#include "workload/trace_workload.h"

namespace nshim::tools {
namespace {

// Captures what a writer prints.
template <typename Fn>
std::string capture(Fn write) {
  char* buffer = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&buffer, &size);
  REQUIRE(f);
  write(f);
  std::fclose(f);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

// The workload without ops on one-rank communicators (they move no data and are not converted).
workload::Workload withoutSingleRankOps(workload::Workload w) {
  for (workload::RankWork& rank : w.ranks) {
    std::erase_if(rank.ops, [&w](const workload::WorkOp& op) { return w.findComm(op.commId)->members.size() < 2; });
  }
  return w;
}

// Every rank's ops agree in kind, communicator members, count, type, bytes, root, peer and seq.
void requireSameOps(const workload::Workload& want, const workload::Workload& got, bool computeOfRank0) {
  REQUIRE(got.worldSize == want.worldSize);
  for (int g = 0; g < want.worldSize; ++g) {
    const auto& a = want.ranks[g].ops;
    const auto& b = got.ranks[g].ops;
    INFO("rank " << g);
    REQUIRE(a.size() == b.size());
    for (size_t k = 0; k < a.size(); ++k) {
      INFO("op " << k << " from " << a[k].source << " vs " << b[k].source);
      CHECK(a[k].kind == b[k].kind);
      CHECK(want.findComm(a[k].commId)->members == got.findComm(b[k].commId)->members);
      CHECK(a[k].count == b[k].count);
      CHECK(a[k].type == b[k].type);
      CHECK(a[k].bytes == b[k].bytes);
      CHECK(a[k].root == b[k].root);
      CHECK(a[k].peer == b[k].peer);
      CHECK(a[k].seq == b[k].seq);
      if (computeOfRank0 && g == 0) CHECK(a[k].computeNs == b[k].computeNs);
    }
  }
}

TEST_CASE("convert: Megatron TP=2 trace -> SimAI text -> phynet gives the same per-rank ops", "[tools]") {
  auto trace = workload::loadTraceWorkload("examples/traces/megatron_tp2");
  REQUIRE(trace.ok());
  const workload::Workload want = withoutSingleRankOps(*trace);
  for (int tp : {0, 2}) {  // searched (all-rank communicator: DP) and given (--tp 2)
    LayoutTarget target = simAiTarget();
    target.tp = tp;
    auto job = inferJob(*trace, target);
    REQUIRE(job.ok());
    CHECK(job->layout.tp == (tp ? 2 : 1));
    std::string text = capture([&](FILE* f) { writeSimAi(f, *job); });
    auto back = workload::parseSimAiWorkload(text, "converted.txt", workload::WorkloadOptions{});
    INFO(text.substr(0, 400));
    REQUIRE(back.ok());
    requireSameOps(want, *back, true);
    CHECK(back->comms[0].label == (tp ? "tp" : "dp"));
  }
}

TEST_CASE("convert: Megatron TP=2 trace -> AICB CSV -> phynet gives the same per-rank ops", "[tools]") {
  auto trace = workload::loadTraceWorkload("examples/traces/megatron_tp2");
  REQUIRE(trace.ok());
  auto job = inferJob(*trace, aicbTarget());
  REQUIRE(job.ok());
  std::string text = capture([&](FILE* f) { writeAicb(f, *job); });
  auto back = workload::parseAicbWorkload(text, "converted.csv", workload::WorkloadOptions{});
  REQUIRE(back.ok());
  const workload::Workload want = withoutSingleRankOps(*trace);
  requireSameOps(want, *back, true);
  for (size_t k = 0; k < want.ranks[0].ops.size(); ++k) {  // recorded times in ms with 6 decimals: exact in ns
    CHECK(want.ranks[0].ops[k].recordedNs == back->ranks[0].ops[k].recordedNs);
  }
}

TEST_CASE("convert: the bundled SimAI and AICB workloads round-trip with their TP/DP/EP/DP_EP groups", "[tools]") {
  auto simai = workload::loadSimAiWorkload("examples/workloads/simai_tp2_dp4_ep2.txt", {});
  auto aicb = workload::loadAicbWorkload("examples/workloads/aicb_tp2_dp4_ep2.csv", {});
  REQUIRE(simai.ok());
  REQUIRE(aicb.ok());
  for (const workload::Workload* w : {&*simai, &*aicb}) {
    for (bool toSimAi : {true, false}) {
      INFO(w->description << (toSimAi ? " -> SimAI" : " -> AICB"));
      auto job = inferJob(*w, toSimAi ? simAiTarget() : aicbTarget());
      REQUIRE(job.ok());
      CHECK(job->layout.toString() == "TP=2 DP=4 EP=2 PP=1 (8 ranks)");
      std::string text = capture([&](FILE* f) { toSimAi ? writeSimAi(f, *job) : writeAicb(f, *job); });
      // The AICB example's broadcasts become BROADCAST rows, which SimAI runs none of: read back with
      // rule no-broadcast off, as phynet's --simai-rules min-fwd-4096,micro-first-layer.
      workload::WorkloadOptions asWritten;
      asWritten.simai.noBroadcast = false;
      auto back = toSimAi ? workload::parseSimAiWorkload(text, "rt.txt", asWritten)
                          : workload::parseAicbWorkload(text, "rt.csv", {});
      REQUIRE(back.ok());
      requireSameOps(*w, *back, false);
    }
  }
}

TEST_CASE("convert: traces SimAI cannot express are refused naming the op or communicator", "[tools]") {
  auto torch = workload::loadTraceWorkload("examples/traces/torch_collectives");
  REQUIRE(torch.ok());
  auto job = inferJob(*torch, simAiTarget());
  REQUIRE_FALSE(job.ok());
  CHECK(job.status().message().find("send on") != std::string::npos);
  CHECK(job.status().message().find("SimAI workloads cannot express this op") != std::string::npos);

  // Four ranks, a communicator of ranks {1, 2}: neither TP (contiguous blocks) nor DP / EP (strided).
  workload::Workload odd;
  odd.worldSize = 4;
  odd.comms = {workload::CommGroup{0x12, {1, 2}, "tp"}};
  odd.ranks.resize(4);
  for (int g = 0; g < 4; ++g) odd.ranks[g].globalRank = g;
  for (int g : {1, 2}) {
    workload::WorkOp op;
    op.commId = 0x12;
    op.count = 256;
    op.bytes = 1024;
    odd.ranks[g].ops.push_back(op);
  }
  auto refused = inferJob(odd, simAiTarget());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("0x0000000000000012") != std::string::npos);
  CHECK(refused.status().message().find("ranks 1,2") != std::string::npos);
  CHECK(refused.status().message().find("SimAI workloads cannot express it") != std::string::npos);
}

TEST_CASE("convert: Chrome trace has one event per op record, one track per rank and communicator", "[tools]") {
  auto view = readTraceView("examples/traces/torch_collectives");
  REQUIRE(view.ok());
  size_t records = 0;
  for (const trace::TraceFile& f : view->set.files) records += f.ops.size();
  size_t written = 0;
  std::string json = capture([&](FILE* f) { written = writeChromeTrace(f, *view); });
  CHECK(written == records);
  size_t events = 0;
  for (size_t at = json.find("\"ph\":\"X\""); at != std::string::npos; at = json.find("\"ph\":\"X\"", at + 1)) ++events;
  CHECK(events == records);
  CHECK(json.find("\"name\":\"thread_name\"") != std::string::npos);
  CHECK(json.find("\"name\":\"rank 1 (vm, pid") != std::string::npos);
  std::string csv = capture([&](FILE* f) { writeOpCsv(f, *view); });
  CHECK(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')) == records + 1);
}

}  // namespace
}  // namespace nshim::tools

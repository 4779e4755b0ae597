// `ncclshim summary` numbers against an independent hand count: the bundled Megatron TP=2 trace
// is scanned line by line here (plain string search, not the trace reader), and the distribution,
// per-communicator, per-rank and ring wire-byte totals must equal what the tool computes. Also the
// report side: a small phynet report CSV summed by op x group x size bucket.
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <tuple>

#include "tests/catch.h"
#include "tools/inspect/distribution.h"
#include "tools/inspect/distribution_output.h"
#include "tools/inspect/report_reader.h"
#include "tools/inspect/tool_input.h"
#include "workload/trace_workload.h"

namespace nshim::tools {
namespace {

const char* kTraceDir = "examples/traces/megatron_tp2";

bool near(double a, double b) { return a - b < 1e-9 && b - a < 1e-9; }

// The text after "key": up to the next ',' or '}' (quotes removed).
std::string field(const std::string& line, const std::string& key) {
  size_t at = line.find("\"" + key + "\":");
  if (at == std::string::npos) return "";
  size_t begin = at + key.size() + 3;
  size_t end = line.find_first_of(",}", begin);
  std::string value = line.substr(begin, end - begin);
  if (!value.empty() && value.front() == '"') value = value.substr(1, value.size() - 2);
  return value;
}

struct HandCount {
  std::map<int, std::tuple<uint64_t, uint64_t, uint64_t>> ranks;  // rank -> calls, bytes, wire
  std::map<std::string, std::pair<uint64_t, uint64_t>> comms;     // id -> calls, bytes
  std::map<std::pair<std::string, uint64_t>, uint64_t> buckets;   // (op, bucket) -> calls
};

HandCount countByHand() {
  HandCount h;
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream in(std::string(kTraceDir) + "/rank" + std::to_string(rank) + ".jsonl");
    REQUIRE(in);
    std::string line;
    while (std::getline(in, line)) {
      if (field(line, "type") != "op") continue;
      const std::string op = field(line, "op");
      if (op == "groupstart" || op == "groupend") continue;
      const uint64_t bytes = std::stoull(field(line, "bytes"));
      const uint64_t n = std::stoull(field(line, "nranks"));
      REQUIRE(op == "allreduce");  // all this trace holds; ring allreduce sends 2(n-1)/n of the buffer
      const uint64_t wire = 2 * (n - 1) * bytes / n;
      auto& [calls, sum, sent] = h.ranks[rank];
      calls += 1;
      sum += bytes;
      sent += wire;
      h.comms[field(line, "comm")].first += 1;
      h.comms[field(line, "comm")].second += bytes;
      uint64_t bucket = 1;
      while (bucket < bytes) bucket *= 2;
      h.buckets[{op, bucket}] += 1;
    }
  }
  return h;
}

TEST_CASE("summary of the Megatron TP=2 trace equals a hand count", "[tools]") {
  HandCount hand = countByHand();
  auto loaded = workload::loadTraceWorkload(kTraceDir);
  REQUIRE(loaded.ok());
  WorkloadDistribution d = distributionOf(*loaded);

  REQUIRE(d.ranks.size() == 2);
  uint64_t calls = 0, bytes = 0, wire = 0;
  for (const RankSummary& r : d.ranks) {
    INFO("rank " << r.rank);
    const auto& [handCalls, handBytes, handWire] = hand.ranks.at(r.rank);
    CHECK(r.calls == handCalls);
    CHECK(r.bytes == handBytes);
    CHECK(r.wireBytes == handWire);
    calls += handCalls;
    bytes += handBytes;
    wire += handWire;
  }
  CHECK(d.calls == calls);
  CHECK(d.bytes == bytes);
  CHECK(d.wireBytes == wire);
  CHECK(calls == 140);  // 70 allreduces per rank: 65 on the 2-rank communicator, 5 on a 1-rank one

  REQUIRE(d.comms.size() == hand.comms.size());
  for (const CommSummary& c : d.comms) {
    char id[32];
    std::snprintf(id, sizeof(id), "0x%016llx", static_cast<unsigned long long>(c.id));
    INFO("comm " << id);
    REQUIRE(hand.comms.count(id));
    CHECK(c.calls == hand.comms[id].first);
    CHECK(c.bytes == hand.comms[id].second);
  }

  std::map<std::pair<std::string, uint64_t>, uint64_t> byBucket;
  for (const DistributionRow& row : d.rows) {
    byBucket[{row.op, row.bucket}] += row.calls;
    CHECK((row.bucket & (row.bucket - 1)) == 0);  // powers of two
  }
  CHECK(byBucket == hand.buckets);
  // The 2-rank communicator is phynet's "world" (all ranks); the 1-rank ones have no shape label.
  for (const DistributionRow& row : d.rows) {
    CHECK((row.nranks == 2 ? row.group == "world" : row.group.rfind("comm", 0) == 0));
  }
}

TEST_CASE("summary of a phynet report: time and busbw by op, group and size bucket", "[tools]") {
  const char* csv =
      "op,group,comm,nranks,iteration,seq,count,type,bytes,peers,start_us,time_us,algbw_gbps,busbw_gbps,"
      "efficiency_pct,recorded_us,ratio\n"
      "allreduce,tp,0x0000000000000001,2,0,0,256,float,1024,,0,10,0.1024,0.1024,,20,0.5\n"
      "allreduce,tp,0x0000000000000001,2,0,1,200,float,800,,10,30,0.0266,0.0266,,,\n"
      "allreduce,tp,0x0000000000000001,2,0,2,1024,float,4096,,40,8,0.512,0.512,,,\n"
      "sendrecv,pp,0x0000000000000002,2,0,0,16,float,64,3->1,50,2,0.032,0.032,,4,0.5\n";
  auto report = parseReportCsv(csv, "mem.csv");
  REQUIRE(report.ok());
  REQUIRE(report->rows.size() == 4);
  CHECK(report->rows[3].sender == 3);
  CHECK(report->rows[3].receiver == 1);
  CHECK(report->rows[1].recordedUs == -1);
  ReportDistribution d = distributionOfReport(*report);
  CHECK(d.ops == 4);
  CHECK(d.bytes == 1024 + 800 + 4096 + 64);
  REQUIRE(d.rows.size() == 3);
  const ReportBucketRow& kb = d.rows[0];  // allreduce tp, (512, 1024]
  CHECK(kb.op == "allreduce");
  CHECK(kb.bucket == 1024);
  CHECK(kb.ops == 2);
  CHECK(near(kb.meanTimeUs, 20.0));
  CHECK(near(kb.minTimeUs, 10.0));
  CHECK(near(kb.maxTimeUs, 30.0));
  CHECK(near(kb.meanBusbw, (0.1024 + 0.0266) / 2));
  CHECK(near(kb.meanRecordedUs, 20.0));  // only the row that has one
  CHECK(d.rows[1].bucket == 4096);
  CHECK(d.rows[1].meanRecordedUs == -1);
  CHECK(d.rows[2].op == "sendrecv");

  auto bad = parseReportCsv("op,group,comm,nranks,iteration\nallreduce,tp,0x1,2,0\n", "bad.csv");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("missing column") != std::string::npos);
}

}  // namespace
}  // namespace nshim::tools

namespace nshim::tools {
namespace {

// Every field of two distributions (the streamed count against the held workload's).
void requireEqual(const WorkloadDistribution& a, const WorkloadDistribution& b) {
  REQUIRE(a.description == b.description);
  REQUIRE(a.worldSize == b.worldSize);
  REQUIRE(std::tie(a.calls, a.bytes, a.wireBytes) == std::tie(b.calls, b.bytes, b.wireBytes));
  REQUIRE(a.rows.size() == b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) {
    const DistributionRow &x = a.rows[i], &y = b.rows[i];
    CHECK(std::tie(x.op, x.group, x.nranks, x.bucket, x.calls, x.bytes, x.wireBytes) ==
          std::tie(y.op, y.group, y.nranks, y.bucket, y.calls, y.bytes, y.wireBytes));
  }
  REQUIRE(a.comms.size() == b.comms.size());
  for (size_t i = 0; i < a.comms.size(); ++i) {
    const CommSummary &x = a.comms[i], &y = b.comms[i];
    CHECK(std::tie(x.id, x.group, x.members, x.calls, x.bytes, x.wireBytes) ==
          std::tie(y.id, y.group, y.members, y.calls, y.bytes, y.wireBytes));
  }
  REQUIRE(a.ranks.size() == b.ranks.size());
  for (size_t i = 0; i < a.ranks.size(); ++i) {
    CHECK(std::tie(a.ranks[i].rank, a.ranks[i].calls, a.ranks[i].bytes, a.ranks[i].wireBytes) ==
          std::tie(b.ranks[i].rank, b.ranks[i].calls, b.ranks[i].bytes, b.ranks[i].wireBytes));
  }
}

TEST_CASE("summary counted as SimAI and AICB files expand equals the summary of the whole workload", "[tools]") {
  for (const char* path : {"examples/workloads/simai_tp2_dp4_ep2.txt", "examples/workloads/aicb_tp2_dp4_ep2.csv",
                           "tests/data/aicb/L7B-D1-C01_Llama7B_zero2_mbs1.csv"}) {
    INFO(path);
    const bool simai = std::string(path).ends_with(".txt");
    InputOptions options;
    if (!simai && std::string(path).find("L7B") != std::string::npos) options.worldSize = 16;  // folded
    const InputKind kind = simai ? InputKind::kSimAi : InputKind::kAicb;
    Result<LoadedWorkload> held = loadWorkloadInput(path, kind, options);
    REQUIRE(held.ok());
    REQUIRE_FALSE(held->opsStreamed);
    DistributionCounter counter;
    Result<LoadedWorkload> streamed = loadWorkloadInput(
        path, kind, options,
        [&](int rank, const workload::WorkOp& op, const workload::CommGroup& comm) { counter.add(rank, op, comm); });
    REQUIRE(streamed.ok());
    REQUIRE(streamed->opsStreamed);
    for (const workload::RankWork& rank : streamed->workload.ranks) CHECK(rank.ops.empty());
    const WorkloadDistribution whole = distributionOf(held->workload);
    REQUIRE(whole.calls > 0);
    requireEqual(counter.finish(streamed->workload), whole);
  }
}

// More distinct calls than the counter keeps worked out (its cache is cleared when full), of every
// kind, with roots and peers, on two communicators sharing a group label: each call's row, its
// communicator and its rank must get what the traffic model gives that call alone.
TEST_CASE("summary: calls tallied once per kind of call equal each call counted on its own", "[tools]") {
  workload::Workload w;
  w.worldSize = 6;
  w.comms = {{0x11, {0, 1, 2, 3}, "dp"}, {0x22, {5, 4}, "dp"}, {0x33, {1, 3, 5}, "tp"}};
  w.indexComms();
  w.ranks.resize(6);
  for (int g = 0; g < 6; ++g) w.ranks[g].globalRank = g;
  const workload::OpKind kinds[] = {workload::OpKind::kAllReduce,     workload::OpKind::kAllGather,
                                    workload::OpKind::kReduceScatter, workload::OpKind::kBroadcast,
                                    workload::OpKind::kReduce,        workload::OpKind::kAllToAll,
                                    workload::OpKind::kSend,          workload::OpKind::kRecv};
  for (uint64_t i = 0; i < 30000; ++i) {
    for (const workload::CommGroup& comm : w.comms) {
      const int n = static_cast<int>(comm.members.size());
      for (int r = 0; r < n; ++r) {
        workload::WorkOp op;
        op.commId = comm.id;
        // 9000 sizes, each 4 times: as a call and as a piece of an all-to-all, then again with
        // another root. Every rank of a communicator makes the same call: 270,000 distinct calls
        // by rank, well over the 65,536 the counter keeps.
        op.kind = kinds[i % 8];
        op.count = 1 + i % 9000;
        op.type = i % 2 ? DataType::kFloat32 : DataType::kInt8;
        op.root = static_cast<int>(i / 18000) % n;
        if (op.kind == workload::OpKind::kSend || op.kind == workload::OpKind::kRecv) op.peer = (r + 1) % n;
        op.origin = (i / 9000) % 2 ? workload::OpOrigin::kAllToAllV : workload::OpOrigin::kCall;
        op.bytes = workload::opBytes(op.kind, op.count, op.type, n);
        w.ranks[comm.members[r]].ops.push_back(op);
      }
    }
  }
  using Key = std::tuple<std::string, std::string, int, uint64_t>;
  std::map<Key, std::tuple<uint64_t, uint64_t, uint64_t>> rows;
  std::map<uint64_t, std::tuple<uint64_t, uint64_t, uint64_t>> comms;
  std::map<int, std::tuple<uint64_t, uint64_t, uint64_t>> ranks;
  for (const workload::RankWork& rank : w.ranks) {
    for (const workload::WorkOp& op : rank.ops) {
      const workload::CommGroup* comm = w.findComm(op.commId);
      const uint64_t wire = ringWireBytes(w, op, rank.globalRank);
      std::string name = workload::opKindName(op.kind);
      if (op.origin != workload::OpOrigin::kCall) name = std::string(workload::opOriginName(op.origin)) + " " + name;
      uint64_t bucket = 1;
      while (bucket < op.bytes) bucket *= 2;
      for (auto* sums : {&rows[Key{name, comm->label, static_cast<int>(comm->members.size()), bucket}],
                         &comms[op.commId], &ranks[rank.globalRank]}) {
        std::get<0>(*sums) += 1;
        std::get<1>(*sums) += op.bytes;
        std::get<2>(*sums) += wire;
      }
    }
  }
  const WorkloadDistribution d = distributionOf(w);
  REQUIRE(d.rows.size() == rows.size());
  for (const DistributionRow& row : d.rows) {
    INFO(row.op << " " << row.group << " " << row.nranks << " " << row.bucket);
    CHECK(std::tie(row.calls, row.bytes, row.wireBytes) == rows[Key{row.op, row.group, row.nranks, row.bucket}]);
  }
  REQUIRE(d.comms.size() == comms.size());
  for (const CommSummary& c : d.comms) CHECK(std::tie(c.calls, c.bytes, c.wireBytes) == comms[c.id]);
  REQUIRE(d.ranks.size() == 6);
  for (const RankSummary& r : d.ranks) CHECK(std::tie(r.calls, r.bytes, r.wireBytes) == ranks[r.rank]);
}

}  // namespace
}  // namespace nshim::tools

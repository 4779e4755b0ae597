// Trace -> workload and cross-rank validation: membership by communicator id, issue order, group
// ids from GroupStart/GroupEnd, recorded times, labels by shape; errors name file:line; a rank that
// disagrees on a collective or on a send/recv size is refused naming rank, communicator and seq;
// records out of recording order, and long traces whose converted records are released as it goes.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "tests/catch.h"
#include "tests/phynet/workload_files.h"
#include "tests/trace/trace_test_util.h"
#include "trace/trace_format.h"
#include "workload/trace_workload.h"
#include "workload/workload_check.h"
#include "workload/workload_transform.h"

namespace nshim::workload {
namespace {

using trace::OpCode;

// A per-rank trace text built with trace/'s formatters.
class TextTrace {
 public:
  explicit TextTrace(int global) : global_(global) {
    trace::TraceHeader h{};
    h.version = trace::kTraceFormatVersion;
    h.globalRank = global;
    h.pid = 100 + global;
    trace::copyFixed(h.host, sizeof(h.host), "h");
    put(trace::formatHeaderLine(h, line_, sizeof(line_)));
  }
  void comm(uint64_t id, int nranks, int rank) {
    trace::CommRecord r = trace::makeCommRecord(trace::CommEvent::kInit);
    r.commId = id;
    r.nranks = nranks;
    r.rank = rank;
    r.globalRank = global_;
    r.pid = 100 + global_;
    put(trace::formatCommLine(r, n_++, line_, sizeof(line_)));
  }
  void op(OpCode code, uint64_t comm, int rank, int nranks, uint64_t count, int root = -1, int peer = -1,
          uint32_t flags = 0) {
    trace::OpRecord r = trace::makeOpRecord(code);
    bool group = code == OpCode::kGroupStart || code == OpCode::kGroupEnd;
    if (!group) {
      r.commId = comm;
      r.seq = seqs_[comm]++;
      r.rank = rank;
      r.nranks = nranks;
      r.count = count;
      r.datatype = 7;  // float32
      r.redop = code == OpCode::kAllReduce ? 0 : trace::kNoRedOp;
      r.root = root;
      r.peer = peer;
      r.bytes = trace::traceBytes(code, count, r.datatype, nranks);
    }
    r.flags = flags;
    r.hostStartNs = clock_;
    r.hostEndNs = clock_ + 1000;
    if (flags & trace::kOpFlagGpuTimed) {
      r.gpuStartNs = clock_ + 10;
      r.gpuEndNs = clock_ + 5010;
    }
    clock_ += 10'000;
    put(trace::formatOpLine(r, n_++, line_, sizeof(line_)));
  }
  trace::TraceFile file() const {
    auto parsed = trace::parseTrace(text_, "rank" + std::to_string(global_) + ".jsonl");
    REQUIRE(parsed.ok());
    return std::move(parsed).value();
  }

 private:
  void put(size_t length) { text_.append(line_, length); }
  int global_;
  uint64_t n_ = 0;
  int64_t clock_ = 1'000'000;
  std::map<uint64_t, uint64_t> seqs_;
  std::string text_;
  char line_[trace::kFormatLineBytes];
};

constexpr uint64_t kWorld = 0x100, kTp0 = 0x200, kTp1 = 0x201;

// 4 ranks: world allreduce, a TP allgather, then a grouped send/recv ring on the world.
trace::TraceSet sampleSet(int changedRank = -1, uint64_t changedCount = 0) {
  trace::TraceSet set;
  for (int g = 0; g < 4; ++g) {
    TextTrace t(g);
    uint64_t tp = g < 2 ? kTp0 : kTp1;
    t.comm(kWorld, 4, g);
    t.comm(tp, 2, g % 2);
    t.op(OpCode::kAllReduce, kWorld, g, 4, 1024, -1, -1, trace::kOpFlagGpuTimed);
    t.op(OpCode::kAllGather, tp, g % 2, 2, g == changedRank ? changedCount : 256);
    t.op(OpCode::kGroupStart, 0, 0, 0, 0);
    t.op(OpCode::kSend, kWorld, g, 4, 64, -1, (g + 1) % 4);
    t.op(OpCode::kRecv, kWorld, g, 4, 64, -1, (g + 3) % 4);
    t.op(OpCode::kGroupEnd, 0, 0, 0, 0);
    set.files.push_back(t.file());
  }
  return set;
}

TEST_CASE("a trace set becomes a workload with members, groups and times", "[phynet]") {
  auto loaded = workloadFromTraceSet(sampleSet());
  REQUIRE(loaded.ok());
  Workload& w = loaded.value();
  REQUIRE(w.worldSize == 4);
  REQUIRE(w.comms.size() == 3);
  REQUIRE(w.findComm(kWorld)->label == "world");
  REQUIRE(w.findComm(kTp1)->members == std::vector<int>{2, 3});
  REQUIRE(w.findComm(kTp1)->label == "tp");
  const std::vector<WorkOp>& ops = w.ranks[3].ops;
  REQUIRE(ops.size() == 4);
  CHECK(ops[0].kind == OpKind::kAllReduce);
  CHECK(ops[0].recordedNs == 5000);  // GPU-timed
  CHECK(ops[1].recordedNs == 1000);  // host duration
  CHECK(ops[1].issueNs == 10'000);
  CHECK(ops[0].group == 0);
  CHECK(ops[2].group != 0);
  CHECK(ops[2].group == ops[3].group);
  CHECK(ops[2].peer == 0);
  CHECK(ops[3].peer == 2);
  CHECK(ops[1].source == "rank3.jsonl:5");
  CHECK(checkWorkload(w).ok());
}

TEST_CASE("records out of recording order (several threads' rings) convert as in order", "[phynet]") {
  trace::TraceSet shuffled = sampleSet();
  for (trace::TraceFile& file : shuffled.files) std::reverse(file.ops.begin(), file.ops.end());
  auto a = workloadFromTraceSet(sampleSet());
  auto b = workloadFromTraceSet(std::move(shuffled));
  REQUIRE((a.ok() && b.ok()));
  for (int g = 0; g < 4; ++g) {
    REQUIRE(a->ranks[g].ops.size() == b->ranks[g].ops.size());
    for (size_t i = 0; i < a->ranks[g].ops.size(); ++i) {
      const WorkOp& x = a->ranks[g].ops[i];
      const WorkOp& y = b->ranks[g].ops[i];
      CHECK((x.kind == y.kind && x.seq == y.seq && x.count == y.count && x.group == y.group && x.issueNs == y.issueNs &&
             x.computeNs == y.computeNs && x.source == y.source));
    }
  }
}

TEST_CASE("a long trace converts every record while the converted ones are released", "[phynet]") {
  // More records than the conversion releases at a time (16384), so released pages lie behind it.
  constexpr int kOps = 50'000;
  trace::TraceSet set;
  for (int g = 0; g < 2; ++g) {
    TextTrace t(g);
    t.comm(kWorld, 2, g);
    for (int i = 0; i < kOps; ++i) t.op(OpCode::kAllReduce, kWorld, g, 2, 1 + uint64_t(i));
    set.files.push_back(t.file());
  }
  auto loaded = workloadFromTraceSet(std::move(set));
  REQUIRE(loaded.ok());
  for (int g = 0; g < 2; ++g) {
    const std::vector<WorkOp>& ops = loaded->ranks[g].ops;
    REQUIRE(ops.size() == size_t(kOps));
    int wrong = 0;
    for (int i = 0; i < kOps; ++i) {
      wrong += ops[i].count != 1 + uint64_t(i) || ops[i].seq != uint64_t(i) || ops[i].issueNs != int64_t(i) * 10'000 ||
               !(ops[i].source == "rank" + std::to_string(g) + ".jsonl:" + std::to_string(i + 3));
    }
    CHECK(wrong == 0);
  }
  CHECK(checkWorkload(*loaded).ok());
}

TEST_CASE("a rank that disagrees on a collective is refused naming rank, communicator and seq", "[phynet]") {
  auto loaded = workloadFromTraceSet(sampleSet(3, 128));
  REQUIRE(loaded.ok());
  Status status = checkWorkload(loaded.value());
  REQUIRE_FALSE(status.ok());
  CHECK(status.message().find("rank 3 (rank 1 of communicator 0x0000000000000201 (tp)) disagrees at seq 0") !=
        std::string::npos);
  CHECK(status.message().find("allgather count 128") != std::string::npos);
}

TEST_CASE("unmatched sends and receives are refused", "[phynet]") {
  auto loaded = workloadFromTraceSet(sampleSet());
  REQUIRE(loaded.ok());
  Workload w = loaded.value();
  w.ranks[1].ops[3].count = 32;  // rank 1's receive from rank 0
  w.ranks[1].ops[3].bytes = 128;
  Status status = checkWorkload(w);
  REQUIRE_FALSE(status.ok());
  CHECK(status.message().find("rank 0 on communicator 0x0000000000000100 (world): its send #1 to rank 1 at seq 1") !=
        std::string::npos);

  w = loaded.value();
  w.ranks[2].ops.pop_back();  // rank 2 never receives from rank 1
  status = checkWorkload(w);
  REQUIRE_FALSE(status.ok());
  CHECK(status.message().find("sends 1 messages to rank 2, which receives only 0") != std::string::npos);
}

TEST_CASE("a missing collective on one member is refused", "[phynet]") {
  auto loaded = workloadFromTraceSet(sampleSet());
  REQUIRE(loaded.ok());
  Workload w = loaded.value();
  w.ranks[0].ops.erase(w.ranks[0].ops.begin());  // rank 0 skips the world allreduce
  Status status = checkWorkload(w);
  REQUIRE_FALSE(status.ok());
  CHECK(status.message().find("communicator 0x0000000000000100 (world)") != std::string::npos);
}

TEST_CASE("trace errors name the file and line", "[phynet]") {
  trace::TraceSet set = sampleSet();
  set.files[2].ops[1].record.commId = 0x999;  // an op on a communicator nobody created
  auto loaded = workloadFromTraceSet(set);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().message().find("rank2.jsonl:5") != std::string::npos);

  set = sampleSet();
  set.files.pop_back();  // rank 3's file is missing: the world of 4 ranks has 3 files
  loaded = workloadFromTraceSet(set);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().message().find("declares 4 ranks, but the trace has 3 files") != std::string::npos);
}

TEST_CASE("scale and filters keep the workload consistent", "[phynet]") {
  auto loaded = workloadFromTraceSet(sampleSet());
  REQUIRE(loaded.ok());
  Workload w = loaded.value();
  scaleWorkload(w, 2.0);
  CHECK(w.ranks[0].ops[1].count == 512);
  CHECK(w.ranks[0].ops[1].bytes == 512 * 4 * 2);
  CHECK(checkWorkload(w).ok());
  size_t removed = filterWorkload(w, {"sendrecv"}, {"world"});
  CHECK(removed == 8);  // allreduce and allgather on every rank
  CHECK(w.ranks[0].ops.size() == 2);
  CHECK(checkWorkload(w).ok());
  CHECK(workloadFingerprint(w) != workloadFingerprint(loaded.value()));
}

}  // namespace
}  // namespace nshim::workload

namespace nshim::workload {
namespace {

void writeAll(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A replay rank loads every file's structure and only its own operations, the same ones the whole
// load gives it; also when its file's header does not name its rank (the file is read again).
TEST_CASE("a rank that loads only its own ops gets exactly the ops of the whole load", "[phynet]") {
  trace::testing::TempDir dir;
  for (const char* name : {"rank0.jsonl", "rank1.jsonl"}) {
    writeAll(dir.path() + "/" + name, readWholeFile(examplePath(std::string("examples/traces/megatron_tp2/") + name)));
  }
  auto whole = loadTraceWorkload(dir.path());
  REQUIRE(whole.ok());
  auto same = [](const WorkOp& a, const WorkOp& b) {
    return std::tie(a.commId, a.seq, a.kind, a.count, a.type, a.bytes, a.group, a.computeNs, a.recordedNs) ==
           std::tie(b.commId, b.seq, b.kind, b.count, b.type, b.bytes, b.group, b.computeNs, b.recordedNs);
  };
  auto check = [&](int rank) {
    auto mine = loadTraceWorkload(dir.path(), nullptr, rank);
    REQUIRE(mine.ok());
    CHECK(mine->onlyRank == rank);
    CHECK(mine->comms.size() == whole->comms.size());
    for (int g = 0; g < 2; ++g) {
      const auto& expected = g == rank ? whole->ranks[g].ops : std::vector<WorkOp>{};
      REQUIRE(mine->ranks[g].ops.size() == expected.size());
      for (size_t i = 0; i < expected.size(); ++i) CHECK(same(mine->ranks[g].ops[i], expected[i]));
    }
  };
  check(0);
  check(1);
  REQUIRE(whole->ranks[1].ops.size() > 10);
  // rank 1's header without its rank: the comm records name it, and the file is read again
  std::string text = readWholeFile(dir.path() + "/rank1.jsonl");
  const size_t at = text.find("\"global_rank\":1,");
  REQUIRE(at < text.find('\n'));
  text.erase(at, std::string("\"global_rank\":1,").size());
  writeAll(dir.path() + "/rank1.jsonl", text);
  check(1);
}

}  // namespace
}  // namespace nshim::workload

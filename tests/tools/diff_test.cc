// `ncclshim diff`: a copy of the bundled Megatron trace with one op's count edited is found and
// named (rank, communicator, seq, field, both values); a deleted op shows as missing; identical
// traces and a trace against its own report view are the same; the report side pairs collectives
// with the communicator's rank 0 and sends with "sendrecv" rows.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/catch.h"
#include "tools/inspect/diff_view.h"
#include "tools/inspect/trace_comms.h"
#include "tools/inspect/trace_diff.h"

namespace nshim::tools {
namespace {

namespace fs = std::filesystem;

const char* kTraceDir = "examples/traces/megatron_tp2";

// A fresh copy of the trace directory; `edit` rewrites rank1.jsonl's text.
template <typename Edit>
std::string copyWithEdit(const std::string& name, Edit edit) {
  fs::path dir = fs::temp_directory_path() / ("ncclshim-diff-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(kTraceDir)) {
    fs::copy_file(entry.path(), dir / entry.path().filename());
  }
  std::ifstream in(dir / "rank1.jsonl");
  std::stringstream text;
  text << in.rdbuf();
  in.close();
  std::string edited = edit(text.str());
  std::ofstream(dir / "rank1.jsonl", std::ios::trunc) << edited;
  return dir.string();
}

DiffSide traceSide(const std::string& path) {
  auto view = readTraceView(path);
  REQUIRE(view.ok());
  return diffSideFromTrace(*view, path);
}

TEST_CASE("diff: identical traces are the same", "[tools]") {
  DiffSide a = traceSide(kTraceDir);
  DiffResult r = compareSides(a, traceSide(kTraceDir), {});
  CHECK(r.same());
  CHECK(r.comparedOps == 140);
  CHECK(r.matchedComms == 3);
}

TEST_CASE("diff: a planted count divergence is found and named", "[tools]") {
  const std::string line = "\"rank\":1,\"seq\":17,\"op\":\"allreduce\",\"count\":32768,";
  std::string comm;  // the edited op's communicator id and line number, read from the file itself
  int lineNumber = 0;
  std::string copy = copyWithEdit("count", [&](std::string text) {
    size_t at = text.find(line);
    REQUIRE(at != std::string::npos);
    size_t commAt = text.rfind("\"comm\":\"", at);
    comm = text.substr(commAt + 8, 18);
    lineNumber = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
    text.replace(at, line.size(), "\"rank\":1,\"seq\":17,\"op\":\"allreduce\",\"count\":32769,");
    return text;
  });
  DiffResult r = compareSides(traceSide(kTraceDir), traceSide(copy), {});
  REQUIRE_FALSE(r.same());
  CHECK(r.total == 1);
  const Divergence& d = r.listed.front();
  CHECK(d.rank == 1);
  CHECK(d.comm.find(comm + " (world, 2 ranks)") == 0);
  CHECK(d.seq == 17);
  CHECK(d.field == "count");
  CHECK(d.a == "32768");
  CHECK(d.b == "32769");
  CHECK(d.opB.find("rank1.jsonl:" + std::to_string(lineNumber)) != std::string::npos);
  fs::remove_all(copy);
}

TEST_CASE("diff: a deleted op shows as missing on that rank and communicator", "[tools]") {
  std::string copy = copyWithEdit("missing", [](std::string text) {
    size_t at = text.find("\"rank\":1,\"seq\":40,");
    REQUIRE(at != std::string::npos);
    size_t begin = text.rfind('\n', at) + 1;
    text.erase(begin, text.find('\n', at) + 1 - begin);
    return text;
  });
  DiffResult r = compareSides(traceSide(kTraceDir), traceSide(copy), {});
  REQUIRE(r.total == 1);
  const Divergence& d = r.listed.front();
  CHECK(d.rank == 1);
  CHECK(d.seq == 40);
  CHECK(d.field == "op");
  CHECK(d.a == "allreduce");
  CHECK(d.b == "(none)");
  fs::remove_all(copy);
}

TEST_CASE("diff: a trace against a report compares what the report holds", "[tools]") {
  DiffSide trace = reportView(traceSide(kTraceDir));
  // Collectives appear once, on their communicator's rank 0: 65 on the shared one (rank 0) and 5 on
  // each rank's one-rank communicator.
  CHECK(trace.ranks[0].size() == 70);
  CHECK(trace.ranks[1].size() == 5);
  ReplayReportCsv report;
  report.path = "r.csv";
  for (size_t g = 0; g < trace.ranks.size(); ++g) {
    for (const DiffOp& op : trace.ranks[g]) {
      ReportRow row;
      row.op = op.fields[kFieldOp];
      row.comm = trace.comms[op.comm].id;
      row.nranks = std::stoi(op.fields[kFieldNranks]);
      row.seq = op.seq;
      row.count = std::stoull(op.fields[kFieldCount]);
      row.type = "float";  // the engine's name of float32, as phynet writes it
      row.bytes = std::stoull(op.fields[kFieldBytes]);
      report.rows.push_back(row);
    }
  }
  DiffOptions byId;
  byId.matchById = true;
  CHECK(compareSides(trace, diffSideFromReport(report, trace, 0), byId).same());
  report.rows[3].bytes += 4;
  DiffResult r = compareSides(trace, diffSideFromReport(report, trace, 0), byId);
  REQUIRE(r.total == 1);
  CHECK(r.listed[0].field == "bytes");
  CHECK(r.listed[0].seq == report.rows[3].seq);
}

}  // namespace
}  // namespace nshim::tools

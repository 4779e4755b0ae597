// Reader and validator tests: a file cut anywhere keeps every complete record and reports the cut;
// malformed lines fail with file:line:field; hostile mutations never crash the parser; JSON string
// escapes; a directory of per-rank files is read in rank order and checked across ranks; validation
// shows the first messages of each kind and counts the rest.
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include "tests/catch.h"
#include "tests/trace/trace_test_util.h"
#include "trace/json_line.h"
#include "trace/recorder.h"
#include "trace/trace_reader.h"
#include "trace/trace_validate.h"

namespace nshim::trace {
namespace {

using testing::TempDir;
using testing::variedComm;
using testing::variedOp;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A closed trace of one comm record and `ops` op records, as text.
std::string sampleTrace(int ops) {
  TempDir dir;
  RecorderConfig config;
  config.dir = dir.path();
  Recorder recorder(config);
  recorder.recordComm(variedComm(0xabc0000000000000ull, 0, 4, CommEvent::kInit));
  for (int i = 0; i < ops; ++i) recorder.recordOp(variedOp(0, i));
  REQUIRE(recorder.close().ok());
  return slurp(recorder.path());
}

TEST_CASE("a truncated file keeps every complete record and reports the cut", "[trace]") {
  std::string text = sampleTrace(40);
  std::vector<size_t> lineEnds;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') lineEnds.push_back(i);
  }
  REQUIRE(lineEnds.size() == 43);  // header, comm, 40 ops, footer
  for (size_t cut = lineEnds[0] + 1; cut < text.size(); cut += 7) {
    auto file = parseTrace(std::string_view(text).substr(0, cut), "cut.jsonl");
    REQUIRE(file.ok());
    size_t complete = 0;
    while (complete < lineEnds.size() && lineEnds[complete] < cut) ++complete;
    size_t records = std::min<size_t>(complete - 1, 41);  // minus the header, at most comm + 40 ops
    CHECK(file->comms.size() + file->ops.size() == records);
    bool atBoundary = text[cut - 1] == '\n';
    CHECK(file->truncated == !atBoundary);
    if (!atBoundary) {
      CHECK(file->cutLine == int64_t(complete + 1));
      CHECK(file->endDescription().find("cut at line " + std::to_string(complete + 1)) == 0);
    }
    CHECK(file->endsWithFooter == (complete == lineEnds.size()));
  }
  // A file holding only part of its header is not a trace.
  auto headless = parseTrace(std::string_view(text).substr(0, lineEnds[0] / 2), "h.jsonl");
  CHECK_FALSE(headless.ok());
}

std::string withLine(const std::string& line) {
  return std::string(R"({"type":"header","format":"ncclshim-trace","version":1,"host":"h","pid":1})") + "\n" + line +
         "\n";
}

const char* kGoodOp =
    R"({"type":"op","n":0,"comm":"0x1","rank":0,"seq":0,"op":"allreduce","count":4,"dtype":"float32",)"
    R"("redop":"sum","root":-1,"peer":-1,"nranks":2,"bytes":16,"stream":"0x0","group":0,)"
    R"("t_start_ns":1,"t_end_ns":2,"flags":0})";

// Replaces `"key":<value>` of kGoodOp with `replacement` (or removes the field when empty).
std::string mutateOp(const std::string& key, const std::string& replacement) {
  std::string line = kGoodOp;
  size_t at = line.find("\"" + key + "\":");
  REQUIRE(at != std::string::npos);
  size_t end = line.find_first_of(",}", line.find(':', at));
  if (replacement.empty()) {
    line.erase(at, end - at + (line[end] == ',' ? 1 : 0));
  } else {
    line.replace(at, end - at, "\"" + key + "\":" + replacement);
  }
  return line;
}

TEST_CASE("malformed lines are reported with file, line and field", "[trace]") {
  REQUIRE(parseTrace(withLine(kGoodOp), "t.jsonl").ok());
  struct Case {
    std::string text;
    std::string expect;
  };
  std::vector<Case> cases = {
      {withLine(mutateOp("dtype", "\"float33\"")), "t.jsonl:2: field 'dtype': unknown value 'float33'"},
      {withLine(mutateOp("count", "\"4\"")), "t.jsonl:2: field 'count': expected an integer"},
      {withLine(mutateOp("count", "-4")), "t.jsonl:2: field 'count': must not be negative"},
      {withLine(mutateOp("count", "18446744073709551616")), "t.jsonl:2: field 'count'"},
      {withLine(mutateOp("root", "-2")), "t.jsonl:2: field 'root': -2 is outside"},
      {withLine(mutateOp("seq", "")), "t.jsonl:2: field 'seq': missing"},
      {withLine(mutateOp("comm", "\"0xzz\"")), "t.jsonl:2: field 'comm'"},
      {withLine(mutateOp("comm", "\"0x00000000000000001\"")), "t.jsonl:2: field 'comm'"},
      {withLine(mutateOp("op", "\"allreduce2\"")), "t.jsonl:2: field 'op'"},
      {withLine(mutateOp("redop", "\"premulsum\"")), "t.jsonl:2: field 'redop'"},
      {withLine(mutateOp("flags", "[1]")), "t.jsonl:2: field 'flags'"},
      {withLine(mutateOp("flags", "1.5")), "t.jsonl:2: field 'flags': expected an integer"},
      {withLine(mutateOp("stream", "01")), "t.jsonl:2: field 'stream'"},
      {withLine(R"({"type":"op" "n":0})"), "t.jsonl:2: column"},
      {withLine(R"({"type":"op","type":"op"})"), "t.jsonl:2: column 14: duplicate field 'type'"},
      {withLine(R"({"type":"header","format":"ncclshim-trace","version":1,"host":"h","pid":1})"),
       "t.jsonl:2: field 'type': a second header"},
      {withLine(std::string(kGoodOp) + "x"), "t.jsonl:2: column"},
      {withLine(std::string(5000, ' ')), "t.jsonl:2: line longer than 4096 bytes"},
      {withLine("{\"type\":\"op\",\"host\":\"a\tb\"}"), "t.jsonl:2: field 'host' (column 21): control character"},
      {withLine(kGoodOp) + "\n{\"type\":\"comm\",\"n\":1}\n", "t.jsonl:4: field 'event': missing"},
      {std::string(kGoodOp) + "\n", "t.jsonl:1: field 'type': the first line must be the header"},
      {R"({"type":"header","format":"ncclshim-trace","version":4,"host":"h","pid":1})"
       "\n",
       "t.jsonl:1: field 'version': 4 is newer than this reader (3)"},
      {R"({"type":"header","format":"other","version":1,"host":"h","pid":1})"
       "\n",
       "t.jsonl:1: field 'format'"},
      {R"({"type":"header","format":"ncclshim-trace","version":1,"pid":1,"host":")" + std::string(70, 'h') + "\"}\n",
       "t.jsonl:1: field 'host': longer than 63 bytes"},
      {"", "t.jsonl:1: no complete header line"},
  };
  for (const Case& c : cases) {
    auto result = parseTrace(c.text, "t.jsonl");
    INFO(c.text);
    REQUIRE_FALSE(result.ok());
    INFO(result.status().message());
    CHECK(result.status().message().find(c.expect) == 0);
  }
  // Through a real file too: the message names its path.
  TempDir dir;
  std::string path = dir.path() + "/bad.jsonl";
  std::ofstream(path) << withLine(mutateOp("peer", "\"x\""));
  auto file = readTraceFile(path);
  REQUIRE_FALSE(file.ok());
  CHECK(file.status().message().find(path + ":2: field 'peer'") == 0);
}

TEST_CASE("unknown record types and fields of newer writers are skipped", "[trace]") {
  std::string text = withLine(R"({"type":"gpu_timing","n":3,"future":[1]})"
                              "x");
  CHECK_FALSE(parseTrace(text, "t").ok());  // still JSON: nested values are not
  text = withLine(R"({"type":"gpu_timing","n":3,"future":true,"ratio":1.5e3,"x":null})") +
         mutateOp("flags", "0,\"newfield\":\"v\"") + "\n";
  auto file = parseTrace(text, "t");
  REQUIRE(file.ok());
  CHECK(file->ignoredLines == 1);
  CHECK(file->ops.size() == 1);
}

TEST_CASE("hostile input never crashes the reader", "[trace]") {
  std::string text = sampleTrace(30);
  std::mt19937_64 rng(7);
  const char kBytes[] = "{}[]\",:\\0123456789-+.eExu\n \t\x01\xff";
  for (int round = 0; round < 3000; ++round) {
    std::string mutated = text;
    int edits = 1 + int(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % mutated.size();
      switch (rng() % 3) {
        case 0: mutated[at] = kBytes[rng() % (sizeof(kBytes) - 1)]; break;
        case 1: mutated.erase(at, 1 + rng() % 40); break;
        default: mutated.insert(at, 1 + rng() % 5, kBytes[rng() % (sizeof(kBytes) - 1)]); break;
      }
      if (mutated.empty()) mutated = "{";
    }
    auto file = parseTrace(mutated, "fuzz");
    if (!file.ok()) CHECK(file.status().message().find("fuzz:") == 0);
  }
}

TEST_CASE("JSON strings decode escapes and refuse bad ones", "[trace]") {
  FlatJsonObject obj;
  REQUIRE(parseFlatJson(R"( {"a" : "x\"\\\/\n\u00e9\ud83d\ude00" , "b":-9223372036854775808} )", &obj).ok());
  CHECK(obj.find("a")->text == "x\"\\/\n\xc3\xa9\xf0\x9f\x98\x80");
  int64_t b = 0;
  CHECK(getInt64(obj, "b", INT64_MIN, INT64_MAX, &b).ok());
  CHECK(b == INT64_MIN);
  CHECK_FALSE(parseFlatJson(R"({"a":"\ud83d"})", &obj).ok());
  CHECK_FALSE(parseFlatJson(R"({"a":"\x"})", &obj).ok());
  CHECK_FALSE(parseFlatJson(R"({"a":01})", &obj).ok());
  CHECK_FALSE(parseFlatJson(R"({"a":"open)", &obj).ok());
  CHECK_FALSE(parseFlatJson(R"({"a":1,})", &obj).ok());
  CHECK(parseFlatJson("{}", &obj).ok());
}

// Writes a trace file for `rank` of a 2-rank communicator with the given collectives.
std::string writeRankFile(const TempDir& dir, int rank, const std::vector<uint64_t>& counts, bool gap = false) {
  RecorderConfig config;
  config.dir = dir.path();
  config.namePattern = "r%r-%p-" + std::to_string(counts.size()) + (gap ? "g" : "");
  config.envGlobalRank = rank;
  Recorder recorder(config);
  CommRecord init = variedComm(0x77, rank, 2, CommEvent::kInit);
  recorder.recordComm(init);
  for (size_t i = 0; i < counts.size(); ++i) {
    if (gap && i == 1) continue;
    OpRecord op = makeOpRecord(OpCode::kAllReduce);
    op.commId = 0x77;
    op.rank = rank;
    op.nranks = 2;
    op.seq = i;
    op.count = counts[i];
    op.datatype = 7;
    op.redop = 0;
    op.bytes = traceBytes(op.op, op.count, op.datatype, 2);
    recorder.recordOp(op);
  }
  OpRecord send = makeOpRecord(rank == 0 ? OpCode::kSend : OpCode::kRecv);
  send.commId = 0x77;
  send.rank = rank;
  send.nranks = 2;
  send.seq = counts.size();
  send.count = 8;
  send.datatype = 2;
  send.peer = 1 - rank;
  send.bytes = 32;
  recorder.recordOp(send);
  REQUIRE(recorder.close().ok());
  return recorder.path();
}

TEST_CASE("a directory of rank files is read in rank order and validated across ranks", "[trace]") {
  SECTION("consistent ranks") {
    TempDir dir;
    writeRankFile(dir, 1, {4, 8, 16});
    writeRankFile(dir, 0, {4, 8, 16});
    auto set = readTraceDir(dir.path());
    REQUIRE(set.ok());
    REQUIRE(set->files.size() == 2);
    CHECK(set->files[0].globalRank() == 0);
    CHECK(set->files[1].globalRank() == 1);
    ValidationReport report = validateTraceSet(*set);
    INFO((report.errors.empty() ? std::string() : report.errors[0]));
    CHECK(report.ok());
    CHECK(report.warnings.empty());
  }
  SECTION("a size mismatch names the collective and both files") {
    TempDir dir;
    writeRankFile(dir, 0, {4, 8, 16});
    std::string bad = writeRankFile(dir, 1, {4, 9, 16});
    auto set = readTraceDir(dir.path());
    REQUIRE(set.ok());
    ValidationReport report = validateTraceSet(*set);
    REQUIRE(report.errors.size() == 1);
    CHECK(report.errors[0].find("collective #1 differs") != std::string::npos);
    CHECK(report.errors[0].find(bad + ":4") != std::string::npos);
  }
  SECTION("a missing sequence number and a missing rank") {
    TempDir dir;
    writeRankFile(dir, 0, {4, 8, 16}, true);
    auto set = readTraceDir(dir.path());
    REQUIRE(set.ok());
    ValidationReport report = validateTraceSet(*set);
    REQUIRE_FALSE(report.ok());
    CHECK(report.errors[0].find("sequence number 2 where 1 was expected (gap)") != std::string::npos);
    CHECK(report.warnings.size() == 1);  // 1 of 2 ranks
  }
  SECTION("an empty directory and a bad file are errors") {
    TempDir dir;
    CHECK_FALSE(readTraceDir(dir.path()).ok());
    writeRankFile(dir, 0, {4});
    std::ofstream(dir.path() + "/zz.jsonl") << "{\"type\":\"header\"}\n";
    auto set = readTraceDir(dir.path());
    REQUIRE_FALSE(set.ok());
    CHECK(set.status().message().find(dir.path() + "/zz.jsonl:1: field 'format'") == 0);
  }
}

TEST_CASE("validation shows the first messages of each kind and counts the rest", "[trace]") {
  TraceSet set;
  TraceFile& file = set.files.emplace_back();
  file.path = "r0.jsonl";
  file.endsWithFooter = false;  // one "file not closed" warning
  CommEntry init{0, 2, makeCommRecord(CommEvent::kInit)};
  init.record.commId = 0x77;
  init.record.nranks = 1;
  init.record.rank = 0;
  file.comms.push_back(init);
  for (uint64_t i = 0; i < 100; ++i) {
    OpEntry op{i + 1, int64_t(i) + 3, makeOpRecord(OpCode::kAllReduce)};
    op.record.commId = 0x77;
    op.record.rank = 0;
    op.record.nranks = 1;
    op.record.seq = i;
    op.record.count = 4;
    op.record.datatype = 7;
    op.record.redop = i < 30 ? kNoRedOp : 0;  // 30 errors of one kind
    op.record.bytes = 1;                      // 100 warnings of another: the rule gives 16
    file.ops.push_back(op);
  }
  ValidationReport report = validateTraceSet(set);
  CHECK(report.errorCount == 30);
  CHECK(report.warningCount == 101);
  CHECK(report.errors.size() == kMessagesShownPerKind);
  CHECK(report.warnings.size() == kMessagesShownPerKind + 1);
  CHECK(report.errors[0].find("r0.jsonl:3: allreduce seq 0: reduction without a redop") == 0);
  REQUIRE(report.notShown.size() == 2);
  CHECK(report.notShown[0].kind == "reduction without a redop");
  CHECK(report.notShown[0].error);
  CHECK(report.notShown[0].count == 10);
  CHECK(report.notShown[1].kind == "bytes differ from the bytes rule");
  CHECK_FALSE(report.notShown[1].error);
  CHECK(report.notShown[1].count == 80);
}

}  // namespace
}  // namespace nshim::trace

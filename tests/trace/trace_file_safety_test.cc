// The trace file in a shared directory and when it cannot be written: a name taken by a planted
// symlink or file is neither followed nor reused nor replaced (a ".1" name instead, said in the
// log), the file is private unless asked, a file that cannot be created or written is announced
// once, cut where the writing stopped, and its lost records counted exactly and announced at close;
// the reader names such cuts.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>

#include "common/log_capture.h"
#include "tests/catch.h"
#include "tests/trace/trace_test_util.h"
#include "trace/recorder.h"
#include "trace/trace_reader.h"

namespace nshim::trace {
namespace {

using testing::TempDir;

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

RecorderConfig configIn(const TempDir& dir, int32_t rank) {
  RecorderConfig config;
  config.dir = dir.path();
  config.namePattern = "job";
  config.envGlobalRank = rank;
  return config;
}

void recordOps(Recorder& recorder, uint64_t count) {
  recorder.recordComm(testing::variedComm(0x77, 0, 1, CommEvent::kInit));
  for (uint64_t i = 0; i < count; ++i) {
    OpRecord op = testing::variedOp(0, i);
    op.commId = 0x77;
    op.rank = 0;
    op.nranks = 1;
    recorder.recordOp(op);
  }
}

bool anyLineHas(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

mode_t modeOf(const std::string& path) {
  struct stat st {};
  lstat(path.c_str(), &st);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("a symlink planted at the trace file's name is not followed: the file gets a .1 name", "[trace][shared]") {
  TempDir dir;
  const std::string target = dir.path() + "/precious";
  std::ofstream(target) << "keep me\n";
  const std::string planted = dir.path() + "/job-rank0.jsonl";
  REQUIRE(symlink(target.c_str(), planted.c_str()) == 0);
  LogCapture capture;
  {
    Recorder recorder(configIn(dir, 0));
    recordOps(recorder, 10);
    REQUIRE(recorder.close().ok());
    CHECK(recorder.path() == dir.path() + "/job-rank0.1.jsonl");
  }
  CHECK(readAll(target) == "keep me\n");
  auto file = readTraceFile(dir.path() + "/job-rank0.1.jsonl");
  REQUIRE(file.ok());
  CHECK(file->ops.size() == 10);
  CHECK(file->endsWithFooter);
  CHECK(anyLineHas(capture.take(),
                   planted + " exists (not replaced, not followed); writing " + dir.path() + "/job-rank0.1.jsonl"));
}

TEST_CASE("a file at the name the trace is renamed to once the rank is known is not replaced", "[trace][shared]") {
  TempDir dir;
  const std::string taken = dir.path() + "/job-rank3.jsonl";
  std::ofstream(taken) << "someone else's\n";
  LogCapture capture;
  {
    Recorder recorder(configIn(dir, kNoRank));  // the rank comes with the comm record: a rename
    recorder.recordComm(testing::variedComm(0x77, 3, 4, CommEvent::kInit));
    REQUIRE(recorder.close().ok());
    CHECK(recorder.path() == dir.path() + "/job-rank3.1.jsonl");
  }
  CHECK(readAll(taken) == "someone else's\n");
  auto file = readTraceFile(dir.path() + "/job-rank3.1.jsonl");
  REQUIRE(file.ok());
  CHECK(file->comms.size() == 1);
  CHECK(anyLineHas(capture.take(), taken + " exists"));
}

TEST_CASE("trace files are private (0600) unless NCCLSHIM_TRACE_MODE asks otherwise", "[trace][shared]") {
  TempDir dir;
  uint32_t mode = GENERATE(0600u, 0644u, 0660u);
  RecorderConfig config = configIn(dir, 0);
  config.fileMode = mode;
  Recorder recorder(config);
  recordOps(recorder, 1);
  REQUIRE(recorder.close().ok());
  CHECK(modeOf(recorder.path()) == mode);
  CHECK(RecorderConfig().fileMode == 0600u);
}

TEST_CASE("a trace file that cannot be created is announced once, and its lost records at close", "[trace][lost]") {
  TempDir dir;
  RecorderConfig config = configIn(dir, 0);
  config.namePattern = std::string(300, 'n');  // longer than a file name may be
  LogCapture capture;
  Recorder recorder(config);
  REQUIRE(recorder.active());
  recordOps(recorder, 40);
  CHECK_FALSE(recorder.flush().ok());
  recordOps(recorder, 2);
  CHECK_FALSE(recorder.close().ok());
  RecorderStats stats = recorder.stats();
  CHECK(stats.dropped == 44);  // 2 comm and 42 op records
  CHECK(stats.unwritten == 44);
  CHECK(stats.records == 0);
  std::vector<std::string> lines = capture.take();
  int announced = 0;
  for (const std::string& line : lines) announced += line.find("trace: cannot create") != std::string::npos;
  CHECK(announced == 1);
  CHECK(anyLineHas(lines, "File name too long"));
  CHECK(anyLineHas(lines, "trace: 44 records lost: " + dir.path() + " could not be written (File name too long)"));
}

TEST_CASE("a write that fails cuts the file where it stopped and counts every record not in it", "[trace][lost]") {
  TempDir dir;
  // In a child: a file size limit (RLIMIT_FSIZE) makes write fail with EFBIG, as a full disk would
  // with ENOSPC, after some lines and inside one.
  pid_t child = testing::forkChild([&] {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{20000, 20000};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 10;
    LogCapture capture;
    Recorder recorder(configIn(dir, 0));
    recordOps(recorder, 500);
    (void)recorder.close();
    RecorderStats stats = recorder.stats();
    std::vector<std::string> lines = capture.take();
    auto file = readTraceFile(recorder.path());
    if (!file.ok()) return 11;
    const uint64_t kept = file->comms.size() + file->ops.size();
    if (!file->truncated || file->endsWithFooter) return 12;  // cut inside a line, no footer
    if (kept + stats.unwritten != 501 || stats.dropped != stats.unwritten || stats.records != kept) return 13;
    if (!anyLineHas(lines, "trace: cannot write " + recorder.path() + ": File too large")) return 14;
    if (!anyLineHas(lines, "trace: " + std::to_string(stats.unwritten) + " records lost: " + recorder.path()))
      return 15;
    return 0;
  });
  int status = testing::waitChild(child, 30);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // 11..15: which check failed
}

TEST_CASE("the reader names a cut: the line a file without footer ends at, an empty or cut header", "[trace][lost]") {
  const std::string header = R"({"type":"header","format":"ncclshim-trace","version":2,"host":"h","pid":1})";
  auto noFooter = parseTrace(header + "\n" + R"({"type":"drops","dropped":1,"total":1})" + "\n", "t.jsonl");
  REQUIRE(noFooter.ok());
  CHECK(noFooter->endDescription().find("cut after line 2: no footer") == 0);
  auto empty = parseTrace("", "t.jsonl");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().message().find(
            "t.jsonl:1: no complete header line: the file is empty (its writer could not write it?)") == 0);
  auto cutHeader = parseTrace(header.substr(0, 20), "t.jsonl");
  REQUIRE_FALSE(cutHeader.ok());
  CHECK(cutHeader.status().message().find("t.jsonl:1: no complete header line: cut after 20 bytes") == 0);
}

}  // namespace nshim::trace

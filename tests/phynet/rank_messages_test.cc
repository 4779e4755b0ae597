// Quiet at scale: load-time log lines are held back (LogCapture) and each distinct one is said once
// with the ranks that said it; the report's per-rank count lines collapse ranks with equal counts
// into rank ranges, while the JSON keeps every rank.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/log_capture.h"
#include "phynet/rank_messages.h"
#include "phynet/report_output.h"
#include "tests/catch.h"

namespace nshim::phynet {
namespace {

std::string printed(const ReplayReport& report, bool verified = false) {
  char* data = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&data, &size);
  printReport(out, report, TextHeader{"tcp", "fast", 1.0, verified}, 0);
  std::fclose(out);
  std::string text(data, size);
  std::free(data);
  return text;
}

std::vector<std::string> countLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    if (line.rfind("# rank", 0) == 0) lines.push_back(line);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

}  // namespace

TEST_CASE("a log capture holds lines back and hands them over once", "[phynet]") {
  if (logLevel() < LogLevel::kWarn) return;  // NCCLSHIM_DEBUG=NONE: nothing is logged
  std::vector<std::string> lines;
  {
    LogCapture capture;
    NS_WARN("w.txt:1: all_gpus {} replaced by the world size {}", 9216, 32);
    NS_WARN("two\nlines");
    lines = capture.take();
    CHECK(capture.take().empty());
  }
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "WARN w.txt:1: all_gpus 9216 replaced by the world size 32");
  CHECK(lines[1] == "WARN two lines");
}

TEST_CASE("a log capture keeps a bounded number of lines and counts the rest", "[phynet]") {
  if (logLevel() < LogLevel::kWarn) return;  // NCCLSHIM_DEBUG=NONE: nothing is logged
  LogCapture capture;
  for (size_t i = 0; i < LogCapture::kMaxLines + 5; ++i) NS_WARN("line {}", i);
  std::vector<std::string> lines = capture.take();
  REQUIRE(lines.size() == LogCapture::kMaxLines + 1);
  CHECK(lines.back() == "WARN 5 more log lines not shown");
}

TEST_CASE("identical lines of many ranks are said once, with the ranks", "[phynet]") {
  std::vector<std::vector<std::string>> perRank(32, {"WARN all_gpus 9216 replaced by the world size 32"});
  perRank[3].push_back("WARN only here");
  perRank[5].push_back("WARN only here");
  perRank[6].push_back("WARN only here");
  perRank[9].push_back("WARN just rank 9");
  std::vector<std::string> merged = mergeRankMessages(perRank);
  REQUIRE(merged.size() == 3);
  CHECK(merged[0] == "WARN all_gpus 9216 replaced by the world size 32 (on 32 ranks: 0-31)");
  CHECK(merged[1] == "WARN only here (on 3 ranks: 3,5-6)");
  CHECK(merged[2] == "WARN just rank 9 (on rank 9)");
  CHECK(mergeRankMessages(std::vector<std::vector<std::string>>(256)).empty());
}

TEST_CASE("lines travel through int64 words unchanged", "[phynet]") {
  for (const std::vector<std::string>& lines :
       {std::vector<std::string>{}, std::vector<std::string>{"a"}, std::vector<std::string>{"WARN x: 1", "", "1234567"},
        std::vector<std::string>{std::string(1000, 'z'), "\xc3\xa9t\xc3\xa9"}}) {
    CHECK(unpackLines(packLines(lines)) == lines);
  }
  CHECK(unpackLines({}).empty());
  CHECK(unpackLines({1000}).empty());  // a count beyond the words is cut to them
}

TEST_CASE("ranks with equal counts share one report line; the JSON keeps every rank", "[phynet]") {
  ReplayReport report;
  report.worldSize = 256;
  report.ranks.resize(256);
  for (size_t g = 0; g < report.ranks.size(); ++g) {
    RankCounters& c = report.ranks[g];
    c.ops = 8;
    c.opBytes = 692028;
    c.wireSent = c.wireReceived = c.modelSent = 783776;
  }
  report.ranks[100].wireSent = 783812;
  report.ranks[200].wireSent = 783812;
  std::vector<std::string> lines = countLines(printed(report));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] ==
        "# ranks 0-99,101-199,201-255: ops 8 op_bytes 692028 wire_sent 783776 wire_received 783776 "
        "model_sent 783776 wire_zero_copy 0");
  CHECK(lines[1] ==
        "# ranks 100,200: ops 8 op_bytes 692028 wire_sent 783812 wire_received 783776 "
        "model_sent 783776 wire_zero_copy 0");

  report.ranks.resize(3);
  report.ranks[1].opBytes = 1;
  report.ranks[1].bytesVerified = 5;
  lines = countLines(printed(report, true));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].rfind("# ranks 0,2: ops 8 ", 0) == 0);
  CHECK(lines[1].rfind("# rank 1: ops 8 op_bytes 1 ", 0) == 0);
  CHECK(lines[1].find(" verified_bytes 5 wire_zero_copy 0") != std::string::npos);

  char path[] = "/tmp/phynet-ranks-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  REQUIRE(writeJsonReport(path, report, TextHeader{"tcp", "fast", 1.0, false}).ok());
  FILE* f = std::fopen(path, "r");
  std::string json;
  for (int c; (c = std::fgetc(f)) != EOF;) json += static_cast<char>(c);
  std::fclose(f);
  std::remove(path);
  for (int g = 0; g < 3; ++g) CHECK(json.find(fmt::format("{{\"rank\":{},", g)) != std::string::npos);
}

TEST_CASE("ranks are grouped by equal text, lowest rank first", "[phynet]") {
  CHECK(ranksWithEqualText({}).empty());
  CHECK(ranksWithEqualText({"b", "a", "b", "a", "c"}) == std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4}});
}

}  // namespace nshim::phynet

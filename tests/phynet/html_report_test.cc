// phynet --html's pieces: the option is parsed in both spellings without disturbing the options
// around it (and needs a value); the communicators' members file that the page's timeline reads
// lists every communicator with its id, label and members in rank order.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "phynet/html_report.h"
#include "phynet/replay_options.h"
#include "tests/catch.h"

namespace nshim::phynet {
namespace {

Result<ReplayOptions> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "phynet");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parseReplayOptions(static_cast<int>(argv.size()), argv.data());
}

TEST_CASE("phynet --html takes a path, as --html PATH or --html=PATH", "[phynet]") {
  Result<ReplayOptions> a = parse({"--tp", "2", "--html", "page.html", "--json", "r.json", "in.txt"});
  REQUIRE(a.ok());
  CHECK(a->htmlPath == "page.html");
  CHECK(a->jsonPath == "r.json");
  CHECK(a->tp == 2);
  CHECK(a->input == "in.txt");
  Result<ReplayOptions> b = parse({"--html=other.html", "in.txt"});
  REQUIRE(b.ok());
  CHECK(b->htmlPath == "other.html");
  CHECK(b->jsonPath.empty());
  Result<ReplayOptions> c = parse({"in.txt", "--html"});
  REQUIRE(!c.ok());
  CHECK(c.status().message().find("--html needs a value") != std::string::npos);
  CHECK(replayUsage().find("--html FILE.html") != std::string::npos);
}

TEST_CASE("the members file lists every communicator with its label and members", "[phynet]") {
  Workload w;
  w.worldSize = 4;
  w.comms = {{0x1234, {0, 1, 2, 3}, "world"}, {0xabcd, {3, 1}, "dp"}};
  char name[] = "/tmp/html-report-test-XXXXXX.json";
  int fd = mkstemps(name, 5);
  REQUIRE(fd >= 0);
  close(fd);
  REQUIRE(writeCommsJson(name, w).ok());
  std::ifstream in(name);
  std::stringstream text;
  text << in.rdbuf();
  unlink(name);
  const std::string json = text.str();
  CHECK(json.rfind("{\"comms\":[", 0) == 0);
  CHECK(json.find("\"group\":\"world\",\"nranks\":4,\"members\":[0,1,2,3]}") != std::string::npos);
  CHECK(json.find("\"group\":\"dp\",\"nranks\":2,\"members\":[3,1]}") != std::string::npos);
  CHECK(json.find("\"comm\":\"0x") != std::string::npos);
  CHECK(writeCommsJson("/nonexistent-dir/x.json", w).message().find("/nonexistent-dir/x.json") != std::string::npos);
}

}  // namespace
}  // namespace nshim::phynet

// The header's nccl_env (FORMAT version 3): the recorder writes the capturing process's NCCL
// settings as a JSON object and the reader gives them back in order; entries that do not fit (or
// hold a control character) are left out and counted; quotes and braces inside values survive; a
// version-2 header without it still reads; a malformed object is an error naming the field.
#include <string>

#include "tests/catch.h"
#include "tests/trace/trace_test_util.h"
#include "trace/json_line.h"
#include "trace/recorder.h"
#include "trace/trace_reader.h"

namespace nshim::trace {
namespace {

using testing::TempDir;

TEST_CASE("the recorder writes the NCCL settings into the header and the reader reads them back", "[trace]") {
  TempDir dir;
  RecorderConfig config;
  config.dir = dir.path();
  config.ncclEnv = {{"NCCL_ALGO", "Ring"}, {"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"}, {"NCCL_SOCKET_IFNAME", "a\"b}{c\\"}};
  Recorder recorder(config);
  recorder.recordComm(makeCommRecord(CommEvent::kInit));
  REQUIRE(recorder.close().ok());
  auto file = readTraceFile(recorder.path());
  REQUIRE(file.ok());
  CHECK(file->header.version == 3);
  CHECK(file->ncclEnv == config.ncclEnv);
  CHECK(file->ncclEnvLeftOut == 0);
  CHECK(file->comms.size() == 1);
}

TEST_CASE("NCCL settings that do not fit the header are left out and counted", "[trace]") {
  std::vector<std::pair<std::string, std::string>> env = {{"NCCL_ALGO", "Ring"},
                                                          {"NCCL_IB_HCA", std::string(kNcclEnvBytes, 'x')},
                                                          {"NCCL_PROTO", "LL\n128"},
                                                          {"NCCL_BUFFSIZE", "4194304"}};
  char text[kNcclEnvBytes];
  CHECK(encodeNcclEnv(env, text, sizeof(text)) == 2);
  const auto decoded = decodeNcclEnv(text, sizeof(text));
  REQUIRE(decoded.size() == 2);
  CHECK(decoded[0] == env[0]);
  CHECK(decoded[1] == env[3]);

  TraceHeader h{};
  h.version = 3;
  copyFixed(h.host, sizeof(h.host), "h");
  h.ncclEnvLeftOut = encodeNcclEnv(env, h.ncclEnv, sizeof(h.ncclEnv));
  char line[kFormatLineBytes];
  const size_t length = formatHeaderLine(h, line, sizeof(line));
  auto file = parseTrace(std::string(line, length), "t.jsonl");
  REQUIRE(file.ok());
  CHECK(file->ncclEnv.size() == 2);
  CHECK(file->ncclEnvLeftOut == 2);
}

TEST_CASE("headers without nccl_env read as before; a malformed nccl_env names the field", "[trace]") {
  const std::string v2 = R"({"type":"header","format":"ncclshim-trace","version":2,"host":"h","pid":1})"
                         "\n";
  auto old = parseTrace(v2, "t.jsonl");
  REQUIRE(old.ok());
  CHECK(old->ncclEnv.empty());
  // The object may sit anywhere in the header, braces inside its strings and the host's included.
  auto first = parseTrace(R"({"nccl_env":{"NCCL_ALGO":"a}{"},"type":"header","format":"ncclshim-trace",)"
                          R"("version":3,"host":"x{y}","pid":1})"
                          "\n",
                          "t.jsonl");
  REQUIRE(first.ok());
  REQUIRE(first->ncclEnv.size() == 1);
  CHECK(first->ncclEnv[0].second == "a}{");
  CHECK(std::string(first->header.host) == "x{y}");
  for (
      const auto& [line, error] : std::vector<std::pair<std::string, std::string>>{
          {R"({"type":"header","format":"ncclshim-trace","version":3,"host":"h","pid":1,"nccl_env":{"NCCL_A":{"x":"y"}}})",
           "field 'nccl_env': a nested object"},
          {R"({"type":"header","format":"ncclshim-trace","version":3,"host":"h","pid":1,"nccl_env":{"NCCL_A":"y")",
           "field 'nccl_env': the object does not close"},
          {R"({"type":"header","format":"ncclshim-trace","version":3,"host":"h","pid":1,"nccl_env":{"NCCL_A":3}})",
           "field 'nccl_env': 'NCCL_A' is not an NCCL_* name with a string value"},
          {R"({"type":"header","format":"ncclshim-trace","version":3,"host":"h","pid":1,"nccl_env":{"PATH":"/bin"}})",
           "field 'nccl_env': 'PATH' is not an NCCL_* name with a string value"}}) {
    auto bad = parseTrace(line + "\n", "t.jsonl");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().message() == "t.jsonl:1: " + error);
  }
}

}  // namespace
}  // namespace nshim::trace

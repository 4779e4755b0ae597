// Chakra's own reading as the reference: tests/data/chakra/golden/ holds what MLCommons Chakra's
// jsonizer (protobuf's MessageToJson; scripts/chakra_jsonize.sh, tests/data/chakra/SOURCE.md) printed
// for two of ASTRA-sim's example ETs and for ncclshim's export of examples/traces/megatron_tp2. Here
// each file is read by ncclshim, rendered by the protobuf library's JSON printer, and compared node
// for node with Chakra's rendering: the reader against Chakra's reading of its own files, and the
// writer (re-run on the same trace) against Chakra's reading of what it wrote.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

#include "tests/catch.h"
#include "tests/phynet/workload_files.h"
#include "workload/chakra_export.h"
#include "workload/chakra_file.h"
#include "workload/trace_workload.h"

namespace nshim::workload {
namespace {

// The jsonizer writes its objects back to back ("}{"): split them at depth 0, outside strings.
std::vector<nlohmann::json> splitObjects(const std::string& text) {
  std::vector<nlohmann::json> objects;
  int depth = 0;
  bool inString = false, escaped = false;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') inString = false;
      continue;
    }
    if (c == '"') inString = true;
    else if (c == '{' && depth++ == 0) start = i;
    else if (c == '}' && --depth == 0) objects.push_back(nlohmann::json::parse(text.substr(start, i + 1 - start)));
  }
  return objects;
}

nlohmann::json rendered(const google::protobuf::Message& message) {
  std::string json;
  REQUIRE(google::protobuf::util::MessageToJsonString(message, &json).ok());
  return nlohmann::json::parse(json);
}

// Every message of `file` equals Chakra's rendering, in order.
void checkAgainstGolden(const ChakraFile& file, const std::string& goldenPath) {
  const std::vector<nlohmann::json> golden = splitObjects(readWholeFile(goldenPath));
  REQUIRE(golden.size() == file.nodes.size() + 1);
  CHECK(rendered(file.metadata) == golden[0]);
  for (size_t i = 0; i < file.nodes.size(); ++i) {
    INFO(goldenPath << " node " << i);
    CHECK(rendered(file.nodes[i]) == golden[i + 1]);
  }
}

TEST_CASE("chakra golden: ncclshim reads ASTRA-sim's ETs as Chakra's jsonizer does") {
  for (const auto& [et, golden] : std::vector<std::pair<std::string, std::string>>{
           {"tests/data/chakra/astra_all_reduce_4npus/all_reduce.0.et", "astra_all_reduce_4npus.all_reduce.0.json"},
           {"tests/data/chakra/astra_custom_ring_allreduce_8npus/custom_allreduce.0.et",
            "astra_custom_ring_allreduce_8npus.custom_allreduce.0.json"}}) {
    auto file = readChakraFile(et);
    REQUIRE(file.ok());
    checkAgainstGolden(*file, "tests/data/chakra/golden/" + golden);
  }
}

TEST_CASE("chakra golden: the export of the Megatron TP2 capture is what Chakra's jsonizer read back") {
  auto original = loadTraceWorkload("examples/traces/megatron_tp2");
  REQUIRE(original.ok());
  auto exported = exportChakra(*original);
  REQUIRE(exported.ok());
  for (int rank = 0; rank < 2; ++rank) {
    auto file = parseChakraFile(exported->rankFiles[rank], "export");
    REQUIRE(file.ok());
    const std::string golden = fmt::format("tests/data/chakra/golden/ncclshim_megatron_tp2.{}.json", rank);
    checkAgainstGolden(*file, golden);
    // Chakra's reading holds the capture's calls in order: one comm node per call on more than one
    // rank, of its kind and size; a call on a one-rank communicator as a compute node of that name.
    std::vector<nlohmann::json> nodes = splitObjects(readWholeFile(golden));
    const std::vector<WorkOp>& ops = original->ranks[rank].ops;
    size_t next = 0;
    for (size_t i = 1; i < nodes.size(); ++i) {
      if (nodes[i]["name"] == "compute") continue;
      REQUIRE(next < ops.size());
      const WorkOp& op = ops[next++];
      INFO("node " << i << ": " << nodes[i]["name"]);
      if (original->findComm(op.commId)->members.size() == 1) {
        CHECK(nodes[i]["type"] == "COMP_NODE");
        CHECK(nodes[i]["name"].get<std::string>().find("(one rank: no communication)") != std::string::npos);
        continue;
      }
      CHECK(nodes[i]["type"] == "COMM_COLL_NODE");
      int checked = 0;
      for (nlohmann::json attr : nodes[i]["attr"]) {
        if (attr["name"] == "comm_size") checked += attr["int64Val"] == std::to_string(op.bytes);
        if (attr["name"] == "comm_type") checked += attr["int64Val"] == "0" && op.kind == OpKind::kAllReduce;
      }
      CHECK(checked == 2);
    }
    CHECK(next == ops.size());
  }
}

}  // namespace
}  // namespace nshim::workload

// Chakra execution traces: a Megatron capture exported (chakra_export.h) and read back
// (chakra_workload.h) gives the same per-rank operations, bytes and groups; hand-made nodes check the
// dependency order, compute gaps, send/recv exchanges, comm groups and the refusals, each naming the
// file, node and attribute; format detection by content.
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/catch.h"
#include "tests/trace/trace_test_util.h"
#include "workload/chakra_export.h"
#include "workload/chakra_file.h"
#include "workload/chakra_workload.h"
#include "workload/input_format.h"
#include "workload/trace_workload.h"

namespace nshim::workload {
namespace {

using trace::testing::TempDir;

chakra::Node& addNode(std::vector<chakra::Node>& nodes, chakra::NodeType type, std::vector<uint64_t> deps = {}) {
  chakra::Node& n = nodes.emplace_back();
  n.set_id(nodes.size() - 1);
  n.set_name("n" + std::to_string(n.id()));
  n.set_type(type);
  for (uint64_t d : deps) n.add_data_deps(d);
  return n;
}

void setInt(chakra::Node& n, const char* name, int64_t value) {
  chakra::AttributeProto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(value);
}

void setText(chakra::Node& n, const char* name, const std::string& value) {
  chakra::AttributeProto* a = n.add_attr();
  a->set_name(name);
  a->set_string_val(value);
}

std::string fileOf(const std::vector<chakra::Node>& nodes) {
  chakra::GlobalMetadata m;
  m.set_version("0.0.4");
  return serializeChakraFile(m, nodes);
}

Result<Workload> parseRanks(const std::vector<std::vector<chakra::Node>>& ranks, const std::string& groups = "") {
  std::vector<std::string> bytes, names;
  for (size_t r = 0; r < ranks.size(); ++r) {
    bytes.push_back(fileOf(ranks[r]));
    names.push_back("t." + std::to_string(r) + ".et");
  }
  return parseChakraWorkload(bytes, names, groups, ChakraOptions{});
}

TEST_CASE("chakra: a Megatron trace exported and read back keeps every rank's ops, bytes and groups") {
  for (const char* dir : {"examples/traces/megatron_tp2", "examples/traces/megatron_moe_tp2_dp2_ep2"}) {
    auto original = loadTraceWorkload(dir);
    REQUIRE(original.ok());
    auto exported = exportChakra(*original);
    REQUIRE(exported.ok());
    REQUIRE(exported->rankFiles.size() == static_cast<size_t>(original->worldSize));
    std::vector<std::string> names;
    for (int r = 0; r < original->worldSize; ++r) names.push_back("x." + std::to_string(r) + ".et");
    auto back = parseChakraWorkload(exported->rankFiles, names, exported->commGroupJson, ChakraOptions{});
    INFO(back.status().message());
    REQUIRE(back.ok());
    CHECK(back->worldSize == original->worldSize);
    size_t ops = 0, alone = 0;
    for (int r = 0; r < original->worldSize; ++r) {
      const auto& a = original->ranks[r].ops;
      const auto& b = back->ranks[r].ops;
      // One-rank collectives come back as compute time (their recorded duration) before the next op.
      auto micros = [](int64_t ns) { return ns >= 500 ? (ns + 500) / 1000 * 1000 : 0; };
      int64_t pending = 0;
      size_t k = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        INFO(dir << " rank " << r << " op " << i);
        pending += a[i].computeNs >= 1000 ? micros(a[i].computeNs) : 0;
        if (original->findComm(a[i].commId)->members.size() == 1) {
          pending += micros(a[i].recordedNs);
          ++alone;
          continue;
        }
        REQUIRE(k < b.size());
        CHECK(a[i].kind == b[k].kind);
        CHECK(a[i].bytes == b[k].bytes);
        CHECK(a[i].seq == b[k].seq);
        CHECK(a[i].root == b[k].root);
        CHECK(a[i].peer == b[k].peer);
        CHECK(original->findComm(a[i].commId)->members == back->findComm(b[k].commId)->members);
        CHECK(b[k].computeNs == pending);
        CHECK(b[k].type == DataType::kUint8);
        pending = 0;
        ++k;
        ++ops;
      }
      CHECK(k == b.size());
    }
    CHECK(exported->oneRankOps == alone);
    CHECK(exported->commNodes == ops);
    CHECK(back->description.find("uint8") != std::string::npos);
  }
}

TEST_CASE("chakra: nodes run in dependency order; compute gaps go to the next op; exchanges are grouped") {
  std::vector<std::vector<chakra::Node>> ranks(2);
  for (int r = 0; r < 2; ++r) {
    auto& n = ranks[r];
    // ids out of dependency order: node 0 waits for node 2.
    chakra::Node& late = addNode(n, chakra::COMM_COLL_NODE, {2});
    setInt(late, "comm_type", chakra::ALL_GATHER);
    setInt(late, "comm_size", 4096);
    chakra::Node& compute = addNode(n, chakra::COMP_NODE);
    compute.set_duration_micros(7);
    chakra::Node& first = addNode(n, chakra::COMM_COLL_NODE, {1});
    setInt(first, "comm_type", chakra::ALL_REDUCE);
    setInt(first, "comm_size", 1000);
    chakra::Node& send = addNode(n, chakra::COMM_SEND_NODE, {0});
    setInt(send, "comm_dst", 1 - r);
    setInt(send, "comm_size", 64);
    chakra::Node& recv = addNode(n, chakra::COMM_RECV_NODE, {0});
    setInt(recv, "comm_src", 1 - r);
    setInt(recv, "comm_size", 64);
    addNode(n, chakra::MEM_LOAD_NODE);
  }
  auto w = parseRanks(ranks);
  REQUIRE(w.ok());
  const auto& ops = w->ranks[1].ops;
  REQUIRE(ops.size() == 4);
  CHECK(ops[0].kind == OpKind::kAllReduce);
  CHECK(ops[0].count == 1000);
  CHECK(ops[0].computeNs == 7000);
  CHECK(ops[1].kind == OpKind::kAllGather);
  CHECK(ops[1].count == 2048);  // 4096 B gathered over 2 ranks
  CHECK(ops[1].computeNs == 0);
  CHECK(ops[2].kind == OpKind::kSend);
  CHECK(ops[2].peer == 0);
  CHECK(ops[3].kind == OpKind::kRecv);
  CHECK(ops[2].group != 0);
  CHECK(ops[2].group == ops[3].group);
  CHECK(w->comms.size() == 1);
  CHECK(w->comms[0].label == "world");
  CHECK(w->description.find("no process groups: every operation runs on the whole world") != std::string::npos);
  INFO(w->description);
  CHECK(w->description.find("2 nodes that are not communication or compute left out (2 MEM_LOAD_NODE)") !=
        std::string::npos);
}

TEST_CASE("chakra: pg_name picks a group of the comm-group file; peers are global ranks") {
  std::vector<std::vector<chakra::Node>> ranks(4);
  for (int r = 0; r < 4; ++r) {
    chakra::Node& ar = addNode(ranks[r], chakra::COMM_COLL_NODE);
    setInt(ar, "comm_type", chakra::ALL_REDUCE);
    setInt(ar, "comm_size", 256);
    setText(ar, "pg_name", r % 2 == 0 ? "even" : "odd");
    chakra::Node& p2p = addNode(ranks[r], r < 2 ? chakra::COMM_SEND_NODE : chakra::COMM_RECV_NODE, {0});
    setInt(p2p, r < 2 ? "comm_dst" : "comm_src", r < 2 ? r + 2 : r - 2);
    setInt(p2p, "comm_size", 32);
  }
  auto w = parseRanks(ranks, R"({"even": [2, 0], "odd": [1, 3]})");
  REQUIRE(w.ok());
  CHECK(w->comms.size() == 3);  // even, odd, and the world for the point-to-point nodes
  const CommGroup* odd = w->findComm(w->ranks[3].ops[0].commId);
  REQUIRE(odd);
  CHECK(odd->members == std::vector<int>{1, 3});
  CHECK(w->ranks[3].ops[1].kind == OpKind::kRecv);
  CHECK(w->ranks[3].ops[1].peer == 1);
  CHECK(w->findComm(w->ranks[0].ops[0].commId)->members == std::vector<int>{0, 2});
}

TEST_CASE("chakra: a PyTorch-derived ET's METADATA_NODE lists the process groups, before any comm-group file") {
  std::vector<std::vector<chakra::Node>> ranks(4);
  // As PyTorch's pg_config_info lands in Chakra: inputs.values = ["<JSON text of the list>"]; group "0"
  // has no ranks (all of group_size), group "5" the even ranks.
  const std::string pgs = R"(["[{\"pg_name\": \"0\", \"ranks\": [], \"group_size\": 4}, )"
                          R"({\"pg_name\": \"5\", \"ranks\": [2, 0], \"group_size\": 2}]"])";
  for (int r = 0; r < 4; ++r) {
    chakra::Node& meta = addNode(ranks[r], chakra::METADATA_NODE);
    meta.mutable_inputs()->set_values(pgs);
    chakra::Node& ar = addNode(ranks[r], chakra::COMM_COLL_NODE, {0});
    setInt(ar, "comm_type", chakra::ALL_REDUCE);
    setInt(ar, "comm_size", 64);
    setText(ar, "pg_name", r % 2 == 0 ? "5" : "0");
  }
  auto w = parseRanks(ranks, R"({"5": [1, 3]})");  // the trace's own list wins
  REQUIRE(w.ok());
  CHECK(w->findComm(w->ranks[2].ops[0].commId)->members == std::vector<int>{0, 2});
  CHECK(w->findComm(w->ranks[1].ops[0].commId)->members == std::vector<int>{0, 1, 2, 3});
  CHECK(w->description.find("process groups from the METADATA_NODE of t.0.et") != std::string::npos);
  ranks[0][0].mutable_inputs()->set_values(R"(["[{\"pg_name\": \"5\", \"ranks\": [0, 9]}]"])");
  auto bad = parseRanks(ranks);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("t.0.et: node 0 (METADATA_NODE): inputs.values: group '5': rank 9 is not one of "
                                    "the trace's 4 ranks") != std::string::npos);
  ranks[0][0].mutable_inputs()->set_values(R"(["[{\"pg_name\": \"5\", \"ran)");
  auto cut = parseRanks(ranks);
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.status().message().find("not a JSON list of process groups (cut short?)") != std::string::npos);
}

TEST_CASE("chakra: refusals name the file, the node and the attribute") {
  auto refuse = [](chakra::Node node, const std::string& groups = "") {
    std::vector<std::vector<chakra::Node>> ranks(2, std::vector<chakra::Node>{node});
    auto w = parseRanks(ranks, groups);
    REQUIRE_FALSE(w.ok());
    return w.status().message();
  };
  chakra::Node base;
  base.set_type(chakra::COMM_COLL_NODE);
  base.set_id(5);
  chakra::Node noType = base;
  setInt(noType, "comm_size", 8);
  CHECK(refuse(noType).rfind("t.0.et: node 5 (COMM_COLL_NODE): no attribute 'comm_type'", 0) == 0);
  chakra::Node badType = noType;
  setInt(badType, "comm_type", 42);
  CHECK(refuse(badType).find("attribute 'comm_type': 42 is not a Chakra collective") != std::string::npos);
  chakra::Node odd = base;
  setInt(odd, "comm_type", chakra::ALL_TO_ALL);
  setInt(odd, "comm_size", 7);
  CHECK(refuse(odd).find("node 5 (COMM_COLL_NODE): attribute 'comm_size': 7 bytes of ALL_TO_ALL do not divide") !=
        std::string::npos);
  chakra::Node textSize = base;
  setInt(textSize, "comm_type", chakra::ALL_REDUCE);
  setText(textSize, "comm_size", "big");
  CHECK(refuse(textSize).find("attribute 'comm_size' is not an integer") != std::string::npos);
  chakra::Node unknownGroup = badType;
  unknownGroup.mutable_attr(1)->set_int64_val(chakra::ALL_REDUCE);
  setText(unknownGroup, "pg_name", "7");
  CHECK(refuse(unknownGroup, R"({"1": [0, 1]})")
            .find("attribute 'pg_name': group '7' is not one of the trace's process groups") != std::string::npos);
  CHECK(refuse(noType, R"({"1": [0, 5]})").find("rank 5 is not one of the trace's 2 ranks") != std::string::npos);

  std::vector<std::vector<chakra::Node>> cyclic(1);
  chakra::Node& a = addNode(cyclic[0], chakra::COMP_NODE, {1});
  (void)a;
  addNode(cyclic[0], chakra::COMP_NODE, {0});
  auto w = parseRanks(cyclic);
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().message().rfind("t.0.et: node 0: its dependencies form a cycle (2 nodes never become ready)", 0) ==
        0);

  std::string cut = fileOf({noType});
  cut.resize(cut.size() - 3);
  auto parsed = parseChakraFile(cut, "c.0.et");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.status().message().find("c.0.et: message 1 (byte") != std::string::npos);
}

TEST_CASE("chakra: files found by directory, file or prefix; a missing rank is named; told by content") {
  TempDir dir;
  std::vector<chakra::Node> nodes;
  chakra::Node& n = addNode(nodes, chakra::COMM_COLL_NODE);
  setInt(n, "comm_type", chakra::ALL_REDUCE);
  setInt(n, "comm_size", 64);
  const std::string bytes = fileOf(nodes);
  std::ofstream(dir.path() + "/job.1.et", std::ios::binary) << bytes;
  auto missing = findChakraFiles(dir.path());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("rank 0 of 2 missing: no " + dir.path() + "/job.0.et") != std::string::npos);
  std::ofstream(dir.path() + "/job.0.et", std::ios::binary) << bytes;
  for (const std::string& path : {dir.path(), dir.path() + "/job.1.et", dir.path() + "/job"}) {
    auto set = findChakraFiles(path);
    REQUIRE(set.ok());
    CHECK(set->pathByRank.size() == 2);
    auto format = detectInputFormat(path);
    REQUIRE(format.ok());
    CHECK(*format == InputFormat::kChakra);
    auto w = loadChakraWorkload(path, ChakraOptions{});
    REQUIRE(w.ok());
    CHECK(w->ranks[0].ops.size() == 1);
  }
  CHECK(looksLikeChakra(bytes));
  CHECK_FALSE(looksLikeChakra("{\"schema\": \"1.0.1\", \"nodes\": []}"));
  std::ofstream(dir.path() + "/copy", std::ios::binary) << bytes;  // no .et name: told by its bytes
  auto format = detectInputFormat(dir.path() + "/copy");
  REQUIRE(format.ok());
  CHECK(*format == InputFormat::kChakra);
  std::ofstream(dir.path() + "/other.0.et", std::ios::binary) << bytes;
  auto two = findChakraFiles(dir.path());
  REQUIRE_FALSE(two.ok());
  CHECK(two.status().message().find("holds 2 Chakra traces (job, other)") != std::string::npos);
}

}  // namespace
}  // namespace nshim::workload

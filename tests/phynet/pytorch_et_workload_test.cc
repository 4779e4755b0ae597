// PyTorch execution traces (pytorch_et_workload.h): hand-made traces in PyTorch's own layout (schema
// 1.1.0) check the counts, bytes, groups, sequence numbers and sources of collectives, uneven and
// even all-to-all, groups from the process-group description and from start/stride, ranks from the
// content, one file replayed by every rank, times, and the refusals (a bad field naming the node and
// field, malformed JSON naming the line, a missing rank file), gzip-compressed files and directories;
// PARAM's and Chakra's samples as stored (gzipped), among them PARAM's 8-rank DLRM with an uneven
// all-to-all.
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/catch.h"
#include "tests/phynet/workload_files.h"
#include "tests/trace/trace_test_util.h"
#include "workload/pytorch_et_workload.h"
#include "workload/workload_check.h"

namespace nshim::workload {
namespace {

using trace::testing::TempDir;

// A record_param_comms node as PyTorch writes it: the rank argument (own rank, root or peer) before
// the collective name in the inputs, the comms attributes after the standard ones.
struct Node {
  int id = 0;
  std::string coll = "allreduce";
  int rankArg = 0;
  std::string dtype = "Float";
  int64_t in = 0, out = 0;
  std::string pg = "0";
  int pgSize = 2;
  std::string inSplit = "[]", outSplit = "[]";
  int start = -1, stride = -1;  // -1: attribute left out
  std::string extra = "";       // more keys of the node (",\"ts\": 5")
};

std::string attrText(const std::string& name, const std::string& type, const std::string& value) {
  return ", {\"name\": \"" + name + "\", \"type\": \"" + type + "\", \"value\": " + value + "}";
}

std::string nodeText(const Node& n) {
  const std::string in = std::to_string(n.in), out = std::to_string(n.out), size = std::to_string(n.pgSize);
  std::string text = "    {\"id\": " + std::to_string(n.id) + ", \"name\": \"record_param_comms\", \"ctrl_deps\": 5,\n";
  text += "      \"inputs\": {\"values\": [[[10,11,0," + in + ",4,\"cuda:0\"]], " + std::to_string(n.id) + ", [\"" +
          n.pg + "\",\"desc\"], " + std::to_string(n.rankArg) + ", \"" + n.coll + "\", [], [], 0, 1, " + size +
          "], \"shapes\": [[[" + in +
          "]],[],[[],[]],[],[],[],[],[],[],[]], \"types\": [\"GenericList[Tensor(float)]\","
          "\"Int\",\"Tuple[String,String]\",\"Int\",\"String\",\"GenericList[]\",\"GenericList[]\",\"Int\","
          "\"Int\",\"Int\"]},\n";
  text += "      \"outputs\": {\"values\": [[[12,13,0," + out + ",4,\"cuda:0\"]]], \"shapes\": [[[" + out +
          "]]], \"types\": [\"GenericList[Tensor(float)]\"]},\n";
  text += "      \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": 1}";
  text += attrText("collective_name", "string", "\"" + n.coll + "\"");
  text += attrText("dtype", "string", "\"" + n.dtype + "\"");
  text += attrText("in_msg_nelems", "uint64", in) + attrText("out_msg_nelems", "uint64", out);
  text += attrText("in_split_size", "string", "\"" + n.inSplit + "\"") +
          attrText("out_split_size", "string", "\"" + n.outSplit + "\"");
  if (n.start >= 0) text += attrText("global_rank_start", "uint64", std::to_string(n.start));
  if (n.stride >= 0) text += attrText("global_rank_stride", "uint64", std::to_string(n.stride));
  text += attrText("pg_name", "string", "\"" + n.pg + "\"") + attrText("pg_desc", "string", "\"desc\"");
  return text + attrText("pg_size", "uint64", size) + "]" + n.extra + "}";
}

// A whole trace: the thread node, the process-group description (`groups`: its JSON, "" none), the nodes.
std::string traceText(const std::string& groups, const std::vector<Node>& nodes) {
  std::string text =
      "{\n  \"schema\": \"1.1.0-chakra.0.0.4\", \"pid\": 7, \"time\": \"2026-01-01 00:00:00\", "
      "\"start_ts\": 1,\n  \"nodes\": [\n    {\"id\": 2, \"name\": \"[pytorch|profiler|execution_trace|"
      "thread]\", \"ctrl_deps\": 1, \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []}, "
      "\"outputs\": {\"values\": [], \"shapes\": [], \"types\": []}, \"attrs\": []}";
  if (!groups.empty()) {
    text +=
        ",\n    {\"id\": 3, \"name\": \"## process_group:init ##\", \"ctrl_deps\": 2,\n      \"inputs\": "
        "{\"values\": [" +
        nlohmann::json(groups).dump() +
        "], \"shapes\": [[]], \"types\": [\"String\"]},\n"
        "      \"outputs\": {\"values\": [], \"shapes\": [], \"types\": []}, \"attrs\": []}";
  }
  for (const Node& n : nodes) text += ",\n" + nodeText(n);
  return text + "\n  ],\n  \"finish_ts\": 2\n}\n";
}

// "[{pg_name: 0, ranks: [], group_size: N}]" plus subgroups.
std::string groupsText(int world, const std::map<std::string, std::vector<int>>& subgroups = {}) {
  nlohmann::json list = nlohmann::json::array();
  list.push_back({{"pg_name", "0"},
                  {"pg_desc", "default_pg"},
                  {"backend_config", "cuda:nccl"},
                  {"ranks", nlohmann::json::array()},
                  {"group_size", world},
                  {"group_count", 1 + subgroups.size()}});
  for (const auto& [name, ranks] : subgroups) {
    list.push_back({{"pg_name", name}, {"pg_desc", "undefined"}, {"ranks", ranks}, {"group_size", ranks.size()}});
  }
  return list.dump();
}

// Line of the node `{"id": <id>,` in `text`.
int64_t lineOf(const std::string& text, int id) {
  const size_t at = text.find("{\"id\": " + std::to_string(id) + ",");
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
}

Result<Workload> parseRanks(const std::vector<std::string>& texts, const std::vector<std::string>& names) {
  return parsePyTorchEtRanks(std::vector<std::string_view>(texts.begin(), texts.end()), names, PyTorchEtOptions{});
}

void writeFile(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

void writeGzipFile(const std::string& path, const std::string& text) {
  gzFile out = gzopen(path.c_str(), "wb9");
  REQUIRE(out != nullptr);
  CHECK(gzwrite(out, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  CHECK(gzclose(out) == Z_OK);
}

TEST_CASE("PyTorch ET: allreduce, allgather and broadcast of two ranks", "[phynet]") {
  std::vector<std::string> texts;
  for (int rank = 0; rank < 2; ++rank) {
    texts.push_back(traceText(
        groupsText(2),
        {
            {.id = 40, .coll = "allreduce", .rankArg = rank, .in = 1024, .out = 1024},
            {.id = 41, .coll = "wait", .rankArg = rank, .dtype = "Byte"},
            {.id = 55, .coll = "_allgather_base", .rankArg = rank, .dtype = "BFloat16", .in = 256, .out = 512},
            {.id = 47, .coll = "broadcast", .rankArg = 1, .dtype = "Long", .in = 53, .out = 53},
        }));
  }
  // Named against their content: the rank comes from the all-reduce's rank argument.
  auto workload = parseRanks(texts, {"b_1.json", "a_0.json"});
  REQUIRE(workload.ok());
  REQUIRE(workload->worldSize == 2);
  REQUIRE(workload->comms.size() == 1);
  CHECK(workload->comms[0].members == std::vector<int>{0, 1});
  CHECK(workload->comms[0].label == "world");
  CHECK(workload->description.find("2 ranks, 1 communicators, 6 operations from 8 record_param_comms nodes (2 wait") !=
        std::string::npos);
  CHECK(workload->description.find("the trace has no times") != std::string::npos);
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    const std::string name = rank == 0 ? "b_1.json" : "a_0.json";
    const std::vector<WorkOp>& ops = workload->ranks[rank].ops;
    REQUIRE(ops.size() == 3);
    // Node-id order: 40, 47, 55.
    CHECK((ops[0].kind == OpKind::kAllReduce && ops[0].count == 1024 && ops[0].bytes == 4096));
    CHECK((ops[0].type == DataType::kFloat32 && ops[0].root == -1 && ops[0].seq == 0));
    CHECK(ops[0].source == name + ":" + std::to_string(lineOf(texts[rank], 40)));
    CHECK((ops[1].kind == OpKind::kBroadcast && ops[1].count == 53 && ops[1].bytes == 424));
    CHECK((ops[1].type == DataType::kInt64 && ops[1].root == 1 && ops[1].seq == 1));
    CHECK((ops[2].kind == OpKind::kAllGather && ops[2].count == 256 && ops[2].bytes == 1024));
    CHECK((ops[2].type == DataType::kBfloat16 && ops[2].seq == 2));
    CHECK(ops[2].source == name + ":" + std::to_string(lineOf(texts[rank], 55)));
    for (const WorkOp& op : ops) CHECK((op.commId == workload->comms[0].id && op.computeNs == 0 && op.issueNs == -1));
  }
  CHECK(checkWorkload(*workload).ok());
}

// Rank i sends kSplits[i][j] rows (2 elements each) to rank j.
const int kSplits[3][3] = {{1, 2, 0}, {4, 5, 6}, {7, 8, 9}};

std::string splitText(int rank, bool sending) {
  std::string text = "[";
  for (int j = 0; j < 3; ++j) text += (j ? ", " : "") + std::to_string(sending ? kSplits[rank][j] : kSplits[j][rank]);
  return text + "]";
}

TEST_CASE("PyTorch ET: uneven all-to-all becomes one group of sends and receives", "[phynet]") {
  std::vector<std::string> texts;
  for (int rank = 0; rank < 3; ++rank) {
    int64_t in = 0, out = 0;
    for (int j = 0; j < 3; ++j) in += 2 * kSplits[rank][j], out += 2 * kSplits[j][rank];
    texts.push_back(
        traceText(groupsText(3), {{.id = 9,
                                   .coll = "all_to_allv",
                                   .rankArg = rank,
                                   .dtype = "Half",
                                   .in = in,
                                   .out = out,
                                   .pgSize = 3,
                                   .inSplit = splitText(rank, true),
                                   .outSplit = splitText(rank, false)},
                                  {.id = 12, .coll = "allreduce", .rankArg = rank, .in = 8, .out = 8, .pgSize = 3}}));
  }
  auto workload = parseRanks(texts, {"r0.json", "r1.json", "r2.json"});
  REQUIRE(workload.ok());
  for (int rank = 0; rank < 3; ++rank) {
    INFO("rank " << rank);
    std::vector<std::pair<OpKind, int>> want;  // (kind, peer) in PyTorch's order, self and empty pieces skipped
    for (int p = 0; p < 3; ++p) {
      if (p != rank && kSplits[rank][p]) want.push_back({OpKind::kSend, p});
      if (p != rank && kSplits[p][rank]) want.push_back({OpKind::kRecv, p});
    }
    const std::vector<WorkOp>& ops = workload->ranks[rank].ops;
    REQUIRE(ops.size() == want.size() + 1);
    for (size_t i = 0; i < want.size(); ++i) {
      const auto [kind, peer] = want[i];
      const uint64_t rows = kind == OpKind::kSend ? kSplits[rank][peer] : kSplits[peer][rank];
      CHECK((ops[i].kind == kind && ops[i].peer == peer && ops[i].count == 2 * rows && ops[i].bytes == 4 * rows));
      CHECK((ops[i].origin == OpOrigin::kAllToAllV && ops[i].group == 1 && ops[i].seq == i));
      CHECK(ops[i].type == DataType::kFloat16);
    }
    CHECK((ops.back().kind == OpKind::kAllReduce && ops.back().group == 0 && ops.back().seq == want.size()));
  }
  CHECK(workload->ranks[0].ops.size() == 4);  // a send to 1 (none to 2), receives from 1 and 2, the all-reduce
  CHECK(checkWorkload(*workload).ok());
}

TEST_CASE("PyTorch ET: even all-to-all is one alltoall", "[phynet]") {
  std::vector<std::string> texts;
  for (int rank = 0; rank < 2; ++rank) {
    texts.push_back(traceText(groupsText(2), {{.id = 4,
                                               .coll = "all_to_allv",
                                               .rankArg = rank,
                                               .in = 8,
                                               .out = 8,
                                               .inSplit = "[4, 4]",
                                               .outSplit = "[4, 4]"},
                                              {.id = 5, .coll = "all_to_all", .rankArg = rank, .in = 6, .out = 6}}));
  }
  auto workload = parseRanks(texts, {"x.json", "y.json"});
  REQUIRE(workload.ok());
  for (const RankWork& rank : workload->ranks) {
    REQUIRE(rank.ops.size() == 2);
    CHECK((rank.ops[0].kind == OpKind::kAllToAll && rank.ops[0].count == 4 && rank.ops[0].bytes == 32));
    CHECK((rank.ops[0].origin == OpOrigin::kCall && rank.ops[0].group == 0));
    CHECK((rank.ops[1].kind == OpKind::kAllToAll && rank.ops[1].count == 3 && rank.ops[1].bytes == 24));
  }
  CHECK(checkWorkload(*workload).ok());
}

TEST_CASE("PyTorch ET: groups from the process-group description and from start/stride", "[phynet]") {
  // As PyTorch writes it, each rank describes the world and the subgroups it belongs to.
  std::vector<std::string> texts;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string sub = rank < 2 ? "1" : "2";
    const std::vector<int> members = rank < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3};
    texts.push_back(
        traceText(groupsText(4, {{sub, members}}),
                  {
                      {.id = 20, .coll = "allreduce", .rankArg = rank % 2, .in = 16, .out = 16, .pg = sub},
                      {.id = 21, .coll = "reduce_scatter_tensor", .rankArg = rank, .in = 64, .out = 16, .pgSize = 4},
                      // Not described: members from the attributes, ranks 0 and 2 (or 1 and 3).
                      {.id = 22,
                       .coll = "allreduce",
                       .rankArg = rank / 2,
                       .in = 2,
                       .out = 2,
                       .pg = "odd" + std::to_string(rank % 2),
                       .start = rank % 2,
                       .stride = 2},
                  }));
  }
  auto workload = parseRanks(texts, {"d.json", "c.json", "b.json", "a.json"});
  REQUIRE(workload.ok());
  REQUIRE(workload->worldSize == 4);
  std::map<std::vector<int>, std::string> labels;
  for (const CommGroup& c : workload->comms) labels[c.members] = c.label;
  CHECK(labels == std::map<std::vector<int>, std::string>{
                      {{0, 1}, "tp"}, {{2, 3}, "tp"}, {{0, 2}, "dp"}, {{1, 3}, "dp"}, {{0, 1, 2, 3}, "world"}});
  for (int rank = 0; rank < 4; ++rank) {
    INFO("rank " << rank);
    const std::vector<WorkOp>& ops = workload->ranks[rank].ops;
    REQUIRE(ops.size() == 3);
    CHECK(workload->findComm(ops[0].commId)->members == (rank < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3}));
    CHECK((ops[1].kind == OpKind::kReduceScatter && ops[1].count == 16 && ops[1].bytes == 256));
    CHECK(workload->findComm(ops[1].commId)->members == std::vector<int>{0, 1, 2, 3});
    CHECK(workload->findComm(ops[2].commId)->members == std::vector<int>{rank % 2, rank % 2 + 2});
    CHECK((ops[0].seq == 0 && ops[1].seq == 0 && ops[2].seq == 0));
  }
  // The same group in two files has one id.
  CHECK(workload->ranks[0].ops[0].commId == workload->ranks[1].ops[0].commId);
  CHECK(workload->ranks[0].ops[0].commId != workload->ranks[2].ops[0].commId);
  CHECK(checkWorkload(*workload).ok());
}

TEST_CASE("PyTorch ET: one file of a two-rank job is replayed by both ranks", "[phynet]") {
  const std::string text = traceText(groupsText(2), {
                                                        {.id = 7,
                                                         .coll = "allreduce",
                                                         .rankArg = 1,
                                                         .in = 100,
                                                         .out = 100,
                                                         .extra = ", \"ts\": 1000, \"inclusive_dur\": 20"},
                                                        {.id = 9,
                                                         .coll = "broadcast",
                                                         .rankArg = 0,
                                                         .in = 10,
                                                         .out = 10,
                                                         .extra = ", \"ts\": 1050, \"inclusive_dur\": 5"},
                                                    });
  auto workload = parsePyTorchEtRank(text, "one.json", PyTorchEtOptions{});
  REQUIRE(workload.ok());
  REQUIRE(workload->worldSize == 2);
  CHECK(workload->description.find("one file (rank 1): every rank replays its operations") != std::string::npos);
  for (const RankWork& rank : workload->ranks) {
    REQUIRE(rank.ops.size() == 2);
    CHECK((rank.ops[0].issueNs == 0 && rank.ops[0].recordedNs == 20000 && rank.ops[0].computeNs == 0));
    CHECK((rank.ops[1].issueNs == 50000 && rank.ops[1].recordedNs == 5000 && rank.ops[1].computeNs == 30000));
    CHECK((rank.ops[1].kind == OpKind::kBroadcast && rank.ops[1].root == 0));
  }
  CHECK(checkWorkload(*workload).ok());

  const std::string p2p = traceText(groupsText(2), {{.id = 7, .coll = "send", .rankArg = 1, .in = 4, .out = 4}});
  auto refused = parsePyTorchEtRank(p2p, "one.json", PyTorchEtOptions{});
  REQUIRE_FALSE(refused.ok());
  INFO(refused.status().message());
  CHECK(refused.status().message().find("one.json:" + std::to_string(lineOf(p2p, 7)) + ": one file of a 2-rank job") !=
        std::string::npos);
}

TEST_CASE("PyTorch ET: a bad field is refused naming the file, line, node and field", "[phynet]") {
  const std::string text = traceText(groupsText(2), {{.id = 42,
                                                      .coll = "all_to_allv",
                                                      .rankArg = 0,
                                                      .in = 6,
                                                      .out = 6,
                                                      .inSplit = "[1, 2, 3]",
                                                      .outSplit = "[3, 3]"}});
  auto workload = parsePyTorchEtRank(text, "x.json", PyTorchEtOptions{});
  REQUIRE_FALSE(workload.ok());
  CHECK(workload.status().message().find("x.json:" + std::to_string(lineOf(text, 42)) +
                                         ": node 42 (record_param_comms): field 'in_split_size': 3 entries for a "
                                         "group of 2 ranks") != std::string::npos);

  const std::string dtype = traceText(groupsText(2), {{.id = 43, .coll = "allreduce", .dtype = "Quaternion", .in = 4}});
  auto unknown = parsePyTorchEtRank(dtype, "y.json", PyTorchEtOptions{});
  REQUIRE(unknown.ok());  // the tensor's item size (4) gives its bytes
  CHECK((unknown->ranks[0].ops[0].type == DataType::kUint8 && unknown->ranks[0].ops[0].count == 16));
  CHECK(unknown->description.find("dtype 'Quaternion' has no NCCL type: moved as bytes (uint8)") != std::string::npos);

  const std::string root = traceText(groupsText(2), {{.id = 44, .coll = "broadcast", .rankArg = 2, .in = 4}});
  auto badRoot = parsePyTorchEtRank(root, "z.json", PyTorchEtOptions{});
  REQUIRE_FALSE(badRoot.ok());
  const std::string rootWhere = "z.json:" + std::to_string(lineOf(root, 44)) + ": node 44 (record_param_comms): ";
  CHECK(badRoot.status().message().find(rootWhere + "field 'inputs': the root") != std::string::npos);
}

TEST_CASE("PyTorch ET: malformed JSON names its line", "[phynet]") {
  std::string text = traceText(groupsText(2), {{.id = 40, .in = 4}, {.id = 41, .in = 4}});
  const size_t at = text.find("{\"id\": 41,");
  text.insert(at + 10, "}");  // a stray brace on the node's first line
  auto workload = parsePyTorchEtRank(text, "bad.json", PyTorchEtOptions{});
  REQUIRE_FALSE(workload.ok());
  CHECK(workload.status().message().find("bad.json:" + std::to_string(lineOf(text, 41)) +
                                         ": the file is not valid JSON at byte " + std::to_string(at + 10)) !=
        std::string::npos);
  auto empty = parsePyTorchEtRank("", "empty.json", PyTorchEtOptions{});
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().message().find("empty.json:1: the file is not valid JSON") != std::string::npos);
  auto list = parsePyTorchEtRank("[1, 2]", "list.json", PyTorchEtOptions{});
  REQUIRE_FALSE(list.ok());
  CHECK(list.status().message().find("list.json: not a PyTorch execution trace") != std::string::npos);
}

TEST_CASE("PyTorch ET directories: a missing rank and a world that differs are refused", "[phynet]") {
  TempDir dir;
  for (int rank : {0, 2}) {
    writeFile(dir.path() + "/rank-" + std::to_string(rank) + ".json",
              traceText(groupsText(3), {{.id = 5, .rankArg = rank, .in = 4, .pgSize = 3}}));
  }
  writeFile(dir.path() + "/comm_group.json", "{\"0\": [0, 1, 2]}");  // not a trace: ignored
  auto missing = loadPyTorchEtWorkload(dir.path(), PyTorchEtOptions{});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("rank 1 of 3 missing") != std::string::npos);

  writeFile(dir.path() + "/rank-1.json", traceText(groupsText(3), {{.id = 5, .rankArg = 1, .in = 4, .pgSize = 3}}));
  PyTorchEtOptions options;
  options.onlyRank = 1;
  auto whole = loadPyTorchEtWorkload(dir.path(), options);
  REQUIRE(whole.ok());
  CHECK((whole->worldSize == 3 && whole->onlyRank == 1));
  CHECK((whole->ranks[0].ops.empty() && whole->ranks[1].ops.size() == 1 && whole->ranks[2].ops.empty()));
  CHECK(whole->description.find("1 other *.json(.gz) files") != std::string::npos);

  writeFile(dir.path() + "/rank-1.json", traceText(groupsText(4), {{.id = 5, .rankArg = 1, .in = 4, .pgSize = 4}}));
  auto differ = loadPyTorchEtWorkload(dir.path(), PyTorchEtOptions{});
  REQUIRE_FALSE(differ.ok());
  CHECK(differ.status().message().find("are not of one job") != std::string::npos);
}

TEST_CASE("PyTorch ET: gzip-compressed files and directories are read as they are stored", "[phynet]") {
  // Broadcasts only: no node gives the rank, the names do (rank-<N>.json.gz).
  TempDir dir;
  const std::string text = traceText(groupsText(2), {{.id = 6, .coll = "broadcast", .rankArg = 1, .in = 8, .out = 8}});
  writeGzipFile(dir.path() + "/rank-0.json.gz", text);
  writeFile(dir.path() + "/rank-1.json", text);  // plain and compressed files mix
  writeGzipFile(dir.path() + "/other.json.gz", "{\"schema\": 1}");
  auto workload = loadPyTorchEtWorkload(dir.path(), PyTorchEtOptions{});
  REQUIRE(workload.ok());
  REQUIRE(workload->worldSize == 2);
  for (const RankWork& rank : workload->ranks) {
    REQUIRE(rank.ops.size() == 1);
    CHECK((rank.ops[0].kind == OpKind::kBroadcast && rank.ops[0].root == 1 && rank.ops[0].count == 8));
  }
  CHECK(workload->ranks[0].ops[0].source == dir.path() + "/rank-0.json.gz:" + std::to_string(lineOf(text, 6)));
  CHECK(workload->description.find("1 other *.json(.gz) files") != std::string::npos);
  CHECK(checkWorkload(*workload).ok());

  // One compressed file; the same bytes handed over in memory are refused (only files are inflated).
  writeGzipFile(dir.path() + "/one.json.gz", text);
  auto one = loadPyTorchEtWorkload(dir.path() + "/one.json.gz", PyTorchEtOptions{});
  REQUIRE(one.ok());
  CHECK((one->worldSize == 2 && one->ranks[1].ops.size() == 1));
  std::ifstream in(dir.path() + "/one.json.gz", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto inMemory = parsePyTorchEtRank(bytes, "one.json.gz", PyTorchEtOptions{});
  REQUIRE_FALSE(inMemory.ok());
  CHECK(inMemory.status().message().find("one.json.gz: gzip-compressed bytes") != std::string::npos);

  // A damaged stream is named, in a directory too.
  std::string damaged = bytes;
  for (size_t i = 20; i < 60 && i < damaged.size(); ++i) damaged[i] = static_cast<char>(~damaged[i]);
  writeFile(dir.path() + "/one.json.gz", damaged);
  auto cut = loadPyTorchEtWorkload(dir.path() + "/one.json.gz", PyTorchEtOptions{});
  REQUIRE_FALSE(cut.ok());
  INFO(cut.status().message());
  CHECK(cut.status().message().find("one.json.gz: cannot read the gzip stream") != std::string::npos);
  auto cutInDir = loadPyTorchEtWorkload(dir.path(), PyTorchEtOptions{});
  REQUIRE_FALSE(cutInDir.ok());
  CHECK(cutInDir.status().message().find("one.json.gz: cannot read the gzip stream") != std::string::npos);
}

TEST_CASE("PyTorch ET: the samples of PARAM and Chakra", "[phynet]") {
  // pt2_et.json (PARAM, schema 1.1.1): a one-process torch.compile trace without communication.
  const std::string pt2 = examplePath("tests/data/pytorch_et/param_pt2_1.1.1/pt2_et.json");
  REQUIRE(std::ifstream(pt2).good());
  auto workload = loadPyTorchEtWorkload(pt2, PyTorchEtOptions{});
  REQUIRE(workload.ok());
  CHECK((workload->worldSize == 1 && workload->ranks[0].ops.empty()));
  CHECK(workload->description.find("schema 1.1.1-chakra.0.0.4") != std::string::npos);

  // Chakra's 1.0.2 all-gather trace (rank 0 of 2), gzipped: no comms attributes, the group named by
  // backend_id; ten one-element float all-gathers, replayed by both ranks.
  const std::string allgather = examplePath("tests/data/pytorch_et/chakra_allgather_1.0.2/1.0.2-chakra.0.0.4.json.gz");
  REQUIRE(std::ifstream(allgather).good());
  workload = loadPyTorchEtWorkload(allgather, PyTorchEtOptions{});
  REQUIRE(workload.ok());
  REQUIRE(workload->worldSize == 2);
  for (const RankWork& rank : workload->ranks) {
    REQUIRE(rank.ops.size() == 10);
    for (const WorkOp& op : rank.ops) CHECK((op.kind == OpKind::kAllGather && op.count == 1 && op.bytes == 8));
  }
  CHECK(workload->description.find("one file (rank 0)") != std::string::npos);
  CHECK(checkWorkload(*workload).ok());
}

TEST_CASE("PyTorch ET: PARAM's ResNet trace of rank 1 of 2 (schema 1.1.0, gzipped)", "[phynet]") {
  const std::string resnet = examplePath("tests/data/pytorch_et/param_resnet_2gpu_1.1.0/resnet_2gpu_et.json.gz");
  REQUIRE(std::ifstream(resnet).good());
  auto workload = loadPyTorchEtWorkload(resnet, PyTorchEtOptions{});
  REQUIRE(workload.ok());
  REQUIRE(workload->worldSize == 2);
  CHECK(workload->description.find("one file (rank 1)") != std::string::npos);
  CHECK(workload->description.find("42 operations from 27 record_param_comms nodes (6 wait/init") != std::string::npos);
  // Three steps of: broadcast Float 53120 and Long 53 (root 0), then five bucket all-reduces.
  const int64_t buckets[] = {2049000, 7875584, 6563840, 6637568, 2431040};
  for (const RankWork& rank : workload->ranks) {
    REQUIRE(rank.ops.size() == 21);
    for (int step = 0; step < 3; ++step) {
      const WorkOp* op = &rank.ops[static_cast<size_t>(step * 7)];
      CHECK((op[0].kind == OpKind::kBroadcast && op[0].type == DataType::kFloat32 && op[0].count == 53120));
      CHECK((op[1].kind == OpKind::kBroadcast && op[1].type == DataType::kInt64 && op[1].bytes == 424));
      CHECK((op[0].root == 0 && op[1].root == 0));
      for (int b = 0; b < 5; ++b) {
        CHECK((op[2 + b].kind == OpKind::kAllReduce && op[2 + b].count == static_cast<uint64_t>(buckets[b])));
        CHECK(op[2 + b].bytes == static_cast<uint64_t>(4 * buckets[b]));
      }
    }
  }
  REQUIRE(workload->comms.size() == 1);
  CHECK(workload->comms[0].members == std::vector<int>{0, 1});
  CHECK(checkWorkload(*workload).ok());
}

// PARAM's DLRM (schema 1.0.1, no comms attributes, no process-group description): 8 ranks, each file
// gzipped. Every rank sends rows [96, 224, 288, 1664, 592, 96, 192, 240] (one int32 element each) to
// ranks 0..7 in its uneven all-to-all, so rank r receives row count kDlrmSplit[r] from every peer.
const int64_t kDlrmSplit[8] = {96, 224, 288, 1664, 592, 96, 192, 240};

TEST_CASE("PyTorch ET: PARAM's 8-rank DLRM, an uneven all-to-all among even ones", "[phynet]") {
  const std::string dir = examplePath("tests/data/pytorch_et/param_dlrm_8ranks");
  REQUIRE(std::ifstream(dir + "/dlrm_eg_0.json.gz").good());
  auto workload = loadPyTorchEtWorkload(dir, PyTorchEtOptions{});
  REQUIRE(workload.ok());
  REQUIRE(workload->worldSize == 8);
  INFO(workload->description);
  CHECK(workload->description.find("schema 1.0.1") != std::string::npos);
  CHECK(workload->description.find("without group information run on the whole world") != std::string::npos);
  REQUIRE(workload->comms.size() == 1);
  CHECK(workload->comms[0].members == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  for (int rank = 0; rank < 8; ++rank) {
    INFO("rank " << rank);
    const std::vector<WorkOp>& ops = workload->ranks[rank].ops;
    // Even all-to-alls: Float 6144 / 8, Long 24 / 8, Int 384 / 8; then the uneven one (14 pieces),
    // then all-reduce Float 394241, all-to-all Float 6144 / 8, all-reduces Float 112 and 226960.
    REQUIRE(ops.size() == 3 + 14 + 4);
    CHECK((ops[0].kind == OpKind::kAllToAll && ops[0].type == DataType::kFloat32 && ops[0].count == 768));
    CHECK((ops[1].kind == OpKind::kAllToAll && ops[1].type == DataType::kInt64 && ops[1].count == 3));
    CHECK((ops[2].kind == OpKind::kAllToAll && ops[2].type == DataType::kInt32 && ops[2].count == 48));
    size_t i = 3;
    for (int peer = 0; peer < 8; ++peer) {
      if (peer == rank) continue;
      for (OpKind kind : {OpKind::kSend, OpKind::kRecv}) {
        const WorkOp& op = ops[i++];
        const int64_t rows = kind == OpKind::kSend ? kDlrmSplit[peer] : kDlrmSplit[rank];
        CHECK((op.kind == kind && op.peer == peer && op.count == static_cast<uint64_t>(rows)));
        CHECK((op.type == DataType::kInt32 && op.bytes == static_cast<uint64_t>(4 * rows)));
        CHECK((op.origin == OpOrigin::kAllToAllV && op.group == 1));
      }
    }
    CHECK((ops[17].kind == OpKind::kAllReduce && ops[17].count == 394241 && ops[17].group == 0));
    CHECK((ops[18].kind == OpKind::kAllToAll && ops[18].count == 768 && ops[18].origin == OpOrigin::kCall));
    CHECK((ops[19].count == 112 && ops[20].count == 226960 && ops[20].bytes == 907840));
    for (size_t k = 0; k < ops.size(); ++k) CHECK(ops[k].seq == k);
  }
  // A few pieces checked by hand against the JSON: rank 0 sends 224 rows to rank 1 and receives 96
  // from it; rank 3 sends 96 to rank 0 and receives 1664; rank 7's last piece receives 240 from 6.
  const auto& r0 = workload->ranks[0].ops;
  CHECK((r0[3].kind == OpKind::kSend && r0[3].peer == 1 && r0[3].count == 224 && r0[3].bytes == 896));
  CHECK((r0[4].kind == OpKind::kRecv && r0[4].peer == 1 && r0[4].count == 96));
  const auto& r3 = workload->ranks[3].ops;
  CHECK((r3[3].kind == OpKind::kSend && r3[3].peer == 0 && r3[3].count == 96));
  CHECK((r3[4].kind == OpKind::kRecv && r3[4].peer == 0 && r3[4].count == 1664 && r3[4].bytes == 6656));
  const auto& r7 = workload->ranks[7].ops;
  CHECK((r7[16].kind == OpKind::kRecv && r7[16].peer == 6 && r7[16].count == 240));
  CHECK(r7[3].source == dir + "/dlrm_eg_7.json.gz:3889");  // node 1103's opening brace
  // The ranks agree: every send has its receive, every collective the same shape on all ranks.
  const Status agree = checkWorkload(*workload);
  INFO(agree.message());
  CHECK(agree.ok());
}

}  // namespace
}  // namespace nshim::workload

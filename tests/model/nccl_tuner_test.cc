// NCCL's cost model and choice (model/nccl_tuner.h) against NCCL 2.28.9 itself, on the five
// layouts of tests/data/nccl_tuning (4, 8, 16 nodes x 1 GPU; 4, 8 nodes x 2): the system read
// from each layout's NCCL log gives NCCL's printed latency/bandwidth table (ring and tree, every
// protocol and function, to the printed decimal; PAT's allgather and reducescatter column too), and
// every op size NCCL ran gets NCCL's algorithm, protocol and channels, PAT's 34 included.
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "model/nccl_tuner.h"
#include "tests/catch.h"

namespace nshim::testing {
namespace {

const char* kInitLines = "tests/data/nccl_tuning/init_lines.txt";
const char* kChoices = "tests/data/nccl_tuning/choices.csv";

struct Layout {
  int nodes, perNode;
  std::string name() const { return std::to_string(nodes) + "x" + std::to_string(perNode); }
};
const Layout kLayouts[] = {{4, 1}, {8, 1}, {16, 1}, {4, 2}, {8, 2}};

// One layout's section of init_lines.txt, written to its own file (as a user's NCCL log would be).
std::string sectionFile(const Layout& layout) {
  std::ifstream in(kInitLines);
  REQUIRE(in);
  const std::string path = "/tmp/ncclshim-tuner-test-" + layout.name() + ".log";
  std::ofstream out(path);
  bool inside = false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0) inside = line.rfind("# " + layout.name() + ":", 0) == 0;
    if (inside) out << line << "\n";
  }
  return path;
}

TunedFunc funcNamed(const std::string& name) {
  if (name == "Broadcast" || name == "broadcast") return TunedFunc::kBroadcast;
  if (name == "Reduce" || name == "reduce") return TunedFunc::kReduce;
  if (name == "AllGather" || name == "allgather") return TunedFunc::kAllGather;
  if (name == "ReduceScatter" || name == "reducescatter") return TunedFunc::kReduceScatter;
  REQUIRE((name == "AllReduce" || name == "allreduce"));
  return TunedFunc::kAllReduce;
}

using Cells = std::vector<std::pair<double, double>>;  // (latency us, bandwidth GB/s) per column

// Calls onRow(function, cells) for every function row of the blocks of NCCL's printed tuning table
// (in `log`) whose "Algorithm" header line `inBlock` accepts.
void forEachTableRow(const std::string& log, const std::function<bool(const std::string&)>& inBlock,
                     const std::function<void(const std::string&, const Cells&)>& onRow) {
  const std::regex row(R"(^ *(Broadcast|Reduce|AllGather|ReduceScatter|AllReduce) \|(.*)$)");
  const std::regex cell(R"(([0-9.]+)/ *([0-9.]+) \|)");
  std::ifstream in(log);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("Algorithm") != std::string::npos) inside = inBlock(line);
    std::smatch m;
    if (!inside || !std::regex_match(line, m, row)) continue;
    const std::string text = m[2];
    Cells cells;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), cell); it != std::sregex_iterator(); ++it) {
      cells.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
    }
    onRow(m[1], cells);
  }
}

TEST_CASE("NCCL tuner: the latency and bandwidth tables NCCL printed", "[tuner]") {
  for (const Layout& layout : kLayouts) {
    const std::string log = sectionFile(layout);
    auto system = tunerSystemFromNcclLog(log, layout.nodes * layout.perNode, layout.nodes);
    REQUIRE(system.ok());
    int rows = 0;
    // The table's first block (Tree, Ring, CollNetDirect).
    auto treeAndRing = [](const std::string& header) {
      return header.find("Tree") != std::string::npos && header.find("Ring") != std::string::npos &&
             header.find("NVLSTree") == std::string::npos;
    };
    forEachTableRow(log, treeAndRing, [&](const std::string& function, const Cells& values) {
      REQUIRE(values.size() == 9);
      ++rows;
      int index = 0;
      for (Algorithm a : {Algorithm::kTree, Algorithm::kRing}) {
        for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
          const auto [latency, bandwidth] = values[index++];
          const TunerCost cost = ncclCost(funcNamed(function), a, p, *system);
          INFO(layout.name() << " " << function << " " << algorithmName(a) << " " << protocolName(p));
          if (bandwidth == 0) {
            CHECK(cost.bandwidth < 0.05);
          } else {
            CHECK(std::abs(cost.latencyUs - latency) < 0.051);
            CHECK(std::abs(cost.bandwidth - bandwidth) < 0.051);
          }
        }
      }
    });
    CHECK(rows == 5);
  }
}

TEST_CASE("NCCL tuner: PAT's column of the table NCCL printed", "[tuner]") {
  int cells = 0, enabled = 0;
  for (const Layout& layout : kLayouts) {
    const std::string log = sectionFile(layout);
    auto system = tunerSystemFromNcclLog(log, layout.nodes * layout.perNode, layout.nodes);
    REQUIRE(system.ok());
    auto patBlock = [](const std::string& header) { return header.find("PAT") != std::string::npos; };
    forEachTableRow(log, patBlock, [&](const std::string& function, const Cells& values) {
      if (function != "AllGather" && function != "ReduceScatter") return;
      REQUIRE(values.size() == 3);
      int index = 0;
      for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
        const auto [latency, bandwidth] = values[index++];
        const TunerCost cost = ncclCost(funcNamed(function), Algorithm::kPat, p, *system);
        INFO(layout.name() << " " << function << " pat " << protocolName(p));
        ++cells;
        if (bandwidth == 0) {
          CHECK(cost.bandwidth < 0.05);
        } else {
          ++enabled;
          CHECK(std::abs(cost.latencyUs - latency) < 0.051);
          CHECK(std::abs(cost.bandwidth - bandwidth) < 0.051);
        }
      }
    });
  }
  CHECK(cells == 30);   // 5 layouts x 2 functions x 3 protocols
  CHECK(enabled == 6);  // Simple on the 3 layouts of one GPU per node
}

TEST_CASE("NCCL tuner: NCCL's algorithm, protocol and channels for every size it ran", "[tuner]") {
  std::map<std::string, TunerSystem> systems;
  for (const Layout& layout : kLayouts) {
    auto system = tunerSystemFromNcclLog(sectionFile(layout), layout.nodes * layout.perNode, layout.nodes);
    REQUIRE(system.ok());
    systems[layout.name()] = *system;
    // With nothing but the layout, the system is the one NCCL described on that machine.
    const TunerSystem plain = TunerSystem::forLayout(layout.nodes * layout.perNode, layout.nodes);
    CHECK(plain.ring.bwInter == system->ring.bwInter);
    CHECK(plain.tree.bwIntra == system->tree.bwIntra);
    CHECK(plain.tree.pattern == system->tree.pattern);
    CHECK(plain.ring.nvlinkIntra == (layout.perNode > 1));
  }
  std::ifstream in(kChoices);
  REQUIRE(in);
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "nodes,gpus_per_node,op,bytes,algo,proto,channels");
  int checked = 0, pat = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string c; std::getline(fields, c, ',');) f.push_back(c);
    REQUIRE(f.size() == 7);
    const std::string name = f[0] + "x" + f[1];
    const TunerSystem& system = systems.at(name);
    const size_t bytes = std::stoull(f[3]);
    const TunedChoice choice = chooseLikeNccl(funcNamed(f[2]), bytes, system);
    INFO(name << " " << f[2] << " " << bytes << " B: NCCL " << f[4] << " " << f[5] << " " << f[6]);
    if (f[4] == "PAT") ++pat;
    Algorithm algorithm;
    Protocol protocol;
    REQUIRE(parseAlgorithm(f[4], &algorithm));
    REQUIRE(parseProtocol(f[5], &protocol));
    CHECK(choice.algorithm == algorithm);
    CHECK(choice.protocol == protocol);
    CHECK(choice.channels == std::stoi(f[6]));
    ++checked;
  }
  CHECK(checked >= 478);
  CHECK(pat == 34);  // 8 x 1 and 16 x 1 allgather and reducescatter up to 128 and 256 KiB
}

TEST_CASE("NCCL tuner: NCCL_ALGO / NCCL_PROTO restrict the choice; bad logs are named", "[tuner]") {
  const TunerSystem s = TunerSystem::forLayout(8, 4);
  CHECK(chooseLikeNccl(TunedFunc::kAllReduce, 1 << 20, s, Algorithm::kTree).algorithm == Algorithm::kTree);
  CHECK(chooseLikeNccl(TunedFunc::kAllReduce, 1 << 20, s, Algorithm::kAuto, Protocol::kLL).protocol == Protocol::kLL);
  CHECK(chooseLikeNccl(TunedFunc::kBroadcast, 1 << 20, s, Algorithm::kTree).algorithm == Algorithm::kRing);
  auto missing = tunerSystemFromNcclLog("/nonexistent/nccl.log", 8, 4);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("/nonexistent/nccl.log") != std::string::npos);
  const std::string empty = "/tmp/ncclshim-tuner-test-empty.log";
  std::ofstream(empty) << "NCCL INFO nothing here\n";
  auto none = tunerSystemFromNcclLog(empty, 8, 4);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message().find("ring graph") != std::string::npos);
}

}  // namespace
}  // namespace nshim::testing

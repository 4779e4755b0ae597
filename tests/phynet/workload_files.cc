// File loading for the workload readers' tests (workload_files.h).
#include "tests/phynet/workload_files.h"

#include <fstream>
#include <iterator>

#include "tests/catch.h"

namespace nshim::workload {

std::string examplePath(const std::string& relative) {
  if (std::ifstream(relative).good()) return relative;
  std::string here = __FILE__;  // tests/phynet/x.cc, relative to the repository or absolute
  return here.substr(0, here.rfind('/')) + "/../../" + relative;
}

std::string readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  INFO("reading " << path);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string asSpreadsheetSaves(const std::string& text) {
  std::string out = "\xEF\xBB\xBF";
  for (char c : text) out += c == '\n' ? std::string("\r\n") : std::string(1, c);
  return out;
}

void requireSameWorkload(const Workload& a, const Workload& b) {
  REQUIRE(a.worldSize == b.worldSize);
  CHECK(a.description == b.description);
  REQUIRE(a.comms.size() == b.comms.size());
  for (size_t i = 0; i < a.comms.size(); ++i) {
    CHECK(a.comms[i].id == b.comms[i].id);
    CHECK(a.comms[i].members == b.comms[i].members);
    CHECK(a.comms[i].label == b.comms[i].label);
  }
  REQUIRE(a.ranks.size() == b.ranks.size());
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    REQUIRE(a.ranks[r].ops.size() == b.ranks[r].ops.size());
    for (size_t i = 0; i < a.ranks[r].ops.size(); ++i) {
      const WorkOp& x = a.ranks[r].ops[i];
      const WorkOp& y = b.ranks[r].ops[i];
      INFO("rank " << r << " op " << i);
      CHECK((x.commId == y.commId && x.seq == y.seq && x.kind == y.kind && x.count == y.count));
      CHECK((x.type == y.type && x.reduce == y.reduce && x.root == y.root && x.peer == y.peer));
      CHECK((x.bytes == y.bytes && x.issueNs == y.issueNs && x.computeNs == y.computeNs));
      CHECK((x.recordedNs == y.recordedNs && x.group == y.group && x.source == y.source));
    }
  }
}

}  // namespace nshim::workload

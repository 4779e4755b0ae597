// The op-line fast path against the general parser: for the writer's lines (extreme values
// included) and for thousands of mutated lines, reading with and without the fast path gives the
// same records, or the same error; and the fast path really takes the writer's lines.
#include <cstring>
#include <random>
#include <string>

#include "tests/catch.h"
#include "tests/trace/trace_test_util.h"
#include "trace/op_line_scan.h"
#include "trace/trace_format.h"
#include "trace/trace_reader.h"

namespace nshim::trace {
namespace {

std::string headerLine() {
  TraceHeader h{};
  h.version = kTraceFormatVersion;
  h.abi = kTraceRecordAbi;
  h.pid = 42;
  h.globalRank = 0;
  std::strcpy(h.host, "scanhost");
  char buffer[1024];
  size_t n = formatHeaderLine(h, buffer, sizeof(buffer));
  REQUIRE(n > 0);
  return std::string(buffer, n);
}

std::string opLine(const OpRecord& r, uint64_t n) {
  char buffer[1024];
  size_t size = formatOpLine(r, n, buffer, sizeof(buffer));
  REQUIRE(size > 0);
  return std::string(buffer, size - 1);  // without '\n'
}

// Reads `header + line` with the fast path on and off; both must agree on success, error text and
// every byte of the record.
void requireSameResult(const std::string& header, const std::string& line) {
  const std::string text = header + line + "\n";
  ReadOptions fast, general;
  general.opFastPath = false;
  auto a = parseTrace(text, "t.jsonl", fast);
  auto b = parseTrace(text, "t.jsonl", general);
  INFO(line);
  REQUIRE(a.ok() == b.ok());
  if (!a.ok()) {
    REQUIRE(a.status().message() == b.status().message());
    return;
  }
  REQUIRE(a.value().ops.size() == b.value().ops.size());
  REQUIRE(a.value().ignoredLines == b.value().ignoredLines);
  for (size_t i = 0; i < a.value().ops.size(); ++i) {
    const OpEntry& x = a.value().ops[i];
    const OpEntry& y = b.value().ops[i];
    REQUIRE(x.n == y.n);
    REQUIRE(x.line == y.line);
    REQUIRE(std::memcmp(&x.record, &y.record, sizeof(OpRecord)) == 0);
  }
}

OpRecord extremeOp(std::mt19937_64& rng) {
  OpRecord r = testing::variedOp(static_cast<int>(rng() % 8), rng() % 1000);
  auto pick = [&](std::initializer_list<int64_t> values) {
    return *(values.begin() + static_cast<ptrdiff_t>(rng() % values.size()));
  };
  r.hostStartNs = pick({0, -1, 1, INT64_MAX, INT64_MIN, INT64_MIN + 1, 1'000'000'000'000});
  r.gpuEndNs = pick({0, INT64_MAX, INT64_MIN, -123456789});
  r.result = static_cast<int32_t>(pick({0, 2, -1, INT32_MIN, INT32_MAX}));
  r.rank = static_cast<int32_t>(pick({-1, 0, INT32_MAX, -2}));
  r.nranks = static_cast<int32_t>(pick({0, 4, INT32_MAX, -1}));
  r.count = static_cast<uint64_t>(pick({0, 1, INT64_MAX})) + (rng() % 2 ? 0 : uint64_t(INT64_MAX));
  r.bytes = rng() % 2 ? UINT64_MAX : rng() % 100000;
  r.seq = rng() % 3 == 0 ? 9999999999999999999ull : rng() % 1000;
  r.flags = rng() % 4 == 0 ? UINT32_MAX : r.flags;
  r.commId = rng();
  r.stream = rng() % 2 ? 0 : rng();
  return r;
}

TEST_CASE("the op-line fast path takes the writer's lines and reads them as the general parser does", "[trace]") {
  const std::string header = headerLine();
  int taken = 0;
  for (uint64_t i = 0; i < 2000; ++i) {
    OpRecord r = testing::variedOp(static_cast<int>(i % 8), i);
    const std::string line = opLine(r, i);
    uint64_t n = 0;
    OpRecord scanned{};
    const bool writesRedopId = (r.flags & kOpFlagPreMulSum) != 0;
    REQUIRE(scanWriterOpLine(line, &n, &scanned) == !writesRedopId);
    if (!writesRedopId) {
      ++taken;
      REQUIRE(n == i);
      REQUIRE(std::memcmp(&scanned, &r, sizeof(OpRecord)) == 0);
    }
    requireSameResult(header, line);
    requireSameResult(header, line + "\r");
  }
  REQUIRE(taken > 1800);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 3000; ++i) requireSameResult(header, opLine(extremeOp(rng), rng()));
}

TEST_CASE("mutated op lines give the same record or the same error with and without the fast path", "[trace]") {
  const std::string header = headerLine();
  std::mt19937_64 rng(11);
  const std::string alphabet = "0123456789-\"{}:,x af\\\r\tnul";
  for (int i = 0; i < 20000; ++i) {
    std::string line = opLine(testing::variedOp(static_cast<int>(rng() % 8), rng() % 500), rng() % 100000);
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % line.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: line[at] = c; break;
        case 1: line.erase(at, 1); break;
        default: line.insert(at, 1, c); break;
      }
      if (line.empty()) line.push_back('{');  // not `= "{"`: GCC 12 wrongly warns (-Wrestrict)
    }
    requireSameResult(header, line);
  }
}

}  // namespace
}  // namespace nshim::trace

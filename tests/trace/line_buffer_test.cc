// LineBuffer, through which the trace writer formats every record: numbers at every digit-count
// boundary, keys and text given as literals, character-array fields (up to their NUL, not their
// size), and a piece that does not fit cut where the memory ends with the overflow remembered, as
// byte by byte.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/catch.h"
#include "trace/line_buffer.h"

namespace nshim::trace {
namespace {

std::string uintText(uint64_t value) {
  char out[32];
  LineBuffer line(out, sizeof(out));
  line.putUint(value);
  return std::string(line.view());
}

TEST_CASE("LineBuffer writes every unsigned value as its decimal digits", "[trace]") {
  std::vector<uint64_t> values = {0, UINT64_MAX, UINT64_MAX - 1};
  for (uint64_t power = 1;; power *= 10) {  // each side of every power of ten
    values.push_back(power - 1);
    values.push_back(power);
    values.push_back(power + 1);
    if (power > UINT64_MAX / 10) break;
  }
  for (int bit = 0; bit < 64; ++bit) {  // each side of every power of two
    uint64_t v = uint64_t{1} << bit;
    values.push_back(v - 1);
    values.push_back(v);
    values.push_back(v + 1);
  }
  for (uint64_t v : values) {
    INFO(v);
    CHECK(uintText(v) == std::to_string(v));
  }
  char out[32];
  LineBuffer line(out, sizeof(out));
  line.putInt(INT64_MIN);
  line.put(' ');
  line.putInt(-7);
  CHECK(line.view() == "-9223372036854775808 -7");
}

TEST_CASE("LineBuffer keys, literals and fields", "[trace]") {
  char out[256];
  LineBuffer line(out, sizeof(out));
  char host[16] = "node7";  // a fixed field: written up to its NUL
  std::string dynamic = "dyn";
  line.put('{');
  line.key("type");
  line.put("\"x\"");
  line.key("host");
  line.put('"');
  line.put(host);
  line.put('"');
  line.key(std::string_view(dynamic));
  line.putHex64(0x0123456789abcdefull);
  line.key("name");
  line.putJsonString("a\"b\\c\n", 16);
  line.put('}');
  CHECK(line.view() == R"({"type":"x","host":"node7","dyn":0x0123456789abcdef,"name":"a\"b\\c\n"})");
  CHECK_FALSE(line.overflow());
}

TEST_CASE("LineBuffer cuts a piece that does not fit and remembers it", "[trace]") {
  for (size_t capacity = 0; capacity <= 24; ++capacity) {
    INFO(capacity);
    char out[32];
    std::memset(out, '#', sizeof(out));
    LineBuffer line(out, capacity);
    line.key("abcdef");               // 9 bytes: "abcdef":
    line.putUint(12345678901234ull);  // 14 bytes
    line.putHex64(1);                 // 18 bytes
    const std::string full =
        "\"abcdef\":12345678901234"
        "0x0000000000000001";
    CHECK(line.size() == std::min(capacity, full.size()));
    CHECK(std::string(line.view()) == full.substr(0, line.size()));
    CHECK(line.overflow() == (capacity < full.size()));
    CHECK(out[capacity] == '#');  // never past the memory it was given
  }
}

}  // namespace
}  // namespace nshim::trace

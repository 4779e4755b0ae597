// The op-line fast path: a cursor that expects the writer's literal key text between values and
// reads each value with the same limits the general reader applies. It declines (returns false) at
// the first byte that differs from the writer's layout; it never reports errors itself.
#include "trace/op_line_scan.h"

#include <cstring>

#include "trace/trace_format.h"

namespace nshim::trace {
namespace {

class WriterLayoutCursor {
 public:
  explicit WriterLayoutCursor(std::string_view line) : p_(line.data()), end_(line.data() + line.size()) {
    if (p_ != end_ && end_[-1] == '\r') --end_;  // CRLF line ends
  }

  // The key text between two values; its length is a constant, so the compare is inlined.
  template <size_t N>
  bool literal(const char (&text)[N]) {
    constexpr size_t kSize = N - 1;
    if (static_cast<size_t>(end_ - p_) < kSize || std::memcmp(p_, text, kSize) != 0) return false;
    p_ += kSize;
    return true;
  }

  // Canonical unsigned integer (no leading zero, at most 19 digits so it cannot overflow).
  bool unsignedValue(uint64_t* out) {
    const char* start = p_;
    uint64_t value = 0;
    while (p_ != end_ && static_cast<unsigned>(*p_ - '0') < 10u)
      value = value * 10 + static_cast<uint64_t>(*p_++ - '0');
    const size_t digits = static_cast<size_t>(p_ - start);
    if (digits == 0 || digits > 19 || (digits > 1 && *start == '0')) return false;
    *out = value;
    return true;
  }

  // Canonical signed integer within [lo, hi] ("-0" declined: the general path takes it).
  bool signedValue(int64_t lo, int64_t hi, int64_t* out) {
    const bool negative = p_ != end_ && *p_ == '-';
    if (negative) ++p_;
    uint64_t magnitude = 0;
    if (!unsignedValue(&magnitude)) return false;
    if (negative && magnitude == 0) return false;
    if (magnitude > uint64_t(INT64_MAX)) return false;  // 19 digits may exceed; -2^63 too, declined
    const int64_t value = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    if (value < lo || value > hi) return false;
    *out = value;
    return true;
  }

  template <typename T>
  bool signedInto(int64_t lo, int64_t hi, T* out) {
    int64_t value = 0;
    if (!signedValue(lo, hi, &value)) return false;
    *out = static_cast<T>(value);
    return true;
  }

  // "0x" and exactly 16 lower-case hex digits, then the closing quote (the opening one is part of
  // the preceding literal).
  bool hexValue(uint64_t* out) {
    if (end_ - p_ < 19 || p_[0] != '0' || p_[1] != 'x' || p_[18] != '"') return false;
    uint64_t value = 0;
    for (int i = 2; i < 18; ++i) {
      const char c = p_[i];
      unsigned digit;
      if (c >= '0' && c <= '9') digit = static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') digit = static_cast<unsigned>(c - 'a' + 10);
      else return false;
      value = (value << 4) | digit;
    }
    p_ += 19;
    *out = value;
    return true;
  }

  // A name up to its closing quote, with no escape or control character.
  bool nameValue(std::string_view* out) {
    const char* start = p_;
    while (p_ != end_ && *p_ != '"') {
      if (*p_ == '\\' || static_cast<unsigned char>(*p_) < 0x20) return false;
      ++p_;
    }
    if (p_ == end_) return false;
    *out = std::string_view(start, static_cast<size_t>(p_ - start));
    ++p_;
    return true;
  }

  bool atEnd() const { return p_ == end_; }

 private:
  const char* p_;
  const char* end_;
};

constexpr int64_t kI32Max = INT32_MAX;
constexpr int64_t kI32Min = INT32_MIN;

}  // namespace

bool scanWriterOpLine(std::string_view line, uint64_t* n, OpRecord* out) {
  WriterLayoutCursor c(line);
  OpRecord& r = *out = makeOpRecord(OpCode::kAllReduce);
  std::string_view name;
  return c.literal("{\"type\":\"op\",\"n\":") && c.unsignedValue(n) && c.literal(",\"comm\":\"") &&
         c.hexValue(&r.commId) && c.literal(",\"rank\":") && c.signedInto(-1, kI32Max, &r.rank) &&
         c.literal(",\"seq\":") && c.unsignedValue(&r.seq) && c.literal(",\"op\":\"") && c.nameValue(&name) &&
         parseOpName(name, &r.op) && c.literal(",\"count\":") && c.unsignedValue(&r.count) &&
         c.literal(",\"dtype\":\"") && c.nameValue(&name) && parseDatatypeName(name, &r.datatype) &&
         c.literal(",\"redop\":\"") && c.nameValue(&name) && parseRedopName(name, &r.redop) &&
         c.literal(",\"root\":") && c.signedInto(-1, kI32Max, &r.root) && c.literal(",\"peer\":") &&
         c.signedInto(-1, kI32Max, &r.peer) && c.literal(",\"nranks\":") && c.signedInto(0, kI32Max, &r.nranks) &&
         c.literal(",\"bytes\":") && c.unsignedValue(&r.bytes) && c.literal(",\"stream\":\"") &&
         c.hexValue(&r.stream) && c.literal(",\"group\":") && c.signedInto(0, kI32Max, &r.groupDepth) &&
         c.literal(",\"t_start_ns\":") && c.signedInto(INT64_MIN, INT64_MAX, &r.hostStartNs) &&
         c.literal(",\"t_end_ns\":") && c.signedInto(INT64_MIN, INT64_MAX, &r.hostEndNs) &&
         c.literal(",\"gpu_start_ns\":") && c.signedInto(INT64_MIN, INT64_MAX, &r.gpuStartNs) &&
         c.literal(",\"gpu_end_ns\":") && c.signedInto(INT64_MIN, INT64_MAX, &r.gpuEndNs) && c.literal(",\"flags\":") &&
         c.signedInto(0, int64_t(UINT32_MAX), &r.flags) && c.literal(",\"result\":") &&
         c.signedInto(kI32Min, kI32Max, &r.result) && c.literal("}") && c.atEnd();
}

}  // namespace nshim::trace

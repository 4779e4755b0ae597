// A small parser for one line holding a flat JSON object (string, integer, other number, true,
// false, null values; no nesting), as the trace format uses. Built for hostile input: bounded
// sizes, no recursion, no exceptions, and errors that name the field and the column. Built for
// speed too (the reader parses millions of lines): no allocation per line, keys and values are views
// into the line (or into the object's scratch buffer for strings with escapes), and find() looks
// first where the previous lookup stopped, so reading the fields in the writer's order is O(1) each.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace nshim::trace {

constexpr size_t kMaxJsonFields = 64;
constexpr size_t kMaxJsonKeyBytes = 64;
constexpr size_t kMaxJsonStringBytes = 1024;

enum class JsonType { kString, kInteger, kNumber, kBool, kNull };

// Views stay valid until the object is parsed into again (and while the parsed line lives).
struct JsonField {
  std::string_view key;
  JsonType type = JsonType::kNull;
  std::string_view text;  // kString: the decoded string; kNumber: the literal
  bool negative = false;  // kInteger: sign and magnitude (covers int64 and uint64)
  uint64_t magnitude = 0;
  bool boolean = false;  // kBool
};

class FlatJsonObject {
 public:
  const JsonField* find(std::string_view key) const;
  size_t size() const { return count_; }
  const JsonField& field(size_t i) const { return fields_[i]; }

 private:
  friend Status parseFlatJson(std::string_view line, FlatJsonObject* out);

  std::array<JsonField, kMaxJsonFields> fields_;
  size_t count_ = 0;
  mutable size_t cursor_ = 0;  // where the next find() starts
  uint64_t keyBits_ = 0;       // one bit per key length and first byte, for the duplicate check
  std::string scratch_;        // decoded strings that held escapes
};

// Parses `line` (no trailing newline; a trailing '\r' and spaces are accepted) into `out`.
// Errors read "column C: ..." or "field 'k' (column C): ...". Duplicate keys are errors.
Status parseFlatJson(std::string_view line, FlatJsonObject* out);

// One field of `line` whose value is a flat object (the header's nccl_env): when the top-level
// object has key `key` with an object value, `*inner` gets that object's text and `*rest` the line
// without the field (for parseFlatJson), and `*found` is set. Strings are skipped with their escapes;
// a nested object inside the value, or one that does not close, is an error naming the field.
Status takeObjectField(std::string_view line, std::string_view key, std::string* rest, std::string* inner, bool* found);

// Typed access with range checks; errors name the field: "field 'k': ...".
Status getString(const FlatJsonObject& obj, std::string_view key, std::string* out);
Status getStringView(const FlatJsonObject& obj, std::string_view key, std::string_view* out);
Status getInt64(const FlatJsonObject& obj, std::string_view key, int64_t lo, int64_t hi, int64_t* out);
Status getUint64(const FlatJsonObject& obj, std::string_view key, uint64_t* out);
// "0x" followed by 1 to 16 hex digits.
Status getHex64(const FlatJsonObject& obj, std::string_view key, uint64_t* out);
// Optional variants: `out` keeps its value when the key is absent.
Status getOptionalInt64(const FlatJsonObject& obj, std::string_view key, int64_t lo, int64_t hi, int64_t* out);

}  // namespace nshim::trace

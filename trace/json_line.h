// A small parser for one line holding a flat JSON object (string, integer, other number, true,
// false, null values; no nesting), as the trace format uses. Built for hostile input: bounded
// sizes, no recursion, no exceptions, and errors that name the field and the column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace nshim::trace {

constexpr size_t kMaxJsonFields = 64;
constexpr size_t kMaxJsonKeyBytes = 64;
constexpr size_t kMaxJsonStringBytes = 1024;

enum class JsonType { kString, kInteger, kNumber, kBool, kNull };

struct JsonField {
  std::string key;
  JsonType type = JsonType::kNull;
  std::string text;        // kString: the decoded string; kNumber: the literal
  bool negative = false;   // kInteger: sign and magnitude (covers int64 and uint64)
  uint64_t magnitude = 0;
  bool boolean = false;    // kBool
};

class FlatJsonObject {
 public:
  const JsonField* find(std::string_view key) const;
  const std::vector<JsonField>& fields() const { return fields_; }
  void clear() { fields_.clear(); }
  std::vector<JsonField>& mutableFields() { return fields_; }

 private:
  std::vector<JsonField> fields_;
};

// Parses `line` (no trailing newline; a trailing '\r' and spaces are accepted) into `out`.
// Errors read "column C: ..." or "field 'k' (column C): ...". Duplicate keys are errors.
Status parseFlatJson(std::string_view line, FlatJsonObject* out);

// Typed access with range checks; errors name the field: "field 'k': ...".
Status getString(const FlatJsonObject& obj, std::string_view key, std::string* out);
Status getInt64(const FlatJsonObject& obj, std::string_view key, int64_t lo, int64_t hi, int64_t* out);
Status getUint64(const FlatJsonObject& obj, std::string_view key, uint64_t* out);
// "0x" followed by 1 to 16 hex digits.
Status getHex64(const FlatJsonObject& obj, std::string_view key, uint64_t* out);
// Optional variants: `out` keeps its value when the key is absent.
Status getOptionalInt64(const FlatJsonObject& obj, std::string_view key, int64_t lo, int64_t hi,
                        int64_t* out);

}  // namespace nshim::trace

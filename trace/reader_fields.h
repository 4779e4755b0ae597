// Field readers shared by the trace reader's line parsers (trace_reader.cc, trace_reader_nccl.cc):
// range-checked integers into narrower fields, fixed-size strings, and the unknown-name error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "common/status.h"
#include "trace/json_line.h"
#include "trace/trace_format.h"

namespace nshim::trace {
namespace reader_detail {

constexpr int64_t kI32Min = INT32_MIN;
constexpr int64_t kI32Max = INT32_MAX;

// Reads an int64 field into a narrower destination.
template <typename T>
Status getInto(const FlatJsonObject& obj, std::string_view key, int64_t lo, int64_t hi, T* out, bool optional = false) {
  int64_t value = static_cast<int64_t>(*out);
  Status s = optional ? getOptionalInt64(obj, key, lo, hi, &value) : getInt64(obj, key, lo, hi, &value);
  if (s.ok()) *out = static_cast<T>(value);
  return s;
}

inline Status badName(std::string_view key, std::string_view value) {
  return Status(Code::kInvalidArgument, fmt::format("field '{}': unknown value '{}'", key, value));
}

inline Status getFixedString(const FlatJsonObject& obj, std::string_view key, char* out, size_t size) {
  std::string_view text;
  NS_RETURN_IF_ERROR(getStringView(obj, key, &text));
  if (text.size() >= size || text.find('\0') != std::string_view::npos) {
    return Status(Code::kInvalidArgument, fmt::format("field '{}': longer than {} bytes or holds NUL", key, size - 1));
  }
  copyFixed(out, size, text);
  return Status::Ok();
}

}  // namespace reader_detail
}  // namespace nshim::trace

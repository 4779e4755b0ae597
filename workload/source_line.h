// SourceLine: where an operation came from ("file:line"), for error messages, in 8 bytes instead of
// a string per operation (a 2-million-op trace kept ~60 B per op in these strings alone). File
// names are interned once in a process-wide, append-only, thread-safe table; a SourceLine holds the
// table index and the line number. It prints as "file:line" (fmt and streams) and compares with text.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace nshim::workload {

// Index of `file` in the table of source files (added on first use).
uint32_t internSourceFile(std::string_view file);

class SourceLine {
 public:
  SourceLine() = default;  // no source: prints as ""
  SourceLine(uint32_t fileIndex, int64_t line);
  SourceLine(std::string_view file, int64_t line) : SourceLine(internSourceFile(file), line) {}

  bool empty() const { return file_ == 0; }
  std::string_view file() const;  // "" when empty
  int64_t line() const { return line_; }
  std::string str() const;                                          // "file:line", or "" when empty
  uint64_t key() const { return (uint64_t(file_) << 32) | line_; }  // distinct per file and line

  bool operator==(const SourceLine& other) const = default;
  bool operator==(std::string_view text) const { return str() == text; }

 private:
  uint32_t file_ = 0;  // 1 + index in the table; 0: none
  uint32_t line_ = 0;  // saturates at UINT32_MAX
};

inline std::ostream& operator<<(std::ostream& out, const SourceLine& source) { return out << source.str(); }
inline std::string operator+(const std::string& text, const SourceLine& source) { return text + source.str(); }

}  // namespace nshim::workload

template <>
struct fmt::formatter<nshim::workload::SourceLine> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const nshim::workload::SourceLine& source, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(source.str(), ctx);
  }
};

// Output plumbing shared by the trace tools: a file (or stdout for "-") opened for writing and
// closed with its write errors checked, and the escaping rules of the JSON and CSV they write.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "common/status.h"

namespace nshim::tools {

class OutputFile {
 public:
  // "-" (or "") is stdout; anything else is created or truncated.
  static Result<OutputFile> open(const std::string& path);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  ~OutputFile();

  FILE* get() const { return file_; }
  const std::string& path() const { return path_; }
  // Flushes and closes (stdout is only flushed); an error if any write failed.
  Status close();

 private:
  OutputFile(FILE* file, std::string path, bool owned) : file_(file), path_(std::move(path)), owned_(owned) {}

  FILE* file_ = nullptr;
  std::string path_;
  bool owned_ = false;
};

// A JSON string literal: quotes, backslash and control characters escaped.
std::string jsonString(std::string_view text);
// A CSV field: quoted (with doubled quotes) only when it holds a comma, a quote or a line break.
std::string csvField(std::string_view text);
// A number as "{:.6g}"; a negative value (unknown) as `unknown` ("", "null", "-").
std::string numberOr(double value, std::string_view unknown);

}  // namespace nshim::tools

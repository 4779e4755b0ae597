// Output files with checked closes, and JSON / CSV escaping.
#include "tools/inspect/output_file.h"

#include <cerrno>
#include <cstring>

namespace nshim::tools {

Result<OutputFile> OutputFile::open(const std::string& path) {
  if (path.empty() || path == "-") return OutputFile(stdout, "<stdout>", false);
  FILE* file = std::fopen(path.c_str(), "w");
  if (!file) return NS_ERROR(Code::kSystemError, "{}: cannot create: {}", path, std::strerror(errno));
  return OutputFile(file, path, true);
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : file_(other.file_), path_(std::move(other.path_)), owned_(other.owned_) {
  other.file_ = nullptr;
  other.owned_ = false;
}

OutputFile::~OutputFile() {
  if (file_ && owned_) std::fclose(file_);
}

Status OutputFile::close() {
  if (!file_) return Status::Ok();
  bool bad = std::fflush(file_) != 0;
  bad |= std::ferror(file_) != 0;
  if (owned_) bad |= std::fclose(file_) != 0;
  file_ = nullptr;
  if (bad) return NS_ERROR(Code::kSystemError, "{}: write failed: {}", path_, std::strerror(errno));
  return Status::Ok();
}

std::string jsonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string csvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string numberOr(double value, std::string_view unknown) {
  if (value < 0) return std::string(unknown);
  return fmt::format("{:.6g}", value);
}

}  // namespace nshim::tools

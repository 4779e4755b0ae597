// Plain or gzip-compressed input files, read through zlib's gzread (which passes plain files through).
#include "workload/input_file.h"

#include <zlib.h>

#include <cstdio>

namespace nshim::workload {
namespace {

// Owns a gzFile.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : file_(gzopen(path.c_str(), "rb")) {}
  ~GzReader() {
    if (file_) gzclose(file_);
  }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;
  gzFile get() const { return file_; }

 private:
  gzFile file_;
};

}  // namespace

Result<std::string> readInputFile(const std::string& path, size_t limit) {
  GzReader in(path);
  if (!in.get()) return NS_ERROR(Code::kInvalidArgument, "{}: cannot open", path);
  gzbuffer(in.get(), 1 << 20);
  std::string text;
  char chunk[1 << 16];
  while (true) {
    const int n = gzread(in.get(), chunk, sizeof(chunk));
    if (n < 0) {
      int code = 0;
      const char* why = gzerror(in.get(), &code);
      return NS_ERROR(Code::kInvalidArgument, "{}: cannot read{}: {}", path,
                      gzdirect(in.get()) ? "" : " the gzip stream", why ? why : "read error");
    }
    if (n == 0) {
      int code = Z_OK;
      gzerror(in.get(), &code);
      if (code == Z_BUF_ERROR) {  // zlib's word for a stream that ends before its trailer
        return NS_ERROR(Code::kInvalidArgument, "{}: the gzip stream ends early (a cut file?)", path);
      }
      break;
    }
    if (text.size() + static_cast<size_t>(n) > limit) {
      return NS_ERROR(Code::kInvalidArgument, "{}: more than {} bytes{}: too large to read", path, limit,
                      gzdirect(in.get()) ? "" : " once decompressed");
    }
    text.append(chunk, static_cast<size_t>(n));
  }
  return text;
}

std::string readInputHead(const std::string& path, size_t bytes) {
  GzReader in(path);
  if (!in.get()) return "";
  std::string text(bytes, '\0');
  const int n = gzread(in.get(), text.data(), static_cast<unsigned>(bytes));
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return text;
}

bool isGzipFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  unsigned char magic[2] = {0, 0};
  const bool gz = std::fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  std::fclose(f);
  return gz;
}

}  // namespace nshim::workload

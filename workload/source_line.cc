// The process-wide table of source file names behind SourceLine. Names are kept in a deque so that
// views of them stay valid while the table grows; lookups of a name seen before take a shared lock.
#include "workload/source_line.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace nshim::workload {
namespace {

struct SourceFileTable {
  std::shared_mutex mutex;
  std::deque<std::string> names;
  std::unordered_map<std::string_view, uint32_t> index;
};

SourceFileTable& table() {
  static SourceFileTable* instance = new SourceFileTable;  // never destroyed: used until exit
  return *instance;
}

}  // namespace

uint32_t internSourceFile(std::string_view file) {
  SourceFileTable& t = table();
  {
    std::shared_lock lock(t.mutex);
    auto it = t.index.find(file);
    if (it != t.index.end()) return it->second;
  }
  std::unique_lock lock(t.mutex);
  auto it = t.index.find(file);
  if (it != t.index.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(t.names.size());
  t.names.emplace_back(file);
  t.index.emplace(t.names.back(), id);
  return id;
}

SourceLine::SourceLine(uint32_t fileIndex, int64_t line)
    : file_(fileIndex + 1),
      line_(line < 0 ? 0 : static_cast<uint32_t>(std::min<int64_t>(line, std::numeric_limits<uint32_t>::max()))) {}

std::string_view SourceLine::file() const {
  if (file_ == 0) return {};
  SourceFileTable& t = table();
  std::shared_lock lock(t.mutex);
  return t.names[file_ - 1];
}

std::string SourceLine::str() const {
  if (file_ == 0) return {};
  return fmt::format("{}:{}", file(), line_);
}

}  // namespace nshim::workload

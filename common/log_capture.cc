// Log lines held back for merging (log_capture.h).
#include "common/log_capture.h"

#include <fmt/format.h>

namespace nshim {
namespace {

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kTrace: return "TRACE";
    default: return "NONE";
  }
}

}  // namespace

LogCapture::LogCapture() : previous_(setLogSink(this)) {}

LogCapture::~LogCapture() { setLogSink(previous_); }

void LogCapture::write(LogLevel level, std::string_view message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (lines_.size() >= kMaxLines) {
    ++dropped_;
    return;
  }
  std::string line = fmt::format("{} {}", levelName(level), message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  lines_.push_back(std::move(line));
}

std::vector<std::string> LogCapture::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out = std::move(lines_);
  lines_.clear();
  if (dropped_ > 0) out.push_back(fmt::format("WARN {} more log lines not shown", dropped_));
  dropped_ = 0;
  return out;
}

}  // namespace nshim

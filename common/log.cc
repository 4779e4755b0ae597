// Logging implementation: the level is read once from the environment; writes are one fprintf each
// so lines from several threads do not interleave.
#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "common/settings.h"

namespace nshim {
namespace {

std::atomic<int> gLogRank{-1};
std::atomic<LogSink*> gLogSink{nullptr};

LogLevel parseLevel(const std::string& text) {
  if (text == "TRACE" || text == "trace") return LogLevel::kTrace;
  if (text == "INFO" || text == "info") return LogLevel::kInfo;
  if (text == "NONE" || text == "none") return LogLevel::kNone;
  return LogLevel::kWarn;
}

FILE* logStream() {
  static FILE* stream = [] {
    std::string path = settingString(Setting::NCCLSHIM_DEBUG_FILE);
    if (path.empty()) return stderr;
    FILE* file = std::fopen(path.c_str(), "a");
    return file ? file : stderr;
  }();
  return stream;
}

}  // namespace

LogLevel logLevel() {
  static const LogLevel level = parseLevel(settingString(Setting::NCCLSHIM_DEBUG));
  return level;
}

void setLogRank(int rank) { gLogRank.store(rank, std::memory_order_relaxed); }

LogSink* setLogSink(LogSink* sink) { return gLogSink.exchange(sink, std::memory_order_acq_rel); }

void logWrite(LogLevel level, std::string_view message) {
  if (LogSink* sink = gLogSink.load(std::memory_order_acquire)) {
    sink->write(level, message);
    return;
  }
  static const char* kNames[] = {"NONE", "WARN", "INFO", "TRACE"};
  static const std::string host = [] {
    char name[256] = {0};
    gethostname(name, sizeof(name) - 1);
    return std::string(name);
  }();
  int rank = gLogRank.load(std::memory_order_relaxed);
  std::string line =
      rank >= 0 ? fmt::format("{}:{}:rank{} ncclshim {} {}\n", host, getpid(), rank, kNames[int(level)], message)
                : fmt::format("{}:{} ncclshim {} {}\n", host, getpid(), kNames[int(level)], message);
  std::fputs(line.c_str(), logStream());
  std::fflush(logStream());
}

}  // namespace nshim

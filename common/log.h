// Logging with levels chosen by NCCLSHIM_DEBUG (NONE, WARN, INFO, TRACE), like NCCL_DEBUG.
// Lines go to stderr (or NCCLSHIM_DEBUG_FILE) prefixed with host:pid and the rank when known, or to
// an installed LogSink.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace nshim {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

LogLevel logLevel();
void logWrite(LogLevel level, std::string_view message);
// The rank shown in log prefixes; -1 hides it.
void setLogRank(int rank);

// Receives the lines that pass the level instead of the stream while installed (log_capture.h).
class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual void write(LogLevel level, std::string_view message) = 0;
};
// Installs `sink` (nullptr: back to the stream); returns the one it replaces.
LogSink* setLogSink(LogSink* sink);

}  // namespace nshim

#define NS_LOG(level, ...)                                                                    \
  do {                                                                                        \
    if (::nshim::logLevel() >= (level)) ::nshim::logWrite((level), fmt::format(__VA_ARGS__)); \
  } while (0)
#define NS_WARN(...) NS_LOG(::nshim::LogLevel::kWarn, __VA_ARGS__)
#define NS_INFO(...) NS_LOG(::nshim::LogLevel::kInfo, __VA_ARGS__)
#define NS_TRACE(...) NS_LOG(::nshim::LogLevel::kTrace, __VA_ARGS__)

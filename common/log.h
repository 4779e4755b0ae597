// Logging with levels chosen by NCCLSHIM_DEBUG (NONE, WARN, INFO, TRACE), like NCCL_DEBUG.
// Lines go to stderr (or NCCLSHIM_DEBUG_FILE) prefixed with host:pid and the rank when known.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace nshim {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

LogLevel logLevel();
void logWrite(LogLevel level, std::string_view message);
// The rank shown in log prefixes; -1 hides it.
void setLogRank(int rank);

}  // namespace nshim

#define NS_LOG(level, ...)                                                   \
  do {                                                                       \
    if (::nshim::logLevel() >= (level))                                      \
      ::nshim::logWrite((level), fmt::format(__VA_ARGS__));                  \
  } while (0)
#define NS_WARN(...) NS_LOG(::nshim::LogLevel::kWarn, __VA_ARGS__)
#define NS_INFO(...) NS_LOG(::nshim::LogLevel::kInfo, __VA_ARGS__)
#define NS_TRACE(...) NS_LOG(::nshim::LogLevel::kTrace, __VA_ARGS__)

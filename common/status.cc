// Status helpers: code names and message formatting.
#include "common/status.h"

#include <cstring>

namespace nshim {

const char* codeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kInvalidUsage: return "invalid usage";
    case Code::kSystemError: return "system error";
    case Code::kRemoteError: return "remote error";
    case Code::kTimeout: return "timeout";
    case Code::kInternal: return "internal error";
  }
  return "unknown";
}

std::string Status::toString() const {
  if (ok()) return "ok";
  return fmt::format("{}: {}", codeName(code_), message_);
}

namespace detail {
std::string withLocation(const std::string& message, const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  return fmt::format("{} [{}:{}]", message, base ? base + 1 : file, line);
}
}  // namespace detail

}  // namespace nshim

// Helpers shared by the TCP transport and bootstrap tests: deterministic payload patterns, ids,
// options.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/catch.h"
#include "transport/bootstrap/unique_id.h"
#include "transport/tcp/tcp_transport.h"

namespace nshim::tcptest {

inline uint8_t patternByte(int src, int dst, int msg, size_t i) {
  uint64_t x = (uint64_t(src) << 48) ^ (uint64_t(dst) << 40) ^ (uint64_t(msg) << 32) ^ i;
  x *= 0x9E3779B97F4A7C15ull;
  return static_cast<uint8_t>(x >> 56);
}

inline std::vector<uint8_t> pattern(size_t bytes, int src, int dst, int msg) {
  std::vector<uint8_t> out(bytes);
  for (size_t i = 0; i < bytes; ++i) out[i] = patternByte(src, dst, msg, i);
  return out;
}

// "" when `buf` holds the pattern of message `msg` from src to dst.
inline std::string verify(const std::vector<uint8_t>& buf, int src, int dst, int msg) {
  for (size_t i = 0; i < buf.size(); ++i) {
    if (buf[i] != patternByte(src, dst, msg, i)) {
      return fmt::format("message {} from rank {} to rank {}: byte {} of {} is {} (expected {})", msg, src, dst, i,
                         buf.size(), buf[i], patternByte(src, dst, msg, i));
    }
  }
  return "";
}

inline UniqueId mustCreateId() {
  auto id = createUniqueId();
  REQUIRE(id.ok());
  return *id;
}

inline TcpOptions testOptions(double timeoutSeconds = 20, int socketsPerPeer = 2) {
  TcpOptions options;
  options.socketsPerPeer = socketsPerPeer;
  options.timeoutSeconds = timeoutSeconds;
  return options;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace nshim::tcptest

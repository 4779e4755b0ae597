// Counts the connections a bootstrap listener ignored because they were not the job's (silent,
// garbage, a wrong secret, or closed to make room for others), by source address and reason, so
// that a flood of them becomes one summary line instead of one warning per connection.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace nshim {

enum class StrangerReason {
  kSilent,        // no whole hello within the hello deadline
  kClosedEarly,   // closed (or reset) before a whole hello
  kEvicted,       // closed to make room: its source, or the listener, had too many connections waiting
  kNotBootstrap,  // a hello that is not an ncclshim bootstrap hello (magic, version, kind)
  kWrongSecret,   // a bootstrap hello with another job's secret
  kLeftOver,      // still waiting for its hello when the bootstrap ended
  kCount
};

class StrangerTally {
 public:
  // Sources beyond this many distinct addresses are counted together.
  static constexpr size_t kMaxSources = 64;

  // `detail` (e.g. "bad magic 0xabababab") is kept for the first connection of each reason.
  void note(const std::string& source, StrangerReason reason, std::string_view detail = {});
  size_t total() const { return total_; }
  // "ignored 1502 connections without the job's secret (from 127.0.0.1: 1500, 127.0.0.2: 2): 1500
  // sent no hello within 5 s, 1 not a bootstrap hello (bad magic ...), 1 with a wrong secret
  // (claiming rank 3)"; sources by count, the largest first.
  std::string summary(double helloTimeoutSeconds) const;
  void clear() { *this = StrangerTally(); }

 private:
  size_t total_ = 0;
  std::map<std::string, size_t> bySource_;
  size_t otherSources_ = 0;  // connections from sources past kMaxSources
  std::array<size_t, static_cast<size_t>(StrangerReason::kCount)> byReason_{};
  std::array<std::string, static_cast<size_t>(StrangerReason::kCount)> example_;
};

}  // namespace nshim

// Monotonic clock and deadlines. Every wait in ncclshim takes a Deadline so nothing can hang.
#pragma once

#include <chrono>
#include <cstdint>

namespace nshim {

using Clock = std::chrono::steady_clock;

inline int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

class Deadline {
 public:
  // Saturates: beyond ~290 years (or inf) is never; NaN or not positive is now.
  static Deadline after(double seconds) {
    if (!(seconds > 0)) return Deadline(nowNs());
    if (seconds >= 9e9) return never();
    return Deadline(nowNs() + static_cast<int64_t>(seconds * 1e9));
  }
  static Deadline never() { return Deadline(INT64_MAX); }

  bool expired() const { return nowNs() >= atNs_; }
  int64_t remainingNs() const {
    int64_t left = atNs_ - nowNs();
    return left > 0 ? left : 0;
  }
  // Milliseconds left, clamped to [0, cap] for poll()-style timeouts.
  int remainingMs(int cap) const {
    int64_t ms = remainingNs() / 1000000;
    return static_cast<int>(ms > cap ? cap : ms);
  }

 private:
  explicit Deadline(int64_t atNs) : atNs_(atNs) {}
  int64_t atNs_;
};

}  // namespace nshim

// The pace of a background flow (phynet_flow): a token bucket filled at the asked rate while the
// on/off pattern is on (always, when off_ms is 0), holding at most 50 ms of credit plus one chunk, so
// that an off phase or a stall is not followed by a burst. Shared by the TCP and the RDMA flows.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace nshim::phynet {

class Pacer {
 public:
  enum class Step { kStop, kWait, kSend };

  Pacer(double mbit, double onMs, double offMs, double seconds, size_t chunk)
      : bytesPerS_(mbit * 1e6 / 8), onMs_(onMs), offMs_(offMs), seconds_(seconds), chunk_(chunk), start_(Clock::now()) {
  }

  // What to do now: stop (the duration has passed), wait (no credit or an off phase), or send a chunk.
  Step next() {
    double nowS = elapsedS();
    if (seconds_ > 0 && nowS >= seconds_) return Step::kStop;
    bool on = offMs_ <= 0 || std::fmod(nowS * 1e3, onMs_ + offMs_) < onMs_;
    if (on) credit_ = std::min(credit_ + (nowS - lastS_) * bytesPerS_, bytesPerS_ * 0.05 + chunk_);
    lastS_ = nowS;
    return on && credit_ >= chunk_ ? Step::kSend : Step::kWait;
  }
  void sent(size_t bytes) { credit_ -= static_cast<double>(bytes); }
  double elapsedS() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  double bytesPerS_, onMs_, offMs_, seconds_;
  size_t chunk_;
  Clock::time_point start_;
  double credit_ = 0, lastS_ = 0;
};

}  // namespace nshim::phynet

// The pace of a background flow (phynet_flow): a token bucket filled at the asked rate while the
// on/off pattern is on (always, when off_ms is 0), holding at most 50 ms of credit plus one chunk, so
// that an off phase or a stall is not followed by a burst. Shared by the TCP and the RDMA flows. A
// flow set up ahead of the job file's shared start (`startAtWallS`, seconds since the epoch) waits
// for it: its pace and its elapsed time count from there.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <ctime>

namespace nshim::phynet {

class Pacer {
 public:
  enum class Step { kStop, kWait, kSend };

  Pacer(double mbit, double onMs, double offMs, double seconds, size_t chunk, double startAtWallS = 0)
      : bytesPerS_(mbit * 1e6 / 8), onMs_(onMs), offMs_(offMs), seconds_(seconds), chunk_(chunk), start_(Clock::now()) {
    timespec wall{};
    clock_gettime(CLOCK_REALTIME, &wall);
    const double aheadS = startAtWallS - (wall.tv_sec + wall.tv_nsec * 1e-9);
    if (aheadS > 0) start_ += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(aheadS));
  }

  // What to do now: stop (the duration has passed), wait (before the start, no credit or an off
  // phase), or send a chunk.
  Step next() {
    if (Clock::now() < start_) return Step::kWait;
    double nowS = elapsedS();
    if (seconds_ > 0 && nowS >= seconds_) return Step::kStop;
    bool on = offMs_ <= 0 || std::fmod(nowS * 1e3, onMs_ + offMs_) < onMs_;
    if (on) credit_ = std::min(credit_ + (nowS - lastS_) * bytesPerS_, bytesPerS_ * 0.05 + chunk_);
    lastS_ = nowS;
    return on && credit_ >= chunk_ ? Step::kSend : Step::kWait;
  }
  void sent(size_t bytes) { credit_ -= static_cast<double>(bytes); }
  double elapsedS() const { return std::max(0.0, std::chrono::duration<double>(Clock::now() - start_).count()); }

 private:
  using Clock = std::chrono::steady_clock;
  double bytesPerS_, onMs_, offMs_, seconds_;
  size_t chunk_;
  Clock::time_point start_;
  double credit_ = 0, lastS_ = 0;
};

}  // namespace nshim::phynet

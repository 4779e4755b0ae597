// Iterations counted as the calls come (online_iterations.h).
#include "trace/online_iterations.h"

#include "trace/call_period.h"

namespace nshim::trace {

bool OnlineIterations::feed(uint64_t signature) {
  if (locked_) {
    if (learned_[position_] == signature) {
      const bool boundary = position_ == 0;
      callIteration_ = completed_;
      if (++position_ == period_) {
        position_ = 0;
        ++completed_;
      }
      return boundary;
    }
    // The sequence changed (an evaluation pass, a new phase): learn again from this call; the
    // iteration it interrupted does not count.
    locked_ = false;
    ++unlocks_;
    base_ = completed_;
    callIteration_ = base_;
    nextTry_ = 64;
  }
  if (gaveUp_) return false;
  kept_.push_back(signature);
  return kept_.size() == nextTry_ && tryLock();
}

bool OnlineIterations::tryLock() {
  nextTry_ *= 2;
  const CallPeriod found = findCallPeriod(kept_.data(), kept_.size());
  if (found.found && found.iterations >= 3) {
    const size_t sinceTail = kept_.size() - found.tailStart;  // the call just kept included
    locked_ = true;
    period_ = found.period;
    learned_.assign(kept_.begin() + static_cast<std::ptrdiff_t>(found.tailStart),
                    kept_.begin() + static_cast<std::ptrdiff_t>(found.tailStart + period_));
    kept_.clear();
    callIteration_ = base_ + (sinceTail - 1) / period_;
    position_ = sinceTail % period_;
    completed_ = base_ + sinceTail / period_;
    return (sinceTail - 1) % period_ == 0;
  }
  if (kept_.size() >= learnCalls_) {
    gaveUp_ = true;
    kept_.clear();
    kept_.shrink_to_fit();
  }
  return false;
}

}  // namespace nshim::trace

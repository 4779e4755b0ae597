// Iterations counted while a job runs, from the signatures of its calls as they come (one thread's
// calls): the recorder's window (libshim/capture_window.h) opens and closes at iteration
// boundaries when the job does not mark its steps itself.
//
// The rule: the signatures of the first calls are kept; at 64, 128, 256, ... calls (up to
// `learnCalls`) the period of what was kept is looked for (call_period.h) and, once one repeats at
// least three times, it is locked: the periodic tail's first call starts iteration 0 and every
// `period` calls after it start the next. The calls before the tail are the warm-up. From then
// on each call is compared with the same position of the learned iteration (one comparison): a
// call that differs unlocks the counter, which learns again from that call, adding the iterations
// counted so far. Learning costs one vector append per call and, at each power of two, a pass over
// the calls kept (about 1 ms at 65,536); a locked counter one comparison.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nshim::trace {

class OnlineIterations {
 public:
  explicit OnlineIterations(size_t learnCalls = size_t{1} << 16) : learnCalls_(learnCalls) {}

  // Call the next call's signature; true when this call starts an iteration (a boundary).
  bool feed(uint64_t signature);

  // The iteration the call fed last is in (from 0: the whole iterations before it); the count
  // before the last (re)learning while not locked.
  uint64_t iteration() const { return callIteration_; }
  bool locked() const { return locked_; }
  size_t period() const { return period_; }
  // Whether learning stopped without a period (learnCalls calls kept and none found).
  bool gaveUp() const { return gaveUp_; }
  uint64_t unlocks() const { return unlocks_; }

 private:
  bool tryLock();  // true when it locks with the call just kept starting an iteration

  size_t learnCalls_;
  std::vector<uint64_t> kept_;     // signatures since learning (re)started
  std::vector<uint64_t> learned_;  // locked: one iteration's signatures
  size_t nextTry_ = 64;            // kept_.size() at which to look for the period next
  bool locked_ = false;
  bool gaveUp_ = false;
  size_t period_ = 0;
  size_t position_ = 0;     // the next call's position in its iteration
  uint64_t base_ = 0;       // iterations counted before the last (re)learning
  uint64_t completed_ = 0;  // whole iterations before the next call
  uint64_t callIteration_ = 0;
  uint64_t unlocks_ = 0;
};

}  // namespace nshim::trace

// What a thread blocked in a transport's waitAll is waiting for (the peer, send or receive, since
// when), for stall reports (phynet says which rank waits on whom). Written only on the slow path,
// when a wait is about to sleep, and cleared when that wait returns; read from any thread with
// relaxed atomics, lock-free. One note per transport: a communicator is driven by one thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/clock.h"

namespace nshim {

class WaitNote {
 public:
  struct Snapshot {
    int peer = -1;  // communicator rank; -1: not blocked in a wait
    bool isSend = false;
    int64_t sinceNs = 0;  // nowNs() when the wait for this request went to sleep
  };

  void set(int peer, bool isSend, int64_t sinceNs) {
    sinceNs_.store(0, std::memory_order_relaxed);
    peer_.store(isSend ? ~peer : peer, std::memory_order_relaxed);
    sinceNs_.store(sinceNs, std::memory_order_release);
  }
  void clear() { sinceNs_.store(0, std::memory_order_release); }

  // A consistent reading, or peer -1 when no wait is noted (or it changed while being read).
  Snapshot read() const {
    Snapshot s;
    const int64_t since = sinceNs_.load(std::memory_order_acquire);
    if (since == 0) return s;
    const int coded = peer_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (sinceNs_.load(std::memory_order_relaxed) != since) return s;
    s.isSend = coded < 0;
    s.peer = coded < 0 ? ~coded : coded;
    s.sinceNs = since;
    return s;
  }

 private:
  std::atomic<int> peer_{-1};        // ~peer for a send
  std::atomic<int64_t> sinceNs_{0};  // 0: none
};

// Notes, for one waitAll call, the request it sleeps on; clears the note when the call returns.
class WaitNoteScope {
 public:
  explicit WaitNoteScope(WaitNote& note) : note_(note) {}
  ~WaitNoteScope() {
    if (noted_ != nullptr) note_.clear();
  }
  WaitNoteScope(const WaitNoteScope&) = delete;
  WaitNoteScope& operator=(const WaitNoteScope&) = delete;

  // Before sleeping: `pending` is the first request not yet done (nullptr: none).
  template <typename Req>
  void sleepingOn(const Req* pending) {
    if (pending == nullptr || pending == noted_) return;
    noted_ = pending;
    note_.set(pending->peer, pending->isSend, nowNs());
  }

 private:
  WaitNote& note_;
  const void* noted_ = nullptr;
};

}  // namespace nshim

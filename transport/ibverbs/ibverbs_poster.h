// Posts the data writes of the ibverbs transport from a thread of its own. On soft-RoCE (rxe) a
// user QP's ibv_post_send runs the requester in the caller's context: it returns only once the
// queued writes have gone out, about 20 ms per MiB under emulation. Posted inline, that call kept
// the transport's only thread from taking in the peer's fragments and returning its credits, so
// with traffic both ways each side starved the other of credits. Here the caller builds the work
// requests under its lock and hands them over; this thread posts them in order, outside any lock
// the data path takes. Failures are kept for the caller to collect (never a callback into it, so
// that no lock order can deadlock).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "transport/ibverbs/ibverbs_resources.h"

namespace nshim::ib {

class WritePoster {
 public:
  struct Failure {
    size_t connection;  // as given to enqueue
    int error;          // ibv_post_send's return value
    size_t count;       // work requests in the list that failed
  };

  WritePoster();
  ~WritePoster();  // drops what is still queued and joins the thread
  WritePoster(const WritePoster&) = delete;
  WritePoster& operator=(const WritePoster&) = delete;

  // Copies the list (and its scatter entries, which it must use) and queues it for `qp`. Lists for
  // one QP are posted in the order they were queued.
  void enqueue(ibv_qp* qp, size_t connection, std::span<const ibv_send_wr> wrs, std::span<const ibv_sge> sges);
  // Forgets the lists not posted yet (the transport is aborting).
  void dropQueued();
  // Failures since the last call (a lock-free check when there are none: it runs every progress pass).
  std::vector<Failure> takeFailures();

 private:
  struct Batch {
    ibv_qp* qp = nullptr;
    size_t connection = 0;
    std::vector<ibv_send_wr> wrs;
    std::vector<ibv_sge> sges;
  };
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Batch> queue_;
  std::vector<Failure> failures_;
  std::atomic<bool> failed_{false};  // failures_ is not empty
  bool stopping_ = false;
  std::thread thread_;  // last: it starts once everything above exists
};

}  // namespace nshim::ib

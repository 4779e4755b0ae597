// One executor thread per communicator of a rank, as NCCL has one stream of work per communicator:
// batches are queued by the rank's dispatcher in issue order and run one after the other, while
// the executors of different communicators run concurrently. The first failure of any executor is
// kept (with the op, the communicator and its members' global ranks) and stops them all.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "collectives/communicator.h"
#include "common/status.h"
#include "phynet/op_runner.h"
#include "phynet/workload_names.h"
#include "workload/workload.h"

namespace nshim::phynet {

// The first error of a rank's executors; later ones are dropped.
class FailureSlot {
 public:
  void set(Status status);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  Status first() const;

 private:
  mutable std::mutex mutex_;
  Status first_;
  std::atomic<bool> failed_{false};
};

// Wakes threads that wait for executors to complete work (the dispatcher at iteration fences).
class ProgressSignal {
 public:
  void notify();
  // Waits until done() or `timeoutNs` passes; returns done().
  template <typename Done>
  bool waitFor(Done done, int64_t timeoutNs) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::nanoseconds(timeoutNs), done);
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
};

// A batch: indices into the rank's ops (one op, or one group's ops on this communicator).
struct Batch {
  uint32_t iteration = 0;
  std::vector<uint32_t> ops;
  std::atomic<int64_t>* started = nullptr;   // when given: set to the batch's start time (nowNs) as it starts
  std::atomic<int64_t>* finished = nullptr;  // when given: set to its end time (nowNs) once every op is done
};

// What the executors of one rank share.
struct ExecutorShared {
  const std::vector<WorkOp>* ops = nullptr;  // the rank's ops of one iteration
  std::vector<OpTiming>* timings = nullptr;  // [iteration * ops->size() + index]
  std::atomic<uint64_t>* opsDone = nullptr;
  FailureSlot* failure = nullptr;
  ProgressSignal* progress = nullptr;  // notified after every batch and on failure
  bool verify = false;                 // --verify: patterned data, every received byte checked
  uint64_t capBytes = kNoCap;          // --max-buffer: larger ops run in pieces (op_pieces.h)
  uint64_t stagingBytes = 0;           // --staging: memory behind each buffer (0: whole)
  // --delay: before every delayEvery-th batch this rank starts (counted over its communicators), it
  // waits delayNs, as a slow GPU or host would; the batch's operations start after the wait.
  int64_t delayNs = 0;
  int delayEvery = 1;
  std::atomic<uint64_t>* batchesStarted = nullptr;
};

class CommExecutor {
 public:
  CommExecutor(const CommGroup& group, Communicator& comm, ExecutorShared shared, const BufferNeed& need);
  ~CommExecutor();  // close() and join()
  CommExecutor(const CommExecutor&) = delete;
  CommExecutor& operator=(const CommExecutor&) = delete;

  void submit(Batch batch);
  void close();  // no more batches: the thread ends once the queue is empty
  void join();
  // --verify: bytes of results checked so far (read after join()).
  uint64_t bytesChecked() const { return check_ ? check_->bytesChecked() : 0; }

  // The batch now running, for stall reports (stall_report.h); read from any thread.
  struct Running {
    uint32_t firstOp = 0;  // index into the rank's ops
    uint32_t iteration = 0;
    uint32_t ops = 0;  // ops in the batch
  };
  std::optional<Running> running() const;
  const CommGroup& group() const { return group_; }
  Communicator& comm() const { return comm_; }

 private:
  void loop();
  void execute(const Batch& batch);
  void holdFor(int64_t ns) const;

  const CommGroup& group_;
  Communicator& comm_;
  ExecutorShared shared_;
  CommArena arena_;
  std::optional<DataCheck> check_;  // with --verify
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Batch> queue_;
  bool closed_ = false;
  std::atomic<uint64_t> running_{kIdle};  // iteration << 32 | first op, or kIdle
  std::atomic<uint32_t> runningOps_{0};
  static constexpr uint64_t kIdle = UINT64_MAX;
  std::thread thread_;
};

// An engine error in the words of the replay: the op, its communicator, and every "rank N" of the
// transport's message (communicator ranks) translated to global ranks.
std::string explainFailure(const Status& status, const CommGroup& group, const WorkOp& op, uint32_t iteration);

}  // namespace nshim::phynet

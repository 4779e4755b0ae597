// Executor threads: a queue with a condition variable (woken by submit/close, and at least every
// 100 ms to notice a failure elsewhere), the batch run, and failure reports with global ranks.
#include "phynet/comm_executor.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <thread>

#include "workload/workload_transform.h"

namespace nshim::phynet {

void FailureSlot::set(Status status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_.load(std::memory_order_relaxed)) return;
  first_ = std::move(status);
  failed_.store(true, std::memory_order_release);
}

void ProgressSignal::notify() {
  { std::lock_guard<std::mutex> lock(mutex_); }  // a waiter between its check and its sleep sees the change
  changed_.notify_all();
}

Status FailureSlot::first() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return first_;
}

CommExecutor::CommExecutor(const CommGroup& group, Communicator& comm, ExecutorShared shared, const BufferNeed& need)
    : group_(group), comm_(comm), shared_(shared) {
  arena_.setStaging(shared.verify ? 0 : shared.stagingBytes);
  arena_.reserve(need, &comm.transport());
  if (shared.verify) check_.emplace(comm.rank(), comm.nranks());
  thread_ = std::thread([this] { loop(); });
}

CommExecutor::~CommExecutor() {
  close();
  join();
}

void CommExecutor::submit(Batch batch) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(batch));
  }
  ready_.notify_one();
}

void CommExecutor::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  ready_.notify_one();
}

void CommExecutor::join() {
  if (thread_.joinable()) thread_.join();
}

void CommExecutor::loop() {
  while (true) {
    Batch batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      while (queue_.empty() && !closed_ && !shared_.failure->failed()) {
        ready_.wait_for(lock, std::chrono::milliseconds(100));
      }
      if (shared_.failure->failed() || queue_.empty()) return;  // failed elsewhere, or closed and drained
      batch = std::move(queue_.front());
      queue_.pop_front();
    }
    execute(batch);
  }
}

// --delay: waits `ns`, in slices of at most 1 ms so that a failure elsewhere ends it soon.
void CommExecutor::holdFor(int64_t ns) const {
  const int64_t until = nowNs() + ns;
  for (int64_t now = nowNs(); now < until && !shared_.failure->failed(); now = nowNs()) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(until - now, 1'000'000)));
  }
}

void CommExecutor::execute(const Batch& batch) {
  const std::vector<WorkOp>& ops = *shared_.ops;
  std::vector<const WorkOp*> list;
  list.reserve(batch.ops.size());
  for (uint32_t i : batch.ops) list.push_back(&ops[i]);
  std::vector<OpTiming> timing(list.size());
  size_t failedOp = 0;
  if (batch.started != nullptr) {  // --pace recorded on a GPU timeline: the dispatcher waits for this
    batch.started->store(nowNs(), std::memory_order_release);
    shared_.progress->notify();
  }
  runningOps_.store(static_cast<uint32_t>(list.size()), std::memory_order_relaxed);
  running_.store(uint64_t{batch.iteration} << 32 | batch.ops.front(), std::memory_order_release);
  if (shared_.delayNs > 0 && shared_.batchesStarted != nullptr &&
      shared_.batchesStarted->fetch_add(1, std::memory_order_relaxed) % static_cast<uint64_t>(shared_.delayEvery) ==
          0) {
    holdFor(shared_.delayNs);
  }
  Status status = runBatch(comm_, arena_, list, timing, &failedOp, check_ ? &*check_ : nullptr, shared_.capBytes);
  running_.store(kIdle, std::memory_order_release);
  if (!status.ok()) {
    shared_.failure->set(Status(status.code(), explainFailure(status, group_, *list[failedOp], batch.iteration)));
    shared_.progress->notify();
    return;
  }
  const size_t base = static_cast<size_t>(batch.iteration) * ops.size();
  for (size_t k = 0; k < list.size(); ++k) (*shared_.timings)[base + batch.ops[k]] = timing[k];
  if (batch.finished != nullptr) batch.finished->store(nowNs(), std::memory_order_release);
  shared_.opsDone->fetch_add(list.size(), std::memory_order_acq_rel);
  shared_.progress->notify();
}

std::optional<CommExecutor::Running> CommExecutor::running() const {
  const uint64_t coded = running_.load(std::memory_order_acquire);
  if (coded == kIdle) return std::nullopt;
  return Running{static_cast<uint32_t>(coded), static_cast<uint32_t>(coded >> 32),
                 runningOps_.load(std::memory_order_relaxed)};
}

std::string explainFailure(const Status& status, const CommGroup& group, const WorkOp& op, uint32_t iteration) {
  // The transport names communicator ranks ("rank 3"): append the global rank to each.
  const std::string& text = status.message();
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 5, "rank ") == 0 && i + 5 < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[i + 5]))) {
      size_t j = i + 5;
      int r = 0;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) && r < 1 << 24)
        r = r * 10 + (text[j++] - '0');
      out += text.substr(i, j - i);
      if (r < static_cast<int>(group.members.size())) out += fmt::format(" (global rank {})", group.members[r]);
      i = j;
      continue;
    }
    out += text[i++];
  }
  return fmt::format("communicator {}, {} at seq {} (iteration {}, {}) failed: {}", commName(group), describeOp(op),
                     op.seq, iteration, op.source, out);
}

}  // namespace nshim::phynet

// The ibverbs transport's write-posting thread: a FIFO of work request lists, posted one by one.
#include "transport/ibverbs/ibverbs_poster.h"

#include <pthread.h>

namespace nshim::ib {

WritePoster::WritePoster() : thread_([this] { run(); }) {
  pthread_setname_np(thread_.native_handle(), "ncclshim-ibpost");  // 15 characters at most
}

WritePoster::~WritePoster() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  thread_.join();
}

void WritePoster::enqueue(ibv_qp* qp, size_t connection, std::span<const ibv_send_wr> wrs,
                          std::span<const ibv_sge> sges) {
  Batch batch{qp, connection, {wrs.begin(), wrs.end()}, {sges.begin(), sges.end()}};
  // Re-point the copies at each other: scatter entries by their index in `sges`, `next` in order.
  for (size_t i = 0; i < batch.wrs.size(); ++i) {
    ibv_send_wr& wr = batch.wrs[i];
    if (wr.num_sge > 0) wr.sg_list = batch.sges.data() + (wr.sg_list - sges.data());
    wr.next = i + 1 < batch.wrs.size() ? &batch.wrs[i + 1] : nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    queue_.push_back(std::move(batch));
  }
  wake_.notify_one();
}

void WritePoster::dropQueued() {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.clear();
}

std::vector<WritePoster::Failure> WritePoster::takeFailures() {
  std::vector<Failure> taken;
  if (!failed_.load(std::memory_order_acquire)) return taken;
  std::lock_guard<std::mutex> lock(mutex_);
  taken.swap(failures_);
  failed_.store(false, std::memory_order_relaxed);
  return taken;
}

void WritePoster::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Batch batch = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    ibv_send_wr* bad = nullptr;
    int rc = ibv_post_send(batch.qp, batch.wrs.data(), &bad);
    lock.lock();
    if (rc != 0) {
      failures_.push_back(Failure{batch.connection, rc, batch.wrs.size()});
      failed_.store(true, std::memory_order_release);
    }
  }
}

}  // namespace nshim::ib

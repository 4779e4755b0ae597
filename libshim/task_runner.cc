// A pool of worker threads, each taking one job at a time; the pool grows to the largest number of
// jobs run at once and is never torn down (workers sleep on a condition variable; the process may
// exit under them).
#include "libshim/task_runner.h"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace nshim {
namespace {

// Counts finished jobs of one runConcurrently call.
struct Completion {
  std::mutex mutex;
  std::condition_variable cv;
  size_t pending = 0;

  void finishOne() {
    std::lock_guard<std::mutex> lock(mutex);
    if (--pending == 0) cv.notify_all();
  }
  void waitAll() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return pending == 0; });
  }
};

class WorkerPool {
 public:
  // Hands `job` to an idle worker, starting a new one when none is idle.
  void start(const std::function<void()>* job, Completion* completion) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Worker* worker : workers_) {
      if (worker->job == nullptr) {
        assign(worker, job, completion);
        return;
      }
    }
    auto* worker = new Worker();  // owned by the pool for the life of the process
    workers_.push_back(worker);
    assign(worker, job, completion);
    std::thread([this, worker] { loop(worker); }).detach();
  }

 private:
  struct Worker {
    const std::function<void()>* job = nullptr;  // non-null while busy
    Completion* completion = nullptr;
    std::condition_variable cv;
  };

  void assign(Worker* worker, const std::function<void()>* job, Completion* completion) {
    worker->job = job;
    worker->completion = completion;
    worker->cv.notify_one();
  }

  void loop(Worker* worker) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      worker->cv.wait(lock, [&] { return worker->job != nullptr; });
      const std::function<void()>* job = worker->job;
      Completion* completion = worker->completion;
      lock.unlock();
      (*job)();
      lock.lock();
      // Become idle before reporting, so the caller's next group can reuse this worker.
      worker->job = nullptr;
      worker->completion = nullptr;
      lock.unlock();
      completion->finishOne();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::vector<Worker*> workers_;
};

WorkerPool& pool() {
  static auto* instance = new WorkerPool();  // never destroyed: workers may outlive static teardown
  return *instance;
}

}  // namespace

void runConcurrently(const std::vector<std::function<void()>>& jobs) {
  if (jobs.empty()) return;
  if (jobs.size() == 1) {
    jobs[0]();
    return;
  }
  Completion completion;
  completion.pending = jobs.size() - 1;
  for (size_t i = 1; i < jobs.size(); ++i) pool().start(&jobs[i], &completion);
  jobs[0]();
  completion.waitAll();
}

}  // namespace nshim

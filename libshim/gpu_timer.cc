// CUDA-event timing of operations and the thread that completes their records (gpu_timer.h).
#include "libshim/gpu_timer.h"

#include <cuda.h>
#include <dlfcn.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/hot_section.h"
#include "common/log.h"
#include "common/settings.h"
#include "libshim/record_hook.h"

namespace nshim {
namespace {

struct Driver {
  CUresult (*eventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*eventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*eventQuery)(CUevent) = nullptr;
  CUresult (*eventSynchronize)(CUevent) = nullptr;
  CUresult (*eventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*eventDestroy)(CUevent) = nullptr;
  CUresult (*streamIsCapturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
  CUresult (*ctxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*ctxSetCurrent)(CUcontext) = nullptr;
  CUresult (*exchangeCaptureMode)(CUstreamCaptureMode*) = nullptr;

  bool load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) return false;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      return fn != nullptr;
    };
    return get(eventCreate, "cuEventCreate") && get(eventRecord, "cuEventRecord") && get(eventQuery, "cuEventQuery") &&
           get(eventSynchronize, "cuEventSynchronize") && get(eventElapsedTime, "cuEventElapsedTime") &&
           get(eventDestroy, "cuEventDestroy_v2") && get(streamIsCapturing, "cuStreamIsCapturing") &&
           get(ctxGetCurrent, "cuCtxGetCurrent") && get(ctxSetCurrent, "cuCtxSetCurrent") &&
           get(exchangeCaptureMode, "cuThreadExchangeStreamCaptureMode");
  }
};

struct Pending {
  ApiCall call;
  GpuSpan span;
};

// Per CUDA context: an event known to have completed at host time hostNs.
struct Reference {
  CUevent event = nullptr;
  int64_t hostNs = 0;
};

class GpuTimer {
 public:
  bool enabled() const { return enabled_; }

  GpuTimer() {
    if (!settingBool(Setting::NCCLSHIM_GPU_TIMING)) return;
    enabled_ = driver_.load();
    if (!enabled_) NS_WARN("NCCLSHIM_GPU_TIMING=1 but no CUDA driver is loaded in this process: not timing");
    else NS_INFO("timing NCCL operations on the GPU with CUDA events");
  }

  GpuSpan begin(CUstream stream) {
    GpuSpan span;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (driver_.streamIsCapturing(stream, &status) != CUDA_SUCCESS) return span;
    if (status != CU_STREAM_CAPTURE_STATUS_NONE) {
      span.captured = true;
      return span;
    }
    CUcontext context = nullptr;
    if (driver_.ctxGetCurrent(&context) != CUDA_SUCCESS || context == nullptr) return span;
    if (!ensureReference(context, stream)) return span;
    CUevent start = nullptr;
    if (driver_.eventCreate(&start, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return span;
    if (driver_.eventRecord(start, stream) != CUDA_SUCCESS) {
      driver_.eventDestroy(start);
      return span;
    }
    span.start = start;
    span.context = context;
    return span;
  }

  bool finish(GpuSpan& span, CUstream stream, const ApiCall& call) {
    if (span.start == nullptr) return false;
    CUevent end = nullptr;
    if (driver_.eventCreate(&end, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
        driver_.eventRecord(end, stream) != CUDA_SUCCESS) {
      if (end) driver_.eventDestroy(end);
      driver_.eventDestroy(static_cast<CUevent>(span.start));
      return false;
    }
    span.end = end;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!thread_.joinable()) thread_ = std::thread([this] { pollLoop(); });
    pending_.push_back(Pending{call, span});
    ++outstanding_;
    wake_.notify_one();
    return true;
  }

  // A record with nothing to time, kept in order behind the timed calls before it (or written now
  // when none is waiting).
  void recordInOrder(const ApiCall& call) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!pending_.empty()) {
        pending_.push_back(Pending{call, GpuSpan{}});
        ++outstanding_;
        wake_.notify_one();
        return;
      }
    }
    recordApiCall(call);
  }

  void drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait_for(lock, std::chrono::seconds(5), [this] { return outstanding_ == 0; });
  }

 private:
  bool ensureReference(CUcontext context, CUstream stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = references_.find(context);
    if (it != references_.end()) return true;
    Reference ref;
    if (driver_.eventCreate(&ref.event, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return false;
    if (driver_.eventRecord(ref.event, stream) != CUDA_SUCCESS || driver_.eventSynchronize(ref.event) != CUDA_SUCCESS) {
      driver_.eventDestroy(ref.event);
      return false;
    }
    ref.hostNs = nowNs();  // the stream reached the event at most this long ago: the reference point
    references_[context] = ref;
    return true;
  }

  // Completes pending calls in order; an unfinished one is retried shortly.
  void pollLoop() {
    // Relaxed capture mode for this thread: its event queries must not invalidate a CUDA graph
    // that another thread captures in global mode (as PyTorch does).
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    driver_.exchangeCaptureMode(&mode);
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return !pending_.empty(); });
      Pending item = pending_.front();
      if (item.span.start == nullptr) {  // nothing to time (recordInOrder): written in its turn
        lock.unlock();
        recordApiCall(item.call);
        lock.lock();
        pending_.pop_front();
        if (--outstanding_ == 0) done_.notify_all();
        continue;
      }
      Reference ref = references_[static_cast<CUcontext>(item.span.context)];
      lock.unlock();
      driver_.ctxSetCurrent(static_cast<CUcontext>(item.span.context));
      CUresult state = driver_.eventQuery(static_cast<CUevent>(item.span.end));
      if (state == CUDA_ERROR_NOT_READY) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        lock.lock();
        continue;
      }
      float startMs = 0, lengthMs = 0;
      if (state == CUDA_SUCCESS &&
          driver_.eventElapsedTime(&startMs, ref.event, static_cast<CUevent>(item.span.start)) == CUDA_SUCCESS &&
          driver_.eventElapsedTime(&lengthMs, static_cast<CUevent>(item.span.start),
                                   static_cast<CUevent>(item.span.end)) == CUDA_SUCCESS) {
        item.call.gpuStartNs = ref.hostNs + static_cast<int64_t>(startMs * 1e6);
        item.call.gpuEndNs = item.call.gpuStartNs + static_cast<int64_t>(lengthMs * 1e6);
        item.call.gpuFlags |= kGpuTimed;
      }
      driver_.eventDestroy(static_cast<CUevent>(item.span.start));
      driver_.eventDestroy(static_cast<CUevent>(item.span.end));
      recordApiCall(item.call);
      lock.lock();
      pending_.pop_front();
      if (--outstanding_ == 0) done_.notify_all();
    }
  }

  Driver driver_;
  bool enabled_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::deque<Pending> pending_;
  size_t outstanding_ = 0;
  std::map<CUcontext, Reference> references_;
  std::thread thread_;  // detached at exit: the process ends with it (see ~GpuTimer never running)
};

GpuTimer& timer() {
  static GpuTimer* instance = new GpuTimer();  // never destroyed: its thread may outlive static destructors
  return *instance;
}

}  // namespace

namespace detail {
NSHIM_HOT_DATA std::atomic<int> gGpuTiming{-1};
}  // namespace detail

bool gpuTimingEnabledSlow() noexcept {
  static const bool enabled = [] {
    try {
      return timer().enabled();
    } catch (...) { return false; }
  }();
  detail::gGpuTiming.store(enabled ? 1 : 0, std::memory_order_release);
  return enabled;
}

GpuSpan gpuSpanBegin(void* stream) noexcept {
  try {
    return timer().begin(static_cast<CUstream>(stream));
  } catch (...) { return GpuSpan{}; }
}

bool gpuSpanFinish(GpuSpan& span, void* stream, const ApiCall& call) noexcept {
  try {
    return timer().finish(span, static_cast<CUstream>(stream), call);
  } catch (...) { return false; }
}

namespace {
// The calls of this thread's open group, in issue order: NCCL launches them at the group's end, so
// their end events are recorded there, and their records (and those of nested group calls) wait
// for the outermost end, which writes them, then itself, in order.
struct GroupedCall {
  ApiCall call;
  GpuSpan span;
};
thread_local std::vector<GroupedCall> tGroupedCalls;
}  // namespace

void gpuSpanFinishGrouped(const GpuSpan& span, const ApiCall& call) noexcept {
  try {
    tGroupedCalls.push_back(GroupedCall{call, span});
  } catch (...) {
    recordApiCall(call);  // no memory: the record untimed, not lost
  }
}

void gpuTimerRecordGroupCall(const ApiCall* call, bool outermostEnd) noexcept {
  try {
    if (call != nullptr && !outermostEnd) {  // inside a group: after the calls before it
      tGroupedCalls.push_back(GroupedCall{*call, GpuSpan{}});
      return;
    }
    for (GroupedCall& grouped : tGroupedCalls) {
      if (grouped.span.start == nullptr ||
          !timer().finish(grouped.span, static_cast<CUstream>(grouped.call.stream), grouped.call)) {
        timer().recordInOrder(grouped.call);
      }
    }
    tGroupedCalls.clear();
    if (call != nullptr) timer().recordInOrder(*call);
  } catch (...) {
    if (call != nullptr) recordApiCall(*call);
  }
}

void gpuTimerDrain() noexcept {
  if (!gpuTimingEnabled()) return;
  try {
    timer().drain();
  } catch (...) {}
}

}  // namespace nshim

// The trace window wired to the record hook (trace_window.h).
#include "libshim/trace_window.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include <atomic>
#include <string>

#include "common/clock.h"
#include "common/hot_section.h"
#include "common/log.h"
#include "common/settings.h"
#include "common/tsc_clock.h"
#include "libshim/record_hook.h"
#include "trace/capture_window.h"
#include "trace/recorder.h"
#include "trace/trace_record.h"

namespace nshim {
namespace {

trace::CaptureWindow* gWindow = nullptr;  // set before the hook state is published; never freed
bool gNeedsClock = false;                 // NCCLSHIM_TRACE_SECONDS: calls read the clock
std::atomic<bool> gGaveUpSaid{false};
std::atomic<uint64_t> gMarks{0};  // marks made without a window
struct sigaction gPreviousUsr2 {};

const char* startText(const trace::WindowSpec& spec) {
  switch (spec.start) {
    case trace::WindowStart::kIteration: return "iteration";
    case trace::WindowStart::kCall: return "call";
    case trace::WindowStart::kTime: return "time";
    case trace::WindowStart::kSignal: return "SIGUSR2";
    case trace::WindowStart::kFile: return "trigger file";
  }
  return "?";
}

// SIGUSR2: the operator's start, or stop; then the handler that was there before, if any.
void onUsr2(int sig, siginfo_t* info, void* context) {
  if (gWindow != nullptr) gWindow->requestToggle();
  if (gPreviousUsr2.sa_flags & SA_SIGINFO) {
    if (gPreviousUsr2.sa_sigaction != nullptr) gPreviousUsr2.sa_sigaction(sig, info, context);
  } else if (gPreviousUsr2.sa_handler != SIG_DFL && gPreviousUsr2.sa_handler != SIG_IGN &&
             gPreviousUsr2.sa_handler != nullptr) {
    gPreviousUsr2.sa_handler(sig);
  }
}

// time:S requests the start S seconds after the first call; file:PATH when PATH appears and the
// stop when it goes. Polls every 100 ms; a detached thread that ends with the process.
void* watch(void*) {
  const trace::WindowSpec& spec = gWindow->spec();
  const timespec tick{0, 100'000'000};
  if (spec.start == trace::WindowStart::kTime) {
    const int64_t due = nowNs() + static_cast<int64_t>(spec.afterSeconds * 1e9);
    while (nowNs() < due) nanosleep(&tick, nullptr);
    gWindow->requestStart();
    return nullptr;
  }
  bool present = false;
  for (;;) {
    struct stat st;
    const bool now = ::stat(spec.path.c_str(), &st) == 0;
    if (now && !present) gWindow->requestStart();
    if (!now && present) gWindow->requestStop();
    present = now;
    nanosleep(&tick, nullptr);
  }
  return nullptr;
}

void startWatcher() {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);  // the job's signals are not delivered to it
  pthread_t thread;
  const int rc = pthread_create(&thread, &attr, watch, nullptr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  pthread_attr_destroy(&attr);
  if (rc != 0)
    NS_WARN("NCCLSHIM_TRACE_START={}: cannot start the watcher thread; the window will not open",
            settingString(Setting::NCCLSHIM_TRACE_START));
}

// After a decision: the hook's state follows the window; a change is logged, a closing flushed.
void applyChange() {
  const trace::CaptureWindow::Change change = gWindow->lastChange();
  if (!change.opened && !change.closed) {
    const bool wantsIterations =
        gWindow->spec().start == trace::WindowStart::kIteration || gWindow->spec().iterations > 0;
    if (wantsIterations && gWindow->detectorGaveUp() && !gGaveUpSaid.exchange(true)) {
      NS_WARN(
          "trace window ({}): no repeating sequence of calls found and no ncclshimMarkStep() yet: iterations "
          "are unknown, so the window opens only at a mark (docs/capture.md)",
          startText(gWindow->spec()));
    }
    return;
  }
  detail::gHookState.store(change.opened ? detail::kHookWindowOpen : detail::kHookWindowClosed,
                           std::memory_order_release);
  NS_INFO("trace window {} at iteration {} (after {} calls)", change.opened ? "opened" : "closed", change.iteration,
          change.calls);
  if (change.closed) (void)trace::flush();
}

inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

}  // namespace

bool setUpTraceWindow() noexcept {
  try {
    const std::string start = settingString(Setting::NCCLSHIM_TRACE_START);
    if (start.empty()) return false;
    Result<trace::WindowSpec> spec = trace::parseWindowStart(start);
    if (!spec.ok()) {
      NS_WARN("{}; nothing but communicator events is recorded", spec.status().message());
      return true;  // gWindow stays null: closed for good
    }
    spec->iterations = static_cast<uint64_t>(settingInt(Setting::NCCLSHIM_TRACE_ITERATIONS));
    spec->seconds = settingDouble(Setting::NCCLSHIM_TRACE_SECONDS);
    gNeedsClock = spec->seconds > 0;
    gWindow = new trace::CaptureWindow(std::move(spec).value());
    if (gWindow->spec().start == trace::WindowStart::kSignal) {
      struct sigaction action {};
      action.sa_sigaction = onUsr2;
      action.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&action.sa_mask);
      sigaction(SIGUSR2, &action, &gPreviousUsr2);
    }
    if (gWindow->spec().start == trace::WindowStart::kTime || gWindow->spec().start == trace::WindowStart::kFile) {
      startWatcher();
    }
    NS_INFO("trace window: starts at {} {}", startText(gWindow->spec()), start);
  } catch (...) { NS_WARN("trace window: out of memory setting it up; nothing but communicator events is recorded"); }
  return true;
}

NSHIM_HOT_CODE bool windowRecordsCall(int16_t traceOp, const void* comm, uint64_t count, int32_t datatype, int32_t root,
                                      int32_t peer) noexcept {
  if (gWindow == nullptr) return false;
  const bool isCall = traceOp >= 0 && traceOp < static_cast<int16_t>(trace::OpCode::kGroupStart);
  const bool pointToPoint =
      traceOp == static_cast<int16_t>(trace::OpCode::kSend) || traceOp == static_cast<int16_t>(trace::OpCode::kRecv);
  // The calls' signature (trace/online_iterations.h): kind, communicator, count (not for sends and
  // receives, whose sizes may follow the data), type, root, peer.
  uint64_t signature = mix(static_cast<uint64_t>(traceOp), reinterpret_cast<uintptr_t>(comm));
  signature = mix(signature, pointToPoint ? 0 : count);
  signature =
      mix(signature, (static_cast<uint64_t>(static_cast<uint32_t>(datatype)) << 32) | static_cast<uint32_t>(root));
  signature = mix(signature, static_cast<uint32_t>(peer));
  const bool wasOpen = gWindow->open();
  const bool record = gWindow->onCall(signature, isCall, gNeedsClock ? tscNowNs() : 0);
  if (__builtin_expect(record != wasOpen || gWindow->detectorGaveUp(), 0)) applyChange();
  return record;
}

}  // namespace nshim

extern "C" __attribute__((visibility("default"))) int64_t ncclshimMarkStep(void) noexcept {
  using namespace nshim;
  const int state = detail::hookState();
  const int64_t now = tscNowNs();
  uint64_t iteration = 0;
  bool record = false;
  if (state == detail::kHookWindowClosed || state == detail::kHookWindowOpen) {
    if (gWindow == nullptr) return static_cast<int64_t>(gMarks.fetch_add(1) + 1);
    record = gWindow->onMark(now, &iteration);
  } else {
    iteration = gMarks.fetch_add(1, std::memory_order_relaxed) + 1;
    record = state == detail::kHookTraced || state == detail::kHookAll;
  }
  if (record) {
    trace::StepRecord step{};
    step.abi = trace::kTraceRecordAbi;
    step.step = iteration;
    step.timestampNs = now;
    trace::recordStep(step);
  }
  if (gWindow != nullptr) applyChange();
  return static_cast<int64_t>(iteration);
}

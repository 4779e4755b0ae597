// The record hook's body: on when NCCLSHIM_TRACE_DIR turns the trace recorder on (trace_bridge.h),
// or when NCCLSHIM_HOOK_DEBUG asks for it, for tests and benchmarks only:
//   NCCLSHIM_HOOK_DEBUG=noop     the hook path runs (timestamps, comm lookup, sequence numbers) and
//                                the body does nothing: the cost of the hook itself;
//   NCCLSHIM_HOOK_DEBUG=<path>   one text line per call appended to <path> ("%p" = the pid).
#include "libshim/record_hook.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include <fmt/format.h>

#include "common/hot_section.h"
#include "common/log.h"
#include "common/self_time.h"
#include "common/settings.h"
#include "libshim/trace_bridge.h"
#include "libshim/trace_window.h"

namespace nshim {
namespace detail {
NSHIM_HOT_DATA std::atomic<int> gHookState{-1};
}  // namespace detail

namespace {

NSHIM_HOT_DATA int gDebugFd = -1;  // set before gHookState is published, never changed afterwards

std::string expandPid(std::string path) {
  size_t at = path.find("%p");
  if (at != std::string::npos) path.replace(at, 2, std::to_string(getpid()));
  return path;
}

NSHIM_HOT_DATA bool gTracing = false;  // set before gHookState is published

int decideHookState() {
  gTracing = traceRecordingEnabled();
  if (gTracing) NS_INFO("recording NCCL calls to {}", settingString(Setting::NCCLSHIM_TRACE_DIR));
  std::string debug = settingString(Setting::NCCLSHIM_HOOK_DEBUG);
  if (debug.empty() && gTracing && setUpTraceWindow()) return detail::kHookWindowClosed;
  if (debug.empty()) return gTracing ? detail::kHookTraced : detail::kHookOff;
  if (debug != "noop") {
    std::string path = expandPid(debug);
    gDebugFd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (gDebugFd < 0) NS_WARN("NCCLSHIM_HOOK_DEBUG: cannot open {}; the hook runs without a log", path);
  }
  NS_INFO("record hook on (NCCLSHIM_HOOK_DEBUG={})", debug);
  return detail::kHookAll;
}

// One line per call: every field of ApiCall, then one "new=" entry per communicator created.
void writeDebugLine(const ApiCall& call) {
  char line[2048];
  auto out = fmt::format_to_n(
      line, sizeof(line) - 1,
      "fn={} result={} comm={} commId={:#x} seq={} nranks={} rank={} depth={} count={} datatype={} redop={} "
      "root={} peer={} flags={} stream={} send={} recv={} handle={} ns={} created={}",
      apiName(call.fn), call.result, call.comm, call.commId, call.seq, call.nranks, call.rank, call.groupDepth,
      call.count, call.datatype, call.redop, call.root, call.peer, call.flags, call.stream, call.sendbuff,
      static_cast<const void*>(call.recvbuff), call.handle, call.endNs - call.startNs, call.numCreated);
  size_t length = out.size < sizeof(line) - 1 ? out.size : sizeof(line) - 1;
  for (int i = 0; i < call.numCreated && length < sizeof(line) - 1; ++i) {
    const CommCreated& made = call.created[i];
    auto more = fmt::format_to_n(line + length, sizeof(line) - 1 - length, " new={},{:#x},{},{},{},{:#x},{},{},{}",
                                 made.comm, made.commId, made.nranks, made.rank, made.device, made.parentId,
                                 made.splitSeq, made.color, made.key);
    length += more.size < sizeof(line) - 1 - length ? more.size : sizeof(line) - 1 - length;
  }
  line[length++] = '\n';
  [[maybe_unused]] ssize_t written = write(gDebugFd, line, length);  // O_APPEND: one line per write
}

}  // namespace

namespace detail {
int initHookSlow() noexcept {
  static const int decided = [] {
    int state = kHookOff;
    try {
      state = decideHookState();
    } catch (...) { state = kHookOff; }
    gHookState.store(state, std::memory_order_release);  // after gDebugFd
    return state;
  }();
  return decided;
}
}  // namespace detail

NSHIM_HOT_CODE void prefetchRecordPath() noexcept {
  if (gTracing) prefetchTraceRecord();
}

NSHIM_HOT_CODE void recordApiCall(const ApiCall& call) noexcept {
  if (gTracing) recordCallToTrace(call);
  if (gDebugFd >= 0) writeDebugLine(call);
}

}  // namespace nshim

// Diagnostic (tests/gpu/torch_busbw.py BUSBW_TOGGLE=all): switches the record hook off (0) and on
// again (1) from the next call on, so that one process can time its calls with and without
// recording in alternate windows. While off the hook sees nothing: no `op` lines (the
// communicator's sequence numbers do not advance) and no `comm` lines for communicators made or
// destroyed meanwhile; the profiler plugin, if subscribed, still writes NCCL's tasks, unjoined.
// Returns the state before (1 on, 0 off), or -1 when the trace is not on (or NCCLSHIM_HOOK_DEBUG
// or a trace window is set), and then changes nothing. Call between NCCL calls; not for recording a job.
extern "C" __attribute__((visibility("default"))) int ncclshimSetRecording(int on) {
  using namespace nshim::detail;
  int state = hookState();
  if (!nshim::gTracing || state == kHookAll || state == kHookWindowClosed || state == kHookWindowOpen) return -1;
  gHookState.store(on != 0 ? kHookTraced : kHookOff, std::memory_order_release);
  return state == kHookTraced ? 1 : 0;
}

// Diagnostic (common/self_time.h): the calling thread's span counters of a build made with
// -DNSHIM_SELF_TIME=1 into out[0 .. 2 * kCount]: the TSC ticks of each span, then how many times
// each ran, then the TSC clock's ns per tick in 32.32 fixed point (0 while it has no line).
// Returns the values written, or -1 in a normal build or when `n` is too small.
extern "C" __attribute__((visibility("default"))) int ncclshimSelfTime(uint64_t* out, int n) {
  constexpr int kSpans = static_cast<int>(nshim::SelfTimeSpan::kCount);
  if (!nshim::kSelfTime || out == nullptr || n < 2 * kSpans + 1) return -1;
#if defined(NSHIM_SELF_TIME) && NSHIM_SELF_TIME
  for (int i = 0; i < kSpans; ++i) {
    out[i] = nshim::tSelfTime.ticks[i];
    out[kSpans + i] = nshim::tSelfTime.calls[i];
  }
#endif
  out[2 * kSpans] = nshim::detail::gTscLine.nsPerTick32.load(std::memory_order_relaxed);
  return 2 * kSpans + 1;
}

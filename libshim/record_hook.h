// The record hook: every exported NCCL call, in every mode (forward and GPU-free), reports itself
// to recordApiCall() with its function id, arguments, result, host timestamps and the state of its
// communicator (comm id, per-comm sequence number). The API layer (api_call.h) gathers all that
// only when recordHookWants() the call: when recording is off a call pays one load and one
// predictable branch, and with only the trace on, so do the calls the trace does not write
// (ncclCommCount, ncclCommUserRank, ncclCommGetAsyncError... which nccl-tests and PyTorch make
// around every operation). The recorder (trace/) plugs in behind recordApiCall (record_hook.cc).
// The call's record and the function ids are in api_record.h.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "libshim/api_record.h"

namespace nshim {

namespace detail {
inline constexpr int kHookOff = 0;
inline constexpr int kHookTraced = 1;  // the trace only: the calls traceWritesCall() names
inline constexpr int kHookAll = 2;     // NCCLSHIM_HOOK_DEBUG: every call
// The trace with a window (NCCLSHIM_TRACE_START, trace_window.h): every collective, point-to-point
// and group call asks the window whether it is recorded (windowRecordsCall); communicator events
// are recorded in both states. Closed: nothing else recorded, the profiler plugin raises no event.
inline constexpr int kHookWindowClosed = 3;
inline constexpr int kHookWindowOpen = 4;
extern std::atomic<int> gHookState;  // -1 not decided yet, else one of the above
int initHookSlow() noexcept;
inline int hookState() noexcept {
  int state = gHookState.load(std::memory_order_acquire);  // a plain load on x86
  if (__builtin_expect(state >= 0, 1)) return state;
  return initHookSlow();
}
}  // namespace detail

// Whether the hook is on, for some calls at least (decided at the first call; only the diagnostic
// ncclshimSetRecording and a trace window change it later).
inline bool recordHookEnabled() noexcept { return detail::hookState() != detail::kHookOff; }

// Whether call `id` is reported to recordApiCall: every call under NCCLSHIM_HOOK_DEBUG, the calls
// the trace writes when only the trace is on. `id` is a constant at every call site, so this is
// one load and one predictable branch.
inline bool recordHookWants(ApiId id) noexcept {
  int state = detail::hookState();
  if (state == detail::kHookAll) return true;
  if (!traceWritesCall(id)) return false;
  if (state == detail::kHookTraced || state == detail::kHookWindowOpen) return true;
  // A closed window: the end of a communicator, not the calls.
  return state == detail::kHookWindowClosed && !isOperation(id) && id != ApiId::kGroupStart && id != ApiId::kGroupEnd;
}

// The trace alone, writing every call it sees (no window, or an open one): the recorded paths'
// fast way to the trace bridge.
inline bool traceOnlyState(int state) noexcept {
  return state == detail::kHookTraced || state == detail::kHookWindowOpen;
}
// A window is configured and closed: calls are counted, not recorded.
inline bool traceWindowClosed() noexcept { return detail::hookState() == detail::kHookWindowClosed; }

// A hint at the start of a call the hook wants, before anything of it is gathered: the hook's
// body asks for the memory the call's record will be written to (trace/recorder.h prefetchPush).
void prefetchRecordPath() noexcept;

// THE hook: called after every exported call that recordHookWants(). Must not throw, block for
// long or call back into NCCL.
void recordApiCall(const ApiCall& call) noexcept;

}  // namespace nshim

// The frame of every exported NCCL function: the exception guard (api_guard.h) around the backend
// call and, only when the record hook wants the call (record_hook.h), the call's description, its
// communicator's state and sequence number, host timestamps and the hook. Otherwise the frame adds
// one load and one predictable branch to guardedCall. Operations (operationCall) share one
// out-of-line body for the rest; an operation the real NCCL calls from inside a recorded one
// (through this library's export) is part of that call and is not recorded again.
#pragma once

#include <vector>

#include "common/self_time.h"
#include "common/tsc_clock.h"
#include "libshim/api_current_op.h"
#include "libshim/api_guard.h"
#include "libshim/comm_table.h"
#include "libshim/gpu_timer.h"
#include "libshim/record_hook.h"
#include "libshim/trace_bridge.h"
#include "libshim/trace_window.h"

namespace nshim {

// ncclGroupStart nesting of this thread, kept by the group wrappers.
int& groupDepthOfThread() noexcept;

// Fills the group depth, the state of call.comm (and a sequence number for an operation), then
// the start time.
void beginRecordedCall(ApiCall& call) noexcept;

// A call's record as every frame starts it: the function and its trace operation number, a constant
// here (trace_bridge.h), so that no frame can leave the number out.
template <ApiId id>
[[gnu::always_inline]] inline ApiCall startApiCall() noexcept {
  ApiCall call;
  call.fn = id;
  call.traceOp = traceOpOf(id);
  return call;
}

// One recorded operation between the halves of its frame: begun before the backend call, finished
// after it.
struct RecordedOp {
  const OpArgs* args;  // the frame's, alive until finish
  OpFacts facts;
  GpuSpan span;  // when timed
  ApiId fn;
  int16_t traceOp;
  bool timed;  // GPU-timed on its stream (gpu_timer.h)
};

// The two halves of every recorded operation, out of line and shared by all of them (api_call.cc),
// so that a job's calls keep one body warm whichever operation they are. Begin: the record's
// description, its communicator's state and sequence number, the start time, the GPU span, and the
// thread marked as inside the operation (api_current_op.h); not for an operation called from inside
// a recorded one (operationCall).
RecordedOp beginRecordedOperation(ApiId id, int16_t traceOp, const OpArgs& args) noexcept;
// Finish: the thread leaves the operation, the end time, and the record goes to
// the trace (trace_bridge.h) or, under NCCLSHIM_HOOK_DEBUG or GPU timing, as an ApiCall to the hook
// or to the GPU timer that hands it over once the GPU is done.
void finishRecordedOperation(RecordedOp& op, ncclResult_t result) noexcept;

// A collective or point-to-point export: the backend's function `id` with `args`, the exported
// function's own; `op` describes them for the record (built only when the hook is on). With the
// hook off the frame is one load and one predictable branch before guardedCall.
template <ApiId id, typename... Args>
[[gnu::always_inline]] inline ncclResult_t operationCall(const OpArgs& op, Args... args) noexcept {
  static_assert(isOperation(id));
  // The arguments by value: the closure holds them, not their addresses beside spilled copies.
  auto body = [=](const NcclFunctions& backend) { return callEntry<id>(backend, args...); };
  const int state = detail::hookState();
  if (__builtin_expect(state == detail::kHookOff, 1)) return guardedCall(apiName(id), body);
  // An operation NCCL itself calls from inside a recorded one (its ncclBcast is ncclBroadcast, which
  // reaches this library's export): part of the outer call, not a call of the job's.
  if (tCurrentApiOp.commId != 0) return guardedCall(apiName(id), body);
  // A trace window: counted, and recorded only inside the window.
  if (state >= detail::kHookWindowClosed &&
      !windowRecordsCall(traceOpOf(id), op.comm, op.count, op.datatype, op.root, op.peer)) {
    return guardedCall(apiName(id), body);
  }
  const uint64_t selfStart = selfTimeMark();
  RecordedOp recorded = beginRecordedOperation(id, traceOpOf(id), op);
  addSelfTime(SelfTimeSpan::kFrameBefore, selfStart);
  const uint64_t backendStart = selfTimeMark();
  const ncclResult_t result = guardedCall(apiName(id), body);
  addSelfTime(SelfTimeSpan::kBackend, backendStart);
  const uint64_t afterStart = selfTimeMark();
  finishRecordedOperation(recorded, result);
  addSelfTime(SelfTimeSpan::kFrameAfter, afterStart);
  return result;
}

// The recorded half of ncclGroupStart / ncclGroupEnd with only the trace on (api_call.cc): the
// record, nesting `groupDepth` (after a start, before an end), straight to the trace bridge.
void recordGroupCall(int16_t traceOp, int32_t groupDepth, int64_t startNs, ncclResult_t result) noexcept;
// The same under GPU timing: through the GPU timer, in order with the group's timed calls (gpu_timer.h).
void recordTimedGroupCall(ApiId id, int16_t traceOp, int32_t groupDepth, int64_t startNs, ncclResult_t result) noexcept;

// ncclGroupStart / ncclGroupEnd (the group wrappers keep the nesting: a start has entered its level
// before this, an end leaves its level here). With only the trace on and no creation waiting for
// the group's end (every job's steady state), the record goes straight to the trace, as an
// operation's does: no ApiCall, no hook; the tasks NCCL launches inside the end are held for the
// end's record (api_current_op.h). Otherwise `slowPath()`: the generic frame.
template <ApiId id, typename SlowPath>
[[gnu::always_inline]] inline ncclResult_t groupCall(SlowPath&& slowPath) noexcept {
  static_assert(id == ApiId::kGroupStart || id == ApiId::kGroupEnd);
  const int state = detail::hookState();
  if (state >= detail::kHookWindowClosed) {
    // A trace window: counted; outside it (or with creations waiting) the generic frame, which
    // records only what the window's state lets it.
    if (tCurrentApiOp.deferred != 0 || !windowRecordsCall(traceOpOf(id), nullptr, 0, kHookNone, kHookNone, kHookNone)) {
      return slowPath();
    }
  } else if (__builtin_expect(state != detail::kHookTraced || tCurrentApiOp.deferred != 0, 0)) {
    return slowPath();
  }
  prefetchTraceRecord();
  const int64_t startNs = tscNowNs();
  const int32_t depth = tCurrentApiOp.groupDepth;  // the record's: before this end leaves a level
  // NCCL launches the group's tasks inside its end: the plugin holds them for this record (not under
  // GPU timing, where the record waits for the GPU: they are written as they launch).
  const bool timing = gpuTimingEnabled();
  if constexpr (id == ApiId::kGroupEnd) {
    if (!timing) enterGroupEnd(startNs);
  }
  const ncclResult_t result =
      guardedCall(apiName(id), [](const NcclFunctions& backend) { return callEntry<id>(backend); });
  if constexpr (id == ApiId::kGroupEnd) {
    leaveGroupEnd();
    (void)leaveGroupLevel();  // no creation waits (checked on entry): nothing to register
  }
  if (__builtin_expect(timing, 0)) {
    recordTimedGroupCall(id, traceOpOf(id), depth, startNs, result);
  } else {
    recordGroupCall(traceOpOf(id), depth, startNs, result);
  }
  return result;
}

// Any other exported function: `describe(ApiCall&)` fills the arguments (run only when the hook is
// on); the call is the backend's function `id` with `args`, the exported function's own. Always
// inlined into the exported function, so that with the hook off nothing of `describe` is built.
template <ApiId id, typename Describe, typename... Args>
[[gnu::always_inline]] inline ncclResult_t apiCall(Describe&& describe, Args... args) noexcept {
  static_assert(!isOperation(id), "operations go through operationCall");
  auto body = [&](const NcclFunctions& backend) { return callEntry<id>(backend, args...); };
  if (__builtin_expect(!recordHookWants(id), 1)) return guardedCall(apiName(id), body);
  ApiCall call = startApiCall<id>();
  describe(call);
  beginRecordedCall(call);
  const ncclResult_t result = guardedCall(apiName(id), body);
  call.endNs = tscNowNs();
  call.result = result;
  recordApiCall(call);
  return result;
}

// A function returning a string (ncclGetErrorString, ncclGetLastError): `fallback` when the guard
// catches anything; reported with result 0.
template <ApiId id, typename Describe, typename... Args>
[[gnu::always_inline]] inline const char* stringCall(Describe&& describe, const char* fallback, Args... args) noexcept {
  auto body = [&](const NcclFunctions& backend) { return callEntry<id>(backend, args...); };
  if (__builtin_expect(!recordHookWants(id), 1)) return guardedString(fallback, body);
  ApiCall call = startApiCall<id>();
  describe(call);
  beginRecordedCall(call);
  const char* text = guardedString(fallback, body);
  call.endNs = tscNowNs();
  recordApiCall(call);
  return text;
}

// The communicators a creation call made.
using CreatedComms = std::vector<CommCreated>;

// Registers a communicator made by a creation call in the side table (comm_table.h) and returns
// its description; `made.comm` null (nothing created) registers nothing.
CommCreated registerCreated(CommCreated made) noexcept;
// The same for a call that writes its new communicator to `*out`: made.comm = *out when the call
// created one. Inside a group a successful call may leave *out null until the group ends (GPU-free
// does): such a creation is kept and reported, registered, with the outermost ncclGroupEnd.
// `deferrable` false (a split with NCCL_SPLIT_NOCOLOR) never waits.
CommCreated registerCreatedAt(ncclResult_t result, ncclComm_t* out, CommCreated made, bool deferrable = true);
// After an ncclGroupEnd: leaves one nesting level; at the outermost, the deferred creations whose
// communicator now exists are registered and appended to `made`.
void leaveGroup(CreatedComms& made);
// Whether a creation call's result means its communicators exist (ncclSuccess, or ncclInProgress
// for a non-blocking one).
inline bool createdSomething(ncclResult_t result) { return result == ncclSuccess || result == ncclInProgress; }
// Hook on: asks the backend for what a creation call could not know (a split comm's size and
// rank, the device) and stores it in the side table; only for communicators that are ready.
void completeCreated(CreatedComms& comms, ncclResult_t result) noexcept;

// A creation call: like apiCall, and `made(result, CreatedComms&)` always runs after the call and
// registers what was created (registerCreated), so that the side table is complete.
template <ApiId id, typename Describe, typename Made, typename... Args>
[[gnu::always_inline]] inline ncclResult_t creationCall(Describe&& describe, Made&& made, Args... args) noexcept {
  auto body = [&](const NcclFunctions& backend) { return callEntry<id>(backend, args...); };
  const bool on = recordHookEnabled();
  ApiCall call = startApiCall<id>();  // ncclGroupEnd is a creation call: it needs its trace number
  if (on) {
    describe(call);
    beginRecordedCall(call);
  }
  ncclResult_t result = guardedCall(apiName(id), body);
  call.endNs = on ? tscNowNs() : 0;
  try {
    CreatedComms comms;
    made(result, comms);
    if (on) {
      completeCreated(comms, result);
      call.result = result;
      call.created = comms.data();
      call.numCreated = static_cast<int32_t>(comms.size());
      recordApiCall(call);
    }
  } catch (...) {
    // Out of memory describing the new communicators: the call's result stands, its record is lost.
  }
  return result;
}

}  // namespace nshim

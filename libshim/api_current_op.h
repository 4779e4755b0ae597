// The recorded operation this thread is inside: set by the API frame (api_call.h) around the
// backend call of every recorded collective / point-to-point call, so that the profiler plugin
// (profiler_plugin.cc), which NCCL calls synchronously from inside that very call, can join what
// NCCL decides to the API record (communicator id + per-comm sequence number). A few stores on entry,
// one on exit; initial-exec TLS like the recorder's thread cache (no TLS call).
#pragma once

#include <cstdint>

namespace nshim {

struct alignas(64) CurrentApiOp {  // one line
  uint64_t commId;                 // 0: not inside a recorded operation
  uint64_t seq;
  // The frame writes this call's record as soon as the call returns, so the plugin may hold the
  // tasks NCCL launches inside it for that record (trace::Recorder::holdTask).
  bool holdTasks;
  // Inside a recorded ncclGroupEnd (api_call.h groupCall): the tasks of the group's calls, which
  // NCCL launches there, are held for the ncclGroupEnd's record in the same way; startNs is its.
  bool inGroupEnd;
  int64_t startNs;  // the call's start time (its record's t_start_ns)
  // Not the operation's, but read by the same frame (api_call.cc): kept here so that a recorded call
  // reads one GOT entry for its thread-local offsets, not one per variable (each a line the job
  // has cooled). ncclGroupStart nesting of the thread, and its deferred creations (api_call.cc).
  int32_t groupDepth;
  int32_t deferred;
};

__attribute__((tls_model("initial-exec"))) inline constinit thread_local CurrentApiOp tCurrentApiOp{0, 0, false, false,
                                                                                                    0, 0, 0};

// Marks the thread as inside operation (commId, seq) until leaveApiOp: the two halves of a recorded
// operation's frame (api_call.cc), which the backend call between them cannot leave by an
// exception (guardedCall is noexcept).
inline void enterApiOp(uint64_t commId, uint64_t seq, bool holdTasks, int64_t startNs) noexcept {
  tCurrentApiOp.seq = seq;
  tCurrentApiOp.holdTasks = holdTasks;
  tCurrentApiOp.startNs = startNs;
  tCurrentApiOp.commId = commId;
}
inline void leaveApiOp() noexcept { tCurrentApiOp.commId = 0; }

// Marks the thread as inside a recorded ncclGroupEnd that started at startNs, until leaveGroupEnd.
inline void enterGroupEnd(int64_t startNs) noexcept {
  tCurrentApiOp.startNs = startNs;
  tCurrentApiOp.inGroupEnd = true;
}
inline void leaveGroupEnd() noexcept { tCurrentApiOp.inGroupEnd = false; }

// After an ncclGroupEnd: leaves one nesting level of the thread's groups. True when that was the
// outermost and creations made inside the group wait to be registered (api_call.cc leaveGroup).
inline bool leaveGroupLevel() noexcept {
  int32_t& depth = tCurrentApiOp.groupDepth;
  if (depth > 0) --depth;
  return depth == 0 && tCurrentApiOp.deferred != 0;
}

}  // namespace nshim

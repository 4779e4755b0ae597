// The tasks NCCL launched inside the recorded call they belong to, held on the calling thread until
// that call returns: the API frame then writes them together with the call's own record, in one
// push, with the call's host times (trace_bridge.cc). Such a task costs the profiler plugin no clock
// read, no push and no ring slot of its own while NCCL waits (profiler_plugin.cc). The frame allows
// it (CurrentApiOp::holdTasks) only where it writes the call's record before returning; a task
// launched elsewhere (at a later ncclGroupEnd, on another thread) is written at once, stamped with
// its launch. A call launching more than kMaxPendingTasks writes those held so far when the next
// comes (FORMAT.md `nccl_task` times). Initial-exec TLS: no TLS call.
#pragma once

#include <cstdint>

#include "trace/trace_record.h"

namespace nshim {

// A collective or a send / receive outside a group launches one task; NCCL's own alltoall, gather
// and scatter launch one per peer and pass through. Small, because initial-exec TLS comes from
// glibc's static TLS reserve when the library is dlopen'ed (NCCL_PROFILER_PLUGIN without
// LD_PRELOAD): the whole library's stays under 700 bytes.
constexpr uint32_t kMaxPendingTasks = 2;

struct PendingTasks {
  uint32_t count;
  trace::TaskRecord tasks[kMaxPendingTasks];
};

__attribute__((tls_model("initial-exec"))) inline constinit thread_local PendingTasks tPendingTasks{};

}  // namespace nshim

// What a task's network proxy operations need from the task (profiler_plugin.cc), carried in the
// task's own handle instead of a slot in memory: NCCL hands that handle back as the proxy
// operation's parent, later and on its proxy thread. A handle has 61 bits to give (profiler_slots.h):
// the call's sequence number (the communicator's id is the plugin's context), whether the task was
// joined to a call, and NCCL's function as a number in the table below (0: a name not in it, whose
// proxy lines then name no function).
#pragma once

#include <cstdint>
#include <cstddef>

#include "trace/trace_record.h"

namespace nshim::profiler {

// ncclFuncToString's names (NCCL 2.28 src/collectives.cc), numbered from 1.
inline constexpr const char* kNcclFuncNames[] = {
    "",          "AllGather", "AllReduce", "AlltoAll", "Broadcast", "Gather",     "Recv",    "Reduce",
    "ReduceScatter", "Scatter", "SendRecv", "Send",  "PutSignal", "Signal", "WaitSignal", "Invalid"};
static_assert(sizeof(kNcclFuncNames) / sizeof(kNcclFuncNames[0]) == 16, "function numbers take 4 bits");

// The number of NCCL's function `name` (a NUL-terminated copy of at most 15 bytes), 0 if unknown.
// Compared inline, byte by byte: no call into libc's code on NCCL's launching thread.
inline uint32_t ncclFuncNumber(const char (&name)[trace::kNcclNameBytes]) {
  for (uint32_t i = 1; i < 16; ++i) {
    const char* known = kNcclFuncNames[i];
    size_t k = 0;
    while (k + 1 < trace::kNcclNameBytes && name[k] != '\0' && name[k] == known[k]) ++k;
    if (name[k] == known[k]) return i;
  }
  return 0;
}

struct TaskJoin {
  uint64_t seq;   // the call's sequence number (when joined)
  bool joined;    // trace::kTaskJoined
  uint32_t func;  // kNcclFuncNames index
};

// The handle's ticket (profiler_slots.h makeHandle); seq below 2^56.
inline uint64_t taskJoinTicket(const TaskJoin& join) {
  return (join.seq << 5) | (uint64_t{join.func & 15} << 1) | (join.joined ? 1 : 0);
}
inline TaskJoin taskJoinOf(uint64_t ticket) {
  return TaskJoin{ticket >> 5, (ticket & 1) != 0, static_cast<uint32_t>((ticket >> 1) & 15)};
}

}  // namespace nshim::profiler

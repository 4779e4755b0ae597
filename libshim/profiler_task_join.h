// What a task's network proxy operations need from the task (profiler_plugin.cc), carried in the
// task's own handle instead of a slot in memory: NCCL hands that handle back as the proxy
// operation's parent, later and on its proxy thread. A handle has 61 bits to give (profiler_slots.h):
// the call's sequence number (the communicator's id is the plugin's context), whether the task was
// joined to a call, and NCCL's function as a number in the table below (0: a name not in it, whose
// proxy lines then name no function).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "trace/trace_record.h"

namespace nshim::profiler {

// ncclFuncToString's names (NCCL 2.28 src/collectives.cc), numbered from 1.
inline constexpr const char* kNcclFuncNames[] = {
    "",        "AllGather", "AllReduce", "AlltoAll",  "Broadcast", "Gather",     "Recv",   "Reduce", "ReduceScatter",
    "Scatter", "SendRecv",  "Send",      "PutSignal", "Signal",    "WaitSignal", "Invalid"};
static_assert(sizeof(kNcclFuncNames) / sizeof(kNcclFuncNames[0]) == 16, "function numbers take 4 bits");

// A name of at most 15 bytes as the two little-endian words a zeroed 16-byte field holding it reads as.
struct PackedName {
  uint64_t lo, hi;
};
constexpr PackedName packName(const char* name) {
  uint64_t words[2] = {0, 0};
  for (size_t i = 0; i < 15 && name[i] != '\0'; ++i)
    words[i / 8] |= uint64_t{static_cast<uint8_t>(name[i])} << (8 * (i % 8));
  return {words[0], words[1]};
}

template <size_t... I>
constexpr auto packFuncNames(std::index_sequence<I...>) {
  return std::array<PackedName, sizeof...(I)>{packName(kNcclFuncNames[I])...};
}
inline constexpr auto kPackedFuncNames = packFuncNames(std::make_index_sequence<16>());

template <size_t... I>
inline uint32_t matchPackedFuncName(uint64_t lo, uint64_t hi, std::index_sequence<I...>) {
  uint32_t found = 0;
  // Unrolled, each name's words are immediates in the code: no table or string is read.
  ((found =
        (found == 0 && lo == kPackedFuncNames[I + 1].lo && hi == kPackedFuncNames[I + 1].hi) ? uint32_t{I + 1} : found),
   ...);
  return found;
}

// The number of NCCL's function `name` (at most 15 bytes, NUL-padded to the end of the field, as in a
// record made by makeTaskRecord), 0 if unknown: two words compared with constants, inline, so that
// NCCL's launching thread reads no table and calls nothing.
inline uint32_t ncclFuncNumber(const char (&name)[trace::kNcclNameBytes]) {
  static_assert(std::endian::native == std::endian::little, "packName builds little-endian words");
  uint64_t lo = 0, hi = 0;
  std::memcpy(&lo, name, 8);
  std::memcpy(&hi, name + 8, 8);
  return matchPackedFuncName(lo, hi, std::make_index_sequence<15>());
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

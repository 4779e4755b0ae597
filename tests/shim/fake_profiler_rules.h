// The values the fake NCCL's profiler side (fake_nccl_profiler.cc) reports, shared with the trace
// checker (profiler_trace_check.cc) so that it recomputes every recorded field.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fakeprof {

constexpr int kChannels = 2;
constexpr int kWarps = 8;
constexpr int kSteps = 3;
constexpr int kChunkSize = 131072;

// Bytes of one step: distinct per channel, step and direction, so a misplaced sum shows.
constexpr size_t stepBytes(int channel, int step, int isSend) {
  return 1000 * static_cast<size_t>(channel + 1) + 10 * static_cast<size_t>(step) + (isSend ? 1 : 2);
}
constexpr uint64_t opBytes(int channel, int isSend) {
  uint64_t sum = 0;
  for (int s = 0; s < kSteps; ++s) sum += stepBytes(channel, s, isSend);
  return sum;
}
// NCCL's hash of a fake communicator: derived from the shim-independent unique id hash.
constexpr uint64_t commHash(uint64_t idHash) { return idHash ^ 0x5eed5eed00000000ull; }

}  // namespace fakeprof

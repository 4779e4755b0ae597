// Message tags: every message carries (collective sequence, operation code, step) so that the
// transport's tag check catches ranks that run different operations or different sequences.
#pragma once

#include <cstdint>

namespace nshim {

enum class OpCode : uint64_t {
  kAllReduce = 1,
  kAllGather = 2,
  kReduceScatter = 3,
  kBroadcast = 4,
  kReduce = 5,
  kAllToAll = 6,
  kGather = 7,
  kScatter = 8,
  kPointToPoint = 9,
  kAllReduceSmall = 10,
  kAllReduceTree = 11,
  kAllGatherPat = 12,
  kReduceScatterPat = 13,
};

// [ sequence : 40 | op : 8 | step : 16 ]
inline uint64_t makeTag(uint64_t seq, OpCode op, uint64_t step) {
  return (seq << 24) | (static_cast<uint64_t>(op) << 16) | (step & 0xffff);
}

}  // namespace nshim

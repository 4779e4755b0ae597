// phynet --delay RANK[,RANK...]:MICROSECONDS[:EVERY]: the given ranks are held before their ops
// (every EVERY-th op of the rank, counted over all its communicators from the first; default every
// op), as stragglers would hold a job; the report then names who the others waited for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace nshim::phynet {

// What one rank is held for: before every `every`-th of its ops (counted over all its
// communicators, from 0), `ns` (the executors hold it: comm_executor.h).
struct RankDelay {
  int64_t ns = 0;     // 0: not delayed
  uint64_t every = 1;
};

struct DelaySpec {
  std::vector<int> ranks;  // global ranks, ascending, distinct
  int64_t ns = 0;          // 0: no --delay
  uint64_t every = 1;
};

// "3:1000", "1,2:500:10"; the error names the part that is wrong.
Result<DelaySpec> parseDelaySpec(const std::string& text);

// What `rank` is held for (nothing when it is not one of the spec's ranks).
RankDelay delayOfRank(const DelaySpec& spec, int rank);

// A rank of the spec outside the world: an error naming it.
Status checkDelayRanks(const DelaySpec& spec, int worldSize);

}  // namespace nshim::phynet

// The replay's time per training iteration: each rank finds the iterations in its own ops
// (workload/iteration_period.h, RankCounters::step*); iteration k of a replay pass runs from the
// earliest start of its first call on any rank to the latest end of its last call, on the ranks'
// clocks aligned at the common run start. Ranks may have different periods (pipeline stages), but
// the same number of iterations; otherwise none is reported and the note says why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "phynet/op_runner.h"
#include "phynet/replay.h"

namespace nshim::phynet {

struct StepTimes {
  int64_t callsPerIteration = 0;  // rank 0's period
  int64_t warmupCalls = 0;        // rank 0's calls before the first whole iteration
  int64_t perPass = 0;            // whole iterations in one pass over the workload
  std::vector<double> timesUs;    // per measured pass, its iterations in order
  std::string note;               // why there are none ("" when there are)
};

// `timings[g]` holds rank g's op timings, [pass * opsPerPass + index], `passes` = warmup + measured.
StepTimes stepTimes(const std::vector<std::vector<OpTiming>>& timings, const std::vector<RankCounters>& counters,
                    int warmup, int measured);

}  // namespace nshim::phynet

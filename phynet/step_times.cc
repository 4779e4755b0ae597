// Time per training iteration of a replay (step_times.h).
#include "phynet/step_times.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace nshim::phynet {

StepTimes stepTimes(const std::vector<std::vector<OpTiming>>& timings, const std::vector<RankCounters>& counters,
                    int warmup, int measured) {
  StepTimes out;
  if (counters.empty() || timings.size() != counters.size() || measured < 1) return out;
  int64_t count = counters[0].stepCount;
  for (size_t g = 0; g < counters.size(); ++g) {
    if (counters[g].stepPeriod == 0) {
      out.note = fmt::format("no iterations found in rank {}'s calls", g);
      return out;
    }
    if (counters[g].stepCount != count) {
      out.note = fmt::format("ranks 0 and {} found {} and {} iterations", g, count, counters[g].stepCount);
      return out;
    }
  }
  out.callsPerIteration = counters[0].stepPeriod;
  out.warmupCalls = counters[0].stepFirst;
  out.perPass = count;
  const int passes = warmup + measured;
  for (int pass = warmup; pass < passes; ++pass) {
    for (int64_t k = 0; k < count; ++k) {
      int64_t start = std::numeric_limits<int64_t>::max(), end = std::numeric_limits<int64_t>::min();
      for (size_t g = 0; g < counters.size(); ++g) {
        const RankCounters& c = counters[g];
        const size_t perPass = timings[g].size() / static_cast<size_t>(passes);
        const size_t first = static_cast<size_t>(pass) * perPass + static_cast<size_t>(c.stepFirst + k * c.stepPeriod);
        const size_t last = first + static_cast<size_t>(c.stepPeriod) - 1;
        if (last >= timings[g].size()) {
          out.timesUs.clear();
          out.note = fmt::format("rank {}'s timings end before its iteration {}", g, k);
          return out;
        }
        start = std::min(start, timings[g][first].startNs - c.runStartNs);
        for (size_t i = first; i <= last; ++i) end = std::max(end, timings[g][i].endNs - c.runStartNs);
      }
      out.timesUs.push_back(static_cast<double>(end - start) * 1e-3);
    }
  }
  return out;
}

}  // namespace nshim::phynet

// The ops that took far longer than their like (same op, communicator and size class): what a fault
// on the wire (a lossy link, a link down for a while) or a burst of other traffic leaves in a replay.
// Each is named with its iteration and sequence, how much slower than its class's median it was, and
// the hosts its members sit on, so the report says which ops and which host pair suffered.
#pragma once

#include <string>
#include <vector>

#include "phynet/rank_endpoint.h"
#include "phynet/workload_names.h"
#include "workload/workload.h"

namespace nshim::phynet {

struct OpRow;

struct SlowOp {
  size_t row = 0;       // index into the report's rows
  double medianUs = 0;  // its class's median time
  double factor = 0;    // its time / the median
  std::string hosts;    // "h1 - h2" (the member hosts, a pair or a list); "" when not known
};

// Slow: over `factor` times its class's median and at least `marginUs` more, in a class of at
// least 3 rows. Slowest first.
constexpr double kSlowFactor = 4;
constexpr double kSlowMarginUs = 1000;
std::vector<SlowOp> findSlowOps(const std::vector<OpRow>& rows, const Workload& workload,
                                const std::vector<RankEndpoint>& endpoints);

}  // namespace nshim::phynet

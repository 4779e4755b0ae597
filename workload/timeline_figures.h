// What the fabric decides on one rank's timeline of operations, comparable between a GPU-timed
// capture and its replay (docs/replay_time.md):
//   communication time  the sum of the ops' durations;
//   busy time           the time at least one op is in flight (overlapping ops counted once);
//   exposed time        the rank's span (first start to last end) less the idle time the capture
//                       recorded between its ops (compute, in the job): for the capture itself that
//                       is its busy time; for a replay paced on the capture's gaps, the time its
//                       communication added to the capture's compute;
//   overlapping pairs   pairs of ops of different communicators in flight at once (TP and DP on
//                       different streams).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "workload/workload.h"

namespace nshim::workload {

struct OpInterval {
  int64_t startNs = 0;
  int64_t endNs = 0;
  uint64_t commId = 0;
};

struct TimelineFigures {
  double commUs = 0;
  double busyUs = 0;
  double spanUs = 0;
  double idleUs = 0;  // span - busy: time with no op in flight
  double exposedUs = 0;
  uint64_t ops = 0;
  uint64_t overlapPairs = 0;
};

// The figures of `ops` (any order). `recordedIdleUs` is the capture's idle time over the same ops;
// < 0: these ops are the capture (exposed = busy).
TimelineFigures timelineFigures(std::span<const OpInterval> ops, double recordedIdleUs = -1);

// A rank's captured GPU timeline: every op's [issueNs, issueNs + recordedNs) when all of them were
// GPU-timed (RecordedClock::kGpu); false (and nothing) otherwise.
bool capturedGpuTimeline(const std::vector<WorkOp>& ops, std::vector<OpInterval>* out);

}  // namespace nshim::workload

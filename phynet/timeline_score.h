// The replay scored against a GPU-timed capture, rank by rank (workload/timeline_figures.h):
// communication time, exposed communication time and the op pairs of different communicators in
// flight at once, capture against replay (the mean over the measured passes), for the whole rank
// and for each training iteration found in its ops (RankCounters::step*), and from the second
// iteration on. Without a GPU timeline on
// every rank there is nothing to score against, and the note says so.
#pragma once

#include <string>
#include <vector>

#include "phynet/op_runner.h"
#include "phynet/replay.h"
#include "workload/timeline_figures.h"
#include "workload/workload.h"

namespace nshim::phynet {

struct RankTimeline {
  int rank = 0;
  int iteration = -1;  // -1: the rank's whole pass; else a training iteration found in its ops
  TimelineFigures capture;
  TimelineFigures replay;
};

struct TimelineScore {
  bool captured = false;                 // every rank's capture is GPU-timed
  bool paced = false;                    // --pace recorded: the replay waited the recorded gaps
  std::string note;                      // what the figures can be compared for, or why there are none
  std::vector<RankTimeline> ranks;       // per rank
  std::vector<RankTimeline> iterations;  // per rank and training iteration
  // Per rank, its ops from the second training iteration found to the end of the last (iteration =
  // 1): the steady state, without the first calls, inside which NCCL connects its channels (lazily,
  // by default) while a replay connects before it starts. Empty below two iterations.
  std::vector<RankTimeline> steady;
  uint64_t captureOverlapPairs = 0;  // over all ranks
  double replayOverlapPairs = 0;     // over all ranks, mean per pass
};

// `timings[g]`: rank g's op timings [pass * ops + index], passes = warmup + measured.
TimelineScore scoreTimelines(const Workload& workload, const std::vector<std::vector<OpTiming>>& timings,
                             const std::vector<RankCounters>& counters, int warmup, int measured, bool paced);

}  // namespace nshim::phynet

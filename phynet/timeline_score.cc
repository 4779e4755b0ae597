// Capture and replay timelines of every rank, sliced by pass and by training iteration.
#include "phynet/timeline_score.h"

#include <fmt/format.h>

#include <algorithm>

namespace nshim::phynet {
namespace {

// The mean of the figures of several passes.
TimelineFigures meanOf(const std::vector<TimelineFigures>& passes) {
  TimelineFigures mean;
  if (passes.empty()) return mean;
  const double n = static_cast<double>(passes.size());
  double overlap = 0;
  for (const TimelineFigures& f : passes) {
    mean.commUs += f.commUs / n;
    mean.busyUs += f.busyUs / n;
    mean.spanUs += f.spanUs / n;
    mean.idleUs += f.idleUs / n;
    mean.exposedUs += f.exposedUs / n;
    overlap += static_cast<double>(f.overlapPairs) / n;
  }
  mean.ops = passes.front().ops;
  mean.overlapPairs = static_cast<uint64_t>(overlap + 0.5);
  return mean;
}

// Ops [begin, end) of one rank: the capture's figures and the replay's (mean over measured passes).
RankTimeline score(int rank, int iteration, const std::vector<OpInterval>& captured, const std::vector<WorkOp>& ops,
                   const std::vector<OpTiming>& timings, size_t begin, size_t end, int warmup, int measured,
                   double* replayOverlap) {
  RankTimeline out;
  out.rank = rank;
  out.iteration = iteration;
  out.capture = timelineFigures(std::span<const OpInterval>(captured).subspan(begin, end - begin));
  std::vector<TimelineFigures> passes;
  std::vector<OpInterval> replayed;
  for (int pass = warmup; pass < warmup + measured; ++pass) {
    replayed.clear();
    const size_t base = static_cast<size_t>(pass) * ops.size();
    for (size_t i = begin; i < end && base + i < timings.size(); ++i) {
      replayed.push_back({timings[base + i].startNs, timings[base + i].endNs, ops[i].commId});
    }
    passes.push_back(timelineFigures(replayed, out.capture.idleUs));
  }
  out.replay = meanOf(passes);
  if (replayOverlap) {
    for (const TimelineFigures& f : passes) *replayOverlap += static_cast<double>(f.overlapPairs) / passes.size();
  }
  return out;
}

// "recorded times are CPU calls", "only some ops are GPU-timed", ...
std::string clocksText(const std::vector<WorkOp>& ops) {
  size_t gpu = 0;
  for (const WorkOp& op : ops) gpu += op.recordedClock == RecordedClock::kGpu ? 1 : 0;
  if (gpu > 0) return fmt::format("{} of its {} ops are GPU-timed", gpu, ops.size());
  switch (ops.front().recordedClock) {
    case RecordedClock::kCpuCall: return "its recorded times are CPU calls";
    case RecordedClock::kFile: return "its input states durations, not a timeline";
    default: return "it records no times";
  }
}

}  // namespace

TimelineScore scoreTimelines(const Workload& workload, const std::vector<std::vector<OpTiming>>& timings,
                             const std::vector<RankCounters>& counters, int warmup, int measured, bool paced) {
  TimelineScore s;
  s.paced = paced;
  std::vector<std::vector<OpInterval>> captured(workload.ranks.size());
  for (size_t g = 0; g < workload.ranks.size(); ++g) {
    if (!capturedGpuTimeline(workload.ranks[g].ops, &captured[g])) {
      s.note = workload.ranks[g].ops.empty()
                   ? fmt::format("rank {} has no operations: no job timeline to score the replay against", g)
                   : fmt::format(
                         "rank {}'s capture is not GPU-timed ({}): there is no job timeline to score the replay "
                         "against (capture with NCCLSHIM_GPU_TIMING=1)",
                         g, clocksText(workload.ranks[g].ops));
      return s;
    }
  }
  s.captured = true;
  s.note = paced ? "replay paced on the capture's GPU timeline (--pace recorded): exposed time is the replay's span "
                   "less the capture's idle time between ops"
                 : "the replay ran --pace fast: it did not wait the capture's gaps, so its exposed time and overlaps "
                   "are not the job's (replay with --pace recorded)";
  for (size_t g = 0; g < workload.ranks.size() && g < timings.size(); ++g) {
    const std::vector<WorkOp>& ops = workload.ranks[g].ops;
    RankTimeline whole = score(static_cast<int>(g), -1, captured[g], ops, timings[g], 0, ops.size(), warmup, measured,
                               &s.replayOverlapPairs);
    s.captureOverlapPairs += whole.capture.overlapPairs;
    s.ranks.push_back(whole);
    const RankCounters& c = g < counters.size() ? counters[g] : RankCounters{};
    for (int64_t k = 0; k < c.stepCount && c.stepPeriod > 0; ++k) {
      const size_t begin = static_cast<size_t>(c.stepFirst + k * c.stepPeriod);
      const size_t end = begin + static_cast<size_t>(c.stepPeriod);
      if (end > ops.size()) break;
      s.iterations.push_back(score(static_cast<int>(g), static_cast<int>(k), captured[g], ops, timings[g], begin, end,
                                   warmup, measured, nullptr));
    }
    if (c.stepCount >= 2 && c.stepPeriod > 0) {
      const size_t begin = static_cast<size_t>(c.stepFirst + c.stepPeriod);
      const size_t end = std::min(ops.size(), static_cast<size_t>(c.stepFirst + c.stepCount * c.stepPeriod));
      if (begin < end) {
        s.steady.push_back(
            score(static_cast<int>(g), 1, captured[g], ops, timings[g], begin, end, warmup, measured, nullptr));
      }
    }
  }
  return s;
}

}  // namespace nshim::phynet

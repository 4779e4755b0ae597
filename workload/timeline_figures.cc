// Timeline figures: one sweep over the ops by start time (busy time as a union of intervals, the
// overlapping pairs against the ops still in flight).
#include "workload/timeline_figures.h"

#include <algorithm>

namespace nshim::workload {

TimelineFigures timelineFigures(std::span<const OpInterval> ops, double recordedIdleUs) {
  TimelineFigures f;
  if (ops.empty()) return f;
  std::vector<OpInterval> sorted(ops.begin(), ops.end());
  std::sort(sorted.begin(), sorted.end(), [](const OpInterval& a, const OpInterval& b) {
    return a.startNs != b.startNs ? a.startNs < b.startNs : a.endNs < b.endNs;
  });
  int64_t comm = 0, busy = 0;
  int64_t first = sorted.front().startNs, last = sorted.front().endNs;
  int64_t coverStart = sorted.front().startNs, coverEnd = sorted.front().startNs;  // the current union piece
  std::vector<const OpInterval*> inFlight;
  for (const OpInterval& op : sorted) {
    const int64_t end = std::max(op.endNs, op.startNs);
    comm += end - op.startNs;
    last = std::max(last, end);
    if (op.startNs > coverEnd) {
      busy += coverEnd - coverStart;
      coverStart = op.startNs;
    }
    coverEnd = std::max(coverEnd, end);
    std::erase_if(inFlight, [&op](const OpInterval* other) { return other->endNs <= op.startNs; });
    if (end > op.startNs) {
      for (const OpInterval* other : inFlight) f.overlapPairs += other->commId != op.commId ? 1 : 0;
      inFlight.push_back(&op);
    }
  }
  busy += coverEnd - coverStart;
  f.ops = sorted.size();
  f.commUs = comm * 1e-3;
  f.busyUs = busy * 1e-3;
  f.spanUs = (last - first) * 1e-3;
  f.idleUs = f.spanUs - f.busyUs;
  f.exposedUs = recordedIdleUs < 0 ? f.busyUs : std::max(0.0, f.spanUs - recordedIdleUs);
  return f;
}

bool capturedGpuTimeline(const std::vector<WorkOp>& ops, std::vector<OpInterval>* out) {
  out->clear();
  for (const WorkOp& op : ops) {
    if (op.recordedClock != RecordedClock::kGpu || op.issueNs < 0 || op.recordedNs < 0) {
      out->clear();
      return false;
    }
    out->push_back({op.issueNs, op.issueNs + op.recordedNs, op.commId});
  }
  return !out->empty();
}

}  // namespace nshim::workload

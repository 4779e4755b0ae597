// The period of a rank's call sequence (iteration_period.h).
#include "workload/iteration_period.h"

#include "common/fnv1a.h"
#include "trace/call_period.h"

namespace nshim::workload {

IterationPeriod findIterationPeriod(const std::vector<uint64_t>& signatures) {
  IterationPeriod out;
  const trace::CallPeriod found = trace::findCallPeriod(signatures.data(), signatures.size());
  if (!found.found) return out;
  const size_t n = signatures.size();
  out.found = true;
  out.period = found.period;
  out.iterations = found.iterations;
  out.firstBoundary = n - out.iterations * out.period;  // counted back from the last call
  out.warmupCalls = out.firstBoundary;
  out.tailCalls = 0;
  return out;
}

uint64_t iterationSignature(const WorkOp& op) {
  // Point-to-point sizes may follow the data (MoE token exchange): the calls count, not their sizes.
  const uint64_t count = describe(op.kind).pointToPoint ? 0 : op.count;
  const uint64_t fields[] = {static_cast<uint64_t>(op.kind),
                             op.commId,
                             count,
                             static_cast<uint64_t>(op.type),
                             static_cast<uint64_t>(static_cast<int64_t>(op.root)),
                             static_cast<uint64_t>(static_cast<int64_t>(op.peer))};
  return fnv1a64(fields, sizeof(fields));
}

IterationPeriod iterationsFromMarks(const std::vector<size_t>& marks, size_t calls) {
  IterationPeriod out;
  out.marked = true;
  // Marks with no call between them (a step that made none) mark one boundary.
  std::vector<size_t> boundaries;
  for (size_t at : marks) {
    if (at > calls) break;
    if (boundaries.empty() || at != boundaries.back()) boundaries.push_back(at);
  }
  if (boundaries.size() < 2) return out;
  const size_t period = boundaries[1] - boundaries[0];
  for (size_t i = 2; i < boundaries.size(); ++i) {
    if (boundaries[i] - boundaries[i - 1] != period) {
      out.unevenMarks = true;
      return out;
    }
  }
  out.found = true;
  out.period = period;
  out.firstBoundary = boundaries.front();
  out.warmupCalls = boundaries.front();
  out.iterations = boundaries.size() - 1;
  out.tailCalls = calls - boundaries.back();
  return out;
}

IterationPeriod findIterationPeriod(const RankWork& rank) {
  if (!rank.stepMarks.empty()) return iterationsFromMarks(rank.stepMarks, rank.ops.size());
  std::vector<uint64_t> signatures;
  signatures.reserve(rank.ops.size());
  for (const WorkOp& op : rank.ops) signatures.push_back(iterationSignature(op));
  return findIterationPeriod(signatures);
}

}  // namespace nshim::workload

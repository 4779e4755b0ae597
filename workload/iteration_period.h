// Training iterations found in a rank's recorded calls: a training step repeats the same sequence
// of calls (kind, communicator, count, type, root, peer; sends' and receives' sizes may follow the
// data, as a mixture of experts' token exchange does, so they count without sizes), so the step is
// the shortest period of the
// sequence. The first calls may differ (set-up, a first step with extra calls): the period is read
// from the end backwards, the iterations are counted back from the last call (a job ends after a
// whole step), and the calls before the first whole iteration are the warm-up.
//
// A period counts when it repeats at least twice and the periodic part holds at least half of the
// calls; otherwise there is none (a benchmark sweeping sizes, an irregular job), and callers say so.
// Linear in the number of calls (Z-function of the reversed sequence).
//
// Marks win: a rank whose trace holds the job's own iteration marks (ncclshimMarkStep, `step`
// lines; RankWork::stepMarks) has its iterations between consecutive marks, found or not by them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "workload/workload.h"

namespace nshim::workload {

struct IterationPeriod {
  bool found = false;
  size_t period = 0;         // calls per iteration
  size_t firstBoundary = 0;  // index of the first call of the first whole iteration
  size_t iterations = 0;     // whole iterations from firstBoundary
  size_t warmupCalls = 0;    // calls before firstBoundary
  size_t tailCalls = 0;      // calls after the last whole iteration (a cut last step)
  bool marked = false;       // from the job's marks, not found in the calls
  bool unevenMarks = false;  // marked, but the marked iterations differ in calls: none reported
};

// The iterations between a rank's marks (`marks`: op index after each mark, `calls` ops in all):
// found when at least one whole iteration lies between them and all hold the same number of calls.
IterationPeriod iterationsFromMarks(const std::vector<size_t>& marks, size_t calls);

// `signatures[i]` identifies call i.
IterationPeriod findIterationPeriod(const std::vector<uint64_t>& signatures);

// The signature of an op for findIterationPeriod: kind, communicator, count, type, root and peer
// (no count for sends and receives).
uint64_t iterationSignature(const WorkOp& op);

// The rank's marks when it has any (iterationsFromMarks), else findIterationPeriod over its ops.
IterationPeriod findIterationPeriod(const RankWork& rank);

}  // namespace nshim::workload

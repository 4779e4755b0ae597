// Iterations found in a call sequence (workload/iteration_period.h): the bundled Megatron TP2 trace
// has its 5 steps; a first step with an extra call is warm-up; sequences that do not repeat (a size
// sweep, a single step, a short repeat at the end of a long irregular run) have none.
#include <string>
#include <vector>

#include "tests/catch.h"
#include "workload/iteration_period.h"
#include "workload/trace_workload.h"

namespace nshim::workload {
namespace {

// One signature per character.
IterationPeriod periodOf(const std::string& calls) {
  return findIterationPeriod(std::vector<uint64_t>(calls.begin(), calls.end()));
}

TEST_CASE("the period of a call sequence, read back from the last call", "[iterations]") {
  IterationPeriod steady = periodOf("abcabcabcabc");
  CHECK(steady.found);
  CHECK(steady.period == 3);
  CHECK(steady.iterations == 4);
  CHECK(steady.warmupCalls == 0);

  // Set-up calls and a first step with one more call: warm-up, then 3 whole steps.
  IterationPeriod warm = periodOf("xyabXcabcabcabc");
  CHECK(warm.found);
  CHECK(warm.period == 3);
  CHECK(warm.iterations == 3);
  CHECK(warm.firstBoundary == 6);
  CHECK(warm.warmupCalls == 6);

  // The shortest period: "abab" repeated is "ab" repeated.
  CHECK(periodOf("abababab").period == 2);

  CHECK_FALSE(periodOf("abcdefgh").found);         // a size sweep: every call differs
  CHECK_FALSE(periodOf("abcdefghijkxyxy").found);  // a repeat at the end of a long irregular run
  CHECK_FALSE(periodOf("abcabd").found);           // one step and a different one
  CHECK_FALSE(periodOf("").found);
}

TEST_CASE("the bundled Megatron TP2 trace shows its 5 steps of 14 calls on every rank", "[iterations]") {
  Result<Workload> workload = loadTraceWorkload("examples/traces/megatron_tp2");
  REQUIRE(workload.ok());
  for (const RankWork& rank : workload->ranks) {
    IterationPeriod p = findIterationPeriod(rank);
    INFO("rank " << rank.globalRank);
    CHECK(p.found);
    CHECK(p.period == 14);
    CHECK(p.iterations == 5);
    CHECK(p.warmupCalls == 0);
  }
}

}  // namespace
}  // namespace nshim::workload

// Marks win (ncclshimMarkStep's `step` lines): iterations between consecutive marks.
namespace nshim::workload {
namespace {

TEST_CASE("iterations between the job's marks", "[iterations]") {
  // Marks after 4 set-up calls, then every 14 calls: 3 whole iterations, 5 calls after the last.
  IterationPeriod marked = iterationsFromMarks({4, 18, 32, 46}, 51);
  CHECK(marked.found);
  CHECK(marked.marked);
  CHECK(marked.period == 14);
  CHECK(marked.iterations == 3);
  CHECK(marked.firstBoundary == 4);
  CHECK(marked.tailCalls == 5);
  // Two marks with no call between them are one boundary.
  CHECK(iterationsFromMarks({0, 0, 5, 10}, 10).iterations == 2);
  // Marked steps of different sizes: none, and said so.
  IterationPeriod uneven = iterationsFromMarks({0, 5, 11}, 11);
  CHECK_FALSE(uneven.found);
  CHECK(uneven.unevenMarks);
  CHECK_FALSE(iterationsFromMarks({3}, 10).found);  // one mark: no whole iteration

  // A rank with marks has its iterations from them, not from the calls' period.
  RankWork rank;
  rank.ops.resize(20);
  rank.stepMarks = {2, 12};
  IterationPeriod fromMarks = findIterationPeriod(rank);
  CHECK(fromMarks.marked);
  CHECK(fromMarks.period == 10);
  CHECK(fromMarks.iterations == 1);
}

}  // namespace
}  // namespace nshim::workload

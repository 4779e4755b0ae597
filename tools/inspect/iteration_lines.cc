// Summary lines on a trace's iterations (iteration_lines.h).
#include "tools/inspect/iteration_lines.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "workload/iteration_period.h"

namespace nshim::tools {
namespace {

std::string rankList(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + (i == j ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    i = j + 1;
  }
  return text;
}

}  // namespace

std::vector<std::string> iterationLines(const workload::Workload& workload) {
  // Ranks grouped by what was found: (period, iterations, warm-up calls); period 0 = none.
  std::map<std::tuple<size_t, size_t, size_t>, std::vector<int>> found;
  bool marked = false, uneven = false;  // any rank's from the job's marks; marked steps of different sizes
  uint64_t bytesPerIteration = 0;
  for (const workload::RankWork& rank : workload.ranks) {
    if (rank.ops.empty()) continue;
    const workload::IterationPeriod p = workload::findIterationPeriod(rank);
    found[{p.period, p.iterations, p.warmupCalls}].push_back(rank.globalRank);
    marked = marked || p.marked;
    uneven = uneven || p.unevenMarks;
    for (size_t i = p.firstBoundary; p.found && i < p.firstBoundary + p.period; ++i) {
      bytesPerIteration += rank.ops[i].bytes;
    }
  }
  if (found.empty()) return {};
  std::vector<std::string> lines;
  if (found.size() == 1) {
    const auto& [key, ranks] = *found.begin();
    const auto [period, iterations, warmup] = key;
    if (period == 0 && uneven) {
      return {"iterations: marked by the job (ncclshimMarkStep), but the marked steps differ in calls"};
    }
    if (period == 0 && marked) return {"iterations: marked by the job, but no whole step lies between two marks"};
    if (period == 0) {
      return {"iterations: none found: the calls do not repeat (one step, a benchmark sweep or an irregular job)"};
    }
    lines.push_back(
        fmt::format("iterations: {} of {} calls per rank{}{}, {} bytes per iteration (all ranks)", iterations, period,
                    marked ? " (marked by the job)" : "",
                    warmup ? fmt::format(" after {} {} calls", warmup, marked ? "earlier" : "warm-up") : std::string(),
                    bytesPerIteration));
    return lines;
  }
  lines.push_back("iterations: the ranks differ:");
  for (const auto& [key, ranks] : found) {
    const auto [period, iterations, warmup] = key;
    lines.push_back(period == 0 ? fmt::format("  ranks {}: none found", rankList(ranks))
                                : fmt::format("  ranks {}: {} of {} calls after {} warm-up calls", rankList(ranks),
                                              iterations, period, warmup));
    if (lines.size() > 8) {
      lines.push_back("  ...");
      break;
    }
  }
  return lines;
}

}  // namespace nshim::tools

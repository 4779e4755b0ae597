// Compact rank lists (rank_ranges.h).
#include "common/rank_ranges.h"

#include <algorithm>

namespace nshim {
namespace {

// ",first" or ",first-last" (no comma before the first range).
void appendRange(std::string* out, int first, int last) {
  if (!out->empty()) *out += ',';
  *out += std::to_string(first);
  if (last > first) *out += '-' + std::to_string(last);
}

}  // namespace

std::string rankRangesText(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    appendRange(&out, ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string missingRankRangesText(std::vector<int> present, int world, int64_t* missing) {
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());
  std::string out;
  *missing = 0;
  int next = 0;                  // the lowest rank not yet accounted for
  auto gapUpTo = [&](int end) {  // [next, end) is missing
    if (end <= next) return;
    *missing += end - next;
    appendRange(&out, next, end - 1);
  };
  for (int rank : present) {
    if (rank < 0 || rank >= world) continue;
    gapUpTo(rank);
    next = rank + 1;
  }
  gapUpTo(world);
  return out;
}

}  // namespace nshim

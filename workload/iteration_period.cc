// The period of a rank's call sequence (iteration_period.h).
#include "workload/iteration_period.h"

#include <algorithm>

#include "common/fnv1a.h"

namespace nshim::workload {
namespace {

// z[i]: the length of the longest common prefix of s and s[i..]; z[0] = s.size().
std::vector<size_t> zFunction(const std::vector<uint64_t>& s) {
  const size_t n = s.size();
  std::vector<size_t> z(n, 0);
  if (n == 0) return z;
  z[0] = n;
  for (size_t i = 1, l = 0, r = 0; i < n; ++i) {
    if (i < r) z[i] = std::min(r - i, z[i - l]);
    while (i + z[i] < n && s[z[i]] == s[i + z[i]]) ++z[i];
    if (i + z[i] > r) {
      l = i;
      r = i + z[i];
    }
  }
  return z;
}

}  // namespace

IterationPeriod findIterationPeriod(const std::vector<uint64_t>& signatures) {
  IterationPeriod out;
  const size_t n = signatures.size();
  if (n < 2) return out;
  std::vector<uint64_t> reversed(signatures.rbegin(), signatures.rend());
  const std::vector<size_t> z = zFunction(reversed);
  // For period p, the periodic tail is p + z[p] calls long: the longest tail, then the shortest p.
  size_t bestPeriod = 0, bestTail = 0;
  for (size_t p = 1; p <= n / 2; ++p) {
    const size_t tail = std::min(n, p + z[p]);
    if (tail < 2 * p) continue;
    if (tail > bestTail) {
      bestTail = tail;
      bestPeriod = p;
    }
  }
  if (bestPeriod == 0 || 2 * bestTail < n) return out;
  out.found = true;
  out.period = bestPeriod;
  out.iterations = bestTail / bestPeriod;
  out.firstBoundary = n - out.iterations * bestPeriod;
  out.warmupCalls = out.firstBoundary;
  out.tailCalls = 0;
  return out;
}

uint64_t iterationSignature(const WorkOp& op) {
  // Point-to-point sizes may follow the data (MoE token exchange): the calls count, not their sizes.
  const uint64_t count = describe(op.kind).pointToPoint ? 0 : op.count;
  const uint64_t fields[] = {static_cast<uint64_t>(op.kind), op.commId, count, static_cast<uint64_t>(op.type),
                             static_cast<uint64_t>(static_cast<int64_t>(op.root)),
                             static_cast<uint64_t>(static_cast<int64_t>(op.peer))};
  return fnv1a64(fields, sizeof(fields));
}

IterationPeriod findIterationPeriod(const RankWork& rank) {
  std::vector<uint64_t> signatures;
  signatures.reserve(rank.ops.size());
  for (const WorkOp& op : rank.ops) signatures.push_back(iterationSignature(op));
  return findIterationPeriod(signatures);
}

}  // namespace nshim::workload

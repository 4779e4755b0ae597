// The period of a call sequence (call_period.h).
#include "trace/call_period.h"

#include <algorithm>
#include <vector>

namespace nshim::trace {
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

CallPeriod findCallPeriod(const uint64_t* signatures, size_t n) {
  CallPeriod out;
  if (n < 2) return out;
  std::vector<uint64_t> reversed(signatures, signatures + n);
  std::reverse(reversed.begin(), reversed.end());
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
  out.tailStart = n - bestTail;
  out.iterations = bestTail / bestPeriod;
  return out;
}

}  // namespace nshim::trace

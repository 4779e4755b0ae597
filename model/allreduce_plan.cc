// The allreduce plan (allreduce_plan.h).
#include "model/allreduce_plan.h"

#include <algorithm>

namespace nshim {

const char* allReduceRouteName(AllReduceRoute route) {
  switch (route) {
    case AllReduceRoute::kCopy: return "copy";
    case AllReduceRoute::kRecursiveDoubling: return "rd";
    case AllReduceRoute::kTree: return "tree";
    case AllReduceRoute::kRing: break;
  }
  return "ring";
}

AllReducePlan planAllReduce(const CollectiveOptions& options, CallChoice choice, int nranks, size_t bytes) {
  if (nranks == 1) return {AllReduceRoute::kCopy, 0};
  const Algorithm algorithm = choice.algorithm != Algorithm::kAuto ? choice.algorithm : options.algorithm;
  const int channels = std::max(1, choice.channels > 0 ? choice.channels : options.channels);
  if (algorithm == Algorithm::kTree) return {AllReduceRoute::kTree, channels};
  const bool powerOfTwo = (nranks & (nranks - 1)) == 0;
  if (algorithm == Algorithm::kAuto && powerOfTwo && bytes <= options.smallAllReduceBytes) {
    return {AllReduceRoute::kRecursiveDoubling, 0};
  }
  return {AllReduceRoute::kRing, channels};
}

}  // namespace nshim

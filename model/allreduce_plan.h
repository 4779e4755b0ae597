// Which of the engine's allreduce algorithms runs a call (ring, NCCL's double binary tree,
// recursive doubling for small buffers on 2^k ranks, a copy on one rank) and on how many channels:
// the caller's choice (NCCL's, recorded or tuned), else the options'.
#pragma once

#include <cstddef>

#include "model/algorithm.h"
#include "model/call_choice.h"
#include "model/collective_options.h"

namespace nshim {

// What allReduce runs for a buffer of `bytes` on `nranks` ranks, and the channels of the ring or
// tree (0 for the others).
enum class AllReduceRoute { kCopy, kRecursiveDoubling, kRing, kTree };
const char* allReduceRouteName(AllReduceRoute route);  // "copy" (one rank), "rd", "ring", "tree"
struct AllReducePlan {
  AllReduceRoute route;
  int channels;
};
AllReducePlan planAllReduce(const CollectiveOptions& options, CallChoice choice, int nranks, size_t bytes);

}  // namespace nshim

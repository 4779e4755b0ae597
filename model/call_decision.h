// A call's choice as the report and the tools name it: the algorithm that runs ("ring", "tree",
// "rd", "pat", "chain", "p2p", ...), its channels where it uses them (0 otherwise), the protocol.
#pragma once

#include "model/allreduce_plan.h"
#include "model/call_choice.h"

namespace nshim {

struct CallDecision {
  const char* algorithm;
  int channels;
  Protocol protocol;
};
CallDecision decisionOf(const CallRecord& call, const CollectiveOptions& options, int nranks, int nnodes);

// The allreduce plan of a recorded call (choiceOf's algorithm and channels).
AllReducePlan allReducePlanOf(const CallRecord& call, const CollectiveOptions& options, int nranks, int nnodes);

}  // namespace nshim

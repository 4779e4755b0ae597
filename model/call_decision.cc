// A call's choice as the report names it (call_decision.h).
#include "model/call_decision.h"

namespace nshim {

AllReducePlan allReducePlanOf(const CallRecord& call, const CollectiveOptions& options, int nranks, int nnodes) {
  const CallChoice choice = choiceOf(call, options, nranks, nnodes);
  return planAllReduce(options, choice, nranks, call.bytes);
}

CallDecision decisionOf(const CallRecord& call, const CollectiveOptions& options, int nranks, int nnodes) {
  const CallChoice choice = choiceOf(call, options, nranks, nnodes);
  const CollectiveDescriptor& d = describe(call.kind);
  if (d.route == EngineRoute::kAllReducePlan) {
    const AllReducePlan plan = planAllReduce(options, choice, nranks, call.bytes);
    return {allReduceRouteName(plan.route), plan.channels, choice.protocol};
  }
  if (d.route == EngineRoute::kRing && runsPatFor(choice, nranks, nnodes)) {
    return {"pat", choice.channels, choice.protocol};
  }
  // Rings and chains run on the chosen channels; point-to-point transfers take theirs per transfer.
  return {d.routeName, d.route == EngineRoute::kPointToPoint ? 0 : choice.channels, choice.protocol};
}

}  // namespace nshim

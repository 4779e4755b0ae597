// The engine's choice for a workload op (op_choice.h).
#include "workload/op_choice.h"

#include <algorithm>
#include <optional>

#include "collectives/call_choice.h"
#include "collectives/nccl_tuner.h"
#include "collectives/pat_schedule.h"

namespace nshim::workload {

OpChoice choiceOf(const WorkOp& op, const CollectiveOptions& options, int nranks, int nnodes) {
  OpChoice choice;
  choice.channels = op.channels;
  const std::optional<TunedFunc> func = tunedFuncOf(op.kind);
  if (!func) return choice;  // point to point, alltoall, gather, scatter
  // Allreduce (ring or tree) and the ring collectives (ring or PAT) run what NCCL chose or would
  // choose; broadcast and reduce have their chain only.
  const EngineRoute route = describe(op.kind).route;
  const bool recordedAlgorithm =
      op.algo != Algorithm::kAuto || (route != EngineRoute::kAllReducePlan && route != EngineRoute::kRing);
  TunedChoice tuned;
  if (!recordedAlgorithm || op.proto == Protocol::kAuto || op.channels == 0) {
    TunerSystem system = options.ncclSystem ? *options.ncclSystem : TunerSystem::forLayout(nranks, nnodes);
    system.nranks = nranks;
    system.nnodes = std::max(1, nnodes);
    system.collChannels = options.channels;
    tuned = chooseLikeNccl(*func, op.bytes, system, options.algorithm, options.protocol);
  }
  choice.algorithm = options.algorithm != Algorithm::kAuto ? options.algorithm
                     : op.algo != Algorithm::kAuto       ? op.algo
                                                          : tuned.algorithm;
  choice.protocol = options.protocol != Protocol::kAuto ? options.protocol
                    : op.proto != Protocol::kAuto       ? op.proto
                                                         : tuned.protocol;
  if (choice.channels == 0) choice.channels = tuned.channels;
  return choice;
}

bool runsPatFor(const OpChoice& choice, int nranks, int nnodes) {
  return choice.algorithm == Algorithm::kPat && patRuns(nranks, nnodes);
}

AllReducePlan allReducePlanOf(const WorkOp& op, const CollectiveOptions& options, int nranks, int nnodes) {
  const OpChoice choice = choiceOf(op, options, nranks, nnodes);
  return planAllReduce(options, {choice.algorithm, choice.channels}, nranks, op.bytes);
}

OpDecision decisionOf(const WorkOp& op, const CollectiveOptions& options, int nranks, int nnodes) {
  const OpChoice choice = choiceOf(op, options, nranks, nnodes);
  const CollectiveDescriptor& d = describe(op.kind);
  if (d.route == EngineRoute::kAllReducePlan) {
    const AllReducePlan plan = planAllReduce(options, {choice.algorithm, choice.channels}, nranks, op.bytes);
    return {allReduceRouteName(plan.route), plan.channels, choice.protocol};
  }
  if (d.route == EngineRoute::kRing && runsPatFor(choice, nranks, nnodes)) {
    return {"pat", choice.channels, choice.protocol};
  }
  // Rings and chains run on the chosen channels; point-to-point transfers take theirs per transfer.
  return {d.routeName, d.route == EngineRoute::kPointToPoint ? 0 : choice.channels, choice.protocol};
}

}  // namespace nshim::workload

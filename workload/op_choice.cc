// The engine's choice for a workload op (op_choice.h).
#include "workload/op_choice.h"

#include <algorithm>
#include <optional>

#include "collectives/nccl_tuner.h"
#include "collectives/pat_schedule.h"

namespace nshim::phynet {
namespace {

std::optional<TunedFunc> tunedFuncOf(OpKind kind) {
  switch (kind) {
    case OpKind::kAllReduce: return TunedFunc::kAllReduce;
    case OpKind::kAllGather: return TunedFunc::kAllGather;
    case OpKind::kReduceScatter: return TunedFunc::kReduceScatter;
    case OpKind::kBroadcast: return TunedFunc::kBroadcast;
    case OpKind::kReduce: return TunedFunc::kReduce;
    default: return std::nullopt;
  }
}

}  // namespace

OpChoice choiceOf(const WorkOp& op, const CollectiveOptions& options, int nranks, int nnodes) {
  OpChoice choice;
  choice.channels = op.channels;
  const std::optional<TunedFunc> func = tunedFuncOf(op.kind);
  if (!func) return choice;  // point to point, alltoall, gather, scatter
  const bool recordedAlgorithm = op.algo != Algorithm::kAuto || (op.kind != OpKind::kAllReduce &&
                                                                  op.kind != OpKind::kAllGather &&
                                                                  op.kind != OpKind::kReduceScatter);
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
  switch (op.kind) {
    case OpKind::kAllReduce: {
      const AllReducePlan plan = planAllReduce(options, {choice.algorithm, choice.channels}, nranks, op.bytes);
      return {allReduceRouteName(plan.route), plan.channels, choice.protocol};
    }
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
      return {runsPatFor(choice, nranks, nnodes) ? "pat" : "ring", choice.channels, choice.protocol};
    case OpKind::kBroadcast:
    case OpKind::kReduce: return {"chain", choice.channels, choice.protocol};
    default: return {"p2p", 0, choice.protocol};
  }
}

}  // namespace nshim::phynet

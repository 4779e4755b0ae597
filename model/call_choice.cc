// NCCL's decision for a call (call_choice.h).
#include "model/call_choice.h"

#include <algorithm>

#include "model/pat_schedule.h"

namespace nshim {
namespace {

TunerSystem systemFor(const CollectiveOptions& options, int nranks, int nnodes) {
  TunerSystem system = options.ncclSystem ? *options.ncclSystem : TunerSystem::forLayout(nranks, nnodes);
  system.nranks = nranks;
  system.nnodes = std::max(1, nnodes);
  system.collChannels = options.channels;
  return system;
}

}  // namespace

std::optional<TunedFunc> tunedFuncOf(CollectiveKind kind) {
  const int func = describe(kind).ncclFunc;
  if (func < 0) return std::nullopt;
  return static_cast<TunedFunc>(func);
}
static_assert(static_cast<int>(TunedFunc::kBroadcast) == describe(CollectiveKind::kBroadcast).ncclFunc &&
              static_cast<int>(TunedFunc::kReduce) == describe(CollectiveKind::kReduce).ncclFunc &&
              static_cast<int>(TunedFunc::kAllGather) == describe(CollectiveKind::kAllGather).ncclFunc &&
              static_cast<int>(TunedFunc::kReduceScatter) == describe(CollectiveKind::kReduceScatter).ncclFunc &&
              static_cast<int>(TunedFunc::kAllReduce) == describe(CollectiveKind::kAllReduce).ncclFunc);

CallChoice chooseForCall(const CollectiveOptions& options, int nranks, int nnodes, TunedFunc func, size_t bytes) {
  const TunedChoice tuned =
      chooseLikeNccl(func, bytes, systemFor(options, nranks, nnodes), options.algorithm, options.protocol);
  return {tuned.algorithm, tuned.protocol, tuned.channels};
}

CallChoice choiceOf(const CallRecord& call, const CollectiveOptions& options, int nranks, int nnodes) {
  CallChoice choice;
  choice.algorithm = Algorithm::kRing;
  choice.protocol = Protocol::kSimple;
  choice.channels = call.recorded.channels;
  const std::optional<TunedFunc> func = tunedFuncOf(call.kind);
  if (!func) return choice;  // point to point, alltoall, gather, scatter
  // Allreduce (ring or tree) and the ring collectives (ring or PAT) run what NCCL chose or would
  // choose; broadcast and reduce have their chain only.
  const EngineRoute route = describe(call.kind).route;
  const CallChoice& recorded = call.recorded;
  const bool recordedAlgorithm =
      recorded.algorithm != Algorithm::kAuto || (route != EngineRoute::kAllReducePlan && route != EngineRoute::kRing);
  TunedChoice tuned;
  if (!recordedAlgorithm || recorded.protocol == Protocol::kAuto || recorded.channels == 0) {
    tuned = chooseLikeNccl(*func, call.bytes, systemFor(options, nranks, nnodes), options.algorithm, options.protocol);
  }
  choice.algorithm = options.algorithm != Algorithm::kAuto    ? options.algorithm
                     : recorded.algorithm != Algorithm::kAuto ? recorded.algorithm
                                                              : tuned.algorithm;
  choice.protocol = options.protocol != Protocol::kAuto    ? options.protocol
                    : recorded.protocol != Protocol::kAuto ? recorded.protocol
                                                           : tuned.protocol;
  if (choice.channels == 0) choice.channels = tuned.channels;
  return choice;
}

bool runsPatFor(const CallChoice& choice, int nranks, int nnodes) {
  return choice.algorithm == Algorithm::kPat && patRuns(nranks, nnodes);
}

}  // namespace nshim

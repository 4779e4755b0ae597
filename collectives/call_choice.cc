// NCCL's decision for a call nothing recorded (call_choice.h).
#include "collectives/call_choice.h"

#include <algorithm>

namespace nshim {

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

TunedChoice chooseForCall(const Communicator& comm, TunedFunc func, size_t bytes) {
  const CollectiveOptions& options = comm.options();
  TunerSystem system = options.ncclSystem ? *options.ncclSystem
                                          : TunerSystem::forLayout(comm.nranks(), comm.nodes().nodes());
  system.nranks = comm.nranks();
  system.nnodes = std::max(1, comm.nodes().nodes());
  system.collChannels = options.channels;
  return chooseLikeNccl(func, bytes, system, options.algorithm, options.protocol);
}

CallChoiceScope::CallChoiceScope(Communicator& comm, Protocol protocol, int channels) : comm_(comm) {
  comm_.transport().setProtocol(protocol);
  comm_.setOpChannels(channels);
}

CallChoiceScope::~CallChoiceScope() {
  comm_.transport().setProtocol(Protocol::kSimple);
  comm_.setOpChannels(0);
}

}  // namespace nshim

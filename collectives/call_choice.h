// NCCL's decision for a collective call the engine runs on its own (the GPU-free shim, where no
// trace recorded what NCCL chose): the algorithm, protocol and channels NCCL's tuner picks for the
// op's size on the communicator's nodes (nccl_tuner.h; the system of CollectiveOptions::ncclSystem
// when a NCCL log gave one), restricted by NCCL_ALGO / NCCL_PROTO (the options). And a scope that
// runs the call in that protocol and on those channels.
#pragma once

#include <cstddef>
#include <optional>

#include "collectives/communicator.h"
#include "collectives/nccl_tuner.h"
#include "common/collective_descriptor.h"

namespace nshim {

// The function NCCL's tuner prices a collective as (its descriptor's ncclFunc, in TunedFunc's
// order); none for alltoall, gather, scatter and point-to-point.
std::optional<TunedFunc> tunedFuncOf(CollectiveKind kind);

// `bytes`: nccl-tests' size (the whole buffer of an allgather or reducescatter).
TunedChoice chooseForCall(const Communicator& comm, TunedFunc func, size_t bytes);

// While it lives, the communicator's posts move in `protocol` and its collectives use `channels`
// (0: the options'); Simple and the options' channels again after. The GPU-free shim's calls and
// phynet's ops (phynet/op_runner.cc) both run inside one.
class CallChoiceScope {
 public:
  CallChoiceScope(Communicator& comm, Protocol protocol, int channels);
  ~CallChoiceScope();
  CallChoiceScope(const CallChoiceScope&) = delete;
  CallChoiceScope& operator=(const CallChoiceScope&) = delete;

 private:
  Communicator& comm_;
};

}  // namespace nshim

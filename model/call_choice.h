// NCCL's decision for one call, {algorithm, protocol, channels}: the one choice the GPU-free shim,
// phynet and the tools all run, count and name by. Made from what the options force (NCCL_ALGO /
// NCCL_PROTO, --algo / --proto), else what NCCL recorded for the call (a trace's nccl_task), else
// what NCCL's tuner would choose for the call's size on the communicator's nodes (nccl_tuner.h; the
// system of CollectiveOptions::ncclSystem when a NCCL log gave one). The collectives take it as an
// argument (collectives/collectives.h).
#pragma once

#include <cstddef>
#include <optional>

#include "common/collective_descriptor.h"
#include "common/nccl_protocol.h"
#include "model/algorithm.h"
#include "model/collective_options.h"
#include "model/nccl_tuner.h"

namespace nshim {

// kAuto / 0 where nothing decided it: the collective then runs the options' (algorithm, channels)
// and Simple.
struct CallChoice {
  Algorithm algorithm = Algorithm::kAuto;  // allreduce: ring or tree; allgather, reducescatter: ring or pat
  Protocol protocol = Protocol::kAuto;
  int channels = 0;
};

// A call as a trace recorded it: its kind, nccl-tests' size (the whole buffer of an allgather or
// reducescatter) and what NCCL recorded of its choice (kAuto / 0: not recorded).
struct CallRecord {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  size_t bytes = 0;
  CallChoice recorded;
};

// The function NCCL's tuner prices a collective as (its descriptor's ncclFunc, in TunedFunc's
// order); none for alltoall, gather, scatter and point-to-point.
std::optional<TunedFunc> tunedFuncOf(CollectiveKind kind);

// A call nothing recorded (the GPU-free shim): the tuner's choice for `bytes` on `nranks` ranks on
// `nnodes` nodes, restricted by the options' algorithm and protocol.
CallChoice chooseForCall(const CollectiveOptions& options, int nranks, int nnodes, TunedFunc func, size_t bytes);

// A recorded call (a workload op): the options' forced choice, else the record, else the tuner.
// Point-to-point and alltoall: their recorded channels (0: as NCCL splits them, p2p_channels.h), in
// Simple.
CallChoice choiceOf(const CallRecord& call, const CollectiveOptions& options, int nranks, int nnodes);

// Whether an allgather / reducescatter of that choice runs NCCL's PAT (one rank per node), else the
// ring.
bool runsPatFor(const CallChoice& choice, int nranks, int nnodes);

}  // namespace nshim

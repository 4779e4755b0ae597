// Recognises, in a rank's operations from an ncclshim trace, the NCCL groups that are an uneven
// all-to-all: PyTorch's all_to_all_single with split sizes (and MoE token dispatch) reaches NCCL as
// one ncclGroupStart/End holding a send to and a receive from every other rank of a communicator, with
// per-peer sizes. Such a group's sends and receives are marked OpOrigin::kAllToAllV, as the PyTorch
// execution-trace reader marks its all_to_allv, so that summaries and reports name them alike.
// Only groups on communicators of three ranks or more count (with two, a send and a receive are any
// exchange), and only uneven ones (equal sizes are an even all-to-all issued as sends and receives).
#pragma once

#include <cstddef>
#include <vector>

#include "workload/workload.h"

namespace nshim::workload {

// Marks the groups of `ops` (one rank's, global rank `globalRank`) that are uneven all-to-alls;
// returns how many groups it marked.
size_t markUnevenAllToAll(std::vector<WorkOp>& ops, const Workload& workload, int globalRank);

}  // namespace nshim::workload

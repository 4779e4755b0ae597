// ncclCommSplit, GPU-free: a collective over the parent communicator that creates one new
// communicator per color, its ranks ordered by (key, parent rank).
#pragma once

#include <memory>

#include "common/status.h"
#include "libshim/shim_comm.h"

namespace nshim {

inline constexpr int kSplitNoColor = -1;  // NCCL_SPLIT_NOCOLOR

// Runs with the parent's operation lock held (as a task of the parent). Returns nullptr for
// kSplitNoColor. `blocking` is the new communicator's blocking mode.
Result<std::unique_ptr<ShimComm>> splitComm(ShimComm& parent, int color, int key, bool blocking);

}  // namespace nshim

// A rank's operations as words for MpiSession's int64 gathers, and back: how a replay rank, which
// keeps only its own operations (Workload::onlyRank), lends rank 0 the ones it needs to explain a
// validation finding, and the ones its report is built from. File names of the sources travel once,
// as a table; each op carries its index and line, and is re-interned on the receiving side.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"
#include "phynet/workload_names.h"
#include "workload/workload.h"

namespace nshim::phynet {

// The ops for which `keep` is true (all when it is empty), in their order.
std::vector<int64_t> packOps(const std::vector<WorkOp>& ops, const std::function<bool(const WorkOp&)>& keep = {});

// What packOps wrote, or an error saying where the words stop making sense (never trusted blindly:
// they come from another process).
Result<std::vector<WorkOp>> unpackOps(const std::vector<int64_t>& words);

}  // namespace nshim::phynet

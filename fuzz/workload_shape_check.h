// Shared by the SimAI and AICB fuzz targets: what every accepted workload must hold, whatever the
// input (one RankWork per rank of its world, every op on a communicator the workload lists).
#pragma once

#include <cstddef>

#include "fuzz/fuzz_util.h"
#include "workload/workload.h"

namespace nshim::fuzz {

inline void checkWorkloadShape(const workload::Workload& workload) {
  FUZZ_CHECK(workload.worldSize >= 1 && workload.ranks.size() == static_cast<size_t>(workload.worldSize));
  for (const workload::RankWork& rank : workload.ranks) {
    for (const workload::WorkOp& op : rank.ops) FUZZ_CHECK(workload.findComm(op.commId) != nullptr);
  }
}

}  // namespace nshim::fuzz

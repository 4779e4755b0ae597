// Compact signatures of one rank's operations per communicator, so that rank 0 can check a world's
// workload across ranks without holding every rank's operations (Workload::onlyRank): per
// communicator the rank is in, the count and a 64-bit hash of its collectives (what checkWorkload
// compares: kind, count, type, root, bytes, and the reduction where there is one), and per peer the
// count and hash of the bytes of its sends to it and of its receives from it. Equal digests mean
// equal sequences (up to a hash collision); where they differ, or where a communicator carries
// point-to-point traffic (whose order checkWorkload simulates), rank 0 asks the members for those
// communicators' ops and runs checkWorkload on them for the exact message.
#pragma once

#include <cstdint>
#include <vector>

#include "phynet/workload_names.h"
#include "workload/workload.h"

namespace nshim::phynet {

// Rank `globalRank`'s digests, as words for MpiSession::gatherToRoot (4 per entry).
std::vector<int64_t> digestRankOps(const Workload& workload, int globalRank);

struct CommsToExamine {
  std::vector<uint64_t> disagreeing;   // communicator ids whose members' digests differ (the first few)
  std::vector<uint64_t> pointToPoint;  // communicator ids with sends or receives
  size_t disagreeingTotal = 0;         // all of them, of which `disagreeing` holds at most the limit
};

// From every rank's digests (index = global rank); `workload` gives the communicators (its ops are
// not read). Communicators are taken in workload.comms order.
CommsToExamine commsToExamine(const Workload& workload, const std::vector<std::vector<int64_t>>& digests,
                              size_t maxDisagreeing);

}  // namespace nshim::phynet

// Validation across the ranks of a replay, where each rank holds only its own operations
// (Workload::onlyRank), so that no rank's memory grows with the world: every rank checks its own
// ops (checkRankStructure) and sends rank 0 its per-communicator digests (comm_digest.h); rank 0
// compares them, asks the members of the communicators that disagree or carry point-to-point
// traffic for those ops alone, and runs checkWorkload on them, so the messages are checkWorkload's.
// Collective over every rank of the session; the verdict reaches every rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "phynet/input_loader.h"
#include "phynet/mpi_session.h"

namespace nshim::phynet {

struct RankValidation {
  std::string verdict;              // "" = go (every rank)
  std::vector<uint64_t> usedComms;  // ids of the communicators any rank issues ops on, ascending (every rank)
  uint64_t totalOps = 0;            // over all ranks (rank 0)
  uint64_t filteredOut = 0;         // by --ops / --groups, over all ranks (rank 0)
  uint64_t opsExamined = 0;         // ops rank 0 received to check in detail (rank 0)
};

// `fingerprint`: workloadFingerprint of this rank's workload (the ranks must have read the same).
RankValidation validateAcrossRanks(const LoadedInput& input, uint64_t fingerprint, MpiSession& mpi);

}  // namespace nshim::phynet

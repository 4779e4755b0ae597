// A transport-independent check of one collective on one rank: fills the inputs with a pattern
// whose results are exact in every data type, runs the collective through the engine, and compares
// every output element with a reference computed from the same pattern. Used by the in-process
// tests (ranks as threads) and the TCP tests (ranks as processes).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectives/communicator.h"
#include "model/datatype.h"

namespace nshim::testing {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kGather, kScatter };
extern const std::vector<Collective> kAllCollectives;
const char* collectiveName(Collective collective);
bool usesReduction(Collective collective);
bool usesRoot(Collective collective);

struct CollectiveCase {
  Collective collective;
  size_t count;  // NCCL's count argument
  DataType type;
  ReduceKind reduce = ReduceKind::kSum;
  int root = 0;
  bool inPlace = false;
};

// Runs the case on this rank and returns "" or a description of the first wrong element.
std::string runAndCheck(Communicator& comm, const CollectiveCase& c);

// Runs every case, in order, on every rank of `comms` (one thread per rank): per rank "" or the
// first wrong case's description.
std::vector<std::string> runCasesOnRanks(const std::vector<std::unique_ptr<Communicator>>& comms,
                                         const std::vector<CollectiveCase>& cases);

// In-process communicators whose rank r is on node `nodeKeyOfRank[r]` (NodeLayout::fromKeys).
std::vector<std::unique_ptr<Communicator>> inProcessCommsOnNodes(const std::vector<int>& nodeKeyOfRank,
                                                                 const CollectiveOptions& options);

// Payload bytes this rank is expected to send in total under the engine's ring/chain algorithms
// (recursive doubling disabled; the ring allreduce's blocks split for `channels` channels), summed
// over peers.
uint64_t expectedSentBytes(const CollectiveCase& c, int rank, int nranks, size_t sliceBytes, int channels = 2);

}  // namespace nshim::testing

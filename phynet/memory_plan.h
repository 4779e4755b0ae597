// Memory of a replay, known before any traffic: each rank's arenas (one per communicator, sized for
// its largest batch; each side within --max-buffer unless --verify, op_pieces.h), each reducing
// communicator's engine scratch (sized for its largest reduction, so that memory follows the bytes
// and not the number of communicators), the largest
// operation and where it came from, the memory each host has available (cgroup limit, MemAvailable),
// and the verdict: a host whose ranks together need more than it has is refused, naming the
// operation, the bytes, the memory and the --scale (--verify) or --max-buffer that would fit.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collectives/communicator.h"
#include "phynet/op_pieces.h"
#include "phynet/workload_names.h"
#include "workload/workload.h"

namespace nshim::phynet {

struct RankMemoryPlan {
  std::map<uint64_t, BufferNeed> arenas;  // by communicator id
  std::map<uint64_t, uint64_t> scratch;   // communicators with a reduction -> their engine scratch bytes
  uint64_t totalBytes = 0;                // all arenas, both sides, and the scratch
  const WorkOp* largest = nullptr;        // the op with the most buffer bytes (uncapped)
  uint64_t largestBytes = 0;              // its send + receive buffer bytes
};

// `collectives`: the engine's options, which size its scratch (reductionScratchFor).
RankMemoryPlan planRankMemory(const Workload& workload, int globalRank, bool verify, uint64_t capBytes,
                              const CollectiveOptions& collectives);

// The least scratch a reducing communicator is given (one page): a reduction of a few bytes asks
// for less, and the next one then needs no allocation either.
constexpr uint64_t kMinScratchBytes = 4096;

// Allreduce, reducescatter and reduce use the engine's scratch.
bool reduces(const WorkOp& op);

// Bytes this process may still allocate: MemAvailable, lowered to the cgroup's limit minus its
// usage when there is one (v2 or v1). 0 when neither can be read.
uint64_t availableMemoryBytes();

// The --max-buffer values the check considers: 256M, 192M, 128M, 96M, ... 4M, and `givenCap`.
std::vector<uint64_t> candidateCaps(uint64_t givenCap);

// What the host check needs of one rank, computed where the rank's ops are (Workload::onlyRank):
// its plan's total at each candidate cap, and its largest operation.
struct RankMemoryFacts {
  std::vector<uint64_t> totalAtCap;  // planRankMemory(...).totalBytes, per candidateCaps() entry
  uint64_t largestBytes = 0;
  std::string largest;  // "allreduce ... at file:line", "" when the rank has no ops
};
RankMemoryFacts rankMemoryFacts(const Workload& workload, int globalRank, bool verify,
                                const std::vector<uint64_t>& caps, const CollectiveOptions& collectives);
// As words for MpiSession::gatherToRoot, and back (false on words that do not fit `caps`).
std::vector<int64_t> packMemoryFacts(const RankMemoryFacts& facts);
bool unpackMemoryFacts(const std::vector<int64_t>& words, size_t caps, RankMemoryFacts* out);

struct MemoryCheckInput {
  std::vector<uint64_t> caps;          // candidateCaps(--max-buffer)
  std::vector<RankMemoryFacts> ranks;  // per global rank
  std::vector<uint64_t> available;     // per global rank: availableMemoryBytes() there (0 = unknown)
  std::vector<std::string> hosts;      // per global rank: host label (ranks of one host share its memory)
  bool verify = false;
  uint64_t capBytes = 0;  // --max-buffer (one of caps)
  double scale = 1;       // --scale given
};

// "" when every host has the memory its ranks need, else one line saying which host falls short.
std::string checkReplayMemory(const MemoryCheckInput& input);

// The share of a host's available memory that the default --max-buffer is lowered to fit in.
constexpr double kComfortableShare = 0.75;

// The largest of 256M, 192M, 128M, 96M, ... 4M (not above input.capBytes) with which every host's
// ranks need at most `fraction` of its available memory; 0 when none does (input.verify: 0).
uint64_t fittingCapBytes(const MemoryCheckInput& input, double fraction);

// "1.5 GiB", "512 MiB", "100 B".
std::string memoryText(uint64_t bytes);

}  // namespace nshim::phynet

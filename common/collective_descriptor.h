// One descriptor per collective, as nccl-tests has one file per test: its names, whether it
// reduces or has a root, its buffers for n ranks, nccl-tests' size and bus-bandwidth factor, how
// NCCL's tuner knows it and which of the engine's algorithms runs it. `ncclshim perf`, the
// workload model (sizes, checks, the engine's choice, the traffic model), phynet, the tools and the
// MPI peer benchmark read these facts here instead of switching on an enum of their own.
// Header-only and constexpr, so that bench/mpi_peer_bench.cc reads the same table without linking
// the engine. The input formats' own spellings (SimAI, AICB, the trace's op codes) stay with their
// readers in workload/ and trace/.
#pragma once

#include <cstdint>
#include <string_view>

namespace nshim {

// What a workload's operation is: the collectives and the two halves of point-to-point.
enum class CollectiveKind : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kGather,
  kScatter,
  kSend,
  kRecv
};
constexpr int kNumCollectiveKinds = 10;

// A buffer of the call, in blocks of the NCCL count argument: one, or one per rank of the
// communicator.
enum class Blocks : uint8_t { kOne, kPerRank };

// nccl-tests' bus-bandwidth factor for n ranks: 2(n-1)/n, (n-1)/n or 1.
enum class BusFactor : uint8_t { kTwiceRingShare, kRingShare, kWhole };

// Which of the engine's algorithms runs it: allreduce's plan (ring, tree, recursive doubling or a
// copy: collectives/allreduce_algorithms.h), the ring pipeline (or NCCL's PAT where chosen on one
// rank per node: model/pat_schedule.h), a chain around the ring from or to the root, or
// point-to-point transfers (alltoall / gather / scatter as grouped p2p).
enum class EngineRoute : uint8_t { kAllReducePlan, kRing, kChain, kPointToPoint };

struct CollectiveDescriptor {
  CollectiveKind kind;
  const char* name;           // the workload's and the report's: "allreduce", ..., "send", "recv"
  const char* ncclTestsName;  // nccl-tests' and `ncclshim perf`'s test: "all_reduce", ...; p2p: "sendrecv"
  bool reduces;               // takes a reduction operator
  bool rooted;                // takes a root rank
  bool pointToPoint;          // takes a peer rank (send, recv)
  bool inPlace;               // nccl-tests runs it in place as well
  Blocks sendBlocks;          // send buffer; point-to-point is sized as nccl-tests' sendrecv:
  Blocks recvBlocks;          // one block each way
  BusFactor busFactor;
  int ncclFunc;  // NCCL's ncclFunc_t (Broadcast 0 ... AllReduce 4) that its tuner prices; -1: none
  EngineRoute route;
  const char* routeName;  // how the report names the route ("ring", "chain", "p2p"); allreduce: its plan's;
                          // a ring collective run as PAT: "pat"
};

inline constexpr CollectiveDescriptor kCollectiveDescriptors[kNumCollectiveKinds] = {
    {CollectiveKind::kAllReduce, "allreduce", "all_reduce", true, false, false, true, Blocks::kOne, Blocks::kOne,
     BusFactor::kTwiceRingShare, 4, EngineRoute::kAllReducePlan, nullptr},
    {CollectiveKind::kAllGather, "allgather", "all_gather", false, false, false, true, Blocks::kOne, Blocks::kPerRank,
     BusFactor::kRingShare, 2, EngineRoute::kRing, "ring"},
    {CollectiveKind::kReduceScatter, "reducescatter", "reduce_scatter", true, false, false, true, Blocks::kPerRank,
     Blocks::kOne, BusFactor::kRingShare, 3, EngineRoute::kRing, "ring"},
    {CollectiveKind::kBroadcast, "broadcast", "broadcast", false, true, false, true, Blocks::kOne, Blocks::kOne,
     BusFactor::kWhole, 0, EngineRoute::kChain, "chain"},
    {CollectiveKind::kReduce, "reduce", "reduce", true, true, false, true, Blocks::kOne, Blocks::kOne,
     BusFactor::kWhole, 1, EngineRoute::kChain, "chain"},
    {CollectiveKind::kAllToAll, "alltoall", "alltoall", false, false, false, false, Blocks::kPerRank, Blocks::kPerRank,
     BusFactor::kRingShare, -1, EngineRoute::kPointToPoint, "p2p"},
    {CollectiveKind::kGather, "gather", "gather", false, true, false, false, Blocks::kOne, Blocks::kPerRank,
     BusFactor::kRingShare, -1, EngineRoute::kPointToPoint, "p2p"},
    {CollectiveKind::kScatter, "scatter", "scatter", false, true, false, false, Blocks::kPerRank, Blocks::kOne,
     BusFactor::kRingShare, -1, EngineRoute::kPointToPoint, "p2p"},
    {CollectiveKind::kSend, "send", "sendrecv", false, false, true, false, Blocks::kOne, Blocks::kOne,
     BusFactor::kWhole, -1, EngineRoute::kPointToPoint, "p2p"},
    {CollectiveKind::kRecv, "recv", "sendrecv", false, false, true, false, Blocks::kOne, Blocks::kOne,
     BusFactor::kWhole, -1, EngineRoute::kPointToPoint, "p2p"},
};

constexpr const CollectiveDescriptor& describe(CollectiveKind kind) {
  return kCollectiveDescriptors[static_cast<int>(kind)];
}

// The first descriptor with this nccl-tests name (kSend for "sendrecv"); nullptr when none has it.
constexpr const CollectiveDescriptor* findByNcclTestsName(std::string_view name) {
  for (const CollectiveDescriptor& d : kCollectiveDescriptors) {
    if (name == d.ncclTestsName) return &d;
  }
  return nullptr;
}

constexpr uint64_t blockCount(Blocks blocks, int nranks) {
  return blocks == Blocks::kPerRank ? static_cast<uint64_t>(nranks > 0 ? nranks : 0) : 1;
}

// nccl-tests' "size" in blocks of the count argument: the whole buffer, all ranks' blocks where
// either side holds one per rank.
constexpr uint64_t sizeBlocks(const CollectiveDescriptor& d, int nranks) {
  return d.sendBlocks == Blocks::kPerRank || d.recvBlocks == Blocks::kPerRank ? blockCount(Blocks::kPerRank, nranks)
                                                                              : 1;
}

// busbw = algbw * factor. One rank moves nothing over a bus, except for the kinds whose factor is 1.
constexpr double busBandwidthFactor(const CollectiveDescriptor& d, int nranks) {
  if (d.busFactor == BusFactor::kWhole) return 1.0;
  if (nranks <= 1) return 0.0;
  const double n = nranks;
  return (d.busFactor == BusFactor::kTwiceRingShare ? 2.0 : 1.0) * (n - 1) / n;
}

// nccl-tests' buffers for a whole buffer of `totalElems` elements (its getCollByteCount): the count
// argument of the call and the elements of this rank's send and receive buffers.
struct CollectiveShape {
  uint64_t count = 0;
  uint64_t sendElems = 0;
  uint64_t recvElems = 0;
};
constexpr CollectiveShape shapeOfTotal(const CollectiveDescriptor& d, uint64_t totalElems, int nranks) {
  CollectiveShape shape;
  const uint64_t blocks = sizeBlocks(d, nranks);
  shape.count = blocks > 0 ? totalElems / blocks : 0;
  shape.sendElems = shape.count * blockCount(d.sendBlocks, nranks);
  shape.recvElems = shape.count * blockCount(d.recvBlocks, nranks);
  return shape;
}

// The table is in the enum's order.
static_assert([] {
  for (int i = 0; i < kNumCollectiveKinds; ++i) {
    if (static_cast<int>(kCollectiveDescriptors[i].kind) != i) return false;
  }
  return true;
}());

}  // namespace nshim

// NCCL's choice of algorithm, protocol and channels for a collective that no trace recorded: the
// cost model of NCCL 2.28 (its tuning.cc, read, not copied), for the ring and the double binary
// tree with the LL, LL128 and Simple protocols, and PAT (allgather / reducescatter, Simple, one GPU
// per node). Each (algorithm, protocol) gets a latency and a bus
// bandwidth from the system's graphs (NCCL's ring and tree searches: channels, bandwidth per
// channel inside and between nodes, link types), an op of n bytes costs latency + n / bandwidth,
// and the cheapest wins; then the channels shrink while the op is too small to give each thread
// its share (NCCL's thread thresholds). The model reproduces NCCL's printed tuning tables and its
// choices for 4, 8 and 16 nodes of 1 GPU and 4 and 8 nodes of 2 (tests/data/nccl_tuning), PAT's
// included.
#pragma once

#include <cstddef>
#include <string>

#include "common/nccl_protocol.h"
#include "common/status.h"
#include "model/algorithm.h"

namespace nshim {

enum class TunedFunc { kBroadcast, kReduce, kAllGather, kReduceScatter, kAllReduce };

// One of NCCL's graphs (its `Pattern P, crossNic C, nChannels N, bw INTRA/INTER, type A/B` line).
struct TunerGraph {
  int channels = 1;
  double bwIntra = 1.2;      // GB/s per channel inside a node
  double bwInter = 1.2;      // GB/s per channel between nodes
  bool nvlinkIntra = true;   // type A is NVL (else PCI latencies)
  bool ll128Paths = false;   // type B allows LL128 (up to PXN on Hopper)
  int pattern = 4;           // 4 ring; tree: 1 balanced, 2 split, 3 tree (a 15% penalty)
  bool sameChannels = true;  // every channel takes the same path (broadcast's latency)
};

struct TunerSystem {
  int nranks = 1;
  int nnodes = 1;
  int collChannels = 2;  // NCCL's "N coll channels"
  TunerGraph ring;
  TunerGraph tree{1, 2.4, 1.2, true, false, 1, true};
  int computeCapability = 90;  // Hopper
  bool amdCpu = false;         // LL's bandwidth cap and the network post overhead

  // The system NCCL 2.28.9 described on the ground-truth machine (a node's GPUs over NVLink, one
  // 10 Gb/s socket NIC): 1 channel of 1.2 GB/s each way in both graphs, 2 collective channels.
  static TunerSystem forLayout(int nranks, int nnodes);
};

// NCCL's latency (us) and bus bandwidth (GB/s, 0: not available) of one choice, as its table prints.
struct TunerCost {
  double latencyUs = 0;
  double bandwidth = 0;
};
TunerCost ncclCost(TunedFunc func, Algorithm algorithm, Protocol protocol, const TunerSystem& system);

struct TunedChoice {
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  int channels = 1;
};
// The choice for an op of `bytes` (nccl-tests' size: the whole buffer of an allgather or
// reducescatter). `algorithm` / `protocol` other than kAuto restrict the choice as NCCL_ALGO /
// NCCL_PROTO do.
TunedChoice chooseLikeNccl(TunedFunc func, size_t bytes, const TunerSystem& system,
                           Algorithm algorithm = Algorithm::kAuto, Protocol protocol = Protocol::kAuto);

// Reads the system from rank 0's NCCL log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH): its first
// ring (Pattern 4) and tree (Pattern 1-3) graph lines, "N coll channels" and the CPU vendor; nranks
// and nnodes come from the replay. An error names the file and what is missing.
Result<TunerSystem> tunerSystemFromNcclLog(const std::string& path, int nranks, int nnodes);

}  // namespace nshim

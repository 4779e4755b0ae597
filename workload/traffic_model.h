// The numbers a report derives from an operation: nccl-tests' bus-bandwidth factor and the payload
// bytes the engine's algorithms put on the wire from one rank (collectives/*.cc; sizes as nccl-tests count them), so that replayed
// traffic can be checked against the transport's byte counters.
#pragma once

#include <cstdint>
#include <functional>

#include "model/collective_options.h"
#include "model/node_layout.h"
#include "workload/workload.h"

namespace nshim::workload {

// nccl-tests': allreduce 2(n-1)/n; allgather, reducescatter, alltoall, gather, scatter (n-1)/n;
// everything else 1 (common/collective_descriptor.h).
double busBandwidthFactor(OpKind kind, int nranks);

// Payload bytes rank `commRank` of an `nranks` communicator sends for `op` under the engine's
// algorithms: ring allreduce 2(n-1)/n·S (recursive doubling log2(n)·S below the small-message
// threshold on 2^k ranks; the tree: each channel's part to the parent and each child of its tree),
// allgather / reducescatter / alltoall (n-1) blocks, chain broadcast S on every rank but the last
// of the chain, chain reduce S on every rank but the root, gather one block from each non-root,
// scatter n-1 blocks from the root (with PXN a block through a relay also counts S to the relay,
// the relay's forward being counted with the sender), send S (0 to itself). Exact when the
// buffer divides evenly into the ring's chunks; the per-communicator totals are always exact.
uint64_t modelSentBytes(const WorkOp& op, int commRank, int nranks, const CollectiveOptions& options);

// The same bytes split by destination: calls `add(peerCommRank, bytes)` for each peer rank
// `commRank` sends to under the engine's algorithms (rings and chains send to their neighbour,
// recursive doubling to each partner, the tree to its links, alltoall/gather/scatter/send point to
// point). `nodes`: the communicator's node layout, for the tree (flat when null).
void forEachModelSend(const WorkOp& op, int commRank, int nranks, const CollectiveOptions& options,
                      const std::function<void(int peer, uint64_t bytes)>& add, const NodeLayout* nodes = nullptr);

}  // namespace nshim::workload

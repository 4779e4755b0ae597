// NCCL's PXN for alltoall (NCCL_PXN: point-to-point through the local rank on the destination's
// rail): a block for a rank on another node whose local index differs from the sender's goes first
// over the node's own path (shared memory, NVLink in NCCL) to the sender's node-mate with the
// destination's local index, which forwards it over its own NIC. Each NIC then carries only the
// traffic of its rail (local index j to local index j), as rail-optimised fabrics need. Blocks to
// node-mates, to the same rail, or with no node-mate on that rail go directly.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/communicator.h"
#include "common/status.h"

namespace nshim {

// Whether PXN is asked for (CollectiveOptions::pxn) and means anything: several nodes of which some
// hold several ranks.
bool pxnApplies(const CollectiveOptions& options, const NodeLayout& nodes);

// The rank that carries rank `from`'s block for rank `to` between nodes: `from` itself, or its
// node-mate with `to`'s local index (PXN). Equal to `to` when both are on one node.
int pxnRelayOf(const NodeLayout& nodes, int from, int to);

// Where `from` sends its block for `to`: `to` itself, or the relay.
int pxnFirstHopOf(const NodeLayout& nodes, int from, int to);

// Whether `from`'s block for `to` goes through a relay (another node, another rail, and a node-mate
// of `from` on `to`'s rail).
inline bool pxnRelayed(const NodeLayout& nodes, int from, int to) { return pxnFirstHopOf(nodes, from, to) != to; }

// The alltoall of `block` bytes per peer with PXN relays; `tag` names the operation.
Status pxnAllToAll(Communicator& comm, const char* send, char* recv, size_t block, uint64_t tag);

}  // namespace nshim

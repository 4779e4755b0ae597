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
#include "model/pxn_routes.h"

namespace nshim {

// The alltoall of `block` bytes per peer with PXN relays; `tag` names the operation.
Status pxnAllToAll(Communicator& comm, const char* send, char* recv, size_t block, uint64_t tag);

}  // namespace nshim

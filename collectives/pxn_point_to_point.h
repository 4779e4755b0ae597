// NCCL's PXN for a batch of sends and receives that every rank of the communicator runs together
// (gather, scatter; pxn_alltoall.h for the rule): a transfer to a rank of another node whose local
// index differs from the sender's goes over the node (shared memory) to the sender's node-mate on
// the destination's rail, which forwards it over its own NIC. A relay cannot know what its
// node-mates will send, so each rank first tells every node-mate, over the node, which transfers
// it relays. A trace's own send/recv batches involve only their ranks: a node-mate that is not in
// the batch would never hear it, so those go through the communicator's relay instead, a thread
// that forwards on its own as NCCL's proxy thread does (pxn_relay.h, pxn_relayed_point_to_point.h).
#pragma once

#include <span>

#include "collectives/collectives.h"

namespace nshim {

// The batch `ops` (as runPointToPoint) with PXN relays on the communicator's nodes; `tag` names the
// operation. Every rank of the communicator calls it for the batch (an empty `ops` included).
Status runPxnPointToPoint(Communicator& comm, std::span<const P2POp> ops, uint64_t tag);

}  // namespace nshim

// --pxn: connects a communicator's PXN relay (collectives/pxn_relay.h) for a trace's own
// send/recv: its own transport on a second unique id (shared memory to the node-mates with
// --intra-node shm, the network to the rail peers: same local index on the other nodes), handed to
// the relay's thread.
#pragma once

#include <memory>

#include "collectives/communicator.h"
#include "collectives/pxn_relay.h"
#include "common/status.h"
#include "model/node_layout.h"
#include "phynet/mpi_bootstrap.h"
#include "transport/bootstrap/unique_id.h"

namespace nshim::phynet {

// Whether the communicator of `nodes` gets a relay: --pxn and nodes of which some hold several ranks.
bool wantsPxnRelay(const TransportChoice& choice, const NodeLayout& nodes);

// Connects comm rank `commRank`'s relay transport (every member calls it with the same `id`).
Result<std::shared_ptr<PxnRelay>> connectPxnRelay(TransportKind kind, const UniqueId& id, int commRank,
                                                  const NodeLayout& nodes, const TransportChoice& choice);

}  // namespace nshim::phynet

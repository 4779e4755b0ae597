// A trace's own batch of sends and receives (only its ranks take part) with NCCL's PXN: the
// transfers that pxnRelayed() sends through a node-mate go through the communicator's relay
// (pxn_relay.h), which forwards on its own thread, the rest directly (runPointToPoint); both are
// waited for. Without a relay (no --pxn, or nodes of one rank) it is runPointToPoint.
#pragma once

#include <span>

#include "collectives/collectives.h"

namespace nshim {

Status runRelayedPointToPoint(Communicator& comm, std::span<const P2POp> ops);

}  // namespace nshim

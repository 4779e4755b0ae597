// Internal: batched point-to-point with a caller-chosen tag, used by runPointToPoint (fixed p2p tag)
// and by the collectives built from grouped send/recv (alltoall, gather, scatter), which use their
// collective sequence so a mismatch between ranks is caught.
#pragma once

#include <span>

#include "collectives/collectives.h"

namespace nshim {

Status runTaggedPointToPoint(Communicator& comm, std::span<const P2POp> ops, uint64_t tag);

}  // namespace nshim

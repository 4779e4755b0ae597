// Internal: batched point-to-point with a caller-chosen tag, used by runPointToPoint (fixed p2p tag)
// and by the collectives built from grouped send/recv (alltoall, gather, scatter), which use their
// collective sequence so a mismatch between ranks is caught; and the pieces it shares with the
// PXN variant (pxn_point_to_point.h).
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "collectives/collectives.h"

namespace nshim {

// Directly between the ranks (a trace's send/recv with PXN: pxn_relayed_point_to_point.h).
Status runTaggedPointToPoint(Communicator& comm, std::span<const P2POp> ops, uint64_t tag);

// The channels `op` moves on: the trace's record, else NCCL's rule (p2p_channels.h).
int p2pPartsOf(const Communicator& comm, const P2POp& op);

// Checks every op's peer and buffer, and that the sends to itself pair with the receives from
// itself (returned in order, for copyToSelf).
Status checkPointToPointOps(const Communicator& comm, std::span<const P2POp> ops, std::vector<const P2POp*>* selfSends,
                            std::vector<const P2POp*>* selfRecvs);

// Posts one transfer to or from `peer` cut into `parts` channel parts (part p on channel p) and
// those into slice-sized messages, as both ends cut it; each message takes nextRequest()'s request.
Status postTransferParts(Transport& transport, bool isSend, int peer, uint64_t tag, char* base, size_t bytes, int parts,
                         size_t slice, const std::function<Request*()>& nextRequest);

// The copies to itself, slice by slice with the transport's progress between slices.
Status copySelfTransfers(Transport& transport, std::span<const P2POp* const> sends, std::span<const P2POp* const> recvs,
                         size_t slice);

}  // namespace nshim

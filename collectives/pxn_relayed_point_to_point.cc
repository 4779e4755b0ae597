// Splits a batch between the PXN relay and the direct path (pxn_relayed_point_to_point.h).
#include "collectives/pxn_relayed_point_to_point.h"

#include <vector>

#include "collectives/pxn_alltoall.h"
#include "collectives/pxn_relay.h"

namespace nshim {

Status runRelayedPointToPoint(Communicator& comm, std::span<const P2POp> ops) {
  PxnRelay* relay = comm.relay();
  if (relay == nullptr || !pxnApplies(comm.options(), comm.nodes())) return runPointToPoint(comm, ops);
  const int self = comm.rank();
  const int n = comm.nranks();
  std::vector<P2POp> relayed, direct;
  for (const P2POp& op : ops) {
    const bool inRange = op.peer >= 0 && op.peer < n && op.peer != self && (op.buffer != nullptr || op.bytes == 0);
    const bool viaRelay = inRange && (op.kind == P2POp::Kind::kSend ? pxnRelayed(comm.nodes(), self, op.peer)
                                                                    : pxnRelayed(comm.nodes(), op.peer, self));
    (viaRelay ? relayed : direct).push_back(op);
  }
  if (relayed.empty()) return runPointToPoint(comm, ops);
  std::unique_ptr<PxnRelay::Batch> batch = relay->submit(relayed);
  if (!direct.empty()) {
    Status status = runPointToPoint(comm, direct);
    if (!status.ok()) {
      relay->abortAndWait(*batch, status.message());  // no job may touch the buffers after this returns
      return status;
    }
  }
  return relay->wait(*batch, comm.operationDeadline());
}

}  // namespace nshim

// Connection of a communicator's PXN relay transport (mpi_pxn_relay.h).
#include "phynet/mpi_pxn_relay.h"

#include <vector>

#include "collectives/pxn_alltoall.h"
#include "transport/layered/node_routed_transport.h"
#include "transport/shm/shm_transport.h"
#include "transport/transport_factory.h"

namespace nshim::phynet {

bool wantsPxnRelay(const TransportChoice& choice, const NodeLayout& nodes) {
  return pxnApplies(choice.collectives, nodes);
}

Result<std::shared_ptr<PxnRelay>> connectPxnRelay(TransportKind kind, const UniqueId& id, int commRank,
                                                  const NodeLayout& nodes, const TransportChoice& choice) {
  const int n = nodes.nranks();
  std::vector<bool> mates(n, false), rails(n, false);
  int mateCount = 0;
  for (int r = 0; r < n; ++r) {
    mates[r] = nodes.nodeOf(r) == nodes.nodeOf(commRank);
    rails[r] = !mates[r] && nodes.localIndexOf(r) == nodes.localIndexOf(commRank);
    if (mates[r] && r != commRank) ++mateCount;
  }
  const bool routed = choice.intraNodeShm && mateCount > 0;
  std::vector<bool> netPeers(n, false);
  for (int r = 0; r < n; ++r) netPeers[r] = r != commRank && (rails[r] || (!routed && mates[r]));
  Result<std::unique_ptr<Transport>> net =
      connectTransport(kind, id, commRank, n, choice.tcp, choice.ibverbs, std::move(netPeers));
  if (!net.ok()) return net.status();
  std::unique_ptr<Transport> transport = std::move(net).value();
  if (routed) {
    Result<std::unique_ptr<Transport>> shm = connectShmTransport(id, commRank, n, mates, choice.shm);
    if (!shm.ok()) return shm.status();
    transport = createNodeRoutedTransport(std::move(shm).value(), std::move(transport), mates);
  }
  return std::make_shared<PxnRelay>(std::move(transport), nodes);
}

}  // namespace nshim::phynet

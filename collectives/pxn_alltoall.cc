// Alltoall through PXN relays (pxn_alltoall.h). Three steps, so that no rank waits on a forward
// that waits on it: (1) every receive is posted, and every direct send and every block for a relay
// (its node-mate on the destination's rail); (2) once its node-mates' blocks for its rail have
// arrived, a relay forwards them; (3) everything completes. Between a pair of ranks messages match
// in posting order: a relay sends its own block before the forwards, those in node-mate order, and
// each receiver posts its receives in that same order.
#include "collectives/pxn_alltoall.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "collectives/abort_on_error.h"

namespace nshim {
Status pxnAllToAll(Communicator& comm, const char* send, char* recv, size_t block, uint64_t tag) {
  const NodeLayout& nodes = comm.nodes();
  const int me = comm.rank(), n = comm.nranks();
  const int myNode = nodes.nodeOf(me);
  const std::vector<int>& mates = nodes.ranksOf(myNode);
  Transport& transport = comm.transport();
  std::memcpy(recv + static_cast<size_t>(me) * block, send + static_cast<size_t>(me) * block, block);

  // Blocks this rank forwards: from each node-mate, for each rank of another node on this rank's rail.
  std::vector<int> railPeers;
  for (int d = 0; d < n; ++d) {
    if (nodes.nodeOf(d) != myNode && nodes.localIndexOf(d) == nodes.localIndexOf(me)) railPeers.push_back(d);
  }
  std::vector<int> senders;  // node-mates whose blocks for the rail come through this rank
  for (int q : mates) {
    if (q != me) senders.push_back(q);
  }
  std::vector<char> staging(senders.size() * railPeers.size() * block);
  auto staged = [&](size_t sender, size_t peer) { return staging.data() + (sender * railPeers.size() + peer) * block; };

  const size_t forwards = senders.size() * railPeers.size();
  const size_t most = 2 * static_cast<size_t>(n) + 2 * forwards;
  auto requests = std::make_unique<Request[]>(most);
  size_t used = 0;
  std::vector<Request*> all, gathered;
  AbortOnError guard(transport);
  auto post = [&](bool isSend, int peer, void* buf) -> Status {
    Request* req = &requests[used++];
    req->channel = 0;
    all.push_back(req);
    if (isSend) return transport.postSend(peer, tag, buf, block, req);
    return transport.postRecv(peer, tag, buf, block, req);
  };

  // (1) Receives, in the order each peer sends. From a node-mate q: its own block, and the blocks
  // it relays through this rank, in q's destination order. From a rank s of another node: directly,
  // or through the relay on s's node with this rank's local index (its own block first, then its
  // node-mates' in rank order).
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    if (nodes.nodeOf(q) == myNode) {
      const size_t sender = static_cast<size_t>(std::find(senders.begin(), senders.end(), q) - senders.begin());
      for (int p = 0; p < n; ++p) {
        if (p == me) {
          NS_RETURN_IF_ERROR(post(false, q, recv + static_cast<size_t>(q) * block));
        } else if (nodes.nodeOf(p) != myNode && pxnRelayOf(nodes, q, p) == me) {
          const size_t peer = static_cast<size_t>(std::find(railPeers.begin(), railPeers.end(), p) - railPeers.begin());
          NS_RETURN_IF_ERROR(post(false, q, staged(sender, peer)));
          gathered.push_back(all.back());
        }
      }
      continue;
    }
    // q on another node: its own block when it comes directly, then, as a relay, its node-mates'
    // blocks for this rank's rail in rank order.
    if (pxnRelayOf(nodes, q, me) == q) NS_RETURN_IF_ERROR(post(false, q, recv + static_cast<size_t>(q) * block));
    for (int s : nodes.ranksOf(nodes.nodeOf(q))) {
      if (s != q && pxnRelayOf(nodes, s, me) == q) {
        NS_RETURN_IF_ERROR(post(false, q, recv + static_cast<size_t>(s) * block));
      }
    }
  }
  // Sends: each block directly or to its relay, in destination order.
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    char* data = const_cast<char*>(send) + static_cast<size_t>(p) * block;
    NS_RETURN_IF_ERROR(post(true, pxnFirstHopOf(nodes, me, p), data));
  }
  // (2) The node-mates' blocks for this rank's rail, forwarded in node-mate order.
  NS_RETURN_IF_ERROR(transport.waitAll(gathered, comm.operationDeadline()));
  for (size_t sender = 0; sender < senders.size(); ++sender) {
    for (size_t peer = 0; peer < railPeers.size(); ++peer) {
      NS_RETURN_IF_ERROR(post(true, railPeers[peer], staged(sender, peer)));
    }
  }
  // (3)
  return guard.completed(transport.waitAll(all, comm.operationDeadline()));
}

}  // namespace nshim

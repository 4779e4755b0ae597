// Bootstrap of the replay's communicators: unique ids over MPI, connections over the transport.
#include "phynet/mpi_bootstrap.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "phynet/mpi_pxn_relay.h"
#include "transport/bootstrap/unique_id.h"
#include "transport/layered/node_routed_transport.h"
#include "transport/layered/protocol_framing_transport.h"
#include "workload/workload_transform.h"

namespace nshim::phynet {
namespace {

// What the root broadcasts: its outcome, then the id (and with --pxn the relay's: mpi_pxn_relay.h).
struct IdMessage {
  uint8_t ok = 0;
  UniqueId id{};
  UniqueId relayId{};
};

// Which of the communicator's ranks share this rank's node (itself included); all false but
// itself when the nodes are not known.
std::vector<bool> sameNodeOf(const CommGroup& comm, int self, const std::vector<int>& nodeOfRank) {
  const int known = static_cast<int>(nodeOfRank.size());
  std::vector<bool> sameNode(comm.members.size(), false);
  for (size_t r = 0; r < comm.members.size(); ++r) {
    const int g = comm.members[r];
    sameNode[r] = g == self || (g >= 0 && g < known && self < known && nodeOfRank[g] == nodeOfRank[self]);
  }
  return sameNode;
}

// --intra-node shm: the communicator's peers on this rank's node over shared memory, the others
// over `net` (node_routed_transport.h), which connected only those.
Result<std::unique_ptr<Transport>> routeByNode(const CommGroup& comm, int self, int commRank, const UniqueId& id,
                                               const TransportChoice& choice, std::vector<bool> sameNode,
                                               std::unique_ptr<Transport> net) {
  const int n = static_cast<int>(comm.members.size());
  Result<std::unique_ptr<Transport>> shm = connectShmTransport(id, commRank, n, sameNode, choice.shm);
  if (!shm.ok()) {
    return Status(shm.status().code(), fmt::format("communicator {}: rank {} (rank {} of {}) could not set up shared "
                                                   "memory with the ranks of its node: {}",
                                                   commName(comm), self, commRank, n, shm.status().message()));
  }
  return createNodeRoutedTransport(std::move(shm).value(), std::move(net), std::move(sameNode));
}

// The communicator's members' nodes (flat when the nodes are not known).
NodeLayout nodeLayoutOf(const CommGroup& comm, const std::vector<int>& nodeOfRank) {
  std::vector<int> keys;
  for (int g : comm.members) keys.push_back(g >= 0 && g < static_cast<int>(nodeOfRank.size()) ? nodeOfRank[g] : -1 - g);
  return NodeLayout::fromKeys(keys);
}

}  // namespace

BootstrapOutcome bootstrapCommunicators(const Workload& workload, const std::vector<uint64_t>& usedIds, MpiSession& mpi,
                                        const TransportChoice& choice) {
  BootstrapOutcome outcome;
  const int self = mpi.rank();
  Result<TransportKind> kind = transportKindFromName(choice.name);
  if (!kind.ok()) {  // the same answer on every rank: no agreement needed
    outcome.status = Status(Code::kInvalidUsage, fmt::format("--transport: {}", kind.status().message()));
    outcome.localFailure = self == 0;
    return outcome;
  }
  Status failure;
  for (uint64_t id : usedIds) {
    const CommGroup* comm = workload.findComm(id);
    if (!comm) continue;  // cannot happen: the ids come from this workload's communicators
    const int root = *std::min_element(comm->members.begin(), comm->members.end());
    const int commRank = commRankOf(*comm, self);
    const int n = static_cast<int>(comm->members.size());
    IdMessage message;
    const NodeLayout layout = nodeLayoutOf(*comm, choice.nodeOfRank);
    const bool relay = wantsPxnRelay(choice, layout);  // the same on every rank
    if (self == root && failure.ok()) {
      Result<UniqueId> id = createUniqueId(choice.interface);
      Result<UniqueId> relayId = relay ? createUniqueId(choice.interface) : id;
      if (id.ok() && !relayId.ok()) id = relayId.status();
      if (id.ok()) {
        message.ok = 1;
        message.id = id.value();
        message.relayId = relayId.value();
      } else {
        failure = Status(id.status().code(), fmt::format("communicator {}: cannot create its bootstrap id: {}",
                                                         commName(*comm), id.status().message()));
      }
    }
    mpi.broadcast(&message, sizeof(message), root, "bootstrap: unique id broadcast");
    if (commRank < 0 || !failure.ok()) continue;
    if (!message.ok) {
      failure = Status(Code::kRemoteError,
                       fmt::format("communicator {}: its bootstrap root (rank {}) failed", commName(*comm), root));
      continue;
    }
    // With --intra-node shm the network connects only the pairs on different nodes, as NCCL's net
    // transport does; the pairs of a node meet over shared memory.
    std::vector<bool> sameNode = sameNodeOf(*comm, self, choice.nodeOfRank);
    const int nodeMates = static_cast<int>(std::count(sameNode.begin(), sameNode.end(), true)) - 1;
    const bool routed = choice.intraNodeShm && nodeMates > 0;
    std::vector<bool> netPeers;
    if (routed) {
      for (bool local : sameNode) netPeers.push_back(!local);
    }
    const int64_t start = nowNs();
    Result<std::unique_ptr<Transport>> transport =
        connectTransport(kind.value(), message.id, commRank, n, choice.tcp, choice.ibverbs, std::move(netPeers));
    if (!transport.ok()) {
      failure = Status(transport.status().code(),
                       fmt::format("communicator {}: rank {} (rank {} of {}) could not connect: {}", commName(*comm),
                                   self, commRank, n, transport.status().message()));
      continue;
    }
    if (choice.verbose) {
      const std::string shmPeers = routed ? fmt::format(" ({} of its node over shared memory)", nodeMates) : "";
      std::fprintf(stderr,
                   "phynet: rank %d: communicator %s: rank %d of %d connected over %s to %d peers in %.1f ms%s\n", self,
                   commName(*comm).c_str(), commRank, n, transportKindName(kind.value()),
                   routed ? n - 1 - nodeMates : n - 1, (nowNs() - start) * 1e-6, shmPeers.c_str());
    }
    std::unique_ptr<Transport> connected = std::move(transport).value();
    if (routed) {
      Result<std::unique_ptr<Transport>> byNode =
          routeByNode(*comm, self, commRank, message.id, choice, std::move(sameNode), std::move(connected));
      if (!byNode.ok()) {
        failure = byNode.status();
        continue;
      }
      connected = std::move(byNode).value();
    }
    // Each collective moves in NCCL's protocol (its lines on the wire: op_runner.h protocolOf).
    connected = createProtocolFramingTransport(std::move(connected));
    auto communicator = std::make_unique<Communicator>(std::move(connected), choice.collectives);
    communicator->setNodes(layout);
    if (relay) {
      Result<std::shared_ptr<PxnRelay>> pxn = connectPxnRelay(kind.value(), message.relayId, commRank, layout, choice);
      if (!pxn.ok()) {
        failure = Status(pxn.status().code(), fmt::format("communicator {}: rank {} (rank {} of {}) could not connect "
                                                          "its PXN relay: {}",
                                                          commName(*comm), self, commRank, n, pxn.status().message()));
        continue;
      }
      communicator->setRelay(std::move(pxn).value());
    }
    outcome.comms[comm->id] = std::move(communicator);
  }
  const int first = mpi.firstFailing(!failure.ok(), "bootstrap: outcome");
  if (first >= 0) {
    outcome.localFailure = first == self;
    outcome.status =
        first == self ? failure : Status(Code::kRemoteError, fmt::format("bootstrap failed on rank {}", first));
    outcome.comms.clear();
  }
  return outcome;
}

}  // namespace nshim::phynet

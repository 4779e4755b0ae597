// Bootstrap of the replay's communicators: unique ids over MPI, connections over the transport.
#include "phynet/mpi_bootstrap.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "phynet/workload_transform.h"
#include "transport/node_routed_transport.h"
#include "transport/protocol_framing_transport.h"
#include "transport/unique_id.h"

namespace nshim::phynet {
namespace {

// What the root broadcasts: its outcome, then the id.
struct IdMessage {
  uint8_t ok = 0;
  UniqueId id{};
};

// --intra-node shm: the communicator's peers on this rank's node over shared memory, the others
// over `net` (node_routed_transport.h); `net` alone when no peer shares the node.
Result<std::unique_ptr<Transport>> routeByNode(const CommGroup& comm, int self, int commRank, const UniqueId& id,
                                               const TransportChoice& choice, std::unique_ptr<Transport> net) {
  const int n = static_cast<int>(comm.members.size());
  std::vector<bool> sameNode(static_cast<size_t>(n), false);
  bool anyPeer = false;
  for (int r = 0; r < n; ++r) {
    const int g = comm.members[r];
    sameNode[r] = g >= 0 && g < static_cast<int>(choice.nodeOfRank.size()) && self < static_cast<int>(choice.nodeOfRank.size()) &&
                  choice.nodeOfRank[g] == choice.nodeOfRank[self];
    anyPeer = anyPeer || (sameNode[r] && r != commRank);
  }
  if (!anyPeer) return net;
  Result<std::unique_ptr<Transport>> shm = connectShmTransport(id, commRank, n, sameNode, choice.shm);
  if (!shm.ok()) {
    return Status(shm.status().code(), fmt::format("communicator {}: rank {} (rank {} of {}) could not set up shared "
                                                   "memory with the ranks of its node: {}", commName(comm), self,
                                                   commRank, n, shm.status().message()));
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
    if (self == root && failure.ok()) {
      Result<UniqueId> id = createUniqueId(choice.interface);
      if (id.ok()) {
        message.ok = 1;
        message.id = id.value();
      } else {
        failure = Status(id.status().code(), fmt::format("communicator {}: cannot create its bootstrap id: {}",
                                                         commName(*comm), id.status().message()));
      }
    }
    mpi.broadcast(&message, sizeof(message), root, "bootstrap: unique id broadcast");
    if (commRank < 0 || !failure.ok()) continue;
    if (!message.ok) {
      failure = Status(Code::kRemoteError, fmt::format("communicator {}: its bootstrap root (rank {}) failed",
                                                       commName(*comm), root));
      continue;
    }
    const int64_t start = nowNs();
    Result<std::unique_ptr<Transport>> transport = connectTransport(kind.value(), message.id, commRank, n, choice.tcp, choice.ibverbs);
    if (!transport.ok()) {
      failure = Status(transport.status().code(),
                       fmt::format("communicator {}: rank {} (rank {} of {}) could not connect: {}", commName(*comm),
                                   self, commRank, n, transport.status().message()));
      continue;
    }
    if (choice.verbose) {
      std::fprintf(stderr, "phynet: rank %d: communicator %s: rank %d of %d connected over %s in %.1f ms\n", self,
                   commName(*comm).c_str(), commRank, n, transportKindName(kind.value()), (nowNs() - start) * 1e-6);
    }
    std::unique_ptr<Transport> connected = std::move(transport).value();
    if (choice.intraNodeShm) {
      Result<std::unique_ptr<Transport>> routed = routeByNode(*comm, self, commRank, message.id, choice, std::move(connected));
      if (!routed.ok()) {
        failure = routed.status();
        continue;
      }
      connected = std::move(routed).value();
    }
    // Each collective moves in NCCL's protocol (its lines on the wire: op_runner.h protocolOf).
    connected = createProtocolFramingTransport(std::move(connected));
    auto communicator = std::make_unique<Communicator>(std::move(connected), choice.collectives);
    communicator->setNodes(nodeLayoutOf(*comm, choice.nodeOfRank));
    outcome.comms[comm->id] = std::move(communicator);
  }
  const int first = mpi.firstFailing(!failure.ok(), "bootstrap: outcome");
  if (first >= 0) {
    outcome.localFailure = first == self;
    outcome.status = first == self ? failure
                                   : Status(Code::kRemoteError, fmt::format("bootstrap failed on rank {}", first));
    outcome.comms.clear();
  }
  return outcome;
}

}  // namespace nshim::phynet

// Engine communicator creation over TCP, ibverbs or shared memory, and the in-process transports.
// A communicator over the network learns which of its ranks share a host (each rank's host
// identity, exchanged over the new connections), so that its rings and trees are NCCL's node-major
// ones and NCCL's tuner sees NCCL's nodes (call_choice.h), and when it spans several hosts the
// ranks of one host meet over shared memory: their traffic stays off the NICs, as NCCL keeps it on
// NVLink (NCCLSHIM_INTRA_NODE: auto, shm or net; on one host auto keeps the network, which is then
// what is being measured). The network connections between ranks of one host are made all the same
// (the host identities are only known once connected) and then carry nothing.
#include "libshim/comm_factory.h"

#include <memory>
#include <string>

#include "collectives/op_tags.h"
#include "common/fnv1a.h"
#include "common/host_identity.h"
#include "common/log.h"
#include "common/settings.h"
#include "libshim/errors.h"
#include "transport/layered/node_routed_transport.h"
#include "transport/layered/protocol_framing_transport.h"
#include "transport/shm/shm_transport.h"
#include "transport/transport_factory.h"

namespace nshim {
namespace {

// Every rank's host identity (hashed), gathered over `transport`.
Result<std::vector<uint64_t>> exchangeHostKeys(Transport& transport, int rank, int nranks, double timeoutSeconds) {
  const std::string identity = hostIdentity();
  std::vector<uint64_t> keys(static_cast<size_t>(nranks), 0);
  keys[rank] = fnv1a64(identity.data(), identity.size());
  auto requests = std::make_unique<Request[]>(2 * static_cast<size_t>(nranks));
  std::vector<Request*> pending;
  const uint64_t tag = makeTag(0, OpCode::kHostExchange, 0);
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    NS_RETURN_IF_ERROR(transport.postRecv(peer, tag, &keys[peer], sizeof(uint64_t), &requests[2 * peer]));
    NS_RETURN_IF_ERROR(transport.postSend(peer, tag, &keys[rank], sizeof(uint64_t), &requests[2 * peer + 1]));
    pending.push_back(&requests[2 * peer]);
    pending.push_back(&requests[2 * peer + 1]);
  }
  Status waited = transport.waitAll(pending, Deadline::after(timeoutSeconds));
  if (!waited.ok()) {
    transport.abort("the host identities could not be exchanged");
    return withContext(waited, "exchanging host identities");
  }
  return keys;
}

// The nodes of `keys`: ranks of one host identity form a node, numbered by first appearance.
NodeLayout layoutOfHosts(const std::vector<uint64_t>& keys) {
  std::vector<int> nodeOfRank;
  std::vector<uint64_t> seen;
  for (uint64_t key : keys) {
    size_t index = 0;
    while (index < seen.size() && seen[index] != key) ++index;
    if (index == seen.size()) seen.push_back(key);
    nodeOfRank.push_back(static_cast<int>(index));
  }
  return NodeLayout::fromKeys(nodeOfRank);
}

}  // namespace

Result<std::unique_ptr<Communicator>> connectCommunicator(const UniqueId& id, int rank, int nranks) {
  NS_ASSIGN_OR_RETURN(TransportKind kind, transportKindFromEnvironment());
  NS_ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, connectTransport(kind, id, rank, nranks));
  const CollectiveOptions options = CollectiveOptions::fromEnvironment();
  if (kind == TransportKind::kShm || nranks == 1) return makeCommunicator(std::move(transport));
  NS_ASSIGN_OR_RETURN(std::vector<uint64_t> keys, exchangeHostKeys(*transport, rank, nranks, options.timeoutSeconds));
  NodeLayout nodes = layoutOfHosts(keys);
  std::string intraNode = settingString(Setting::NCCLSHIM_INTRA_NODE);  // auto, shm or net
  if (intraNode == "auto") intraNode = nodes.nodes() > 1 ? "shm" : "net";
  const int mine = nodes.nodeOf(rank);
  if (intraNode == "shm" && nodes.ranksOf(mine).size() > 1) {
    std::vector<bool> sameNode(static_cast<size_t>(nranks), false);
    for (int r : nodes.ranksOf(mine)) sameNode[r] = true;
    Result<std::unique_ptr<Transport>> shm =
        connectShmTransport(id, rank, nranks, sameNode, ShmOptions::fromEnvironment());
    if (!shm.ok()) {
      transport->abort("shared memory between the ranks of one host could not be set up");
      return withContext(shm.status(), fmt::format("rank {} of {}: shared memory with the {} ranks of its host", rank,
                                                   nranks, nodes.ranksOf(mine).size()));
    }
    transport = createNodeRoutedTransport(std::move(shm).value(), std::move(transport), std::move(sameNode));
  }
  NS_INFO("rank {} of {}: {} node(s), {} rank(s) on this one{}", rank, nranks, nodes.nodes(),
          nodes.ranksOf(mine).size(),
          nodes.ranksOf(mine).size() > 1 ? (intraNode == "shm" ? ", met over shared memory" : ", met over the network")
                                         : "");
  // Across hosts each collective moves in the protocol NCCL would use for it (call_choice.h).
  if (nodes.nodes() > 1) transport = createProtocolFramingTransport(std::move(transport));
  auto communicator = std::make_unique<Communicator>(std::move(transport), options);
  communicator->setNodes(std::move(nodes));
  return communicator;
}

std::unique_ptr<Communicator> makeCommunicator(std::unique_ptr<Transport> transport) {
  return std::make_unique<Communicator>(std::move(transport), CollectiveOptions::fromEnvironment());
}

}  // namespace nshim

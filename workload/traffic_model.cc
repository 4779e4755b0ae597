// Bus-bandwidth factors and the per-rank wire-byte model of the engine's algorithms.
#include "workload/traffic_model.h"

#include "model/call_decision.h"
#include "model/double_binary_tree.h"
#include "model/part_range.h"
#include "model/pat_schedule.h"
#include "model/pxn_routes.h"

namespace nshim::workload {

double busBandwidthFactor(OpKind kind, int nranks) { return ::nshim::busBandwidthFactor(describe(kind), nranks); }

namespace {

// The tree allreduce: each channel's part of the buffer once to the parent and once to each child
// of the channel's tree (tree_allreduce.cc).
void addTreeSends(const WorkOp& op, int commRank, const NodeLayout& nodes, int channels,
                  const std::function<void(int peer, uint64_t bytes)>& add) {
  uint64_t treeBytes[2] = {0, 0};
  for (int c = 0; c < channels; ++c)
    treeBytes[c % 2] += partRange(op.count, channels, c).size() * dataTypeSize(op.type);
  for (int t = 0; t < 2; ++t) {
    if (treeBytes[t] == 0) continue;
    const TreeLinks links = doubleBinaryTreeLinks(nodes, commRank, t);
    if (links.up >= 0) add(links.up, treeBytes[t]);
    for (int d : links.down) add(d, treeBytes[t]);
  }
}

// Alltoall with PXN relays (pxn_alltoall.h): each block to its first hop, and as a relay the
// node-mates' blocks for this rank's rail.
void addPxnSends(const NodeLayout& nodes, int commRank, uint64_t unit, const std::function<void(int, uint64_t)>& add) {
  for (int peer = 0; peer < nodes.nranks(); ++peer) {
    if (peer != commRank) add(pxnFirstHopOf(nodes, commRank, peer), unit);
  }
  for (int d = 0; d < nodes.nranks(); ++d) {
    if (nodes.nodeOf(d) == nodes.nodeOf(commRank)) continue;
    for (int s : nodes.ranksOf(nodes.nodeOf(commRank))) {
      if (s != commRank && pxnRelayOf(nodes, s, d) == commRank) add(d, unit);
    }
  }
}

// A block of a gather or scatter to `peer`. With PXN through a relay: to the relay over the node,
// and the relay's forward over its NIC counted with this rank, since a rank's model knows only its
// own operations (the per-node and per-host totals are then exact; the relay's own row lacks what
// it forwards, and the small lists announcing relayed transfers are not counted).
void addCollectiveBlock(const NodeLayout* nodes, const CollectiveOptions& options, int commRank, int peer,
                        uint64_t bytes, const std::function<void(int, uint64_t)>& add) {
  if (peer == commRank) return;
  if (nodes != nullptr && pxnApplies(options, *nodes) && pxnRelayed(*nodes, commRank, peer)) {
    add(pxnFirstHopOf(*nodes, commRank, peer), bytes);
  }
  add(peer, bytes);
}

}  // namespace

void forEachModelSend(const WorkOp& op, int commRank, int nranks, const CollectiveOptions& options,
                      const std::function<void(int peer, uint64_t bytes)>& addPayload, const NodeLayout* nodes) {
  const uint64_t n = static_cast<uint64_t>(nranks);
  const uint64_t unit = op.count * dataTypeSize(op.type);  // the count argument in bytes
  if (op.count == 0 || nranks < 1) return;
  // LL and LL128 put their lines on the wire (common/nccl_protocol.h).
  const int nnodes = nodes ? nodes->nodes() : nranks;
  const Protocol protocol = choiceOf(callRecordOf(op), options, nranks, nnodes).protocol;
  auto add = [&](int peer, uint64_t bytes) { addPayload(peer, protocolWireBytes(protocol, bytes)); };
  // NCCL's node-major ring (NodeLayout::ringNext): rank order when ranks are consecutive per node,
  // and when there is no layout (flat, worked out here: building a flat layout per op was most of
  // the time `ncclshim summary` took).
  auto ring = [&](int offset) {
    if (nodes) return offset > 0 ? nodes->ringNext(commRank) : nodes->ringPrev(commRank);
    return offset > 0 ? (commRank + 1) % nranks : (commRank + nranks - 1) % nranks;
  };
  auto ringPosition = [&](int rank) { return nodes ? nodes->ringPosition(rank) : rank; };
  switch (op.kind) {
    case OpKind::kAllReduce: {
      const AllReducePlan plan = allReducePlanOf(callRecordOf(op), options, nranks, nnodes);
      switch (plan.route) {
        case AllReduceRoute::kCopy: return;
        case AllReduceRoute::kRecursiveDoubling:
          for (uint64_t d = 1; d < n; d <<= 1) add(commRank ^ static_cast<int>(d), unit);
          return;
        case AllReduceRoute::kTree:
          addTreeSends(op, commRank, nodes ? *nodes : NodeLayout::flat(nranks), plan.channels, add);
          return;
        case AllReduceRoute::kRing: break;
      }
      add(ring(1), 2 * (n - 1) * unit / n);
      return;
    }
    case OpKind::kAllGather:
    case OpKind::kReduceScatter: {
      const CallChoice choice = choiceOf(callRecordOf(op), options, nranks, nnodes);
      if (runsPatFor(choice, nranks, nnodes)) {
        forEachPatSend(op.kind == OpKind::kAllGather, commRank, nranks, op.count, dataTypeSize(op.type),
                       std::max(1, choice.channels > 0 ? choice.channels : options.channels),
                       [&](int peer, size_t bytes) { add(peer, bytes); });
        return;
      }
      if (n > 1) add(ring(1), (n - 1) * unit);
      return;
    }
    case OpKind::kAllToAll:
      if (nodes != nullptr && pxnApplies(options, *nodes)) {
        addPxnSends(*nodes, commRank, unit, add);
        return;
      }
      for (int peer = 0; peer < nranks; ++peer) {
        if (peer != commRank) add(peer, unit);
      }
      return;
    case OpKind::kBroadcast: {
      int position = ((ringPosition(commRank) - ringPosition(op.root)) % nranks + nranks) % nranks;
      if (position < nranks - 1) add(ring(1), unit);
      return;
    }
    case OpKind::kReduce:
      if (commRank != op.root) add(ring(-1), unit);
      return;
    case OpKind::kGather: addCollectiveBlock(nodes, options, commRank, op.root, unit, add); return;
    case OpKind::kScatter:
      if (commRank != op.root) return;
      for (int peer = 0; peer < nranks; ++peer) addCollectiveBlock(nodes, options, commRank, peer, unit, add);
      return;
    case OpKind::kSend:
      // With PXN a trace's send to another node's rank on another rail goes through the relay
      // (collectives/pxn_relay.h): to the relay and the relay's forward, both in this rank's row
      // (the relay's row lacks the forward: its model does not know its node-mates' sends).
      addCollectiveBlock(nodes, options, commRank, op.peer, unit, add);
      return;
    case OpKind::kRecv: return;
  }
}

uint64_t modelSentBytes(const WorkOp& op, int commRank, int nranks, const CollectiveOptions& options) {
  uint64_t total = 0;
  forEachModelSend(op, commRank, nranks, options, [&](int, uint64_t bytes) { total += bytes; });
  return total;
}

}  // namespace nshim::workload

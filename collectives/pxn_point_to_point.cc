// Grouped send/recv through PXN relays (pxn_point_to_point.h). Three steps, so that no rank waits
// on a forward that waits on it:
//   (1) post the direct transfers; the receives of relayed transfers from their relays; to every
//       node-mate, the number and list {destination, bytes, parts} of the transfers it relays for
//       this rank, then their data; and the receives of the node-mates' counts;
//   (2) as a relay: read the node-mates' lists, receive their data, forward each transfer;
//   (3) wait for everything.
// Between two ranks messages match in posting order, so both ends post in the same order: on a
// node-mate pair, the direct transfers, then the count, the list and the relayed data; from a relay
// to a receiver, the relay's own transfers, then the forwards by source rank, each source's in its
// op order (the receiver's receives from that source are in the same order, NCCL's pairing rule).
#include "collectives/pxn_point_to_point.h"

#include <algorithm>
#include <deque>
#include <vector>

#include "collectives/abort_on_error.h"
#include "collectives/point_to_point.h"
#include "collectives/pxn_alltoall.h"

namespace nshim {
namespace {

// One relayed transfer as a node-mate announces it: {destination, bytes, parts}.
constexpr size_t kEntryWords = 3;

}  // namespace

Status runPxnPointToPoint(Communicator& comm, std::span<const P2POp> ops, uint64_t tag) {
  std::vector<const P2POp*> selfSends, selfRecvs;
  NS_RETURN_IF_ERROR(checkPointToPointOps(comm, ops, &selfSends, &selfRecvs));
  const NodeLayout& nodes = comm.nodes();
  const int me = comm.rank();
  const size_t slice = comm.options().sliceBytes;
  std::vector<int> mates;
  for (int q : nodes.ranksOf(nodes.nodeOf(me))) {
    if (q != me) mates.push_back(q);
  }
  Transport& transport = comm.transport();
  // Everything a posted request points into is declared before the guard, which aborts the
  // transport on an early return before any of it is freed.
  std::deque<Request> requests;  // stable addresses while more are added
  std::vector<Request*> all;
  std::vector<uint64_t> myCounts(mates.size(), 0), theirCounts(mates.size(), 0);
  std::vector<std::vector<uint64_t>> myLists(mates.size()), theirLists(mates.size());
  std::deque<std::vector<char>> staging;
  auto nextRequest = [&] {
    requests.emplace_back();
    all.push_back(&requests.back());
    return all.back();
  };
  auto post = [&](bool isSend, int peer, void* buffer, size_t bytes, int parts) {
    return postTransferParts(transport, isSend, peer, tag, static_cast<char*>(buffer), bytes, parts, slice,
                             nextRequest);
  };
  AbortOnError guard(transport);

  // (1) Direct transfers, in op order.
  for (const P2POp& op : ops) {
    const bool isSend = op.kind == P2POp::Kind::kSend;
    if (op.peer == me || pxnRelayed(nodes, isSend ? me : op.peer, isSend ? op.peer : me)) continue;
    NS_RETURN_IF_ERROR(post(isSend, op.peer, op.buffer, op.bytes, p2pPartsOf(comm, op)));
  }
  // Relayed receives: per relay, by source rank, each source's in op order.
  for (int source = 0; source < comm.nranks(); ++source) {
    for (const P2POp& op : ops) {
      if (op.kind == P2POp::Kind::kRecv && op.peer == source && pxnRelayed(nodes, source, me)) {
        NS_RETURN_IF_ERROR(post(false, pxnRelayOf(nodes, source, me), op.buffer, op.bytes, p2pPartsOf(comm, op)));
      }
    }
  }
  // To each node-mate: how many transfers it relays for us, the list, then their data.
  std::vector<std::vector<const P2POp*>> myRelayed(mates.size());
  for (const P2POp& op : ops) {
    if (op.kind != P2POp::Kind::kSend || op.peer == me || !pxnRelayed(nodes, me, op.peer)) continue;
    const size_t m =
        static_cast<size_t>(std::find(mates.begin(), mates.end(), pxnRelayOf(nodes, me, op.peer)) - mates.begin());
    myLists[m].insert(myLists[m].end(),
                      {static_cast<uint64_t>(op.peer), op.bytes, static_cast<uint64_t>(p2pPartsOf(comm, op))});
    myRelayed[m].push_back(&op);
    ++myCounts[m];
  }
  std::vector<Request*> counts;
  for (size_t m = 0; m < mates.size(); ++m) {
    NS_RETURN_IF_ERROR(post(true, mates[m], &myCounts[m], sizeof(uint64_t), 1));
    if (myCounts[m] > 0) {
      NS_RETURN_IF_ERROR(post(true, mates[m], myLists[m].data(), myLists[m].size() * sizeof(uint64_t), 1));
    }
    for (const P2POp* op : myRelayed[m]) {
      NS_RETURN_IF_ERROR(post(true, mates[m], op->buffer, op->bytes, p2pPartsOf(comm, *op)));
    }
    NS_RETURN_IF_ERROR(post(false, mates[m], &theirCounts[m], sizeof(uint64_t), 1));
    counts.push_back(all.back());
  }
  NS_RETURN_IF_ERROR(copySelfTransfers(transport, selfSends, selfRecvs, slice));

  // (2) What the node-mates relay through this rank: their lists, their data, then the forwards.
  NS_RETURN_IF_ERROR(transport.waitAll(counts, comm.operationDeadline()));
  std::vector<Request*> waited;
  for (size_t m = 0; m < mates.size(); ++m) {
    if (theirCounts[m] == 0) continue;
    if (theirCounts[m] > (uint64_t{1} << 24)) {
      return guard.completed(
          NS_ERROR(Code::kRemoteError, "rank {} announced {} transfers to relay: corrupt", mates[m], theirCounts[m]));
    }
    theirLists[m].resize(theirCounts[m] * kEntryWords);
    NS_RETURN_IF_ERROR(post(false, mates[m], theirLists[m].data(), theirLists[m].size() * sizeof(uint64_t), 1));
    waited.push_back(all.back());
  }
  NS_RETURN_IF_ERROR(transport.waitAll(waited, comm.operationDeadline()));
  waited.clear();
  for (size_t m = 0; m < mates.size(); ++m) {
    for (size_t e = 0; e < theirCounts[m]; ++e) {
      const uint64_t* entry = &theirLists[m][e * kEntryWords];
      const uint64_t to = entry[0], parts = entry[2];
      if (to >= static_cast<uint64_t>(comm.nranks()) || parts < 1 || parts > 64 ||
          pxnRelayOf(nodes, mates[m], static_cast<int>(to)) != me) {
        return guard.completed(NS_ERROR(Code::kRemoteError,
                                        "rank {} asked rank {} to relay to rank {} in {} parts: "
                                        "not its rail",
                                        mates[m], me, to, parts));
      }
      staging.emplace_back(entry[1]);
      const size_t before = all.size();
      NS_RETURN_IF_ERROR(post(false, mates[m], staging.back().data(), entry[1], static_cast<int>(parts)));
      waited.insert(waited.end(), all.begin() + static_cast<std::ptrdiff_t>(before), all.end());
    }
  }
  NS_RETURN_IF_ERROR(transport.waitAll(waited, comm.operationDeadline()));
  // Forwards by source (node-mate) rank, each source's in its order; staging follows that order.
  size_t next = 0;
  for (size_t m = 0; m < mates.size(); ++m) {
    for (size_t e = 0; e < theirCounts[m]; ++e, ++next) {
      const uint64_t* entry = &theirLists[m][e * kEntryWords];
      NS_RETURN_IF_ERROR(
          post(true, static_cast<int>(entry[0]), staging[next].data(), entry[1], static_cast<int>(entry[2])));
    }
  }
  // (3)
  return guard.completed(transport.waitAll(all, comm.operationDeadline()));
}

}  // namespace nshim

// Alltoall, gather and scatter as NCCL builds them: one grouped batch of sends and receives.
// Alltoall: each rank sends block p to rank p and receives block p from rank p (with PXN, blocks for
// other nodes through the node-mate on the destination's rail: pxn_alltoall.h). Gather: every rank
// sends its block to the root. Scatter: the root sends block p to rank p (both with PXN through
// relays as well: pxn_point_to_point.h).
#include <vector>

#include "collectives/collective_support.h"
#include "collectives/collectives.h"
#include "collectives/op_tags.h"
#include "collectives/point_to_point.h"
#include "collectives/pxn_alltoall.h"
#include "collectives/pxn_point_to_point.h"

namespace nshim {
namespace {

// A batch every rank of the communicator runs together: with PXN through relays.
Status runCollectiveBatch(Communicator& comm, std::span<const P2POp> ops, uint64_t tag) {
  return pxnApplies(comm.options(), comm.nodes()) ? runPxnPointToPoint(comm, ops, tag)
                                                  : runTaggedPointToPoint(comm, ops, tag);
}

}  // namespace

Status allToAll(Communicator& comm, const void* send, void* recv, size_t count, DataType type, int channels) {
  NS_RETURN_IF_ERROR(validateCollective(comm, "alltoall", send, recv, count, type, nullptr, -1, {true, true}));
  uint64_t seq = comm.nextCollectiveSeq();
  if (count == 0) return Status::Ok();
  if (send == recv && comm.nranks() > 1) {
    return NS_ERROR(Code::kInvalidArgument, "alltoall: in-place operation (sendbuff == recvbuff) is not supported");
  }
  const size_t block = count * dataTypeSize(type);
  if (pxnApplies(comm.options(), comm.nodes())) {
    return pxnAllToAll(comm, static_cast<const char*>(send), static_cast<char*>(recv), block,
                       makeTag(seq, OpCode::kAllToAll, 0));
  }
  std::vector<P2POp> ops;
  ops.reserve(2 * comm.nranks());
  for (int peer = 0; peer < comm.nranks(); ++peer) {
    ops.push_back({P2POp::Kind::kRecv, peer, static_cast<char*>(recv) + peer * block, block, channels});
    ops.push_back(
        {P2POp::Kind::kSend, peer, const_cast<char*>(static_cast<const char*>(send)) + peer * block, block, channels});
  }
  return runTaggedPointToPoint(comm, ops, makeTag(seq, OpCode::kAllToAll, 0));
}

Status gather(Communicator& comm, const void* send, void* recv, size_t count, DataType type, int root) {
  const bool isRoot = comm.rank() == root;
  NS_RETURN_IF_ERROR(validateCollective(comm, "gather", send, recv, count, type, nullptr, root, {true, isRoot}));
  uint64_t seq = comm.nextCollectiveSeq();
  if (count == 0) return Status::Ok();
  const size_t block = count * dataTypeSize(type);
  std::vector<P2POp> ops;
  if (isRoot) {
    for (int peer = 0; peer < comm.nranks(); ++peer) {
      ops.push_back({P2POp::Kind::kRecv, peer, static_cast<char*>(recv) + peer * block, block});
    }
  }
  ops.push_back({P2POp::Kind::kSend, root, const_cast<void*>(send), block});
  return runCollectiveBatch(comm, ops, makeTag(seq, OpCode::kGather, 0));
}

Status scatter(Communicator& comm, const void* send, void* recv, size_t count, DataType type, int root) {
  const bool isRoot = comm.rank() == root;
  NS_RETURN_IF_ERROR(validateCollective(comm, "scatter", send, recv, count, type, nullptr, root, {isRoot, true}));
  uint64_t seq = comm.nextCollectiveSeq();
  if (count == 0) return Status::Ok();
  const size_t block = count * dataTypeSize(type);
  std::vector<P2POp> ops;
  ops.push_back({P2POp::Kind::kRecv, root, recv, block});
  if (isRoot) {
    for (int peer = 0; peer < comm.nranks(); ++peer) {
      ops.push_back(
          {P2POp::Kind::kSend, peer, const_cast<char*>(static_cast<const char*>(send)) + peer * block, block});
    }
  }
  return runCollectiveBatch(comm, ops, makeTag(seq, OpCode::kScatter, 0));
}

}  // namespace nshim

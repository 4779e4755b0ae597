// Batched point-to-point: every operation of a batch is posted before any is waited for, so a
// batch containing matching sends and receives cannot deadlock. A transfer is cut into NCCL's
// parts, one per channel (p2p_channels.h), each on its own connection, and parts larger than a
// slice into slice-sized messages (both ends cut the same way). Sends to self are matched with
// receives from self by copying, overlapped with the network transfers.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "collectives/abort_on_error.h"
#include "collectives/collective_support.h"
#include "collectives/collectives.h"
#include "collectives/op_tags.h"
#include "collectives/point_to_point.h"
#include "collectives/ring_pipeline.h"
#include "model/p2p_channels.h"

namespace nshim {
namespace {

Status copyToSelf(Transport& transport, void* dst, const void* src, size_t bytes, size_t slice) {
  char* to = static_cast<char*>(dst);
  const char* from = static_cast<const char*>(src);
  if (bytes == 0 || to == from) return Status::Ok();
  if (to < from + bytes && from < to + bytes) {  // overlapping: one memmove
    std::memmove(to, from, bytes);
    return Status::Ok();
  }
  for (size_t offset = 0; offset < bytes; offset += slice) {
    std::memcpy(to + offset, from + offset, std::min(slice, bytes - offset));
    NS_RETURN_IF_ERROR(transport.progress());
  }
  return Status::Ok();
}

size_t messagesOf(size_t bytes, int parts, size_t slice) {
  size_t messages = 0;
  for (int p = 0; p < parts; ++p) {
    messages += std::max<size_t>(1, (partRange(bytes, parts, p).size() + slice - 1) / slice);
  }
  return messages;
}

}  // namespace

int p2pPartsOf(const Communicator& comm, const P2POp& op) {
  return op.channels > 0 ? op.channels : p2pChannelsFor(op.bytes, comm.nranks(), comm.nodes().nodes(), comm.options());
}

Status checkPointToPointOps(const Communicator& comm, std::span<const P2POp> ops, std::vector<const P2POp*>* selfSends,
                            std::vector<const P2POp*>* selfRecvs) {
  const int self = comm.rank();
  for (const P2POp& op : ops) {
    if (op.peer < 0 || op.peer >= comm.nranks()) {
      return NS_ERROR(Code::kInvalidArgument, "{} peer {} out of range [0, {})",
                      op.kind == P2POp::Kind::kSend ? "send" : "recv", op.peer, comm.nranks());
    }
    if (op.bytes > 0 && op.buffer == nullptr) {
      return NS_ERROR(Code::kInvalidArgument, "{} buffer is NULL", op.kind == P2POp::Kind::kSend ? "send" : "recv");
    }
    if (op.peer == self) (op.kind == P2POp::Kind::kSend ? selfSends : selfRecvs)->push_back(&op);
  }
  if (selfSends->size() != selfRecvs->size()) {
    return NS_ERROR(Code::kInvalidUsage, "rank {} has {} sends to itself but {} receives from itself in one group",
                    self, selfSends->size(), selfRecvs->size());
  }
  for (size_t i = 0; i < selfSends->size(); ++i) {
    if ((*selfSends)[i]->bytes != (*selfRecvs)[i]->bytes) {
      return NS_ERROR(Code::kInvalidArgument, "rank {} sends {} bytes to itself but receives {}", self,
                      (*selfSends)[i]->bytes, (*selfRecvs)[i]->bytes);
    }
  }
  return Status::Ok();
}

Status postTransferParts(Transport& transport, bool isSend, int peer, uint64_t tag, char* base, size_t bytes, int parts,
                         size_t slice, const std::function<Request*()>& nextRequest) {
  for (int p = 0; p < parts; ++p) {
    const Range range = partRange(bytes, parts, p);
    size_t offset = range.begin;
    do {
      const size_t length = std::min(slice, range.end - offset);
      Request* req = nextRequest();
      req->channel = p;
      NS_RETURN_IF_ERROR(isSend ? transport.postSend(peer, tag, base + offset, length, req)
                                : transport.postRecv(peer, tag, base + offset, length, req));
      offset += length;
    } while (offset < range.end);
  }
  return Status::Ok();
}

Status copySelfTransfers(Transport& transport, std::span<const P2POp* const> sends, std::span<const P2POp* const> recvs,
                         size_t slice) {
  for (size_t i = 0; i < sends.size(); ++i) {
    NS_RETURN_IF_ERROR(copyToSelf(transport, recvs[i]->buffer, sends[i]->buffer, sends[i]->bytes, slice));
  }
  return Status::Ok();
}

Status runTaggedPointToPoint(Communicator& comm, std::span<const P2POp> ops, uint64_t tag) {
  std::vector<const P2POp*> selfSends, selfRecvs;
  NS_RETURN_IF_ERROR(checkPointToPointOps(comm, ops, &selfSends, &selfRecvs));
  const size_t slice = comm.options().sliceBytes;
  size_t messages = 0;
  for (const P2POp& op : ops) {
    if (op.peer != comm.rank()) messages += messagesOf(op.bytes, p2pPartsOf(comm, op), slice);
  }
  Transport& transport = comm.transport();
  auto requests = std::make_unique<Request[]>(messages);
  std::vector<Request*> pending;
  pending.reserve(messages);
  auto nextRequest = [&] {
    pending.push_back(&requests[pending.size()]);
    return pending.back();
  };
  AbortOnError guard(transport);
  for (const P2POp& op : ops) {
    if (op.peer == comm.rank()) continue;
    NS_RETURN_IF_ERROR(postTransferParts(transport, op.kind == P2POp::Kind::kSend, op.peer, tag,
                                         static_cast<char*>(op.buffer), op.bytes, p2pPartsOf(comm, op), slice,
                                         nextRequest));
  }
  // The copies to self run while the network transfers are in flight.
  NS_RETURN_IF_ERROR(copySelfTransfers(transport, selfSends, selfRecvs, slice));
  return guard.completed(transport.waitAll(pending, comm.operationDeadline()));
}

Status runPointToPoint(Communicator& comm, std::span<const P2POp> ops) {
  return runTaggedPointToPoint(comm, ops, makeTag(0, OpCode::kPointToPoint, 0));
}

}  // namespace nshim

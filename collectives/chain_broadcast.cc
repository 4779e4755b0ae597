// Pipelined chain broadcast: ranks form a chain starting at the root (root, root+1, ...). The
// buffer is cut into chunks; each rank forwards chunk k to its successor as soon as it has arrived,
// keeping up to maxInflight chunks in flight. Wire bytes: every rank but the last sends the buffer.
// Out of place, the root sends from its input and copies each chunk to its output right after
// posting that chunk's send, so the copy overlaps the transfer (as NCCL's copy-and-send step does).
#include <algorithm>
#include <cstring>
#include <memory>

#include "collectives/abort_on_error.h"
#include "collectives/collective_support.h"
#include "collectives/collectives.h"
#include "collectives/op_tags.h"
#include "collectives/ring_pipeline.h"

namespace nshim {

Status broadcast(Communicator& comm, const void* send, void* recv, size_t count, DataType type, int root,
                 CallChoice choice) {
  const bool isRoot = comm.rank() == root;
  NS_RETURN_IF_ERROR(validateCollective(comm, "broadcast", send, recv, count, type, nullptr, root, {isRoot, true}));
  const CallProtocol callProtocol(comm, choice.protocol);  // the call's protocol, Simple again after
  uint64_t seq = comm.nextCollectiveSeq();
  if (count == 0) return Status::Ok();
  const int n = comm.nranks();
  if (n == 1) {
    if (isRoot) copyElements(recv, send, count, type);
    return Status::Ok();
  }

  Transport& transport = comm.transport();
  const NodeLayout& nodes = comm.nodes();  // the chain follows NCCL's node-major ring
  const int position = ringMod(nodes.ringPosition(comm.rank()) - nodes.ringPosition(root), n);
  const int prev = nodes.ringPrev(comm.rank());
  const int next = nodes.ringNext(comm.rank());
  const bool forwards = position < n - 1;
  const size_t bytes = count * dataTypeSize(type);
  const size_t chunk = std::max<size_t>(comm.options().chunkBytes, 1);
  const int chunks = static_cast<int>((bytes + chunk - 1) / chunk);
  const int window = std::max(1, std::min(comm.options().maxInflight, chunks));
  char* data = static_cast<char*>(recv);
  auto chunkSpan = [&](int k) {
    size_t begin = static_cast<size_t>(k) * chunk;
    return std::span<char>(data + begin, std::min(chunk, bytes - begin));
  };
  // What goes on the wire: the root's input (copied to its output chunk by chunk), else the output.
  const char* source = isRoot ? static_cast<const char*>(send) : data;
  auto sourceSpan = [&](int k) {
    std::span<char> target = chunkSpan(k);
    return std::span<const char>(source + (target.data() - data), target.size());
  };
  auto tagOf = [&](int k) { return makeTag(seq, OpCode::kBroadcast, static_cast<uint64_t>(k)); };
  auto recvs = std::make_unique<Request[]>(window);
  auto sends = std::make_unique<Request[]>(window);
  AbortOnError guard(transport);
  Deadline deadline = comm.operationDeadline();

  const int channels = std::max(1, channelsOf(comm, choice));  // chunk k is NCCL channel k % channels
  auto postRecv = [&](int k, Request* req) {
    req->channel = k % channels;
    return transport.postRecv(prev, tagOf(k), chunkSpan(k).data(), chunkSpan(k).size(), req);
  };
  if (!isRoot) {
    for (int k = 0; k < window && k < chunks; ++k) NS_RETURN_IF_ERROR(postRecv(k, &recvs[k]));
  }
  for (int k = 0; k < chunks; ++k) {
    Request& slot = sends[k % window];
    if (!isRoot) {
      NS_RETURN_IF_ERROR(waitOne(transport, &recvs[k % window], deadline));
      if (k + window < chunks) NS_RETURN_IF_ERROR(postRecv(k + window, &recvs[k % window]));
    }
    if (!forwards) continue;
    if (k >= window) NS_RETURN_IF_ERROR(waitOne(transport, &slot, deadline));
    slot.channel = k % channels;
    NS_RETURN_IF_ERROR(transport.postSend(next, tagOf(k), sourceSpan(k).data(), sourceSpan(k).size(), &slot));
    if (isRoot && source != data) std::memcpy(chunkSpan(k).data(), sourceSpan(k).data(), chunkSpan(k).size());
  }
  if (forwards) {
    for (int k = std::max(0, chunks - window); k < chunks; ++k) {
      NS_RETURN_IF_ERROR(waitOne(transport, &sends[k % window], deadline));
    }
  }
  return guard.completed();
}

}  // namespace nshim

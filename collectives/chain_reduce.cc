// Pipelined chain reduce: the mirror of the chain broadcast. The chain runs
// root+n-1 -> ... -> root+1 -> root: the far end sends its input chunk by chunk, each rank adds its input to what arrives and forwards the partial sum, and the root adds
// its own input into recvbuff. Wire bytes: every rank but the root sends the buffer once.
#include <algorithm>
#include <memory>
#include <vector>

#include "collectives/abort_on_error.h"
#include "collectives/collective_support.h"
#include "collectives/collectives.h"
#include "collectives/op_tags.h"
#include "collectives/reduce.h"
#include "collectives/ring_pipeline.h"

namespace nshim {

Status reduce(Communicator& comm, const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
              int root, CallChoice choice) {
  const bool isRoot = comm.rank() == root;
  NS_RETURN_IF_ERROR(validateCollective(comm, "reduce", send, recv, count, type, &op, root, {true, isRoot}));
  const CallProtocol callProtocol(comm, choice.protocol);  // the call's protocol, Simple again after
  uint64_t seq = comm.nextCollectiveSeq();
  if (count == 0) return Status::Ok();
  std::vector<char> scaled;
  const char* input = static_cast<const char*>(preScaledInput(send, count, type, op, &scaled));
  const int n = comm.nranks();
  if (n == 1) {
    copyElements(recv, input, count, type);
    finishAverage(recv, count, type, op, 1);
    return Status::Ok();
  }

  Transport& transport = comm.transport();
  const NodeLayout& nodes = comm.nodes();  // the chain follows NCCL's node-major ring
  const int position = ringMod(nodes.ringPosition(comm.rank()) - nodes.ringPosition(root), n);
  const int from = nodes.ringNext(comm.rank());  // position + 1
  const int to = nodes.ringPrev(comm.rank());    // position - 1
  const bool receives = position < n - 1;
  const size_t elemSize = dataTypeSize(type);
  // No chunk is larger than the buffer: the same chunks, and scratch that follows the bytes.
  const size_t chunkElems = std::max<size_t>(1, std::min(comm.options().chunkBytes / elemSize, count));
  const int chunks = static_cast<int>((count + chunkElems - 1) / chunkElems);
  const int window = std::max(1, std::min(comm.options().maxInflight, chunks));
  char* stage = comm.scratch(static_cast<size_t>(window) * chunkElems * elemSize);
  const ReduceKind kind = baseReduceKind(op.kind);
  auto elemsOf = [&](int k) { return std::min(chunkElems, count - static_cast<size_t>(k) * chunkElems); };
  auto stageOf = [&](int k) { return stage + static_cast<size_t>(k % window) * chunkElems * elemSize; };
  auto inputOf = [&](int k) { return input + static_cast<size_t>(k) * chunkElems * elemSize; };
  auto tagOf = [&](int k) { return makeTag(seq, OpCode::kReduce, static_cast<uint64_t>(k)); };
  auto recvs = std::make_unique<Request[]>(window);
  auto sends = std::make_unique<Request[]>(window);
  AbortOnError guard(transport);
  Deadline deadline = comm.operationDeadline();

  const int channels = std::max(1, channelsOf(comm, choice));  // chunk k is NCCL channel k % channels
  auto postRecv = [&](int k) {
    recvs[k % window].channel = k % channels;
    return transport.postRecv(from, tagOf(k), stageOf(k), elemsOf(k) * elemSize, &recvs[k % window]);
  };
  auto postSend = [&](int k, const void* data) {
    sends[k % window].channel = k % channels;
    return transport.postSend(to, tagOf(k), data, elemsOf(k) * elemSize, &sends[k % window]);
  };
  if (receives) {
    for (int k = 0; k < window; ++k) NS_RETURN_IF_ERROR(postRecv(k));
  }
  for (int k = 0; k < chunks; ++k) {
    const size_t elems = elemsOf(k);
    if (!receives) {  // the far end of the chain: send the input as it is
      if (k >= window) NS_RETURN_IF_ERROR(waitOne(transport, &sends[k % window], deadline));
      NS_RETURN_IF_ERROR(postSend(k, inputOf(k)));
      continue;
    }
    NS_RETURN_IF_ERROR(waitOne(transport, &recvs[k % window], deadline));
    if (isRoot) {
      char* out = static_cast<char*>(recv) + static_cast<size_t>(k) * chunkElems * elemSize;
      reduceArrived(comm, type, kind, out, stageOf(k), inputOf(k), elems);
      finishReduction(comm, out, elems, type, op, n);
      if (k + window < chunks) NS_RETURN_IF_ERROR(postRecv(k + window));
      continue;
    }
    reduceArrived(comm, type, kind, stageOf(k), stageOf(k), inputOf(k), elems);
    NS_RETURN_IF_ERROR(postSend(k, stageOf(k)));
    if (k + window < chunks) {
      // The staging slot of chunk k is reused by chunk k + window: its send must be finished.
      NS_RETURN_IF_ERROR(waitOne(transport, &sends[k % window], deadline));
      NS_RETURN_IF_ERROR(postRecv(k + window));
    }
  }
  if (!isRoot) {
    for (int k = std::max(0, chunks - window); k < chunks; ++k) {
      NS_RETURN_IF_ERROR(waitOne(transport, &sends[k % window], deadline));
    }
  }
  return guard.completed();
}

}  // namespace nshim

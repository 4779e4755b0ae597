// NCCL's tree allreduce over the double binary tree (double_binary_tree.h): the buffer is split
// into one contiguous part per channel, channel c runs on tree c % 2 (NCCL duplicates its channels,
// the copies on the second tree) over its own connections (Request::channel), and each part is
// cut into chunks. Every chunk is reduced up its
// tree (a rank adds what its children sent to its input and sends the sum to its parent) and the
// root's result is broadcast back down. Network bytes: each tree edge carries the part of every
// channel on that tree once up and once down. Work goes in windows of chunks: the whole window is
// reduced up, then broadcast down, in the same order on every rank, so a rank only ever waits for
// its children's earlier reductions or its parent's earlier results (no cycle, whatever the trees).
#include <algorithm>
#include <memory>
#include <vector>

#include "collectives/abort_on_error.h"
#include "collectives/collective_support.h"
#include "collectives/op_tags.h"
#include "collectives/reduce.h"
#include "collectives/ring_pipeline.h"
#include "model/double_binary_tree.h"

namespace nshim {
namespace {

struct TreeChunk {
  int channel;   // its messages travel on the channel's connection (Request::channel)
  int tree;      // channel % 2
  size_t begin;  // elements
  size_t elems;
};

// Chunks in the order every rank runs them: chunk k of every channel, then chunk k + 1.
std::vector<TreeChunk> treeChunks(size_t count, int channels, size_t chunkElems) {
  std::vector<TreeChunk> chunks;
  std::vector<Range> parts;
  size_t most = 0;
  for (int c = 0; c < channels; ++c) {
    parts.push_back(partRange(count, channels, c));
    most = std::max(most, parts.back().size());
  }
  for (size_t offset = 0; offset < most; offset += chunkElems) {
    for (int c = 0; c < channels; ++c) {
      if (offset >= parts[c].size()) continue;
      chunks.push_back({c, c % 2, parts[c].begin + offset, std::min(chunkElems, parts[c].size() - offset)});
    }
  }
  return chunks;
}

}  // namespace

Status treeAllReduce(Communicator& comm, const void* inputBuffer, void* recv, size_t count, DataType type,
                     const ReduceOp& op, uint64_t seq, int channels) {
  Transport& transport = comm.transport();
  const TreeLinks links[2] = {doubleBinaryTreeLinks(comm.nodes(), comm.rank(), 0),
                              doubleBinaryTreeLinks(comm.nodes(), comm.rank(), 1)};
  const size_t elemSize = dataTypeSize(type);
  // No chunk is larger than the buffer: the same chunks, and scratch that follows the bytes.
  const size_t chunkElems = std::max<size_t>(1, std::min(comm.options().chunkBytes / elemSize, count));
  const std::vector<TreeChunk> chunks = treeChunks(count, std::max(1, channels), chunkElems);
  const int window = std::max(1, std::min(comm.options().maxInflight, static_cast<int>(chunks.size())));
  char* stage = comm.scratch(static_cast<size_t>(window) * kMaxTreeDown * chunkElems * elemSize);
  const char* input = static_cast<const char*>(inputBuffer);
  char* output = static_cast<char*>(recv);
  const ReduceKind kind = baseReduceKind(op.kind);
  auto stageOf = [&](int slot, size_t child) {
    return stage + (static_cast<size_t>(slot) * kMaxTreeDown + child) * chunkElems * elemSize;
  };
  auto tagOf = [&](size_t index, int phase) { return makeTag(seq, OpCode::kAllReduceTree, index * 2 + phase); };
  // [slot * kMaxTreeDown + child] for the reduction, [slot] for the result and its sends.
  auto fromChildren = std::make_unique<Request[]>(static_cast<size_t>(window) * kMaxTreeDown);
  auto toParent = std::make_unique<Request[]>(static_cast<size_t>(window));
  auto fromParent = std::make_unique<Request[]>(static_cast<size_t>(window));
  auto toChildren = std::make_unique<Request[]>(static_cast<size_t>(window) * kMaxTreeDown);
  AbortOnError guard(transport);
  const Deadline deadline = comm.operationDeadline();
  std::vector<Request*> pending;

  for (size_t first = 0; first < chunks.size(); first += static_cast<size_t>(window)) {
    const int batch = static_cast<int>(std::min<size_t>(window, chunks.size() - first));
    // Up: the children's partial sums, added to this rank's input, go to the parent.
    for (int s = 0; s < batch; ++s) {
      const TreeChunk& chunk = chunks[first + s];
      const std::vector<int>& down = links[chunk.tree].down;
      for (size_t j = 0; j < down.size(); ++j) {
        Request* recv = &fromChildren[s * kMaxTreeDown + j];
        recv->channel = chunk.channel;
        NS_RETURN_IF_ERROR(
            transport.postRecv(down[j], tagOf(first + s, 0), stageOf(s, j), chunk.elems * elemSize, recv));
      }
    }
    pending.clear();
    for (int s = 0; s < batch; ++s) {
      const TreeChunk& chunk = chunks[first + s];
      const TreeLinks& link = links[chunk.tree];
      const char* mine = input + chunk.begin * elemSize;
      char* out = output + chunk.begin * elemSize;
      const char* sum = mine;
      for (size_t j = 0; j < link.down.size(); ++j) {
        NS_RETURN_IF_ERROR(waitOne(transport, &fromChildren[s * kMaxTreeDown + j], deadline));
        reduceArrived(comm, type, kind, out, sum, stageOf(s, j), chunk.elems);
        sum = out;
      }
      if (link.up < 0) {
        if (sum != out) copyElements(out, sum, chunk.elems, type);
        finishReduction(comm, out, chunk.elems, type, op, comm.nranks());
        continue;
      }
      toParent[s].channel = chunk.channel;
      NS_RETURN_IF_ERROR(transport.postSend(link.up, tagOf(first + s, 0), sum, chunk.elems * elemSize, &toParent[s]));
      pending.push_back(&toParent[s]);
    }
    NS_RETURN_IF_ERROR(transport.waitAll(pending, deadline));  // the output is rewritten below
    // Down: the result comes from the parent and goes on to the children.
    for (int s = 0; s < batch; ++s) {
      const TreeChunk& chunk = chunks[first + s];
      if (links[chunk.tree].up < 0) continue;
      fromParent[s].channel = chunk.channel;
      NS_RETURN_IF_ERROR(transport.postRecv(links[chunk.tree].up, tagOf(first + s, 1), output + chunk.begin * elemSize,
                                            chunk.elems * elemSize, &fromParent[s]));
    }
    pending.clear();
    for (int s = 0; s < batch; ++s) {
      const TreeChunk& chunk = chunks[first + s];
      const TreeLinks& link = links[chunk.tree];
      if (link.up >= 0) NS_RETURN_IF_ERROR(waitOne(transport, &fromParent[s], deadline));
      for (size_t j = 0; j < link.down.size(); ++j) {
        Request* send = &toChildren[s * kMaxTreeDown + j];
        send->channel = chunk.channel;
        NS_RETURN_IF_ERROR(transport.postSend(link.down[j], tagOf(first + s, 1), output + chunk.begin * elemSize,
                                              chunk.elems * elemSize, send));
        pending.push_back(send);
      }
    }
    NS_RETURN_IF_ERROR(transport.waitAll(pending, deadline));
  }
  return guard.completed();
}

}  // namespace nshim

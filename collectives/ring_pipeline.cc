// Runs a RingPass: windows of blocks, each advanced step by step in a fixed posting order.
#include "collectives/ring_pipeline.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "collectives/abort_on_error.h"

namespace nshim {

Status runRingPipeline(Communicator& comm, RingPass& pass, OpCode op, uint64_t seq, int window, int channels) {
  Transport& transport = comm.transport();
  const int next = comm.nodes().ringNext(comm.rank());
  const int prev = comm.nodes().ringPrev(comm.rank());
  const int blocks = pass.numBlocks();
  const int steps = pass.numSteps();
  if (blocks == 0 || steps == 0) return Status::Ok();
  window = std::max(1, std::min(window, blocks));
  Deadline deadline = comm.operationDeadline();

  // recvs[b * steps + s], sends[b * steps + s] for the blocks of the current window.
  auto recvs = std::make_unique<Request[]>(static_cast<size_t>(window) * steps);
  auto sends = std::make_unique<Request[]>(static_cast<size_t>(window) * steps);
  AbortOnError guard(transport);

  auto tagOf = [&](int block, int step) { return makeTag(seq, op, static_cast<uint64_t>(block) * steps + step); };
  channels = std::max(1, channels);
  auto postRecv = [&](int first, int b, int s) {
    std::span<char> target = pass.recvTarget(first + b, s);
    Request* req = &recvs[b * steps + s];
    req->channel = pass.channelOf(first + b, channels);
    return transport.postRecv(prev, tagOf(first + b, s), target.data(), target.size(), req);
  };
  auto postSend = [&](int first, int b, int s) {
    std::span<const char> data = pass.sendData(first + b, s);
    Request* req = &sends[b * steps + s];
    req->channel = pass.channelOf(first + b, channels);
    return transport.postSend(next, tagOf(first + b, s), data.data(), data.size(), req);
  };

  for (int first = 0; first < blocks; first += window) {
    const int count = std::min(window, blocks - first);
    for (int b = 0; b < count; ++b) NS_RETURN_IF_ERROR(postRecv(first, b, 0));
    for (int b = 0; b < count; ++b) NS_RETURN_IF_ERROR(postSend(first, b, 0));
    for (int s = 1; s < steps; ++s) {
      for (int b = 0; b < count; ++b) {
        NS_RETURN_IF_ERROR(waitOne(transport, &recvs[b * steps + s - 1], deadline));
        pass.onReceived(first + b, s - 1);
        NS_RETURN_IF_ERROR(waitOne(transport, &sends[b * steps + s - 1], deadline));
        NS_RETURN_IF_ERROR(postRecv(first, b, s));
        NS_RETURN_IF_ERROR(postSend(first, b, s));
      }
    }
    std::vector<Request*> pending;
    pending.reserve(count);
    for (int b = 0; b < count; ++b) {
      NS_RETURN_IF_ERROR(waitOne(transport, &recvs[b * steps + steps - 1], deadline));
      pass.onReceived(first + b, steps - 1);
      pending.push_back(&sends[b * steps + steps - 1]);
    }
    NS_RETURN_IF_ERROR(transport.waitAll(pending, deadline));
  }
  return guard.completed();
}

}  // namespace nshim

// PAT's chunking and one PAT step's messages on every channel (pat_exchange.h).
#include "collectives/pat_exchange.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "collectives/abort_on_error.h"
#include "model/pat_schedule.h"

namespace nshim {

PatChunks patChunks(bool allGather, size_t perRank, size_t elemSize, int nranks, int channels) {
  PatChunks cut{std::max(1, channels), 0, {}, 0};
  cut.chunkElems = std::max<size_t>(1, patChunkBytes(allGather, perRank * elemSize * nranks, cut.channels) / elemSize);
  for (int c = 0; c < cut.channels; ++c) {
    cut.parts.push_back(partRange(perRank, cut.channels, c));
    cut.rounds = std::max(cut.rounds, (cut.parts.back().size() + cut.chunkElems - 1) / cut.chunkElems);
  }
  return cut;
}

Status exchangePatSlots(Communicator& comm, int sendPeer, int recvPeer, uint64_t tag,
                        std::span<const PatChannelSlots> steps) {
  Transport& transport = comm.transport();
  size_t messages = 0;
  for (const PatChannelSlots& s : steps) messages += static_cast<size_t>((s.wireSlots + s.frequency - 1) / s.frequency);
  auto requests = std::make_unique<Request[]>(2 * messages);
  std::vector<Request*> pending;
  pending.reserve(2 * messages);
  AbortOnError guard(transport);
  for (int sending = 0; sending < 2; ++sending) {
    for (const PatChannelSlots& s : steps) {
      for (int first = 0; first < s.wireSlots; first += s.frequency) {
        const size_t offset = static_cast<size_t>(first) * s.slotBytes;
        const size_t bytes = static_cast<size_t>(std::min(s.frequency, s.wireSlots - first)) * s.slotBytes;
        Request* request = &requests[pending.size()];
        request->channel = s.channel;
        if (sending) {
          NS_RETURN_IF_ERROR(transport.postSend(sendPeer, tag, s.send + offset, bytes, request));
        } else {
          NS_RETURN_IF_ERROR(transport.postRecv(recvPeer, tag, s.recv + offset, bytes, request));
        }
        pending.push_back(request);
      }
    }
  }
  NS_RETURN_IF_ERROR(transport.waitAll(pending, comm.operationDeadline()));
  return guard.completed();
}

}  // namespace nshim

// One PAT step's messages on every channel (pat_exchange.h).
#include "collectives/pat_exchange.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "collectives/abort_on_error.h"

namespace nshim {

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

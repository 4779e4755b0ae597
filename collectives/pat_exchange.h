// One step of NCCL's PAT on every channel at once: the slots a rank sends on one dimension and the
// slots it receives on it, cut into messages of `frequency` slots as NCCL aggregates its steps
// (pat_schedule.h), each channel's messages on its own connection (Request::channel). Shared by
// pat_allgather.cc and pat_reduce_scatter.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "collectives/communicator.h"

namespace nshim {

struct PatChannelSlots {
  int channel;
  const char* send;  // wireSlots * slotBytes to sendPeer
  char* recv;        // wireSlots * slotBytes from recvPeer
  size_t slotBytes;
  int wireSlots;
  int frequency;  // slots per message
};

// Posts every receive, then every send, of `steps` and waits for all of them.
Status exchangePatSlots(Communicator& comm, int sendPeer, int recvPeer, uint64_t tag,
                        std::span<const PatChannelSlots> steps);

}  // namespace nshim

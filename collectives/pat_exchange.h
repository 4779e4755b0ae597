// What NCCL's PAT allgather and reduce-scatter (pat_allgather.cc, pat_reduce_scatter.cc) share at
// run time: how a rank's block is cut into channel parts and chunks, and one step on every channel
// at once: the slots a rank sends on one dimension and the slots it receives on it, cut into
// messages of `frequency` slots as NCCL aggregates its steps (pat_schedule.h), each channel's
// messages on its own connection (Request::channel).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/ring_pipeline.h"

namespace nshim {

// A rank's block of `perRank` elements cut as NCCL's PAT cuts it: one part per channel, each part
// into NCCL's chunks (patChunkBytes over the op's whole buffer, nranks blocks).
struct PatChunks {
  int channels;              // at least 1
  size_t chunkElems;         // at least 1
  std::vector<Range> parts;  // per channel
  size_t rounds;             // chunks in the longest part
};
PatChunks patChunks(bool allGather, size_t perRank, size_t elemSize, int nranks, int channels);

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

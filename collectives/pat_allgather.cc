// NCCL's PAT allgather (pat_schedule.h) for communicators of one rank per node. Each rank's block
// is cut into one part per channel and each part into NCCL's chunks; for every chunk, dimension by
// dimension from the highest down, rank r sends to r - 2^d the slices of the blocks it holds at
// offsets s (multiples of 2^(d+1)) and receives from r + 2^d those of the blocks at 2^d + s, so a
// block reaches rank r - t after one hop per set bit of t, highest first. Wire bytes per rank:
// (n-1) blocks, as the ring, but over log2(n) peers.
#include <algorithm>
#include <vector>

#include "collectives/collective_support.h"
#include "collectives/collectives.h"
#include "collectives/op_tags.h"
#include "collectives/pat_exchange.h"
#include "collectives/ring_pipeline.h"
#include "model/pat_schedule.h"

namespace nshim {

Status patAllGather(Communicator& comm, char* output, size_t perRank, DataType type, uint64_t seq, int channels) {
  const int n = comm.nranks(), rank = comm.rank(), dims = patDimensions(n);
  const size_t elemSize = dataTypeSize(type);
  const PatChunks cut = patChunks(true, perRank, elemSize, n, channels);
  channels = cut.channels;
  const size_t chunkElems = cut.chunkElems, rounds = cut.rounds;
  const std::vector<Range>& parts = cut.parts;
  const size_t maxSlots = patBlockOffsets(n, 0).size();
  const size_t stageBytes = maxSlots * chunkElems * elemSize;
  char* stage = comm.scratch(2 * static_cast<size_t>(channels) * stageBytes);
  auto blockSlice = [&](int owner, size_t begin) {
    return output + (static_cast<size_t>(ringMod(owner, n)) * perRank + begin) * elemSize;
  };
  std::vector<PatChannelSlots> steps;
  for (size_t round = 0; round < rounds; ++round) {
    for (int d = dims - 1; d >= 0; --d) {
      const std::vector<int> offsets = patBlockOffsets(n, d);
      steps.clear();
      for (int c = 0; c < channels; ++c) {
        const size_t begin = parts[c].begin + round * chunkElems;
        if (begin >= parts[c].end) continue;
        const size_t elems = std::min(chunkElems, parts[c].end - begin);
        const size_t slotBytes = elems * elemSize;
        char* send = stage + 2 * static_cast<size_t>(c) * stageBytes;
        for (size_t i = 0; i < offsets.size(); ++i) {
          std::copy_n(blockSlice(rank + offsets[i], begin), slotBytes, send + i * slotBytes);
        }
        const int frequency = patPostFrequency(chunkElems * elemSize, parts[c].size() * elemSize, n);
        steps.push_back({c, send, send + stageBytes, slotBytes, static_cast<int>(offsets.size()), frequency});
      }
      const uint64_t tag = makeTag(seq, OpCode::kAllGatherPat, round * dims + d);
      NS_RETURN_IF_ERROR(exchangePatSlots(comm, ringMod(rank - (1 << d), n), ringMod(rank + (1 << d), n), tag, steps));
      for (const PatChannelSlots& s : steps) {
        const size_t begin = parts[s.channel].begin + round * chunkElems;
        for (size_t i = 0; i < offsets.size(); ++i) {
          std::copy_n(s.recv + i * s.slotBytes, s.slotBytes, blockSlice(rank + (1 << d) + offsets[i], begin));
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace nshim

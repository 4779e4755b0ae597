// NCCL's PAT reduce-scatter (pat_schedule.h) for communicators of one rank per node: the
// allgather's trees run backwards. For every chunk of every channel's part, rank r starts from its
// own input for every destination; dimension by dimension from 0 up it sends to r + 2^d its
// partial sums for the destinations r + 2^d + s (s a multiple of 2^(d+1)) and adds those arriving
// from r - 2^d for r + s, so the sum for rank r is complete after the last dimension. Where NCCL
// pads its messages (pat_schedule.h: patWireBlocks) the padding slots travel too, zero-filled.
#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/collective_support.h"
#include "collectives/collectives.h"
#include "collectives/op_tags.h"
#include "collectives/pat_exchange.h"
#include "collectives/reduce.h"
#include "collectives/ring_pipeline.h"
#include "model/pat_schedule.h"

namespace nshim {

Status patReduceScatter(Communicator& comm, const char* input, char* output, size_t perRank, DataType type,
                        const ReduceOp& op, uint64_t seq, int channels) {
  const int n = comm.nranks(), rank = comm.rank(), dims = patDimensions(n);
  const size_t elemSize = dataTypeSize(type);
  const ReduceKind kind = baseReduceKind(op.kind);
  const PatChunks cut = patChunks(false, perRank, elemSize, n, channels);
  channels = cut.channels;
  const size_t chunkElems = cut.chunkElems, rounds = cut.rounds;
  const std::vector<Range>& parts = cut.parts;
  const size_t chunkBytes = chunkElems * elemSize;
  const size_t maxSlots = patBlockOffsets(1 << dims, 0).size();
  // Per channel: the send slots, the receive slots, and a partial sum per destination rank.
  const size_t stageBytes = maxSlots * chunkBytes;
  const size_t channelBytes = 2 * stageBytes + static_cast<size_t>(n) * chunkBytes;
  char* stage = comm.scratch(static_cast<size_t>(channels) * channelBytes);
  std::vector<PatChannelSlots> steps;
  for (size_t round = 0; round < rounds; ++round) {
    auto sumFor = [&](int channel, int destination, size_t slotBytes) {
      return stage + static_cast<size_t>(channel) * channelBytes + 2 * stageBytes +
             static_cast<size_t>(ringMod(destination, n)) * slotBytes;
    };
    for (int c = 0; c < channels; ++c) {
      const size_t begin = parts[c].begin + round * chunkElems;
      if (begin >= parts[c].end) continue;
      const size_t elems = std::min(chunkElems, parts[c].end - begin);
      for (int x = 0; x < n; ++x) {
        std::copy_n(input + (static_cast<size_t>(x) * perRank + begin) * elemSize, elems * elemSize,
                    sumFor(c, x, elems * elemSize));
      }
    }
    for (int d = 0; d < dims; ++d) {
      const std::vector<int> offsets = patBlockOffsets(n, d);
      steps.clear();
      for (int c = 0; c < channels; ++c) {
        const size_t begin = parts[c].begin + round * chunkElems;
        if (begin >= parts[c].end) continue;
        const size_t slotBytes = std::min(chunkElems, parts[c].end - begin) * elemSize;
        const int frequency = patPostFrequency(chunkBytes, parts[c].size() * elemSize, n);
        const int wireSlots = patWireBlocks(false, n, d, frequency);
        char* send = stage + static_cast<size_t>(c) * channelBytes;
        for (size_t i = 0; i < offsets.size(); ++i) {
          std::copy_n(sumFor(c, rank + (1 << d) + offsets[i], slotBytes), slotBytes, send + i * slotBytes);
        }
        std::memset(send + offsets.size() * slotBytes, 0, (wireSlots - offsets.size()) * slotBytes);
        steps.push_back({c, send, send + stageBytes, slotBytes, wireSlots, frequency});
      }
      const uint64_t tag = makeTag(seq, OpCode::kReduceScatterPat, round * dims + d);
      NS_RETURN_IF_ERROR(exchangePatSlots(comm, ringMod(rank + (1 << d), n), ringMod(rank - (1 << d), n), tag, steps));
      for (const PatChannelSlots& s : steps) {
        for (size_t i = 0; i < offsets.size(); ++i) {
          char* sum = sumFor(s.channel, rank + offsets[i], s.slotBytes);
          reduceArrived(comm, type, kind, sum, sum, s.recv + i * s.slotBytes, s.slotBytes / elemSize);
        }
      }
    }
    for (int c = 0; c < channels; ++c) {
      const size_t begin = parts[c].begin + round * chunkElems;
      if (begin >= parts[c].end) continue;
      const size_t elems = std::min(chunkElems, parts[c].end - begin);
      char* out = output + begin * elemSize;
      std::copy_n(sumFor(c, rank, elems * elemSize), elems * elemSize, out);
      finishReduction(comm, out, elems, type, op, n);
    }
  }
  return Status::Ok();
}

}  // namespace nshim

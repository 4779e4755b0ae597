// NCCL's Simple-protocol ring slices (ring_slices.h).
#include "model/ring_slices.h"

#include <algorithm>

#include "model/part_range.h"

namespace nshim {
namespace {

// NCCL's first slice of a chunk: half of it rounded up to 16 elements, at least `smallestFirst`, at
// most the chunk (the second slice is the rest, empty when this takes it all).
size_t firstSliceElems(size_t chunkElems, size_t smallestFirst) {
  const size_t half = ((chunkElems + 1) / 2 + 15) / 16 * 16;
  return std::min(chunkElems, std::max(half, smallestFirst));
}

}  // namespace

std::vector<RingLoopSlice> ncclSimpleAllReduceSlices(size_t count, size_t elemSize, int nranks, int channels,
                                                     size_t sliceBytes) {
  std::vector<RingLoopSlice> slices;
  if (count == 0 || elemSize == 0 || nranks < 1) return slices;
  channels = std::max(1, channels);
  const size_t n = static_cast<size_t>(nranks);
  const size_t sliceElems = std::max<size_t>(1, sliceBytes / elemSize);
  const size_t chunkElems = 2 * sliceElems;
  const size_t smallestFirst = std::max<size_t>(1, sliceElems / 32);
  std::vector<Range> parts;
  size_t mostLoops = 0;
  for (int c = 0; c < channels; ++c) {
    parts.push_back(partRange(count, channels, c));
    mostLoops = std::max(mostLoops, (parts.back().size() + n * chunkElems - 1) / (n * chunkElems));
  }
  for (size_t loop = 0; loop < mostLoops; ++loop) {
    for (int c = 0; c < channels; ++c) {
      const Range& part = parts[static_cast<size_t>(c)];
      const size_t offset = loop * n * chunkElems;
      if (offset >= part.size()) continue;
      const size_t rest = part.size() - offset;
      const size_t chunk = std::min(chunkElems, (rest + n - 1) / n);
      const size_t first = firstSliceElems(chunk, smallestFirst);
      const size_t base = part.begin + offset;
      const size_t end = base + std::min(rest, n * chunkElems);
      slices.push_back({base, chunk, 0, first, end, c});
      slices.push_back({base, chunk, first, chunk - first, end, c});
    }
  }
  return slices;
}

// A ring step's block is an allreduce's buffer on one rank: one chunk per loop, sliced alike.
std::vector<RingSlice> ncclSimpleRingSlices(size_t blockElems, size_t elemSize, int channels, size_t sliceBytes) {
  std::vector<RingSlice> slices;
  for (const RingLoopSlice& s : ncclSimpleAllReduceSlices(blockElems, elemSize, 1, channels, sliceBytes)) {
    slices.push_back({s.base + s.begin, s.elems, s.channel});
  }
  return slices;
}

}  // namespace nshim

// What crosses each dimension of NCCL's PAT, its chunk and its reduce-scatter's padding
// (pat_schedule.h).
#include "model/pat_schedule.h"

#include "model/part_range.h"

namespace nshim {

int patDimensions(int nranks) {
  int dims = 0;
  while ((1 << dims) < nranks) ++dims;
  return dims;
}

std::vector<int> patBlockOffsets(int nranks, int dim) {
  std::vector<int> offsets;
  const int distance = 1 << dim;
  for (int s = 0; s + distance <= nranks - 1; s += 2 * distance) offsets.push_back(s);
  return offsets;
}

size_t patChunkBytes(bool allGather, size_t totalBytes, int channels) {
  const size_t spread = static_cast<size_t>(channels < 1 ? 1 : channels) * (allGather ? 32 : 16);
  size_t chunk = size_t{512} << 10;
  while (chunk * spread > totalBytes && chunk > (size_t{64} << 10)) chunk /= 2;
  return chunk;
}

int patPostFrequency(size_t chunkBytes, size_t channelBlockBytes, int nranks) {
  if (channelBlockBytes == 0) return 1;
  int frequency = 1;
  while (chunkBytes / (channelBlockBytes * frequency) >= 2 && frequency < nranks / 2) frequency *= 2;
  return frequency;
}

int patWireBlocks(bool allGather, int nranks, int dim, int postFrequency) {
  const bool powerOfTwo = (nranks & (nranks - 1)) == 0;
  if (allGather || powerOfTwo || postFrequency < 2) return static_cast<int>(patBlockOffsets(nranks, dim).size());
  return static_cast<int>(patBlockOffsets(1 << patDimensions(nranks), dim).size());
}

void forEachPatSend(bool allGather, int rank, int nranks, size_t blockElems, size_t elemSize, int channels,
                    const std::function<void(int peer, size_t bytes)>& add) {
  if (nranks < 2 || blockElems == 0) return;
  channels = channels < 1 ? 1 : channels;
  const size_t chunk = patChunkBytes(allGather, blockElems * elemSize * nranks, channels);
  for (int c = 0; c < channels; ++c) {
    const size_t partBytes = partRange(blockElems, channels, c).size() * elemSize;
    if (partBytes == 0) continue;
    const int frequency = patPostFrequency(chunk, partBytes, nranks);
    for (int d = 0; d < patDimensions(nranks); ++d) {
      const int peer = allGather ? ringMod(rank - (1 << d), nranks) : ringMod(rank + (1 << d), nranks);
      add(peer, static_cast<size_t>(patWireBlocks(allGather, nranks, d, frequency)) * partBytes);
    }
  }
}

}  // namespace nshim

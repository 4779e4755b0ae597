// NCCL's messages of a ring step under its Simple protocol: how the elements one rank forwards in a
// ring step are cut into messages and dealt over the channels, so that a replay puts NCCL's messages
// on the wire, not only its bytes. NCCL divides a rank's block among its channels (contiguous parts);
// each channel's part goes in chunks of two slices' worth (2 x 1 MiB by default: NCCL_BUFFSIZE / 8 per
// step, 2 steps per slice), and every chunk as two slices (its SlicePerChunk): the first of half the
// chunk rounded up to 16 elements, but at least a 32nd of a whole slice (32 KiB), and the second the
// rest. A chunk that fits in the first slice still sends the second, empty: NCCL's step log on the
// H200 machine shows a channel's 16 KiB step as a 16 KiB message and a 0 B one, a 256 KiB step as two
// of 128 KiB, a 4 MiB part as four of 1 MiB (docs/socket_transport.md).
#pragma once

#include <cstddef>
#include <vector>

namespace nshim {

struct RingSlice {
  size_t begin = 0;  // elements into the rank's block
  size_t elems = 0;  // 0: NCCL's empty second slice
  int channel = 0;
};

// The slices of a rank's block of `blockElems` elements of `elemSize` bytes over `channels` channels,
// with slices of at most `sliceBytes` (NCCL Simple's 2 steps; NCCLSHIM_SLICE_BYTES). In chunk order,
// the channels interleaved within each chunk index (so that a window of them spans the channels).
std::vector<RingSlice> ncclSimpleRingSlices(size_t blockElems, size_t elemSize, int channels, size_t sliceBytes);

// A block of a ring allreduce: in a loop of the buffer starting at `base`, rank chunk j starts at
// base + j * stride; the block is elements [begin, begin + elems) of every chunk, none past `end`
// (the loop's end: a last chunk may be shorter, or empty).
struct RingLoopSlice {
  size_t base = 0;
  size_t stride = 0;
  size_t begin = 0;
  size_t elems = 0;
  size_t end = 0;
  int channel = 0;
};

// NCCL's ring allreduce under Simple: the buffer of `count` elements divided among the channels
// (contiguous parts); each part in loops of `nranks` chunks of at most two slices' worth (the last
// loop's chunks ceil(rest / nranks)); every chunk step sent as the two slices of ncclSimpleRingSlices
// (NCCL's step log: a 64 KiB allreduce on 2 ranks and 2 channels sends 16 KiB and 0 B twice on each).
std::vector<RingLoopSlice> ncclSimpleAllReduceSlices(size_t count, size_t elemSize, int nranks, int channels,
                                                     size_t sliceBytes);

}  // namespace nshim

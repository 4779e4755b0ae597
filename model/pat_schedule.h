// NCCL's PAT ("parallel aggregated trees", NCCL 2.23+), its allgather and reduce-scatter for
// communicators of one rank per node: binomial trees over the distances 2^d. Rank r sends on
// dimension d to r - 2^d (allgather) or r + 2^d (reduce-scatter) and receives from the other side,
// each dimension on its own connection per channel (NCCL's ncclTransportPatConnect). What crosses a
// dimension, NCCL's chunk, and the padding NCCL's reduce-scatter puts on the wire are here, shared
// by the algorithms (pat_allgather.cc, pat_reduce_scatter.cc) and the traffic model. Checked
// against NCCL 2.28.9's network bytes per node pair (tests/data/nccl_pat).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace nshim {

// Whether NCCL can run PAT: one rank per node (it connects PAT only then).
inline bool patRuns(int nranks, int nnodes) { return nranks > 1 && nnodes == nranks; }

// The dimensions d with 2^d < nranks.
int patDimensions(int nranks);

// The blocks that cross dimension `dim` from a rank, as offsets from it: the multiples s of
// 2^(dim+1) with s + 2^dim <= nranks - 1. Allgather: rank r sends the blocks of ranks r + s to
// r - 2^dim (dimensions from the highest down). Reduce-scatter: rank r sends the partial sums for
// ranks r + 2^dim + s to r + 2^dim (dimensions from 0 up). Over all dimensions: nranks - 1 blocks.
std::vector<int> patBlockOffsets(int nranks, int dim);

// NCCL's chunk for a PAT op over `totalBytes` (the whole output of an allgather, the whole input of
// a reduce-scatter) on `channels`: 512 KiB, halved down to 64 KiB while the op is small.
size_t patChunkBytes(bool allGather, size_t totalBytes, int channels);

// How many of its steps NCCL aggregates into one message on a dimension: doubled while a chunk
// holds twice that many of the channel's blocks, below nranks / 2.
int patPostFrequency(size_t chunkBytes, size_t channelBlockBytes, int nranks);

// The blocks one message on `dim` carries on the wire. Allgather: the real ones. NCCL's
// reduce-scatter, when it aggregates (post frequency above 1) on a rank count that is not a power
// of two, sends the slots of the ranks past the end too: the next power of two's blocks.
int patWireBlocks(bool allGather, int nranks, int dim, int postFrequency);

// The payload bytes rank `rank` sends to each peer for a PAT op of `blockBytes` per rank (the
// allgather's send count, the reduce-scatter's receive count, in bytes, cut into `channels` parts
// of whole `elemSize` elements): calls add(peer, bytes).
void forEachPatSend(bool allGather, int rank, int nranks, size_t blockElems, size_t elemSize, int channels,
                    const std::function<void(int peer, size_t bytes)>& add);

}  // namespace nshim

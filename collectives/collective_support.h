// Pieces shared by the collective algorithm files: argument validation, byte arithmetic, the
// PreMulSum pre-scaling of inputs and the Avg post-division.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "collectives/communicator.h"
#include "common/status.h"
#include "model/call_choice.h"
#include "model/datatype.h"
#include "model/ring_slices.h"

namespace nshim {

// Checks type, reduce kind (when op is given), root (when not -1) and that the buffers this rank
// uses are not null; counts whose byte size could overflow are refused.
struct BufferUse {
  bool send;  // this rank reads sendbuff
  bool recv;  // this rank writes recvbuff
};
Status validateCollective(const Communicator& comm, const char* opName, const void* send, const void* recv,
                          size_t count, DataType type, const ReduceOp* op, int root, BufferUse use);

// A call's channels: its choice's (NCCL's, recorded or tuned), else the options'.
inline int channelsOf(const Communicator& comm, const CallChoice& choice) {
  return choice.channels > 0 ? choice.channels : comm.options().channels;
}

// While it lives, the communicator's posts move in the call's protocol (CallChoice::protocol), and
// in Simple again after; kAuto leaves the transport's as it is. Each collective holds one.
class CallProtocol {
 public:
  CallProtocol(Communicator& comm, Protocol protocol);
  ~CallProtocol();
  CallProtocol(const CallProtocol&) = delete;
  CallProtocol& operator=(const CallProtocol&) = delete;

 private:
  Transport* transport_;  // null: kAuto, nothing to undo
};

// Number of ring blocks in flight at once for a window of messages per peer.
int ringWindow(const Communicator& comm);

// Element count of one slice (at least 1).
inline size_t sliceElements(const Communicator& comm, DataType type) {
  size_t elements = comm.options().sliceBytes / dataTypeSize(type);
  return elements > 0 ? elements : 1;
}

// Element count of one slice of a ring that moves blocks of `blockElems` per rank: the configured
// slice, but a mid-size block goes as up to kParallelSlices messages (never under kMinSliceBytes)
// that travel together over the peer's connections, as NCCL spreads such a block over its
// channels. Only the number of messages changes, never the bytes.
inline size_t ringSliceElements(const Communicator& comm, DataType type, size_t blockElems) {
  constexpr size_t kParallelSlices = 4;
  constexpr size_t kMinSliceBytes = 64 << 10;
  const size_t configured = sliceElements(comm, type);
  const size_t smallest = std::max<size_t>(1, kMinSliceBytes / dataTypeSize(type));
  const size_t spread = (blockElems + kParallelSlices - 1) / kParallelSlices;
  return std::min(configured, std::max(smallest, spread));
}

// The messages of a ring allgather's or reduce-scatter's step: a rank's block of `perRank` elements
// as NCCL's Simple protocol cuts it (model/ring_slices.h: per channel, two slices per chunk, the
// second empty for a small chunk); under LL and LL128, slices of ringSliceElements dealt over the
// channels in turn. `protocol` is the call's (kAuto: the options', else Simple).
std::vector<RingSlice> ringSlicesFor(const Communicator& comm, DataType type, size_t perRank, int channels,
                                     Protocol protocol);

// The blocks of a ring allreduce of `count` elements: NCCL's Simple slices (model/ring_slices.h),
// or under LL and LL128 blocks of `nranks` chunks of ringAllReduceSliceElements dealt over the
// channels in turn.
std::vector<RingLoopSlice> ringAllReduceSlicesFor(const Communicator& comm, DataType type, size_t count, int channels,
                                                  Protocol protocol);

// Elements of one rank's chunk of a ring allreduce block (a block is n chunks): the configured
// slice, but small enough that the buffer makes at least `channels` blocks when it can, so that
// every channel carries its share as NCCL splits a buffer over its channels.
inline size_t ringAllReduceSliceElements(const Communicator& comm, DataType type, size_t count, int channels) {
  const size_t n = static_cast<size_t>(comm.nranks());
  const size_t perRank = (count + n - 1) / n;
  const size_t perChannel = (perRank + channels - 1) / std::max(1, channels);
  return std::max<size_t>(1, std::min(sliceElements(comm, type), perChannel));
}

// For PreMulSum: returns a copy of `send` scaled by the op's scalar (held in `storage`);
// for other ops returns `send` itself.
const void* preScaledInput(const void* send, size_t count, DataType type, const ReduceOp& op,
                           std::vector<char>* storage);

// For Avg: divides `buf` by nranks in place.
void finishAverage(void* buf, size_t count, DataType type, const ReduceOp& op, int nranks);

// The work NCCL's GPUs do beside the wire: the arithmetic of a reduction as its data arrives
// (out = a (op) b, and at the end the Avg division) and the copy of a rank's own block into the
// output. Left out where the communicator's options say so (CollectiveOptions::doGpuWork false: a
// timing replay, where NCCL's proxy, which is what the wire sees, only moves bytes).
void reduceArrived(const Communicator& comm, DataType type, ReduceKind kind, void* out, const void* a, const void* b,
                   size_t count);
void finishReduction(const Communicator& comm, void* buf, size_t count, DataType type, const ReduceOp& op, int nranks);
void copyOwnBlock(const Communicator& comm, void* dst, const void* src, size_t count, DataType type);

// Copies count elements (no-op when src == dst).
void copyElements(void* dst, const void* src, size_t count, DataType type);

}  // namespace nshim

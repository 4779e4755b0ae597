// The ring pipeline shared by ring allreduce, allgather and reduce-scatter. Data is cut into
// blocks; each block travels the ring in `numSteps` steps (the rank at ring position p sends to
// position p+1 and receives from p-1: NCCL's node-major ring, NodeLayout::ringNext; the passes
// count in positions). Up to `window` blocks are in flight at once. Posting order is deterministic — sorted by
// (step, block) within a window — so both ends of every link post their messages in the same order,
// as the transport's matching rule requires, whatever the timing.
#pragma once

#include <cstddef>
#include <span>

#include "collectives/communicator.h"
#include "collectives/op_tags.h"
#include "model/part_range.h"

namespace nshim {

// What one ring algorithm does at each (block, step).
class RingPass {
 public:
  virtual ~RingPass() = default;
  virtual int numBlocks() const = 0;
  virtual int numSteps() const = 0;
  // Bytes to send to the next rank at (block, step).
  virtual std::span<const char> sendData(int block, int step) = 0;
  // Where to receive the previous rank's bytes at (block, step).
  virtual std::span<char> recvTarget(int block, int step) = 0;
  // Called once the receive of (block, step) has completed (reduce it, for example).
  virtual void onReceived(int block, int step) = 0;
  // The NCCL channel whose connection carries the block's messages.
  virtual int channelOf(int block, int channels) const { return block % channels; }
};

// Runs the pass. Staging buffers handed out by recvTarget for step s may be reused for step s+2:
// the pipeline waits for the send of step s-1 before posting the receive of step s+1. A block's
// messages travel on its channel's connection (RingPass::channelOf, Request::channel).
Status runRingPipeline(Communicator& comm, RingPass& pass, OpCode op, uint64_t seq, int window, int channels);

}  // namespace nshim

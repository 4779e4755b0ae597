// Ring allreduce = ring reduce-scatter followed by ring allgather, NCCL's algorithm for large
// messages. Each block of n·slice elements is cut into n chunks; in steps 0..n-2 rank r sends chunk
// r-s (its input, then the partial sums it received) and adds the chunk r-s-1 arriving from r-1;
// after step n-2 it holds the full sum of chunk r+1. Steps n-1..2n-3 circulate the finished chunks.
// Wire bytes per rank: 2(n-1)/n of the buffer. The blocks are NCCL's (ringAllReduceSlicesFor: under
// Simple, per channel, loops of n chunks, each chunk as NCCL's two slices), each on its channel.
#include <vector>

#include "collectives/allreduce_algorithms.h"
#include "collectives/collective_support.h"
#include "collectives/reduce.h"
#include "collectives/ring_pipeline.h"

namespace nshim {

namespace {

class RingAllReducePass final : public RingPass {
 public:
  RingAllReducePass(Communicator& comm, const char* input, char* output, DataType type, const ReduceOp& op,
                    std::vector<RingLoopSlice> blocks)
      : comm_(comm), n_(comm.nranks()), rank_(comm.nodes().ringPosition(comm.rank())), input_(input), output_(output),
        type_(type), op_(op), elemSize_(dataTypeSize(type)), blocks_(std::move(blocks)) {
    for (const RingLoopSlice& b : blocks_) stageElems_ = std::max(stageElems_, b.elems);
    int window = ringWindow(comm);
    stage_ = comm.scratch(static_cast<size_t>(window) * 2 * stageElems_ * elemSize_);
    window_ = window;
  }

  int window() const { return window_; }
  int numBlocks() const override { return static_cast<int>(blocks_.size()); }
  int channelOf(int block, int channels) const override { return blocks_[block].channel % channels; }
  int numSteps() const override { return 2 * (n_ - 1); }

  std::span<const char> sendData(int block, int step) override {
    if (step == 0) return bytesOf(input_, block, rank_);
    if (step < n_ - 1) return {stageOf(block, step - 1), chunkOf(block, rank_ - step).size() * elemSize_};
    int t = step - (n_ - 1);
    return bytesOf(output_, block, rank_ + 1 - t);
  }

  std::span<char> recvTarget(int block, int step) override {
    if (step <= n_ - 2) return {stageOf(block, step), chunkOf(block, rank_ - step - 1).size() * elemSize_};
    int t = step - (n_ - 1);
    std::span<const char> span = bytesOf(output_, block, rank_ - t);
    return {const_cast<char*>(span.data()), span.size()};
  }

  void onReceived(int block, int step) override {
    if (step > n_ - 2) return;
    int chunk = rank_ - step - 1;
    Range range = chunkOf(block, chunk);
    const char* mine = input_ + range.begin * elemSize_;
    ReduceKind kind = baseReduceKind(op_.kind);
    if (step < n_ - 2) {
      reduceArrived(comm_, type_, kind, stageOf(block, step), stageOf(block, step), mine, range.size());
    } else {
      char* out = output_ + range.begin * elemSize_;
      reduceArrived(comm_, type_, kind, out, stageOf(block, step), mine, range.size());
      finishReduction(comm_, out, range.size(), type_, op_, n_);
    }
  }

 private:
  Range chunkOf(int block, int chunk) const {
    const RingLoopSlice& b = blocks_[block];
    const size_t begin = b.base + static_cast<size_t>(ringMod(chunk, n_)) * b.stride + b.begin;
    return Range{std::min(begin, b.end), std::min(begin + b.elems, b.end)};
  }
  std::span<const char> bytesOf(const char* buf, int block, int chunk) const {
    Range range = chunkOf(block, chunk);
    return {buf + range.begin * elemSize_, range.size() * elemSize_};
  }
  char* stageOf(int block, int step) const {
    size_t slot = static_cast<size_t>(block % window_) * 2 + (step % 2);
    return stage_ + slot * stageElems_ * elemSize_;
  }

  const Communicator& comm_;  // its options say whether data is reduced (reduceArrived)
  const int n_;
  const int rank_;  // ring position (NodeLayout::ringPosition): chunks are numbered by position
  const char* input_;
  char* output_;
  const DataType type_;
  const ReduceOp op_;
  const size_t elemSize_;
  const std::vector<RingLoopSlice> blocks_;
  size_t stageElems_ = 1;  // the largest chunk slice: a staging slot's size
  char* stage_ = nullptr;
  int window_ = 1;
};

}  // namespace

Status ringAllReduce(Communicator& comm, const void* input, void* recv, size_t count, DataType type, const ReduceOp& op,
                     uint64_t seq, int channels, Protocol protocol) {
  RingAllReducePass pass(comm, static_cast<const char*>(input), static_cast<char*>(recv), type, op,
                         ringAllReduceSlicesFor(comm, type, count, channels, protocol));
  return runRingPipeline(comm, pass, OpCode::kAllReduce, seq, pass.window(), channels);
}

}  // namespace nshim

// Ring allreduce = ring reduce-scatter followed by ring allgather, NCCL's algorithm for large
// messages. Each block of n·slice elements is cut into n chunks; in steps 0..n-2 rank r sends chunk
// r-s (its input, then the partial sums it received) and adds the chunk r-s-1 arriving from r-1;
// after step n-2 it holds the full sum of chunk r+1. Steps n-1..2n-3 circulate the finished chunks.
// Wire bytes per rank: 2(n-1)/n of the buffer. The slice shrinks so that the buffer makes at least
// one block per NCCL channel where it can; block b travels on channel b % channels.
#include <vector>

#include "collectives/allreduce_algorithms.h"
#include "collectives/collective_support.h"
#include "collectives/reduce.h"
#include "collectives/ring_pipeline.h"

namespace nshim {

namespace {

class RingAllReducePass final : public RingPass {
 public:
  RingAllReducePass(Communicator& comm, const char* input, char* output, size_t count, DataType type,
                    const ReduceOp& op, int channels)
      : comm_(comm), n_(comm.nranks()), rank_(comm.nodes().ringPosition(comm.rank())), input_(input), output_(output),
        count_(count), type_(type), op_(op), elemSize_(dataTypeSize(type)),
        blockElems_(ringAllReduceSliceElements(comm, type, count, channels) * n_),
        blocks_(static_cast<int>((count + blockElems_ - 1) / blockElems_)) {
    int window = ringWindow(comm);
    stage_ = comm.scratch(static_cast<size_t>(window) * 2 * (blockElems_ / n_) * elemSize_);
    window_ = window;
  }

  int window() const { return window_; }
  int numBlocks() const override { return blocks_; }
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
    size_t base = static_cast<size_t>(block) * blockElems_;
    size_t blockCount = std::min(blockElems_, count_ - base);
    Range part = partRange(blockCount, n_, ringMod(chunk, n_));
    return Range{base + part.begin, base + part.end};
  }
  std::span<const char> bytesOf(const char* buf, int block, int chunk) const {
    Range range = chunkOf(block, chunk);
    return {buf + range.begin * elemSize_, range.size() * elemSize_};
  }
  char* stageOf(int block, int step) const {
    size_t slot = static_cast<size_t>(block % window_) * 2 + (step % 2);
    return stage_ + slot * (blockElems_ / n_) * elemSize_;
  }

  const Communicator& comm_;  // its options say whether data is reduced (reduceArrived)
  const int n_;
  const int rank_;  // ring position (NodeLayout::ringPosition): chunks are numbered by position
  const char* input_;
  char* output_;
  const size_t count_;
  const DataType type_;
  const ReduceOp op_;
  const size_t elemSize_;
  const size_t blockElems_;
  const int blocks_;
  char* stage_ = nullptr;
  int window_ = 1;
};

}  // namespace

Status ringAllReduce(Communicator& comm, const void* input, void* recv, size_t count, DataType type, const ReduceOp& op,
                     uint64_t seq, int channels) {
  RingAllReducePass pass(comm, static_cast<const char*>(input), static_cast<char*>(recv), count, type, op, channels);
  return runRingPipeline(comm, pass, OpCode::kAllReduce, seq, pass.window(), channels);
}

}  // namespace nshim

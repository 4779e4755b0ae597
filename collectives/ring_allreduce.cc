// Ring allreduce = ring reduce-scatter followed by ring allgather, NCCL's algorithm for large
// messages. Each block of n·slice elements is cut into n chunks; in steps 0..n-2 rank r sends chunk
// r-s (its input, then the partial sums it received) and adds the chunk r-s-1 arriving from r-1;
// after step n-2 it holds the full sum of chunk r+1. Steps n-1..2n-3 circulate the finished chunks.
// Wire bytes per rank: 2(n-1)/n of the buffer. Small messages on 2^k ranks go to recursive doubling.
#include <vector>

#include "collectives/collective_support.h"
#include "collectives/collectives.h"
#include "collectives/reduce.h"
#include "collectives/ring_pipeline.h"

namespace nshim {

Status recursiveDoublingAllReduce(Communicator& comm, const void* input, void* recv, size_t count,
                                  DataType type, const ReduceOp& op, uint64_t seq);

namespace {

class RingAllReducePass final : public RingPass {
 public:
  RingAllReducePass(Communicator& comm, const char* input, char* output, size_t count, DataType type,
                    const ReduceOp& op)
      : n_(comm.nranks()), rank_(comm.rank()), input_(input), output_(output), count_(count), type_(type),
        op_(op), elemSize_(dataTypeSize(type)), blockElems_(sliceElements(comm, type) * n_),
        blocks_(static_cast<int>((count + blockElems_ - 1) / blockElems_)) {
    int window = ringWindow(comm);
    stage_ = comm.scratch(static_cast<size_t>(window) * 2 * sliceElements(comm, type) * elemSize_);
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
      reduceTo(type_, kind, stageOf(block, step), stageOf(block, step), mine, range.size());
    } else {
      char* out = output_ + range.begin * elemSize_;
      reduceTo(type_, kind, out, stageOf(block, step), mine, range.size());
      finishAverage(out, range.size(), type_, op_, n_);
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

  const int n_;
  const int rank_;
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

Status allReduce(Communicator& comm, const void* send, void* recv, size_t count, DataType type,
                 const ReduceOp& op) {
  NS_RETURN_IF_ERROR(validateCollective(comm, "allreduce", send, recv, count, type, &op, -1, {true, true}));
  uint64_t seq = comm.nextCollectiveSeq();
  if (count == 0) return Status::Ok();
  std::vector<char> scaled;
  const void* input = preScaledInput(send, count, type, op, &scaled);
  if (comm.nranks() == 1) {
    copyElements(recv, input, count, type);
    finishAverage(recv, count, type, op, 1);
    return Status::Ok();
  }
  int n = comm.nranks();
  bool powerOfTwo = (n & (n - 1)) == 0;
  if (powerOfTwo && count * dataTypeSize(type) <= comm.options().smallAllReduceBytes) {
    return recursiveDoublingAllReduce(comm, input, recv, count, type, op, seq);
  }
  RingAllReducePass pass(comm, static_cast<const char*>(input), static_cast<char*>(recv), count, type, op);
  return runRingPipeline(comm, pass, OpCode::kAllReduce, seq, pass.window());
}

}  // namespace nshim

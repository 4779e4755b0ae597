// The reduce-scatter entry (NCCL's PAT where chosen: pat_reduce_scatter.cc) and the ring
// reduce-scatter: in steps 0..n-2 rank r sends the partial sum of block r-s-1 to r+1 (its own
// input at step 0) and adds its input to block r-s-2 arriving from r-1; the last arrival is block r,
// which becomes the result. Blocks are cut into NCCL's slices (ringSlicesFor) and pipelined, each
// slice on its channel. Wire bytes per rank: (n-1)/n of the input buffer.
#include <vector>

#include "collectives/collective_support.h"
#include "collectives/collectives.h"
#include "collectives/pat_algorithms.h"
#include "collectives/reduce.h"
#include "collectives/ring_pipeline.h"
#include "model/pat_schedule.h"

namespace nshim {
namespace {

class RingReduceScatterPass final : public RingPass {
 public:
  RingReduceScatterPass(Communicator& comm, const char* input, char* output, size_t perRank, DataType type,
                        const ReduceOp& op, std::vector<RingSlice> slices)
      : comm_(comm), n_(comm.nranks()), rank_(comm.nodes().ringPosition(comm.rank())), nodes_(comm.nodes()),
        input_(input), output_(output), perRank_(perRank), type_(type), op_(op), elemSize_(dataTypeSize(type)),
        slices_(std::move(slices)), stageElems_(largestSlice(slices_)), window_(ringWindow(comm)) {
    stage_ = comm.scratch(static_cast<size_t>(window_) * 2 * stageElems_ * elemSize_);  // scratch follows the bytes
  }

  int numBlocks() const override { return static_cast<int>(slices_.size()); }
  int channelOf(int block, int channels) const override { return slices_[block].channel % channels; }
  int numSteps() const override { return n_ - 1; }

  std::span<const char> sendData(int block, int step) override {
    size_t elems = sliceSize(block);
    if (step == 0) return {inputSlice(block, rank_ - 1), elems * elemSize_};
    return {stageOf(block, step - 1), elems * elemSize_};
  }
  std::span<char> recvTarget(int block, int step) override {
    return {stageOf(block, step), sliceSize(block) * elemSize_};
  }
  void onReceived(int block, int step) override {
    size_t elems = sliceSize(block);
    ReduceKind kind = baseReduceKind(op_.kind);
    const char* mine = inputSlice(block, rank_ - step - 2);
    if (step < n_ - 2) {
      reduceArrived(comm_, type_, kind, stageOf(block, step), stageOf(block, step), mine, elems);
    } else {
      char* out = output_ + slices_[block].begin * elemSize_;
      reduceArrived(comm_, type_, kind, out, stageOf(block, step), mine, elems);
      finishReduction(comm_, out, elems, type_, op_, n_);
    }
  }

 private:
  static size_t largestSlice(const std::vector<RingSlice>& slices) {
    size_t largest = 1;
    for (const RingSlice& s : slices) largest = std::max(largest, s.elems);
    return largest;
  }
  size_t sliceSize(int block) const { return slices_[block].elems; }
  const char* inputSlice(int block, int owner) const {
    size_t offset =
        static_cast<size_t>(nodes_.rankAtRingPosition(ringMod(owner, n_))) * perRank_ + slices_[block].begin;
    return input_ + offset * elemSize_;
  }
  char* stageOf(int block, int step) const {
    size_t slot = static_cast<size_t>(block % window_) * 2 + (step % 2);
    return stage_ + slot * stageElems_ * elemSize_;
  }

  const Communicator& comm_;  // its options say whether data is reduced (reduceArrived)
  const int n_;
  const int rank_;  // ring position (NodeLayout::ringPosition); block owners are positions too
  const NodeLayout& nodes_;
  const char* input_;
  char* output_;
  const size_t perRank_;
  const DataType type_;
  const ReduceOp op_;
  const size_t elemSize_;
  const std::vector<RingSlice> slices_;
  const size_t stageElems_;  // the largest slice: a staging slot's size
  const int window_;
  char* stage_ = nullptr;
};

}  // namespace

Status reduceScatter(Communicator& comm, const void* send, void* recv, size_t recvCount, DataType type,
                     const ReduceOp& op, CallChoice choice) {
  NS_RETURN_IF_ERROR(validateCollective(comm, "reducescatter", send, recv, recvCount, type, &op, -1, {true, true}));
  const CallProtocol callProtocol(comm, choice.protocol);  // the call's protocol, Simple again after
  uint64_t seq = comm.nextCollectiveSeq();
  if (recvCount == 0) return Status::Ok();
  std::vector<char> scaled;
  const void* input = preScaledInput(send, recvCount * comm.nranks(), type, op, &scaled);
  if (comm.nranks() == 1) {
    copyElements(recv, input, recvCount, type);
    finishAverage(recv, recvCount, type, op, 1);
    return Status::Ok();
  }
  const Algorithm algorithm = choice.algorithm != Algorithm::kAuto ? choice.algorithm : comm.options().algorithm;
  if (algorithm == Algorithm::kPat && patRuns(comm.nranks(), comm.nodes().nodes())) {
    return patReduceScatter(comm, static_cast<const char*>(input), static_cast<char*>(recv), recvCount, type, op, seq,
                            channelsOf(comm, choice));
  }
  // In-place (recv inside send) is safe: block r of the input is read only by the final combine of
  // each slice, which writes the same slice of the output.
  const int channels = channelsOf(comm, choice);
  RingReduceScatterPass pass(comm, static_cast<const char*>(input), static_cast<char*>(recv), recvCount, type, op,
                             ringSlicesFor(comm, type, recvCount, channels, choice.protocol));
  return runRingPipeline(comm, pass, OpCode::kReduceScatter, seq, ringWindow(comm), channels);
}

}  // namespace nshim

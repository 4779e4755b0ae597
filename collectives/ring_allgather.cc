// The allgather entry (NCCL's PAT where chosen: pat_allgather.cc) and the ring allgather: rank r
// first places its block at r, then in steps 0..n-2 forwards block r-s to r+1 and receives block
// r-s-1 from r-1 straight into the output. Each rank's block is cut into NCCL's slices
// (ringSlicesFor), which travel the ring independently (pipelined), each on its channel. Wire bytes
// per rank: (n-1)/n of the output.
#include "collectives/collective_support.h"
#include "collectives/collectives.h"
#include "collectives/pat_algorithms.h"
#include "collectives/ring_pipeline.h"
#include "model/pat_schedule.h"

namespace nshim {
namespace {

class RingAllGatherPass final : public RingPass {
 public:
  RingAllGatherPass(Communicator& comm, char* output, size_t perRank, DataType type, std::vector<RingSlice> slices)
      : n_(comm.nranks()), rank_(comm.nodes().ringPosition(comm.rank())), nodes_(comm.nodes()), output_(output),
        perRank_(perRank), elemSize_(dataTypeSize(type)), slices_(std::move(slices)) {}

  int numBlocks() const override { return static_cast<int>(slices_.size()); }
  int channelOf(int block, int channels) const override { return slices_[block].channel % channels; }
  int numSteps() const override { return n_ - 1; }
  std::span<const char> sendData(int block, int step) override { return slice(block, rank_ - step); }
  std::span<char> recvTarget(int block, int step) override {
    std::span<const char> span = slice(block, rank_ - step - 1);
    return {const_cast<char*>(span.data()), span.size()};
  }
  void onReceived(int, int) override {}

 private:
  std::span<const char> slice(int block, int owner) const {
    const RingSlice& s = slices_[block];
    size_t offset = static_cast<size_t>(nodes_.rankAtRingPosition(ringMod(owner, n_))) * perRank_ + s.begin;
    return {output_ + offset * elemSize_, s.elems * elemSize_};
  }

  const int n_;
  const int rank_;  // ring position (NodeLayout::ringPosition); block owners are positions too
  const NodeLayout& nodes_;
  char* output_;
  const size_t perRank_;
  const size_t elemSize_;
  const std::vector<RingSlice> slices_;
};

}  // namespace

Status allGather(Communicator& comm, const void* send, void* recv, size_t sendCount, DataType type, CallChoice choice) {
  NS_RETURN_IF_ERROR(validateCollective(comm, "allgather", send, recv, sendCount, type, nullptr, -1, {true, true}));
  const CallProtocol callProtocol(comm, choice.protocol);  // the call's protocol, Simple again after
  uint64_t seq = comm.nextCollectiveSeq();
  if (sendCount == 0) return Status::Ok();
  char* output = static_cast<char*>(recv);
  copyOwnBlock(comm, output + comm.rank() * sendCount * dataTypeSize(type), send, sendCount, type);
  if (comm.nranks() == 1) return Status::Ok();
  const Algorithm algorithm = choice.algorithm != Algorithm::kAuto ? choice.algorithm : comm.options().algorithm;
  if (algorithm == Algorithm::kPat && patRuns(comm.nranks(), comm.nodes().nodes())) {
    return patAllGather(comm, output, sendCount, type, seq, channelsOf(comm, choice));
  }
  const int channels = channelsOf(comm, choice);
  RingAllGatherPass pass(comm, output, sendCount, type,
                         ringSlicesFor(comm, type, sendCount, channels, choice.protocol));
  return runRingPipeline(comm, pass, OpCode::kAllGather, seq, ringWindow(comm), channels);
}

}  // namespace nshim

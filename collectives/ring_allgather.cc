// The allgather entry (NCCL's PAT where chosen: pat_allgather.cc) and the ring allgather: rank r first places its block at r, then in steps 0..n-2 forwards block r-s to
// r+1 and receives block r-s-1 from r-1 straight into the output. Each rank's block is cut into
// slices that travel the ring independently (pipelined). Wire bytes per rank: (n-1)/n of the output.
#include "collectives/collective_support.h"
#include "collectives/collectives.h"
#include "collectives/pat_algorithms.h"
#include "collectives/ring_pipeline.h"
#include "model/pat_schedule.h"

namespace nshim {
namespace {

class RingAllGatherPass final : public RingPass {
 public:
  RingAllGatherPass(Communicator& comm, char* output, size_t perRank, DataType type)
      : n_(comm.nranks()), rank_(comm.nodes().ringPosition(comm.rank())), nodes_(comm.nodes()), output_(output),
        perRank_(perRank), elemSize_(dataTypeSize(type)), sliceElems_(ringSliceElements(comm, type, perRank)),
        blocks_(static_cast<int>((perRank + sliceElems_ - 1) / sliceElems_)) {}

  int numBlocks() const override { return blocks_; }
  int numSteps() const override { return n_ - 1; }
  std::span<const char> sendData(int block, int step) override { return slice(block, rank_ - step); }
  std::span<char> recvTarget(int block, int step) override {
    std::span<const char> span = slice(block, rank_ - step - 1);
    return {const_cast<char*>(span.data()), span.size()};
  }
  void onReceived(int, int) override {}

 private:
  std::span<const char> slice(int block, int owner) const {
    size_t begin = static_cast<size_t>(block) * sliceElems_;
    size_t elems = std::min(sliceElems_, perRank_ - begin);
    size_t offset = static_cast<size_t>(nodes_.rankAtRingPosition(ringMod(owner, n_))) * perRank_ + begin;
    return {output_ + offset * elemSize_, elems * elemSize_};
  }

  const int n_;
  const int rank_;  // ring position (NodeLayout::ringPosition); block owners are positions too
  const NodeLayout& nodes_;
  char* output_;
  const size_t perRank_;
  const size_t elemSize_;
  const size_t sliceElems_;
  const int blocks_;
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
  RingAllGatherPass pass(comm, output, sendCount, type);
  return runRingPipeline(comm, pass, OpCode::kAllGather, seq, ringWindow(comm), channelsOf(comm, choice));
}

}  // namespace nshim

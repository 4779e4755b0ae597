// allReduce(): validation, the cases every algorithm shares (nothing to do, one rank), and the
// choice of algorithm: what the caller says for this op (a trace's record of NCCL's choice), else
// the communicator's options (NCCLSHIM_ALGO), else the ring with recursive doubling for small
// buffers on 2^k ranks.
#include <algorithm>
#include <vector>

#include "collectives/allreduce_algorithms.h"
#include "collectives/collective_support.h"
#include "collectives/collectives.h"

namespace nshim {

const char* allReduceRouteName(AllReduceRoute route) {
  switch (route) {
    case AllReduceRoute::kCopy: return "copy";
    case AllReduceRoute::kRecursiveDoubling: return "rd";
    case AllReduceRoute::kTree: return "tree";
    case AllReduceRoute::kRing: break;
  }
  return "ring";
}

AllReducePlan planAllReduce(const CollectiveOptions& options, AlgorithmChoice choice, int nranks, size_t bytes) {
  if (nranks == 1) return {AllReduceRoute::kCopy, 0};
  const Algorithm algorithm = choice.algorithm != Algorithm::kAuto ? choice.algorithm : options.algorithm;
  const int channels = std::max(1, choice.channels > 0 ? choice.channels : options.channels);
  if (algorithm == Algorithm::kTree) return {AllReduceRoute::kTree, channels};
  const bool powerOfTwo = (nranks & (nranks - 1)) == 0;
  if (algorithm == Algorithm::kAuto && powerOfTwo && bytes <= options.smallAllReduceBytes) {
    return {AllReduceRoute::kRecursiveDoubling, 0};
  }
  return {AllReduceRoute::kRing, channels};
}

Status allReduce(Communicator& comm, const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
                 AlgorithmChoice choice) {
  NS_RETURN_IF_ERROR(validateCollective(comm, "allreduce", send, recv, count, type, &op, -1, {true, true}));
  const uint64_t seq = comm.nextCollectiveSeq();
  if (count == 0) return Status::Ok();
  std::vector<char> scaled;
  const void* input = preScaledInput(send, count, type, op, &scaled);
  const AllReducePlan plan = planAllReduce(comm.options(), choice, comm.nranks(), count * dataTypeSize(type));
  switch (plan.route) {
    case AllReduceRoute::kCopy:
      copyElements(recv, input, count, type);
      finishAverage(recv, count, type, op, 1);
      return Status::Ok();
    case AllReduceRoute::kTree: return treeAllReduce(comm, input, recv, count, type, op, seq, plan.channels);
    case AllReduceRoute::kRecursiveDoubling: return recursiveDoublingAllReduce(comm, input, recv, count, type, op, seq);
    case AllReduceRoute::kRing: break;
  }
  return ringAllReduce(comm, input, recv, count, type, op, seq, plan.channels);
}

}  // namespace nshim

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

Status allReduce(Communicator& comm, const void* send, void* recv, size_t count, DataType type, const ReduceOp& op,
                 CallChoice choice) {
  NS_RETURN_IF_ERROR(validateCollective(comm, "allreduce", send, recv, count, type, &op, -1, {true, true}));
  const CallProtocol callProtocol(comm, choice.protocol);  // the call's protocol, Simple again after
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
  return ringAllReduce(comm, input, recv, count, type, op, seq, plan.channels, choice.protocol);
}

}  // namespace nshim

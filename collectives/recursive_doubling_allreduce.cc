// Recursive-doubling allreduce for small messages on a power-of-two number of ranks: log2(n)
// rounds; in round k rank r swaps its whole partial result with rank r xor 2^k and combines.
// It trades bandwidth for latency (each round moves the full buffer), so it is only chosen below
// CollectiveOptions::smallAllReduceBytes; NCCLSHIM_ALGO=ring turns it off.
#include "collectives/abort_on_error.h"
#include "collectives/allreduce_algorithms.h"
#include "collectives/collective_support.h"
#include "collectives/op_tags.h"
#include "collectives/reduce.h"

namespace nshim {

Status recursiveDoublingAllReduce(Communicator& comm, const void* input, void* recv, size_t count, DataType type,
                                  const ReduceOp& op, uint64_t seq) {
  Transport& transport = comm.transport();
  const size_t bytes = count * dataTypeSize(type);
  char* stage = comm.scratch(bytes);
  copyElements(recv, input, count, type);
  Deadline deadline = comm.operationDeadline();
  ReduceKind kind = baseReduceKind(op.kind);
  int round = 0;
  for (int distance = 1; distance < comm.nranks(); distance <<= 1, ++round) {
    int partner = comm.rank() ^ distance;
    uint64_t tag = makeTag(seq, OpCode::kAllReduceSmall, round);
    Request recvReq, sendReq;
    recvReq.channel = sendReq.channel = 0;
    AbortOnError guard(transport);
    NS_RETURN_IF_ERROR(transport.postRecv(partner, tag, stage, bytes, &recvReq));
    NS_RETURN_IF_ERROR(transport.postSend(partner, tag, recv, bytes, &sendReq));
    Request* both[2] = {&recvReq, &sendReq};
    NS_RETURN_IF_ERROR(guard.completed(transport.waitAll(both, deadline)));
    reduceArrived(comm, type, kind, recv, recv, stage, count);
  }
  finishReduction(comm, recv, count, type, op, comm.nranks());
  return Status::Ok();
}

}  // namespace nshim

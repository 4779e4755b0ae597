// ForwardBackend: collectives, point-to-point, groups and reduction operators, forwarded to the real
// NCCL unchanged (forward_backend.h). This is the hot path: one null check and one indirect call.
#include "libshim/errors.h"
#include "libshim/forward_backend.h"

namespace nshim {

ncclResult_t ForwardBackend::allReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                                       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  NS_FORWARD(ncclAllReduce, send, recv, count, type, op, comm, stream);
}

ncclResult_t ForwardBackend::broadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                       ncclComm_t comm, cudaStream_t stream, const char* fn) {
  NS_FORWARD(ncclBroadcast, send, recv, count, type, root, comm, stream);
}

ncclResult_t ForwardBackend::bcast(void* buff, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                                   cudaStream_t stream) {
  NS_FORWARD(ncclBcast, buff, count, type, root, comm, stream);
}

ncclResult_t ForwardBackend::reduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                                    int root, ncclComm_t comm, cudaStream_t stream) {
  NS_FORWARD(ncclReduce, send, recv, count, type, op, root, comm, stream);
}

ncclResult_t ForwardBackend::allGather(const void* send, void* recv, size_t sendCount, ncclDataType_t type,
                                       ncclComm_t comm, cudaStream_t stream) {
  NS_FORWARD(ncclAllGather, send, recv, sendCount, type, comm, stream);
}

ncclResult_t ForwardBackend::reduceScatter(const void* send, void* recv, size_t recvCount, ncclDataType_t type,
                                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  NS_FORWARD(ncclReduceScatter, send, recv, recvCount, type, op, comm, stream);
}

ncclResult_t ForwardBackend::allToAll(const void* send, void* recv, size_t count, ncclDataType_t type,
                                      ncclComm_t comm, cudaStream_t stream) {
  NS_FORWARD(ncclAlltoAll, send, recv, count, type, comm, stream);
}

ncclResult_t ForwardBackend::gather(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                    ncclComm_t comm, cudaStream_t stream) {
  NS_FORWARD(ncclGather, send, recv, count, type, root, comm, stream);
}

ncclResult_t ForwardBackend::scatter(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                     ncclComm_t comm, cudaStream_t stream) {
  NS_FORWARD(ncclScatter, send, recv, count, type, root, comm, stream);
}

ncclResult_t ForwardBackend::send(const void* buff, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                                  cudaStream_t stream) {
  NS_FORWARD(ncclSend, buff, count, type, peer, comm, stream);
}

ncclResult_t ForwardBackend::recv(void* buff, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                                  cudaStream_t stream) {
  NS_FORWARD(ncclRecv, buff, count, type, peer, comm, stream);
}

ncclResult_t ForwardBackend::groupStart() { NS_FORWARD(ncclGroupStart); }
ncclResult_t ForwardBackend::groupEnd() { NS_FORWARD(ncclGroupEnd); }
ncclResult_t ForwardBackend::groupSimulateEnd(ncclSimInfo_t* info) { NS_FORWARD(ncclGroupSimulateEnd, info); }

ncclResult_t ForwardBackend::redOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t type,
                                                  ncclScalarResidence_t residence, ncclComm_t comm) {
  NS_FORWARD(ncclRedOpCreatePreMulSum, op, scalar, type, residence, comm);
}

ncclResult_t ForwardBackend::redOpDestroy(ncclRedOp_t op, ncclComm_t comm) { NS_FORWARD(ncclRedOpDestroy, op, comm); }

}  // namespace nshim

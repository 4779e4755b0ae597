// Exported NCCL collectives, point-to-point, group and reduction-operator functions: thin wrappers
// over the active backend.
#include "libshim/api_guard.h"
#include "libshim/backend.h"

using nshim::NcclBackend;
using nshim::guardedCall;

NS_API ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return guardedCall("ncclAllReduce", [&](NcclBackend& backend) {
    return backend.allReduce(sendbuff, recvbuff, count, datatype, op, comm, stream);
  });
}

NS_API ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  int root, ncclComm_t comm, cudaStream_t stream) {
  return guardedCall("ncclBroadcast", [&](NcclBackend& backend) {
    return backend.broadcast(sendbuff, recvbuff, count, datatype, root, comm, stream, "ncclBroadcast");
  });
}

NS_API ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                              cudaStream_t stream) {
  return guardedCall("ncclBcast", [&](NcclBackend& backend) {
    return backend.broadcast(buff, buff, count, datatype, root, comm, stream, "ncclBcast");
  });
}

NS_API ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                               ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return guardedCall("ncclReduce", [&](NcclBackend& backend) {
    return backend.reduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream);
  });
}

NS_API ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                  ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return guardedCall("ncclAllGather", [&](NcclBackend& backend) {
    return backend.allGather(sendbuff, recvbuff, sendcount, datatype, comm, stream);
  });
}

NS_API ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                      cudaStream_t stream) {
  return guardedCall("ncclReduceScatter", [&](NcclBackend& backend) {
    return backend.reduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
  });
}

NS_API ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                 ncclComm_t comm, cudaStream_t stream) {
  return guardedCall("ncclAlltoAll", [&](NcclBackend& backend) {
    return backend.allToAll(sendbuff, recvbuff, count, datatype, comm, stream);
  });
}

NS_API ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                               int root, ncclComm_t comm, cudaStream_t stream) {
  return guardedCall("ncclGather", [&](NcclBackend& backend) {
    return backend.gather(sendbuff, recvbuff, count, datatype, root, comm, stream);
  });
}

NS_API ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                int root, ncclComm_t comm, cudaStream_t stream) {
  return guardedCall("ncclScatter", [&](NcclBackend& backend) {
    return backend.scatter(sendbuff, recvbuff, count, datatype, root, comm, stream);
  });
}

NS_API ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                             ncclComm_t comm, cudaStream_t stream) {
  return guardedCall("ncclSend", [&](NcclBackend& backend) { return backend.send(sendbuff, count, datatype, peer, comm, stream); });
}

NS_API ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                             cudaStream_t stream) {
  return guardedCall("ncclRecv", [&](NcclBackend& backend) { return backend.recv(recvbuff, count, datatype, peer, comm, stream); });
}

NS_API ncclResult_t ncclGroupStart() {
  return guardedCall("ncclGroupStart", [&](NcclBackend& backend) { return backend.groupStart(); });
}

NS_API ncclResult_t ncclGroupEnd() {
  return guardedCall("ncclGroupEnd", [&](NcclBackend& backend) { return backend.groupEnd(); });
}

NS_API ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  return guardedCall("ncclGroupSimulateEnd", [&](NcclBackend& backend) { return backend.groupSimulateEnd(simInfo); });
}

NS_API ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                             ncclScalarResidence_t residence, ncclComm_t comm) {
  return guardedCall("ncclRedOpCreatePreMulSum", [&](NcclBackend& backend) {
    return backend.redOpCreatePreMulSum(op, scalar, datatype, residence, comm);
  });
}

NS_API ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return guardedCall("ncclRedOpDestroy", [&](NcclBackend& backend) { return backend.redOpDestroy(op, comm); });
}

NS_PNCCL_ALIAS(ncclAllReduce)
NS_PNCCL_ALIAS(ncclBroadcast)
NS_PNCCL_ALIAS(ncclBcast)
NS_PNCCL_ALIAS(ncclReduce)
NS_PNCCL_ALIAS(ncclAllGather)
NS_PNCCL_ALIAS(ncclReduceScatter)
NS_PNCCL_ALIAS(ncclAlltoAll)
NS_PNCCL_ALIAS(ncclGather)
NS_PNCCL_ALIAS(ncclScatter)
NS_PNCCL_ALIAS(ncclSend)
NS_PNCCL_ALIAS(ncclRecv)
NS_PNCCL_ALIAS(ncclGroupStart)
NS_PNCCL_ALIAS(ncclGroupEnd)
NS_PNCCL_ALIAS(ncclGroupSimulateEnd)
NS_PNCCL_ALIAS(ncclRedOpCreatePreMulSum)
NS_PNCCL_ALIAS(ncclRedOpDestroy)

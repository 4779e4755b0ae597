// Exported NCCL collectives, point-to-point, group and reduction-operator functions: thin wrappers
// over the active backend inside the API frame (api_call.h). With the record hook off an operation
// costs the frame one load and one branch; with it on, describeOp runs and the comm's sequence
// number advances.
#include "libshim/api_call.h"
#include "libshim/backend.h"

using nshim::ApiCall;
using nshim::ApiId;
using nshim::NcclBackend;
using nshim::describeOp;
using nshim::kHookNone;

NS_API ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return nshim::apiCall(
      ApiId::kAllReduce,
      [&](ApiCall& call) {
        describeOp(call, sendbuff, recvbuff, count, datatype, op, kHookNone, kHookNone, comm, stream);
      },
      [&](NcclBackend& backend) { return backend.allReduce(sendbuff, recvbuff, count, datatype, op, comm, stream); });
}

NS_API ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  int root, ncclComm_t comm, cudaStream_t stream) {
  return nshim::apiCall(
      ApiId::kBroadcast,
      [&](ApiCall& call) {
        describeOp(call, sendbuff, recvbuff, count, datatype, kHookNone, root, kHookNone, comm, stream);
      },
      [&](NcclBackend& backend) {
        return backend.broadcast(sendbuff, recvbuff, count, datatype, root, comm, stream, "ncclBroadcast");
      });
}

NS_API ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                              cudaStream_t stream) {
  return nshim::apiCall(
      ApiId::kBcast,
      [&](ApiCall& call) {
        describeOp(call, buff, buff, count, datatype, kHookNone, root, kHookNone, comm, stream);
      },
      [&](NcclBackend& backend) { return backend.bcast(buff, count, datatype, root, comm, stream); });
}

NS_API ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                               ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return nshim::apiCall(
      ApiId::kReduce,
      [&](ApiCall& call) {
        describeOp(call, sendbuff, recvbuff, count, datatype, op, root, kHookNone, comm, stream);
      },
      [&](NcclBackend& backend) {
        return backend.reduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream);
      });
}

NS_API ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                  ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return nshim::apiCall(
      ApiId::kAllGather,
      [&](ApiCall& call) {
        describeOp(call, sendbuff, recvbuff, sendcount, datatype, kHookNone, kHookNone, kHookNone, comm, stream);
      },
      [&](NcclBackend& backend) { return backend.allGather(sendbuff, recvbuff, sendcount, datatype, comm, stream); });
}

NS_API ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                      cudaStream_t stream) {
  return nshim::apiCall(
      ApiId::kReduceScatter,
      [&](ApiCall& call) {
        describeOp(call, sendbuff, recvbuff, recvcount, datatype, op, kHookNone, kHookNone, comm, stream);
      },
      [&](NcclBackend& backend) {
        return backend.reduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
      });
}

NS_API ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                 ncclComm_t comm, cudaStream_t stream) {
  return nshim::apiCall(
      ApiId::kAlltoAll,
      [&](ApiCall& call) {
        describeOp(call, sendbuff, recvbuff, count, datatype, kHookNone, kHookNone, kHookNone, comm, stream);
      },
      [&](NcclBackend& backend) { return backend.allToAll(sendbuff, recvbuff, count, datatype, comm, stream); });
}

NS_API ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                               int root, ncclComm_t comm, cudaStream_t stream) {
  return nshim::apiCall(
      ApiId::kGather,
      [&](ApiCall& call) {
        describeOp(call, sendbuff, recvbuff, count, datatype, kHookNone, root, kHookNone, comm, stream);
      },
      [&](NcclBackend& backend) { return backend.gather(sendbuff, recvbuff, count, datatype, root, comm, stream); });
}

NS_API ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                int root, ncclComm_t comm, cudaStream_t stream) {
  return nshim::apiCall(
      ApiId::kScatter,
      [&](ApiCall& call) {
        describeOp(call, sendbuff, recvbuff, count, datatype, kHookNone, root, kHookNone, comm, stream);
      },
      [&](NcclBackend& backend) { return backend.scatter(sendbuff, recvbuff, count, datatype, root, comm, stream); });
}

NS_API ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                             ncclComm_t comm, cudaStream_t stream) {
  return nshim::apiCall(
      ApiId::kSend,
      [&](ApiCall& call) {
        describeOp(call, sendbuff, nullptr, count, datatype, kHookNone, kHookNone, peer, comm, stream);
      },
      [&](NcclBackend& backend) { return backend.send(sendbuff, count, datatype, peer, comm, stream); });
}

NS_API ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                             cudaStream_t stream) {
  return nshim::apiCall(
      ApiId::kRecv,
      [&](ApiCall& call) {
        describeOp(call, nullptr, recvbuff, count, datatype, kHookNone, kHookNone, peer, comm, stream);
      },
      [&](NcclBackend& backend) { return backend.recv(recvbuff, count, datatype, peer, comm, stream); });
}

// The hook reports the nesting depth after a start and before an end. Communicators created inside
// the group whose handles appear only at its end are reported with the outermost end.
NS_API ncclResult_t ncclGroupStart() {
  ++nshim::groupDepthOfThread();
  return nshim::apiCall(ApiId::kGroupStart, [](ApiCall&) {},
                        [&](NcclBackend& backend) { return backend.groupStart(); });
}

NS_API ncclResult_t ncclGroupEnd() {
  return nshim::creationCall(
      ApiId::kGroupEnd, [](ApiCall&) {}, [&](NcclBackend& backend) { return backend.groupEnd(); },
      [](ncclResult_t, nshim::CreatedComms& made) { nshim::leaveGroup(made); });
}

// Like ncclGroupEnd, a successful simulated end leaves the group (NCCL); a refused one (GPU-free)
// leaves it open.
NS_API ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  return nshim::creationCall(
      ApiId::kGroupSimulateEnd, [&](ApiCall& call) { call.handle = simInfo; },
      [&](NcclBackend& backend) { return backend.groupSimulateEnd(simInfo); },
      [](ncclResult_t result, nshim::CreatedComms& made) {
        if (result == ncclSuccess) nshim::leaveGroup(made);
      });
}

NS_API ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                             ncclScalarResidence_t residence, ncclComm_t comm) {
  return nshim::apiCall(
      ApiId::kRedOpCreatePreMulSum,
      [&](ApiCall& call) {
        call.datatype = datatype;
        call.flags = residence;
        call.handle = scalar;
        call.comm = comm;
      },
      [&](NcclBackend& backend) { return backend.redOpCreatePreMulSum(op, scalar, datatype, residence, comm); });
}

NS_API ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return nshim::apiCall(
      ApiId::kRedOpDestroy,
      [&](ApiCall& call) {
        call.redop = op;
        call.comm = comm;
      },
      [&](NcclBackend& backend) { return backend.redOpDestroy(op, comm); });
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

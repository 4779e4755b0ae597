// Exported NCCL collectives, point-to-point, group and reduction-operator functions: each passes its
// arguments to the active backend inside the API frame (api_call.h). With the record hook off an
// operation costs the frame one load and one branch; with it on, its arguments go to the
// recorded-operation body all operations share (api_call.cc) and the comm's sequence number advances.
#include "libshim/api_call.h"

#include "common/hot_section.h"

// The functions a job calls on every step: next to each other in the hot code (hot_section.h);
// their pnccl* aliases carry the same attribute.
#define NS_API_HOT NS_API NSHIM_HOT_CODE
#define NS_PNCCL_ALIAS_HOT(name)                                         \
  extern "C" __attribute__((visibility("default"), alias("nccl" #name))) \
  NSHIM_HOT_CODE decltype(nccl##name) pnccl##name;

using nshim::ApiCall;
using nshim::ApiId;
using nshim::CreatedComms;
using nshim::kHookNone;
using nshim::OpArgs;

NS_API_HOT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return nshim::operationCall<ApiId::kAllReduce>(
      OpArgs{sendbuff, recvbuff, count, datatype, op, kHookNone, kHookNone, comm, stream}, sendbuff, recvbuff, count,
      datatype, op, comm, stream);
}

NS_API_HOT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                      int root, ncclComm_t comm, cudaStream_t stream) {
  return nshim::operationCall<ApiId::kBroadcast>(
      OpArgs{sendbuff, recvbuff, count, datatype, kHookNone, root, kHookNone, comm, stream}, sendbuff, recvbuff, count,
      datatype, root, comm, stream);
}

NS_API_HOT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                                  cudaStream_t stream) {
  return nshim::operationCall<ApiId::kBcast>(
      OpArgs{buff, buff, count, datatype, kHookNone, root, kHookNone, comm, stream}, buff, count, datatype, root, comm,
      stream);
}

NS_API_HOT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                   ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return nshim::operationCall<ApiId::kReduce>(
      OpArgs{sendbuff, recvbuff, count, datatype, op, root, kHookNone, comm, stream}, sendbuff, recvbuff, count,
      datatype, op, root, comm, stream);
}

NS_API_HOT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                                      ncclComm_t comm, cudaStream_t stream) {
  return nshim::operationCall<ApiId::kAllGather>(
      OpArgs{sendbuff, recvbuff, sendcount, datatype, kHookNone, kHookNone, kHookNone, comm, stream}, sendbuff,
      recvbuff, sendcount, datatype, comm, stream);
}

NS_API_HOT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                          ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                          cudaStream_t stream) {
  return nshim::operationCall<ApiId::kReduceScatter>(
      OpArgs{sendbuff, recvbuff, recvcount, datatype, op, kHookNone, kHookNone, comm, stream}, sendbuff, recvbuff,
      recvcount, datatype, op, comm, stream);
}

NS_API_HOT ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                     ncclComm_t comm, cudaStream_t stream) {
  return nshim::operationCall<ApiId::kAlltoAll>(
      OpArgs{sendbuff, recvbuff, count, datatype, kHookNone, kHookNone, kHookNone, comm, stream}, sendbuff, recvbuff,
      count, datatype, comm, stream);
}

NS_API_HOT ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                   int root, ncclComm_t comm, cudaStream_t stream) {
  return nshim::operationCall<ApiId::kGather>(
      OpArgs{sendbuff, recvbuff, count, datatype, kHookNone, root, kHookNone, comm, stream}, sendbuff, recvbuff, count,
      datatype, root, comm, stream);
}

NS_API_HOT ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                    int root, ncclComm_t comm, cudaStream_t stream) {
  return nshim::operationCall<ApiId::kScatter>(
      OpArgs{sendbuff, recvbuff, count, datatype, kHookNone, root, kHookNone, comm, stream}, sendbuff, recvbuff, count,
      datatype, root, comm, stream);
}

NS_API_HOT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                                 cudaStream_t stream) {
  return nshim::operationCall<ApiId::kSend>(
      OpArgs{sendbuff, nullptr, count, datatype, kHookNone, kHookNone, peer, comm, stream}, sendbuff, count, datatype,
      peer, comm, stream);
}

NS_API_HOT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                                 cudaStream_t stream) {
  return nshim::operationCall<ApiId::kRecv>(
      OpArgs{nullptr, recvbuff, count, datatype, kHookNone, kHookNone, peer, comm, stream}, recvbuff, count, datatype,
      peer, comm, stream);
}

// The hook reports the nesting depth after a start and before an end. Communicators created inside
// the group whose handles appear only at its end are reported with the outermost end.
NS_API_HOT ncclResult_t ncclGroupStart() {
  ++nshim::groupDepthOfThread();
  return nshim::groupCall<ApiId::kGroupStart>([] { return nshim::apiCall<ApiId::kGroupStart>([](ApiCall&) {}); });
}

NS_API_HOT ncclResult_t ncclGroupEnd() {
  return nshim::groupCall<ApiId::kGroupEnd>([] {
    const ncclResult_t result = nshim::creationCall<ApiId::kGroupEnd>(
        [](ApiCall&) {}, [](ncclResult_t, CreatedComms& made) { nshim::leaveGroup(made); });
    // The group's timed calls, held for its end (gpu_timer.h): written now, after the end's record.
    if (nshim::groupDepthOfThread() == 0 && nshim::gpuTimingEnabled()) nshim::gpuTimerRecordGroupCall(nullptr, true);
    return result;
  });
}

// Like ncclGroupEnd, a successful simulated end leaves the group (NCCL); a refused one (GPU-free)
// leaves it open.
NS_API_HOT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  return nshim::creationCall<ApiId::kGroupSimulateEnd>([&](ApiCall& call) { call.handle = simInfo; },
                                                       [](ncclResult_t result, CreatedComms& made) {
                                                         if (result == ncclSuccess) nshim::leaveGroup(made);
                                                       },
                                                       simInfo);
}

NS_API_HOT ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                                 ncclScalarResidence_t residence, ncclComm_t comm) {
  return nshim::apiCall<ApiId::kRedOpCreatePreMulSum>(
      [&](ApiCall& call) {
        call.datatype = datatype;
        call.flags = residence;
        call.handle = scalar;
        call.comm = comm;
      },
      op, scalar, datatype, residence, comm);
}

NS_API_HOT ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return nshim::apiCall<ApiId::kRedOpDestroy>(
      [&](ApiCall& call) {
        call.redop = op;
        call.comm = comm;
      },
      op, comm);
}

NS_NCCL_OPERATION_FUNCTIONS(NS_PNCCL_ALIAS_HOT)

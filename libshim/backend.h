// The NCCL API as a C++ interface. Every exported nccl* function is a thin extern "C" wrapper that
// calls the active backend inside the API frame (api_call.h: exception guard and record hook).
// Backends: GPU-free execution on host memory (GpuFreeBackend) and the forwarder to the real
// libnccl.so.2 (ForwardBackend), chosen once per process by NCCLSHIM_MODE (backend_select.cc).
#pragma once

#include "common/status.h"
#include "libshim/nccl_api.h"

namespace nshim {

class NcclBackend {
 public:
  virtual ~NcclBackend() = default;

  // Library and errors.
  virtual ncclResult_t getVersion(int* version) = 0;
  virtual const char* getErrorString(ncclResult_t result) = 0;
  virtual const char* getLastError(ncclComm_t comm) = 0;
  virtual ncclResult_t memAlloc(void** ptr, size_t size) = 0;
  virtual ncclResult_t memFree(void* ptr) = 0;
  virtual void resetDebugInit() {}  // deprecated in nccl.h

  // Communicator life cycle.
  virtual ncclResult_t getUniqueId(ncclUniqueId* id) = 0;
  virtual ncclResult_t commInitRankConfig(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank,
                                          ncclConfig_t* config, const char* fn) = 0;
  // ncclCommInitRank: by default ncclCommInitRankConfig without a config.
  virtual ncclResult_t commInitRank(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank) {
    return commInitRankConfig(comm, nranks, id, rank, nullptr, "ncclCommInitRank");
  }
  virtual ncclResult_t commInitRankScalable(ncclComm_t* comm, int nranks, int rank, int nIds,
                                            ncclUniqueId* ids, ncclConfig_t* config) = 0;
  virtual ncclResult_t commInitAll(ncclComm_t* comms, int ndev, const int* devlist) = 0;
  virtual ncclResult_t commSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                 ncclConfig_t* config) = 0;
  virtual ncclResult_t commShrink(ncclComm_t comm, int* excludeRanks, int excludeCount, ncclComm_t* newcomm,
                                  ncclConfig_t* config, int flags) = 0;
  virtual ncclResult_t commFinalize(ncclComm_t comm) = 0;
  virtual ncclResult_t commDestroy(ncclComm_t comm) = 0;
  virtual ncclResult_t commAbort(ncclComm_t comm) = 0;
  virtual ncclResult_t commRevoke(ncclComm_t comm, int flags) = 0;

  // Communicator queries and registration.
  virtual ncclResult_t commGetAsyncError(ncclComm_t comm, ncclResult_t* error) = 0;
  virtual ncclResult_t commCount(ncclComm_t comm, int* count) = 0;
  virtual ncclResult_t commCuDevice(ncclComm_t comm, int* device) = 0;
  virtual ncclResult_t commUserRank(ncclComm_t comm, int* rank) = 0;
  virtual ncclResult_t commRegister(ncclComm_t comm, void* buff, size_t size, void** handle) = 0;
  virtual ncclResult_t commDeregister(ncclComm_t comm, void* handle) = 0;
  virtual ncclResult_t commWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                          int flags) = 0;
  virtual ncclResult_t commWindowDeregister(ncclComm_t comm, ncclWindow_t win) = 0;

  // Reduction operators.
  virtual ncclResult_t redOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t type,
                                            ncclScalarResidence_t residence, ncclComm_t comm) = 0;
  virtual ncclResult_t redOpDestroy(ncclRedOp_t op, ncclComm_t comm) = 0;

  // Collectives and point-to-point (`fn` names the C entry point for messages and records).
  virtual ncclResult_t allReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                                 ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) = 0;
  virtual ncclResult_t broadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                 ncclComm_t comm, cudaStream_t stream, const char* fn) = 0;
  // ncclBcast: by default an in-place broadcast.
  virtual ncclResult_t bcast(void* buff, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                             cudaStream_t stream) {
    return broadcast(buff, buff, count, type, root, comm, stream, "ncclBcast");
  }
  virtual ncclResult_t reduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                              int root, ncclComm_t comm, cudaStream_t stream) = 0;
  virtual ncclResult_t allGather(const void* send, void* recv, size_t sendCount, ncclDataType_t type,
                                 ncclComm_t comm, cudaStream_t stream) = 0;
  virtual ncclResult_t reduceScatter(const void* send, void* recv, size_t recvCount, ncclDataType_t type,
                                     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) = 0;
  virtual ncclResult_t allToAll(const void* send, void* recv, size_t count, ncclDataType_t type,
                                ncclComm_t comm, cudaStream_t stream) = 0;
  virtual ncclResult_t gather(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                              ncclComm_t comm, cudaStream_t stream) = 0;
  virtual ncclResult_t scatter(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                               ncclComm_t comm, cudaStream_t stream) = 0;
  virtual ncclResult_t send(const void* buff, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                            cudaStream_t stream) = 0;
  virtual ncclResult_t recv(void* buff, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                            cudaStream_t stream) = 0;

  // Groups.
  virtual ncclResult_t groupStart() = 0;
  virtual ncclResult_t groupEnd() = 0;
  virtual ncclResult_t groupSimulateEnd(ncclSimInfo_t* info) = 0;
};

// The backend of this process, chosen at the first call by NCCLSHIM_MODE (auto | gpufree | forward);
// nullptr when NCCLSHIM_MODE names no mode, and then backendUnavailable() says why.
NcclBackend* activeBackend();
Status backendUnavailable(const char* fn);

}  // namespace nshim

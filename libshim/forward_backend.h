// The forwarding backend (capture mode): every NCCL call goes to the real libnccl.so.2, unchanged,
// through a table of function pointers resolved once (real_nccl.h). Communicator handles are the
// real NCCL's own; the record hook keeps its per-communicator state beside them (comm_table.h).
// A call adds one indirect call and a null check; errors of the real NCCL pass through untouched
// (ncclGetLastError forwards too), while the shim's own errors (no real NCCL, a function the real
// NCCL lacks) come back as ncclSystemError / ncclInvalidUsage with a message. Definitions:
// forward_backend.cc (library, communicators) and forward_ops.cc (operations, groups).
#pragma once

#include "libshim/backend.h"
#include "libshim/errors.h"
#include "libshim/real_nccl.h"

namespace nshim {

class ForwardBackend final : public NcclBackend {
 public:
  explicit ForwardBackend(const RealNccl& real) : real_(real) {}

  void resetDebugInit() override;
  ncclResult_t commInitRank(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank) override;
  ncclResult_t bcast(void* buff, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                     cudaStream_t stream) override;
  ncclResult_t getVersion(int* version) override;
  const char* getErrorString(ncclResult_t result) override;
  const char* getLastError(ncclComm_t comm) override;
  ncclResult_t memAlloc(void** ptr, size_t size) override;
  ncclResult_t memFree(void* ptr) override;

  ncclResult_t getUniqueId(ncclUniqueId* id) override;
  ncclResult_t commInitRankConfig(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank,
                                  ncclConfig_t* config, const char* fn) override;
  ncclResult_t commInitRankScalable(ncclComm_t* comm, int nranks, int rank, int nIds, ncclUniqueId* ids,
                                    ncclConfig_t* config) override;
  ncclResult_t commInitAll(ncclComm_t* comms, int ndev, const int* devlist) override;
  ncclResult_t commSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) override;
  ncclResult_t commShrink(ncclComm_t comm, int* excludeRanks, int excludeCount, ncclComm_t* newcomm,
                          ncclConfig_t* config, int flags) override;
  ncclResult_t commFinalize(ncclComm_t comm) override;
  ncclResult_t commDestroy(ncclComm_t comm) override;
  ncclResult_t commAbort(ncclComm_t comm) override;
  ncclResult_t commRevoke(ncclComm_t comm, int flags) override;

  ncclResult_t commGetAsyncError(ncclComm_t comm, ncclResult_t* error) override;
  ncclResult_t commCount(ncclComm_t comm, int* count) override;
  ncclResult_t commCuDevice(ncclComm_t comm, int* device) override;
  ncclResult_t commUserRank(ncclComm_t comm, int* rank) override;
  ncclResult_t commRegister(ncclComm_t comm, void* buff, size_t size, void** handle) override;
  ncclResult_t commDeregister(ncclComm_t comm, void* handle) override;
  ncclResult_t commWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int flags) override;
  ncclResult_t commWindowDeregister(ncclComm_t comm, ncclWindow_t win) override;

  ncclResult_t redOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t type,
                                    ncclScalarResidence_t residence, ncclComm_t comm) override;
  ncclResult_t redOpDestroy(ncclRedOp_t op, ncclComm_t comm) override;

  ncclResult_t allReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                         ncclComm_t comm, cudaStream_t stream) override;
  ncclResult_t broadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                         cudaStream_t stream, const char* fn) override;
  ncclResult_t reduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                      ncclComm_t comm, cudaStream_t stream) override;
  ncclResult_t allGather(const void* send, void* recv, size_t sendCount, ncclDataType_t type, ncclComm_t comm,
                         cudaStream_t stream) override;
  ncclResult_t reduceScatter(const void* send, void* recv, size_t recvCount, ncclDataType_t type, ncclRedOp_t op,
                             ncclComm_t comm, cudaStream_t stream) override;
  ncclResult_t allToAll(const void* send, void* recv, size_t count, ncclDataType_t type, ncclComm_t comm,
                        cudaStream_t stream) override;
  ncclResult_t gather(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                      cudaStream_t stream) override;
  ncclResult_t scatter(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                       cudaStream_t stream) override;
  ncclResult_t send(const void* buff, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                    cudaStream_t stream) override;
  ncclResult_t recv(void* buff, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                    cudaStream_t stream) override;

  ncclResult_t groupStart() override;
  ncclResult_t groupEnd() override;
  ncclResult_t groupSimulateEnd(ncclSimInfo_t* info) override;

 private:
  // A call whose function the real NCCL lacks, or every call when no real NCCL was found.
  ncclResult_t unavailable(const char* fn) const;

  const RealNccl real_;  // a copy: one load per call, no indirection
};

// The forwarding step of every ForwardBackend method: call the real function, or report it missing.
// An error of the real NCCL makes its ncclGetLastError text the newest (errors.h).
#define NS_FORWARD(name, ...)                                                 \
  do {                                                                        \
    if (auto real_fn_ = real_.name; __builtin_expect(real_fn_ != nullptr, 1)) { \
      ncclResult_t result_ = real_fn_(__VA_ARGS__);                           \
      if (__builtin_expect(result_ != ncclSuccess, 0)) noteNcclResult(result_); \
      return result_;                                                         \
    }                                                                         \
    return unavailable(#name);                                                \
  } while (0)

}  // namespace nshim

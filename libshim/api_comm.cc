// Exported NCCL communicator functions: thin wrappers over the active backend.
#include "libshim/api_guard.h"
#include "libshim/backend.h"

using nshim::NcclBackend;
using nshim::guardedCall;

NS_API ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  return guardedCall("ncclGetUniqueId", [&](NcclBackend& backend) { return backend.getUniqueId(uniqueId); });
}

NS_API ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                           ncclConfig_t* config) {
  return guardedCall("ncclCommInitRankConfig", [&](NcclBackend& backend) {
    return backend.commInitRankConfig(comm, nranks, commId, rank, config, "ncclCommInitRankConfig");
  });
}

NS_API ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return guardedCall("ncclCommInitRank", [&](NcclBackend& backend) {
    return backend.commInitRankConfig(comm, nranks, commId, rank, nullptr, "ncclCommInitRank");
  });
}

NS_API ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  return guardedCall("ncclCommInitAll", [&](NcclBackend& backend) { return backend.commInitAll(comm, ndev, devlist); });
}

NS_API ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                             ncclUniqueId* commIds, ncclConfig_t* config) {
  return guardedCall("ncclCommInitRankScalable", [&](NcclBackend& backend) {
    return backend.commInitRankScalable(newcomm, nranks, myrank, nId, commIds, config);
  });
}

NS_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  return guardedCall("ncclCommSplit", [&](NcclBackend& backend) { return backend.commSplit(comm, color, key, newcomm, config); });
}

NS_API ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                                   ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  return guardedCall("ncclCommShrink", [&](NcclBackend& backend) {
    return backend.commShrink(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  });
}

NS_API ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return guardedCall("ncclCommFinalize", [&](NcclBackend& backend) { return backend.commFinalize(comm); });
}

NS_API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return guardedCall("ncclCommDestroy", [&](NcclBackend& backend) { return backend.commDestroy(comm); });
}

NS_API ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return guardedCall("ncclCommAbort", [&](NcclBackend& backend) { return backend.commAbort(comm); });
}

NS_API ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return guardedCall("ncclCommRevoke", [&](NcclBackend& backend) { return backend.commRevoke(comm, revokeFlags); });
}

NS_API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  return guardedCall("ncclCommGetAsyncError", [&](NcclBackend& backend) { return backend.commGetAsyncError(comm, asyncError); });
}

NS_API ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  return guardedCall("ncclCommCount", [&](NcclBackend& backend) { return backend.commCount(comm, count); });
}

NS_API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return guardedCall("ncclCommCuDevice", [&](NcclBackend& backend) { return backend.commCuDevice(comm, device); });
}

NS_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  return guardedCall("ncclCommUserRank", [&](NcclBackend& backend) { return backend.commUserRank(comm, rank); });
}

NS_API ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return guardedCall("ncclCommRegister", [&](NcclBackend& backend) { return backend.commRegister(comm, buff, size, handle); });
}

NS_API ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  return guardedCall("ncclCommDeregister", [&](NcclBackend& backend) { return backend.commDeregister(comm, handle); });
}

NS_API ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                           int winFlags) {
  return guardedCall("ncclCommWindowRegister",
                     [&](NcclBackend& backend) { return backend.commWindowRegister(comm, buff, size, win, winFlags); });
}

NS_API ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return guardedCall("ncclCommWindowDeregister", [&](NcclBackend& backend) { return backend.commWindowDeregister(comm, win); });
}

NS_PNCCL_ALIAS(ncclGetUniqueId)
NS_PNCCL_ALIAS(ncclCommInitRankConfig)
NS_PNCCL_ALIAS(ncclCommInitRank)
NS_PNCCL_ALIAS(ncclCommInitAll)
NS_PNCCL_ALIAS(ncclCommInitRankScalable)
NS_PNCCL_ALIAS(ncclCommSplit)
NS_PNCCL_ALIAS(ncclCommShrink)
NS_PNCCL_ALIAS(ncclCommFinalize)
NS_PNCCL_ALIAS(ncclCommDestroy)
NS_PNCCL_ALIAS(ncclCommAbort)
NS_PNCCL_ALIAS(ncclCommRevoke)
NS_PNCCL_ALIAS(ncclCommGetAsyncError)
NS_PNCCL_ALIAS(ncclCommCount)
NS_PNCCL_ALIAS(ncclCommCuDevice)
NS_PNCCL_ALIAS(ncclCommUserRank)
NS_PNCCL_ALIAS(ncclCommRegister)
NS_PNCCL_ALIAS(ncclCommDeregister)
NS_PNCCL_ALIAS(ncclCommWindowRegister)
NS_PNCCL_ALIAS(ncclCommWindowDeregister)

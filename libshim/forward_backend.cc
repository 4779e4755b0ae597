// ForwardBackend: library-level calls, communicators and their queries, forwarded to the real NCCL
// (forward_backend.h). The shim's own errors name the function and what was tried.
#include "libshim/forward_backend.h"

#include "libshim/errors.h"

namespace nshim {

ncclResult_t ForwardBackend::unavailable(const char* fn) const {
  if (!real_.found) {
    return reportError(NS_ERROR(Code::kSystemError,
                                "{}: NCCLSHIM_MODE=forward but no real NCCL was found in this process (tried {}); "
                                "set NCCLSHIM_REAL_NCCL=/path/to/libnccl.so.2, or NCCLSHIM_MODE=gpufree",
                                fn, real_.tried));
  }
  return reportError(NS_ERROR(Code::kInvalidUsage,
                              "{}: the real NCCL ({}) does not provide {}: it is older than the API this program "
                              "uses",
                              fn, real_.path, fn));
}

ncclResult_t ForwardBackend::getVersion(int* version) { NS_FORWARD(ncclGetVersion, version); }

const char* ForwardBackend::getErrorString(ncclResult_t result) {
  return real_.ncclGetErrorString != nullptr ? real_.ncclGetErrorString(result) : resultString(result);
}

// The newest error of this thread: the shim's own (no real NCCL, a missing function, an internal
// failure) or else the real NCCL's.
const char* ForwardBackend::getLastError(ncclComm_t comm) {
  if (shimErrorIsNewest() || real_.ncclGetLastError == nullptr) return lastErrorMessage();
  return real_.ncclGetLastError(comm);
}

ncclResult_t ForwardBackend::memAlloc(void** ptr, size_t size) { NS_FORWARD(ncclMemAlloc, ptr, size); }
ncclResult_t ForwardBackend::memFree(void* ptr) { NS_FORWARD(ncclMemFree, ptr); }

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void ForwardBackend::resetDebugInit() {
  if (real_.ncclResetDebugInit != nullptr) real_.ncclResetDebugInit();
}
#pragma GCC diagnostic pop

ncclResult_t ForwardBackend::getUniqueId(ncclUniqueId* id) { NS_FORWARD(ncclGetUniqueId, id); }

ncclResult_t ForwardBackend::commInitRank(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank) {
  NS_FORWARD(ncclCommInitRank, comm, nranks, id, rank);
}

ncclResult_t ForwardBackend::commInitRankConfig(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank,
                                                ncclConfig_t* config, const char* fn) {
  NS_FORWARD(ncclCommInitRankConfig, comm, nranks, id, rank, config);
}

ncclResult_t ForwardBackend::commInitRankScalable(ncclComm_t* comm, int nranks, int rank, int nIds,
                                                  ncclUniqueId* ids, ncclConfig_t* config) {
  NS_FORWARD(ncclCommInitRankScalable, comm, nranks, rank, nIds, ids, config);
}

ncclResult_t ForwardBackend::commInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  NS_FORWARD(ncclCommInitAll, comms, ndev, devlist);
}

ncclResult_t ForwardBackend::commSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                       ncclConfig_t* config) {
  NS_FORWARD(ncclCommSplit, comm, color, key, newcomm, config);
}

ncclResult_t ForwardBackend::commShrink(ncclComm_t comm, int* excludeRanks, int excludeCount, ncclComm_t* newcomm,
                                        ncclConfig_t* config, int flags) {
  NS_FORWARD(ncclCommShrink, comm, excludeRanks, excludeCount, newcomm, config, flags);
}

ncclResult_t ForwardBackend::commFinalize(ncclComm_t comm) { NS_FORWARD(ncclCommFinalize, comm); }
ncclResult_t ForwardBackend::commDestroy(ncclComm_t comm) { NS_FORWARD(ncclCommDestroy, comm); }
ncclResult_t ForwardBackend::commAbort(ncclComm_t comm) { NS_FORWARD(ncclCommAbort, comm); }
ncclResult_t ForwardBackend::commRevoke(ncclComm_t comm, int flags) { NS_FORWARD(ncclCommRevoke, comm, flags); }

ncclResult_t ForwardBackend::commGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
  NS_FORWARD(ncclCommGetAsyncError, comm, error);
}

ncclResult_t ForwardBackend::commCount(ncclComm_t comm, int* count) { NS_FORWARD(ncclCommCount, comm, count); }
ncclResult_t ForwardBackend::commCuDevice(ncclComm_t comm, int* device) { NS_FORWARD(ncclCommCuDevice, comm, device); }
ncclResult_t ForwardBackend::commUserRank(ncclComm_t comm, int* rank) { NS_FORWARD(ncclCommUserRank, comm, rank); }

ncclResult_t ForwardBackend::commRegister(ncclComm_t comm, void* buff, size_t size, void** handle) {
  NS_FORWARD(ncclCommRegister, comm, buff, size, handle);
}

ncclResult_t ForwardBackend::commDeregister(ncclComm_t comm, void* handle) {
  NS_FORWARD(ncclCommDeregister, comm, handle);
}

ncclResult_t ForwardBackend::commWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                                int flags) {
  NS_FORWARD(ncclCommWindowRegister, comm, buff, size, win, flags);
}

ncclResult_t ForwardBackend::commWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  NS_FORWARD(ncclCommWindowDeregister, comm, win);
}

}  // namespace nshim

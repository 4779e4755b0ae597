// Exported NCCL library functions: version, error strings, last error, memory allocation and the
// deprecated debug reset.
#include "libshim/api_guard.h"
#include "libshim/backend.h"

using nshim::NcclBackend;
using nshim::guardedCall;
using nshim::guardedString;

NS_API ncclResult_t ncclGetVersion(int* version) {
  return guardedCall("ncclGetVersion", [&](NcclBackend& backend) { return backend.getVersion(version); });
}

NS_API const char* ncclGetErrorString(ncclResult_t result) {
  return guardedString(nshim::resultString(result), [&](NcclBackend& backend) { return backend.getErrorString(result); });
}

NS_API const char* ncclGetLastError(ncclComm_t comm) {
  return guardedString(nshim::lastErrorMessage(), [&](NcclBackend& backend) { return backend.getLastError(comm); });
}

NS_API ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  return guardedCall("ncclMemAlloc", [&](NcclBackend& backend) { return backend.memAlloc(ptr, size); });
}

NS_API ncclResult_t ncclMemFree(void* ptr) {
  return guardedCall("ncclMemFree", [&](NcclBackend& backend) { return backend.memFree(ptr); });
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
// Deprecated in nccl.h; ncclshim reads its debug settings once, so there is nothing to reset.
NS_API void ncclResetDebugInit() {}
NS_PNCCL_ALIAS(ncclResetDebugInit)
#pragma GCC diagnostic pop

NS_PNCCL_ALIAS(ncclGetVersion)
NS_PNCCL_ALIAS(ncclGetErrorString)
NS_PNCCL_ALIAS(ncclGetLastError)
NS_PNCCL_ALIAS(ncclMemAlloc)
NS_PNCCL_ALIAS(ncclMemFree)

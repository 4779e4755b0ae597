// Exported NCCL library functions: version, error strings, last error, memory allocation and the
// deprecated debug reset, inside the API frame (api_call.h).
#include "libshim/api_call.h"
#include "libshim/backend.h"

using nshim::ApiCall;
using nshim::ApiId;
using nshim::NcclBackend;

NS_API ncclResult_t ncclGetVersion(int* version) {
  return nshim::apiCall(ApiId::kGetVersion, [&](ApiCall& call) { call.handle = version; },
                        [&](NcclBackend& backend) { return backend.getVersion(version); });
}

NS_API const char* ncclGetErrorString(ncclResult_t result) {
  return nshim::stringCall(ApiId::kGetErrorString, [&](ApiCall& call) { call.flags = result; },
                           nshim::resultString(result),
                           [&](NcclBackend& backend) { return backend.getErrorString(result); });
}

NS_API const char* ncclGetLastError(ncclComm_t comm) {
  return nshim::stringCall(ApiId::kGetLastError, [&](ApiCall& call) { call.comm = comm; }, nshim::lastErrorMessage(),
                           [&](NcclBackend& backend) { return backend.getLastError(comm); });
}

NS_API ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  return nshim::apiCall(
      ApiId::kMemAlloc,
      [&](ApiCall& call) {
        call.handle = ptr;
        call.count = size;
      },
      [&](NcclBackend& backend) { return backend.memAlloc(ptr, size); });
}

NS_API ncclResult_t ncclMemFree(void* ptr) {
  return nshim::apiCall(ApiId::kMemFree, [&](ApiCall& call) { call.sendbuff = ptr; },
                        [&](NcclBackend& backend) { return backend.memFree(ptr); });
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
// Deprecated in nccl.h. GPU-free there is nothing to reset (settings are read once); forwarded
// otherwise.
NS_API void ncclResetDebugInit() {
  nshim::apiCall(ApiId::kResetDebugInit, [](ApiCall&) {}, [](NcclBackend& backend) {
    backend.resetDebugInit();
    return ncclSuccess;
  });
}
NS_PNCCL_ALIAS(ncclResetDebugInit)
#pragma GCC diagnostic pop

NS_PNCCL_ALIAS(ncclGetVersion)
NS_PNCCL_ALIAS(ncclGetErrorString)
NS_PNCCL_ALIAS(ncclGetLastError)
NS_PNCCL_ALIAS(ncclMemAlloc)
NS_PNCCL_ALIAS(ncclMemFree)

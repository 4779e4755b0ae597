// Exported NCCL library functions: version, error strings, last error, memory allocation and the
// deprecated debug reset; each passes its arguments to the active backend inside the API frame
// (api_call.h).
#include "libshim/api_call.h"

using nshim::ApiCall;
using nshim::ApiId;

NS_API ncclResult_t ncclGetVersion(int* version) {
  return nshim::apiCall<ApiId::kGetVersion>([&](ApiCall& call) { call.handle = version; }, version);
}

NS_API const char* ncclGetErrorString(ncclResult_t result) {
  return nshim::stringCall<ApiId::kGetErrorString>([&](ApiCall& call) { call.flags = result; },
                                                   nshim::resultString(result), result);
}

NS_API const char* ncclGetLastError(ncclComm_t comm) {
  return nshim::stringCall<ApiId::kGetLastError>([&](ApiCall& call) { call.comm = comm; }, nshim::lastErrorMessage(),
                                                 comm);
}

NS_API ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  return nshim::apiCall<ApiId::kMemAlloc>(
      [&](ApiCall& call) {
        call.handle = ptr;
        call.count = size;
      },
      ptr, size);
}

NS_API ncclResult_t ncclMemFree(void* ptr) {
  return nshim::apiCall<ApiId::kMemFree>([&](ApiCall& call) { call.sendbuff = ptr; }, ptr);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
// Deprecated in nccl.h.
NS_API void ncclResetDebugInit() {
  nshim::apiCall<ApiId::kResetDebugInit>([](ApiCall&) {});
}

NS_NCCL_LIBRARY_FUNCTIONS(NS_PNCCL_ALIAS)
#pragma GCC diagnostic pop

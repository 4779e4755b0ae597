// The forwarding backend's table (forward_backend.h): the real NCCL's functions, and the shim's own
// where the real NCCL has none or the shim's last error may be the newer. The shim's errors name the
// function and what was tried.
#include "libshim/forward_backend.h"

#include <type_traits>

#include "libshim/errors.h"

namespace nshim {
namespace {

// A call of a function the real NCCL lacks, or of any when no real NCCL was found.
ncclResult_t unavailable(const char* fn) {
  const RealNccl& real = realNccl();
  if (!real.found) {
    return reportError(NS_ERROR(Code::kSystemError,
                                "{}: NCCLSHIM_MODE=forward but no real NCCL was found in this process (tried {}); "
                                "set NCCLSHIM_REAL_NCCL=/path/to/libnccl.so.2, or NCCLSHIM_MODE=gpufree",
                                fn, real.tried));
  }
  return reportError(NS_ERROR(Code::kInvalidUsage,
                              "{}: the real NCCL ({}) does not provide {}: it is older than the API this program "
                              "uses",
                              fn, real.path, fn));
}

// Fills an empty entry of function `id` that returns an ncclResult_t with a function of the same type
// that reports it unavailable (the functions returning something else have their own below).
template <ApiId id, typename Result, typename... Args>
void fillUnavailable(Result (*&entry)(Args...)) {
  if constexpr (std::is_same_v<Result, ncclResult_t>) {
    if (entry == nullptr) entry = [](Args...) { return unavailable(apiName(id)); };
  }
}

// The newest error of this thread: the shim's own (no real NCCL, a missing function, an internal
// failure) or else the real NCCL's.
const char* lastError(ncclComm_t comm) {
  const auto real = realNccl().functions.ncclGetLastError;
  if (shimErrorIsNewest() || real == nullptr) return lastErrorMessage();
  return real(comm);
}

void noDebugReset() {}

}  // namespace

NcclFunctions forwardBackend(const RealNccl& real) {
  NcclFunctions table = real.functions;
#define NS_FILL_UNAVAILABLE(name) fillUnavailable<ApiId::k##name>(table.nccl##name);
  NS_NCCL_API_FUNCTIONS(NS_FILL_UNAVAILABLE)
#undef NS_FILL_UNAVAILABLE
  table.ncclGetLastError = &lastError;
  if (table.ncclGetErrorString == nullptr) table.ncclGetErrorString = &resultString;
  if (table.ncclResetDebugInit == nullptr) table.ncclResetDebugInit = &noDebugReset;
  return table;
}

}  // namespace nshim

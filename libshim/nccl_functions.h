// The form of a backend: one pointer per NCCL API function of the list (api_functions.h), each with
// the type nccl.h declares. The forwarder's is the real NCCL's own table (real_nccl.h,
// forward_backend.h); the GPU-free one points at ncclshim's own definitions (gpufree_backend.h).
// Every exported nccl* function calls its entry of the active table (backend.h, api_call.h).
#pragma once

#include <type_traits>

#include "libshim/api_functions.h"
#include "libshim/api_record.h"
#include "libshim/nccl_api.h"

namespace nshim {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // ncclResetDebugInit
struct NcclFunctions {
#define NS_NCCL_FUNCTION_ENTRY(name) decltype(&::nccl##name) nccl##name = nullptr;
  NS_NCCL_API_FUNCTIONS(NS_NCCL_FUNCTION_ENTRY)
#undef NS_NCCL_FUNCTION_ENTRY
};
#pragma GCC diagnostic pop

// The entry of function `id`: NcclEntry<ApiId::kAllReduce>::member is &NcclFunctions::ncclAllReduce.
template <ApiId id>
struct NcclEntry;
#define NS_NCCL_ENTRY_OF(name)                                 \
  template <>                                                  \
  struct NcclEntry<ApiId::k##name> {                           \
    static constexpr auto member = &NcclFunctions::nccl##name; \
  };
NS_NCCL_API_FUNCTIONS(NS_NCCL_ENTRY_OF)
#undef NS_NCCL_ENTRY_OF

// Calls `backend`'s entry of function `id` with `args`; a function that returns nothing
// (ncclResetDebugInit) gives ncclSuccess.
template <ApiId id, typename... Args>
inline auto callEntry(const NcclFunctions& backend, Args&... args) {
  constexpr auto member = NcclEntry<id>::member;
  if constexpr (std::is_void_v<decltype((backend.*member)(args...))>) {
    (backend.*member)(args...);
    return ncclSuccess;
  } else {
    return (backend.*member)(args...);
  }
}

}  // namespace nshim

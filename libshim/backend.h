// The backend of this process: a table of the NCCL functions (nccl_functions.h) that every exported
// nccl* function calls inside the API frame (api_call.h: exception guard and record hook). Two
// backends: the forwarder, which is the real libnccl.so.2's own table (forward_backend.h), and
// GPU-free execution on host memory (gpufree_backend.h), chosen once per process by NCCLSHIM_MODE
// (backend_select.cc).
#pragma once

#include <atomic>

#include "common/status.h"
#include "libshim/nccl_functions.h"

namespace nshim {

// The backend of this process, chosen at the first call by NCCLSHIM_MODE (auto | gpufree | forward);
// nullptr when NCCLSHIM_MODE names no mode, and then backendUnavailable() says why. Read by every
// call: once chosen, one load from the hot data (common/hot_section.h).
namespace detail {
extern std::atomic<const NcclFunctions*> gActiveBackend;
}  // namespace detail
const NcclFunctions* activeBackendSlow();
inline const NcclFunctions* activeBackend() {
  const NcclFunctions* backend = detail::gActiveBackend.load(std::memory_order_acquire);  // a plain load on x86
  return __builtin_expect(backend != nullptr, 1) ? backend : activeBackendSlow();
}
Status backendUnavailable(const char* fn);

}  // namespace nshim

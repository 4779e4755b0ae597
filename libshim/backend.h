// The backend of this process: a table of the NCCL functions (nccl_functions.h) that every exported
// nccl* function calls inside the API frame (api_call.h: exception guard and record hook). Two
// backends: the forwarder, which is the real libnccl.so.2's own table (forward_backend.h), and
// GPU-free execution on host memory (gpufree_backend.h), chosen once per process by NCCLSHIM_MODE
// (backend_select.cc).
#pragma once

#include "common/status.h"
#include "libshim/nccl_functions.h"

namespace nshim {

// The backend of this process, chosen at the first call by NCCLSHIM_MODE (auto | gpufree | forward);
// nullptr when NCCLSHIM_MODE names no mode, and then backendUnavailable() says why.
const NcclFunctions* activeBackend();
Status backendUnavailable(const char* fn);

}  // namespace nshim

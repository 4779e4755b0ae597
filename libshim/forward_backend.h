// The forwarding backend (capture mode): the real libnccl.so.2's own table of functions
// (real_nccl.h), used as it is, so every NCCL call reaches the real NCCL unchanged at the cost of
// one indirect call. Communicator handles are the real NCCL's own; the record hook keeps its
// per-communicator state beside them (comm_table.h). Errors of the real NCCL pass through
// untouched, and ncclGetLastError then gives the real NCCL's text (the API frame notes every
// failed call: errors.h). The shim's own errors are what the real NCCL cannot answer: a function it
// lacks (an older NCCL) fails with ncclInvalidUsage, and every function when none was found with
// ncclSystemError, each with a message that ncclGetLastError gives while it is the newest error.
// ncclGetErrorString falls back to the shim's strings and ncclResetDebugInit to nothing.
#pragma once

#include "libshim/nccl_functions.h"
#include "libshim/real_nccl.h"

namespace nshim {

// The table of forward mode: `real`'s functions, with the shim's in the places above.
NcclFunctions forwardBackend(const RealNccl& real);

}  // namespace nshim

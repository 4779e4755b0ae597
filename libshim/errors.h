// Error reporting of the C API: internal Status codes to ncclResult_t, the per-thread last error
// message behind ncclGetLastError, and NCCL-style result strings.
#pragma once

#include <string>

#include "common/status.h"
#include "libshim/nccl_api.h"

namespace nshim {

ncclResult_t toNcclResult(Code code);
const char* resultString(ncclResult_t result);

// Logs the error (WARN), makes it this thread's last error and returns its ncclResult_t.
ncclResult_t reportError(const Status& status);

// The message of the last failed call on this thread ("" when none has failed).
const char* lastErrorMessage();

// An API call (api_guard.h) returned the error `result`. Unless the shim reported it (reportError
// since the last failed call), it is the backend's own: in forward mode the real NCCL's, whose
// ncclGetLastError text is then newer than the shim's last error on this thread.
void noteFailedCall(ncclResult_t result);
// Whether the newest error on this thread was raised by the shim (reportError) rather than
// returned by the real NCCL.
bool shimErrorIsNewest();

// The same error with `context` in front of its message (e.g. the API function and rank).
Status withContext(const Status& status, const std::string& context);

}  // namespace nshim
